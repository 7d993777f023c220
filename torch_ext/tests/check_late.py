"""c10d's timeout bounds the accelerator's calls: a late rank within it is waited for, past it
every rank fails in time (ctest torch.netns.late; docs/torch.md "Timeouts").

    scripts/testbed --engine soft --workers 3 --torch torch_ext/tests/check_late.py wait|expire

Run without PANAMA_TIMEOUT_MS / PANAMA_STATUS_WAIT_MS (the process group's timeout decides).
wait:   init_process_group(timeout=60 s). After one exact all_reduce, rank 0 works alone for 12 s
        (longer than the host library's own default wait, 40 status waits = 8 s) and then joins
        the next all_reduce: every rank's result must be exact, and the others must have waited.
expire: init_process_group(timeout=3 s); rank 0 is 12 s late: every other rank's all_reduce must
        raise PanamaError ("no result in time") after the 3 s (0.1 s of clock slack) and at most 3 s + 4 s,
        never hang. Rank 0 then finds its peers gone and fails too, within the timeout: with
        "no result in time", or with "loss beyond repair" when frames its peers left queued on the
        accelerator complete some of its vectors and its repair then stalls (docs/torch.md
        "Timeouts": both are bounded by the group's timeout; which comes first is timing).
"""
import datetime
import sys
import time

import torch
import torch.distributed as dist

import panama_torch
import tblib
from tblib import say

mode = sys.argv[1] if len(sys.argv) > 1 else "wait"
assert mode in ("wait", "expire"), "mode: wait or expire"
limit_s = 60.0 if mode == "wait" else 3.0
late_s = 12.0
torch.set_num_threads(1)
dist.init_process_group("panama", timeout=datetime.timedelta(seconds=limit_s))
rank, world = dist.get_rank(), dist.get_world_size()
cfg = dist.distributed_c10d._get_default_group().channel.config
assert cfg.group_timeout_ms == int(limit_s * 1000), f"group timeout {cfg.group_timeout_ms} ms"
assert cfg.timeout_ms == int(limit_s * 1000), f"call timeout {cfg.timeout_ms} ms (PANAMA_TIMEOUT_MS set?)"
say(f"call timeout {cfg.timeout_ms} ms, status wait {cfg.status_wait_ms} ms")

t = torch.full((100000,), float(rank + 1))
dist.all_reduce(t)
assert bool((t == sum(r + 1 for r in range(world))).all()), "the first all_reduce was not exact"
dist.barrier()

if rank == 0:
    time.sleep(late_s)  # evaluating, checkpointing: alone
t = torch.full((100000,), float(2 * rank + 1))
want = float(sum(2 * r + 1 for r in range(world)))
t0 = time.monotonic()
if mode == "wait":
    dist.all_reduce(t)
    took = time.monotonic() - t0
    assert bool((t == want).all()), "the all_reduce after the late rank was not exact"
    # Run with the Gloo fallback on: whole numbers sum to the same bits there, so the accelerator
    # must be seen to have done it.
    on_gloo = tblib.gloo_use(dist.distributed_c10d._get_default_group().channel, "the late rank's all_reduce")
    assert not on_gloo, on_gloo[0]
    if rank != 0:
        assert took > late_s - 1.5, f"rank {rank} did not wait for the late rank ({took:.1f} s)"
    say(f"exact after {took:.1f} s")
else:
    try:
        dist.all_reduce(t)
    except panama_torch.PanamaError as e:
        took = time.monotonic() - t0
        say(f"raised after {took:.1f} s: {e}")
        causes = ("no result in time",) if rank != 0 else ("no result in time", "loss beyond repair")
        assert any(c in str(e) for c in causes), f"wrong cause: {e}"
        if rank != 0:
            assert limit_s - 0.1 <= took <= limit_s + 4.0, f"rank {rank} failed after {took:.1f} s, not about {limit_s} s"
        else:
            assert took <= limit_s + 4.0, f"the late rank failed only after {took:.1f} s"
    else:
        raise AssertionError(f"rank {rank}: the all_reduce succeeded past the process group's timeout")
say("ok")
