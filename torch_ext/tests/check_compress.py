"""panama_torch.compress_hook on a bf16 or fp16 design (ctest torch.netns.compress; docs/torch.md).

    scripts/testbed --engine soft --rtl BF16_DESIGN --workers 3 --placement 2,0,1 \
      --torch torch_ext/tests/check_compress.py [STEPS]

1. compressed_allreduce (the hook's arithmetic) of random fp32 tensors (sizes 1, one vector + 1,
   several calls; magnitudes over six decades): bit for bit equal to a reference that rounds each
   rank's input once to the design's format (ATen's conversion), sums them in the tree order over
   the ports (torch_ref_sum, that format) and widens and divides by W in float32. The result must
   differ from the uncompressed fp32 mean on some elements (else rounding was never exercised).
2. DDP with compress_hook on the "panama" group, STEPS steps of SGD on a synthetic task: the
   parameters bit for bit those of a reference training without DDP (every rank's gradient
   rounded, summed in the tree order with PyTorch's 16-bit addition, widened and divided) and
   identical on every rank; against the same model trained with DDP on a Gloo group in fp32:
   both losses going down, the accuracies within 5 points of each other.
"""
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import panama_torch
import tblib
from tblib import say

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 40
torch.set_num_threads(1)
dist.init_process_group("panama")
rank, world = dist.get_rank(), dist.get_world_size()
pg = dist.distributed_c10d._get_default_group()
fmt = pg.channel.config.format
if fmt not in ("bf16", "fp16"):
    say(f"compress_hook needs a 16-bit design, PANAMA_DESIGN sums {fmt}")
    sys.exit(2)
dt = tblib.DTYPES[fmt]
data = pg.channel.count - 1
failures = []

rounded_somewhere = 0
for i, n in enumerate((1, data + 1, 3 * pg.channel.chunk_elems + 7)):
    g = torch.Generator().manual_seed(300 + 10 * rank + i)
    t = torch.randn(n, generator=g) * torch.pow(10.0, torch.randint(-3, 3, (n,), generator=g).float())
    want16 = tblib.reference(f"c{i}", t.to(dt), fmt)
    want = want16.float().div_(world)
    got = t.clone()
    panama_torch.compressed_allreduce(None, got).wait()
    bad = tblib.mismatches(got, want)
    exact32 = tblib.reference(f"f{i}", t.to(dt).float(), "fp32")  # the same inputs summed in fp32
    rounded_somewhere += tblib.mismatches(exact32.div(world), want)
    say(f"compressed_allreduce of {n} fp32 elements: {bad} differ from the rounded tree-order reference")
    if bad:
        failures.append(f"compressed_allreduce, {n} elements: {bad} differ")
if rounded_somewhere == 0:
    failures.append("the 16-bit sums never differ from fp32 sums: the rounding was not exercised")
say(f"{rounded_somewhere} elements differ between the {fmt} sums and fp32 sums of the same inputs")

# DDP: compress_hook on the accelerator against fp32 on Gloo.
gloo = dist.new_group(backend="gloo")
X = torch.randn(512, 32, generator=torch.Generator().manual_seed(50 + rank))
teacher = torch.randn(32, 4, generator=torch.Generator().manual_seed(8))
Y = (X @ teacher).argmax(dim=1)
Xt = torch.randn(1024, 32, generator=torch.Generator().manual_seed(99))
Yt = (Xt @ teacher).argmax(dim=1)


def train(group, hook):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(), torch.nn.Linear(128, 4))
    model = DDP(net, process_group=group)
    if hook:
        model.register_comm_hook(None, panama_torch.compress_hook)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(X), Y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        acc = (net(Xt).argmax(dim=1) == Yt).float().mean().item()
    return net, losses, acc


def train_reference():
    """compress_hook's training without DDP, in every rank: every rank's batch, each gradient
    rounded once to the format, summed in the tree order over the ports with PyTorch's own 16-bit
    addition (tblib.tree_sum_torch), widened and divided by W in float32, the same SGD step."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(32, 128), torch.nn.ReLU(), torch.nn.Linear(128, 4))
    opt = torch.optim.SGD(net.parameters(), lr=0.2)
    data = [(x, (x @ teacher).argmax(dim=1)) for x in (torch.randn(512, 32, generator=torch.Generator().manual_seed(50 + r))
                                                      for r in range(world))]
    port_of, nports = tblib.ports(), tblib.design()["ports"]
    for _ in range(steps):
        local = []
        for x, y in data:
            net.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            local.append([p.grad.detach().clone() for p in net.parameters()])
        for i, p in enumerate(net.parameters()):
            p.grad = tblib.tree_sum_torch({port_of[r]: local[r][i].to(dt) for r in range(world)}, nports).float().div_(world)
        opt.step()
    return net


net_c, loss_c, acc_c = train(pg, True)
net_g, loss_g, acc_g = train(gloo, False)
net_r = train_reference()
off_ref = tblib.mismatches(torch.cat([p.detach().reshape(-1) for p in net_c.parameters()]),
                           torch.cat([p.detach().reshape(-1) for p in net_r.parameters()]))
say(f"compress_hook after {steps} steps: {off_ref} parameters differ from the reference training")
if off_ref:
    failures.append(f"compress_hook: {off_ref} parameters differ from the reference training after {steps} steps")
say(f"{fmt} compress_hook: loss {loss_c[0]:.4f} -> {loss_c[-1]:.4f}, accuracy {acc_c:.3f}; "
    f"fp32 Gloo: loss {loss_g[0]:.4f} -> {loss_g[-1]:.4f}, accuracy {acc_g:.3f}")
flat = torch.cat([p.detach().reshape(-1) for p in net_c.parameters()])
changed = tblib.mismatches(flat, torch.cat([p.detach().reshape(-1) for p in net_g.parameters()]))
say(f"{changed} of {flat.numel()} parameters differ between the two trainings; {pg.channel.stats()['requests']} "
    "requests through the accelerator")
if changed == 0:
    failures.append("compress_hook changed no parameter: the hook did not round")
failures += tblib.gloo_use(pg.channel, "compress_hook")
r0 = flat.clone()
dist.broadcast(r0, 0, group=gloo)
if tblib.mismatches(flat, r0):
    failures.append("compress_hook: the parameters differ from rank 0's")
if not (loss_c[-1] < loss_c[0] and loss_g[-1] < loss_g[0]):
    failures.append("a loss did not go down")
if abs(acc_c - acc_g) > 0.05:
    failures.append(f"accuracy {acc_c:.3f} with compress_hook, {acc_g:.3f} with fp32 Gloo: more than 5 points apart")
for f in failures:
    say(f"FAIL: {f}")
sys.exit(1 if failures else 0)
