"""dist.all_reduce through the "panama" backend, checked bit for bit (ctest torch.netns.*; docs/torch.md).

    scripts/testbed --engine soft --workers 3 --placement 2,0,1 --torch torch_ext/tests/check_allreduce.py

Against the tree-order (or exact) reference over the accelerator's ports: sizes 0, 1, one vector,
one vector + 1, an odd size over several host-library calls; strided tensors (a transpose, a
slice); AVG (fp32 designs); the asynchronous Work (returns at once, GIL released, a future);
what goes to Gloo (broadcast, MAX, float64, all_gather: correct, and logged once per reason);
a tensor larger than the job's buffer (PanamaError at once, and the job goes on).
"""
import os
import threading
import time

os.environ["PANAMA_BUFFER_MB"] = "16"  # the job's buffer, for the too-large case (before init)
os.environ["PANAMA_CHUNK_KB"] = "256"  # several host-library calls per large tensor

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import panama_torch  # noqa: E402
import tblib  # noqa: E402
from tblib import say  # noqa: E402

torch.set_num_threads(1)
dist.init_process_group("panama")
rank, world = dist.get_rank(), dist.get_world_size()
pg = dist.distributed_c10d._get_default_group()
assert isinstance(pg, panama_torch.ProcessGroupPanama), type(pg)
fmt = pg.channel.config.format
dtype = tblib.DTYPES[fmt]
data = pg.channel.count - 1  # elements of one vector (loss repair keeps one for its tag)
chunk = pg.channel.chunk_elems
failures = []


def check(tag, t, op=dist.ReduceOp.SUM):
    want = tblib.reference(tag, t, fmt)
    if op == dist.ReduceOp.AVG:
        want = (want.double() / world).to(torch.float32) if fmt == "fp32" else None
    dist.all_reduce(t, op=op)
    bad = tblib.mismatches(t, want)
    say(f"{tag}: {t.numel()} {fmt} elements, {bad} differ from the reference")
    if bad:
        failures.append(f"{tag}: {bad} of {t.numel()} elements differ")


sizes = {"zero": 0, "one": 1, "vector": data, "vector+1": data + 1, "odd-large": 3 * chunk + 2 * data + 17}
for i, (tag, n) in enumerate(sizes.items()):
    check(tag, tblib.random_tensor(n, dtype, 1000 * rank + i), dist.ReduceOp.SUM)
# Strided tensors: gathered into the job's buffer, scattered back.
m = tblib.random_tensor(37 * 53, dtype, 77 + rank).view(37, 53).t()
assert not m.is_contiguous()
check("transposed", m)
base = tblib.random_tensor(2 * 1001, dtype, 91 + rank)
check("slice", base[::2])
if fmt == "fp32":
    # AVG: the sum divided by the world size as the results are written (float64 / W rounded
    # once to float32 is the float32 division).
    v = torch.randn(5000, generator=torch.Generator().manual_seed(5 + rank)) * 100
    check("avg", v, dist.ReduceOp.AVG)

# Asynchronous: all_reduce returns at once with a Work; the GIL is free while it runs.
big = torch.full((3_000_000,), float(rank + 1), dtype=dtype)
ticks = [0]
stop = threading.Event()


def spin():
    while not stop.is_set():
        ticks[0] += 1


th = threading.Thread(target=spin)
th.start()
t0 = time.monotonic()
work = dist.all_reduce(big, async_op=True)
returned = time.monotonic() - t0
ticks_at_return = ticks[0]
work.wait()
took = time.monotonic() - t0
stop.set()
th.join()
fut = work.get_future()
assert fut.done() and fut.value()[0] is not None
expected = float(world * (world + 1) // 2)
if not bool((big == expected).all()):
    failures.append("async all_reduce: wrong sums")
say(f"async all_reduce of {big.numel()} elements: returned after {returned * 1e3:.2f} ms, done after "
    f"{took * 1e3:.0f} ms; another Python thread ran {ticks[0] - ticks_at_return} loop turns meanwhile")
if returned > 0.25 * took:
    failures.append(f"all_reduce did not return at once ({returned:.3f} s of {took:.3f} s)")
if ticks[0] - ticks_at_return < 1000:
    failures.append("the GIL was held while the all_reduce ran")

# What the accelerator cannot sum goes to Gloo, logged once per reason.
with tblib.captured_stderr() as log:
    for _ in range(2):
        b = torch.full((10,), float(rank))
        dist.broadcast(b, src=world - 1)
        assert bool((b == world - 1).all()), "broadcast through Gloo"
        mx = torch.tensor([float(rank)])
        dist.all_reduce(mx, op=dist.ReduceOp.MAX)
        assert mx.item() == world - 1, "MAX through Gloo"
        d = torch.full((7,), 0.5 + rank, dtype=torch.float64)
        dist.all_reduce(d)
        assert bool((d == sum(0.5 + r for r in range(world))).all()), "float64 through Gloo"
        out = [torch.zeros(2) for _ in range(world)]
        dist.all_gather(out, torch.full((2,), float(rank)))
        assert [o[0].item() for o in out] == list(range(world)), "all_gather through Gloo"
notes = [line for line in log if line.startswith("panama_torch:")]
for reason in ("broadcast goes to Gloo", "other than SUM or AVG goes to Gloo", "dtype Double go to Gloo",
               "all_gather goes to Gloo"):
    n = sum(reason in line for line in notes)
    if n != 1:
        failures.append(f"fallback '{reason}' logged {n} times (want once): {notes}")
say(f"fallbacks, each logged once: {len(notes)} lines")

# A tensor larger than the job's buffer (PANAMA_BUFFER_MB=16): PanamaError at once, nothing sent,
# and the job goes on.
too_big = torch.zeros((16 << 20) // torch.tensor([], dtype=dtype).element_size() + 1, dtype=dtype)
t0 = time.monotonic()
try:
    dist.all_reduce(too_big)
    failures.append("a tensor larger than the job's buffer was accepted")
except panama_torch.PanamaError as e:
    say(f"too large, {(time.monotonic() - t0) * 1e3:.1f} ms: {e}")
    if "larger than the job's buffers" not in str(e):
        failures.append(f"unclear error for a too-large tensor: {e}")
check("after-too-large", tblib.random_tensor(999, dtype, 4242 + rank))

stats = pg.channel.stats()
say(f"channel: {stats}")
failures += tblib.gloo_use(pg.channel, "all_reduce")
if failures:
    for f in failures:
        say(f"FAIL: {f}")
    raise SystemExit(1)
say("all checks passed")
dist.destroy_process_group()
