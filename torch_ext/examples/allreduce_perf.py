"""An nccl-tests-style all_reduce sweep of the "panama" backend and of Gloo in the same run
(scripts/allreduce-perf runs it through `scripts/testbed --torch`; docs/torch.md "all_reduce").

    allreduce_perf.py [--min-bytes 4096] [--max-bytes 67108864] [--budget-mib 64] [--max-iters 20]
                      [--csv allreduce_perf.csv]

Per size (powers of two) and backend: one warm-up, then iterations until --budget-mib of tensor
has been reduced (at least 2, at most --max-iters). Every iteration starts from fresh inputs after
a barrier and is timed on its own (time = the mean over iterations of the slowest rank's time);
every result is checked against the exact sum (inputs are small whole numbers, so the sum is
exact in any order): #wrong counts the elements that differ, over all iterations and ranks.
algbw = size / time, busbw = algbw x 2 (n - 1) / n (the nccl-tests convention for all_reduce).
"""
import argparse
import csv
import time

import numpy as np
import torch
import torch.distributed as dist

import panama_torch  # noqa: F401  (registers the backend)

ap = argparse.ArgumentParser()
ap.add_argument("--min-bytes", type=int, default=4096)
ap.add_argument("--max-bytes", type=int, default=64 << 20)
ap.add_argument("--budget-mib", type=float, default=64)
ap.add_argument("--max-iters", type=int, default=20)
ap.add_argument("--csv", default="allreduce_perf.csv")
args = ap.parse_args()

torch.set_num_threads(1)
dist.init_process_group("panama")
rank, world = dist.get_rank(), dist.get_world_size()
panama = dist.distributed_c10d._get_default_group()
gloo = dist.new_group(backend="gloo")
fmt = panama.channel.config.format
dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[fmt]
es = torch.tensor([], dtype=dtype).element_size()


def inputs(n, r):
    # Whole numbers in [-8, 8]: any sum of up to 16 of them is exact in every format.
    i = np.arange(n, dtype=np.int64)
    return ((i * 7 + r * 3) % 17 - 8).astype(np.float32)


def run(group, n):
    mine = torch.from_numpy(inputs(n, rank)).to(dtype)
    want = torch.from_numpy(sum(inputs(n, r) for r in range(world))).to(dtype)
    t = torch.empty_like(mine)
    iters = max(2, min(args.max_iters, int(args.budget_mib * (1 << 20) / (n * es))))
    times, wrong = [], 0
    for it in range(iters + 1):
        t.copy_(mine)
        dist.barrier(group=gloo)
        t0 = time.monotonic()
        dist.all_reduce(t, group=group)
        dt = time.monotonic() - t0
        wrong += int((t != want).sum())
        if it > 0:  # the first is the warm-up
            times.append(dt)
    # The slowest rank's time per iteration, and the wrong elements of every rank (over Gloo).
    stat = torch.tensor(times + [float(wrong)], dtype=torch.float64)
    every = [torch.zeros_like(stat) for _ in range(world)]
    dist.all_gather(every, stat, group=gloo)
    slowest = torch.stack(every)[:, :-1].max(0).values
    return float(slowest.mean()), int(sum(e[-1].item() for e in every)), iters


sizes = []
s = args.min_bytes
while s <= args.max_bytes:
    sizes.append(s)
    s *= 2
rows = []
if rank == 0:
    print(f"# all_reduce SUM, {world} ranks, {fmt}; panama = the accelerator (stand-in engine), gloo = "
          f"Gloo over the same links; time = mean of the slowest rank per iteration", flush=True)
    hdr = (f"# {'size':>10} {'count':>10} {'type':>5} | {'time(us)':>10} {'algbw':>7} {'busbw':>7} {'#wrong':>6} |"
           f" {'time(us)':>10} {'algbw':>7} {'busbw':>7} {'#wrong':>6}")
    print(f"# {'':>29} | {'panama':^34} | {'gloo':^34}\n{hdr}\n# {'(B)':>10} {'(elements)':>10} {'':>5} |"
          f" {'':>10} {'(GB/s)':>7} {'(GB/s)':>7} {'':>6} | {'':>10} {'(GB/s)':>7} {'(GB/s)':>7} {'':>6}", flush=True)
for size in sizes:
    n = size // es
    res = {}
    for name, group in (("panama", panama), ("gloo", gloo)):
        sec, wrong, iters = run(group, n)
        alg = size / sec / 1e9
        res[name] = (sec * 1e6, alg, alg * 2 * (world - 1) / world, wrong, iters)
    if rank == 0:
        p, g = res["panama"], res["gloo"]
        print(f"  {size:>10} {n:>10} {fmt:>5} | {p[0]:>10.1f} {p[1]:>7.4f} {p[2]:>7.4f} {p[3]:>6} |"
              f" {g[0]:>10.1f} {g[1]:>7.4f} {g[2]:>7.4f} {g[3]:>6}", flush=True)
        for name in ("panama", "gloo"):
            r = res[name]
            rows.append({"backend": name, "size": size, "count": n, "type": fmt, "time_us": f"{r[0]:.1f}",
                         "algbw_GBps": f"{r[1]:.6f}", "busbw_GBps": f"{r[2]:.6f}", "wrong": r[3], "iters": r[4]})
if rank == 0:
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    bad = sum(r["wrong"] for r in rows)
    print(f"# wrong elements in total: {bad}", flush=True)
dist.destroy_process_group()
