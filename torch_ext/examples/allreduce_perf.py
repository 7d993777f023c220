"""An nccl-tests-style all_reduce sweep of the "panama" backend and of Gloo in the same run
(scripts/allreduce-perf runs it through `scripts/testbed --torch`; docs/torch.md "all_reduce").

    allreduce_perf.py [--min-bytes 4096] [--max-bytes 67108864] [--budget-mib 64] [--max-iters 20]
                      [--csv allreduce_perf.csv]

Per size (powers of two) and backend: one warm-up, then iterations until --budget-mib of tensor
has been reduced (at least 2, at most --max-iters). Every iteration starts from fresh inputs after
a barrier and is timed on its own (its time is the slowest rank's); every result is checked
against the exact sum (inputs are small whole numbers, so the sum is exact in any order): #wrong
counts the elements that differ, over all iterations and ranks.
algbw = size / time per iteration, reported as the median over the iterations with its min and
max, and the ratio of the medians (panama / Gloo). No busbw: nccl-tests' factor 2 (n - 1) / n
describes a ring's traffic per link, not in-network aggregation's (each worker sends and
receives the tensor once).
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
    slowest = torch.stack(every)[:, :-1].max(0).values.numpy()
    alg = (n * es) / slowest / 1e9  # GB/s per iteration
    return np.median(alg), alg.min(), alg.max(), float(np.median(slowest)), int(sum(e[-1].item() for e in every)), iters


sizes = []
s = args.min_bytes
while s <= args.max_bytes:
    sizes.append(s)
    s *= 2
rows = []
if rank == 0:
    print(f"# all_reduce SUM, {world} ranks, {fmt}; panama = the accelerator (stand-in engine), gloo = "
          f"Gloo over the same links; algbw = size / the slowest rank's time, median [min-max] over the "
          f"iterations", flush=True)
    print(f"# {'size(B)':>10} {'count':>10} {'type':>5} | {'panama algbw (GB/s)':>30} {'#wrong':>6} |"
          f" {'gloo algbw (GB/s)':>30} {'#wrong':>6} | {'panama/gloo':>11}", flush=True)
for size in sizes:
    n = size // es
    res = {}
    for name, group in (("panama", panama), ("gloo", gloo)):
        res[name] = run(group, n)
    if rank == 0:
        p, g = res["panama"], res["gloo"]
        ratio = p[0] / g[0]
        cell = lambda r: f"{r[0]:>9.4f} [{r[1]:.4f}-{r[2]:.4f}]"  # noqa: E731
        print(f"  {size:>10} {n:>10} {fmt:>5} | {cell(p):>30} {p[4]:>6} | {cell(g):>30} {g[4]:>6} | {ratio:>11.2f}",
              flush=True)
        for name in ("panama", "gloo"):
            r = res[name]
            rows.append({"backend": name, "size": size, "count": n, "type": fmt, "time_us_median": f"{r[3] * 1e6:.1f}",
                         "algbw_GBps": f"{r[0]:.6f}", "algbw_GBps_min": f"{r[1]:.6f}", "algbw_GBps_max": f"{r[2]:.6f}",
                         "panama_over_gloo": f"{ratio:.4f}", "wrong": r[4], "iters": r[5]})
if rank == 0:
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    bad = sum(r["wrong"] for r in rows)
    print(f"# wrong elements in total: {bad}", flush=True)
dist.destroy_process_group()
