"""The smallest use of the backend: `import panama_torch` and `dist.init_process_group("panama")`.

    scripts/testbed --engine soft --workers 4 --torch torch_ext/examples/hello.py

Every rank all-reduces rank + 1 and checks the sum (1 + 2 + ... + W, exact in fp32).
"""
import torch
import torch.distributed as dist

import panama_torch  # noqa: F401  (registers the backend)

dist.init_process_group("panama")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.full((100000,), float(rank + 1))
dist.all_reduce(t)
want = world * (world + 1) / 2
assert bool((t == want).all()), f"rank {rank}: got {t[:4]}, want {want}"
print(f"rank {rank} of {world}: all_reduce of 100000 elements = {t[0].item()} (exact)")
dist.destroy_process_group()
