"""DDP through the accelerator, a few steps equal to a reference bit for bit (ctest torch.netns.ddp).

    scripts/testbed --engine soft --workers 4 --torch torch_ext/tests/check_ddp.py pg [STEPS]
    scripts/testbed --engine soft --workers 2 --torch torch_ext/tests/check_ddp.py hook [STEPS]
    scripts/testbed --engine model --rtl EXACT_DESIGN --torch torch_ext/tests/check_ddp.py pg|train [STEPS]

pg:   the default group is "panama": DDP's own all-reduce (each gradient multiplied by 1/W as it is
      copied into its bucket, then summed by the accelerator).
hook: the default group is Gloo and the buckets go through panama_torch.allreduce_hook (summed by
      the accelerator, divided by W as the sums are written back); the hook must return before its
      all-reduce is done (it overlaps the backward pass).
train: as pg without the reference.
The reference, in every rank: the same model trained without DDP on every rank's batch, its
gradients summed in the accelerator's tree order over the ports (numpy float32: the CPU's own
addition), or on an exact-sum design (`--sum exact`) exactly and rounded once (tblib.exact_sum_np),
and divided the same way, then the same optimizer step. (The determinism case, netns.sh, runs pg
on both kinds of design and then compares the parameters of runs with the workers on other
ports.) Every parameter must agree bit
for bit after every step. Each rank also writes its parameters (params.<rank>.bin) to the run's
directory.
"""
import copy
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import panama_torch
import tblib
from tblib import say

mode = sys.argv[1] if len(sys.argv) > 1 else "pg"
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 4
assert mode in ("pg", "hook", "train"), "mode: pg, hook or train"
torch.set_num_threads(1)
torch.manual_seed(0)

dist.init_process_group("gloo" if mode == "hook" else "panama")
rank, world = dist.get_rank(), dist.get_world_size()
port_of, nports = tblib.ports(), tblib.design()["ports"]
exact = tblib.design().get("sum", "tree") == "exact"
assert not (exact and mode == "hook"), "the hook case runs on tree-sum designs"

model = torch.nn.Sequential(torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256), torch.nn.ReLU(),
                            torch.nn.Linear(256, 10))
reference = copy.deepcopy(model)
ddp = DDP(model)
hook_calls = []
if mode == "hook":
    state = panama_torch.HookState()

    def timed_hook(st, bucket):
        t0 = time.monotonic()
        fut = panama_torch.allreduce_hook(st, bucket)
        hook_calls.append((time.monotonic() - t0, fut.done()))
        return fut

    ddp.register_comm_hook(state, timed_hook)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
ref_opt = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
gen = torch.Generator().manual_seed(1234)
data = [[(torch.randn(16, 64, generator=gen), torch.randint(0, 10, (16,), generator=gen)) for _ in range(world)]
        for _ in range(steps)]
inv_w = np.float32(1.0) / np.float32(world)  # DDP's 1/W (a double scalar, applied in float32)
bad = 0
for s in range(steps):
    x, y = data[s][rank]
    opt.zero_grad()
    loss = loss_fn(ddp(x), y)
    loss.backward()
    opt.step()
    if mode == "train":
        say(f"train step {s}: loss {loss.item():.6f}")
        continue
    # The reference: every rank's local gradient, summed in the tree order over the ports.
    local = []
    for r in range(world):
        reference.zero_grad()
        loss_fn(reference(data[s][r][0]), data[s][r][1]).backward()
        local.append([p.grad.detach().numpy().copy() for p in reference.parameters()])
    for i, p in enumerate(reference.parameters()):
        if exact:  # absent ports are -0.0 leaves, which change no exact sum
            total = tblib.exact_sum_np([np.multiply(local[r][i], inv_w, dtype=np.float32) for r in range(world)])
        elif mode != "hook":
            total = tblib.tree_sum_np({port_of[r]: np.multiply(local[r][i], inv_w, dtype=np.float32)
                                       for r in range(world)}, nports)
        else:
            total = np.divide(tblib.tree_sum_np({port_of[r]: local[r][i] for r in range(world)}, nports),
                              np.float32(world), dtype=np.float32)
        p.grad = torch.from_numpy(total)
    ref_opt.step()
    diff = sum(tblib.mismatches(a.detach(), b.detach()) for a, b in zip(ddp.module.parameters(), reference.parameters()))
    n = sum(p.numel() for p in reference.parameters())
    say(f"{mode} step {s}: loss {loss.item():.4f}, {diff} of {n} parameters differ from the reference")
    bad += diff
with open(f"params.{rank}.bin", "wb") as f:
    for p in ddp.module.parameters():
        f.write(tblib.bits(p))
failures = []
if bad:
    failures.append(f"{bad} parameter values differ from the reference")
if mode == "hook":
    pending = sum(1 for _, done in hook_calls if not done)
    took = sorted(t for t, _ in hook_calls)
    say(f"hook: {len(hook_calls)} calls, returned in {1e3 * took[len(took) // 2]:.2f} ms (median), "
        f"{1e3 * took[-1]:.2f} ms at most, {pending} before their all-reduce was done")
    if not hook_calls or pending == 0:
        failures.append("the hook never returned before its all-reduce finished (it must not block)")
    say(f"channel: {state.channel.stats()}")
channel = state.channel if mode == "hook" else dist.distributed_c10d._get_default_group().channel
failures += tblib.gloo_use(channel, f"DDP ({mode})")
for f in failures:
    say(f"FAIL: {f}")
dist.destroy_process_group()
sys.exit(1 if failures else 0)
