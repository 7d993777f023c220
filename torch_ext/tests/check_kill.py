"""A stand-in killed in the middle of an all_reduce: every rank raises PanamaError within the bound.

    PANAMA_TIMEOUT_MS=1000 PANAMA_STATUS_WAIT_MS=50 \
      scripts/testbed --engine soft --workers 3 --torch torch_ext/tests/check_kill.py [BOUND_S]

Every rank all-reduces a few small tensors (they must be exact), then a large one asynchronously;
rank 0 kills the stand-in (SIGKILL, TESTBED_STANDIN_PIDS) 0.3 s into it and writes the moment to
the run's directory. Every rank's wait() must raise PanamaError naming the cause ("no result in
time") within BOUND_S seconds (default 10; ctest gives 5) of the kill, leave the tensor untouched, and the next
all_reduce must be refused at once ("the job failed earlier"). Never a hang: the testbed's
--timeout kills a script that waits for ever, and the run fails.
"""
import os
import signal
import sys
import time

import torch
import torch.distributed as dist

import panama_torch
from tblib import say

bound = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
torch.set_num_threads(1)
dist.init_process_group("panama")
rank, world = dist.get_rank(), dist.get_world_size()
for i in range(3):
    t = torch.full((50000,), float(rank + i))
    dist.all_reduce(t)
    assert bool((t == sum(r + i for r in range(world))).all()), "a small all_reduce was not exact"
dist.barrier()

big = torch.full((8_000_000,), float(rank + 1))
work = dist.all_reduce(big, async_op=True)
if rank == 0:
    time.sleep(0.3)
    name, pid = os.environ["TESTBED_STANDIN_PIDS"].split()[0].split(":")
    os.kill(int(pid), signal.SIGKILL)
    with open("killed_at", "w") as f:
        f.write(repr(time.time()))
    say(f"killed stand-in {name} (pid {pid})")
failures = []
try:
    work.wait()
    failures.append("the all_reduce succeeded although the stand-in was killed")
except panama_torch.PanamaError as e:
    end = time.time()
    for _ in range(100):  # rank 0 writes the moment of the kill
        if os.path.exists("killed_at"):
            break
        time.sleep(0.05)
    with open("killed_at") as f:
        after = end - float(f.read())
    say(f"raised {after:.2f} s after the kill: {e}")
    if "no result in time" not in str(e):
        failures.append(f"the error does not name the cause: {e}")
    if after > bound:
        failures.append(f"raised {after:.2f} s after the kill (bound {bound} s)")
if not bool((big == rank + 1).all()):
    failures.append("the failed all_reduce changed the tensor")
t0 = time.monotonic()
try:
    dist.all_reduce(torch.ones(10))
    failures.append("an all_reduce after the failure was accepted")
except panama_torch.PanamaError as e:
    say(f"next all_reduce refused in {(time.monotonic() - t0) * 1e3:.1f} ms: {e}")
    if "the job failed earlier" not in str(e):
        failures.append(f"unclear refusal: {e}")
for f in failures:
    say(f"FAIL: {f}")
sys.exit(1 if failures else 0)
