"""Shutdown with an all_reduce in flight (ctest torch.netns.exit; docs/torch.md "Shutdown").

    scripts/testbed --engine soft --workers 3 --torch torch_ext/tests/check_exit.py destroy|exit

The request's tensor keeps no Python object of its own: only a detached alias of its storage
(no autograd base, so it holds no reference to the tensor) is kept. Its Python object dies while
the request holds the tensor, PyTorch hands that object to the tensor, and the channel's thread
needs the GIL to free it.
destroy: dist.destroy_process_group() while the all_reduce runs frees the group and its channel
         with the GIL held. It must return (the channel's thread finishes the request and frees
         it), within 30 s, and the view must hold the exact sum.
exit:    the interpreter exits while the all_reduce runs, without waiting for it. panama_torch's
         exit handler waits for it first (one log line), so the rank exits 0 and its peers'
         all_reduce completes; the caller checks the exit codes and the line.
"""
import sys
import time

import torch
import torch.distributed as dist

import panama_torch  # noqa: F401 (the backend)
from tblib import say

mode = sys.argv[1] if len(sys.argv) > 1 else "destroy"
assert mode in ("destroy", "exit"), "mode: destroy or exit"
torch.set_num_threads(1)
dist.init_process_group("panama")
rank, world = dist.get_rank(), dist.get_world_size()
n = 3_000_000
big = torch.full((n,), float(rank + 1))
view = big.detach()  # the storage, through another tensor that holds no reference to big
assert view._base is None
dist.barrier()
t0 = time.monotonic()
work = dist.all_reduce(big, async_op=True)
del big, work
if mode == "exit":
    say(f"exiting with an all_reduce of {n} elements in flight")
    raise SystemExit(0)
dist.destroy_process_group()
took = time.monotonic() - t0
expected = float(world * (world + 1) // 2)
wrong = int((view != expected).sum())
print(f"rank {rank}: destroy_process_group with an all_reduce of {n} elements in flight returned after {took:.2f} s; "
      f"{wrong} elements differ from the sum {expected}", flush=True)
if wrong or took > 30:
    print(f"rank {rank}: FAIL", flush=True)
    raise SystemExit(1)
