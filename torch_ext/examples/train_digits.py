"""Data-parallel training of a CNN on scikit-learn's digits (8 x 8 images, shipped inside
python3-sklearn: no download), one process per worker (scripts/train runs it through
`scripts/testbed --torch`; docs/torch.md "Training").

    train_digits.py --backend panama|gloo [--hook] [--model small|cnn1m] [--epochs 30] [--batch 64]
                    [--lr 0.05] [--seed 1] [--bucket-mb MB] [--min-buckets N] [--csv train.csv]
                    [--steps-csv steps.csv]

--model small: 2 convolutions and 2 linear layers on the 8 x 8 images (152 KB of gradients: one
               DDP bucket).
--model cnn1m: 8 convolutions and 2 linear layers (1,254,346 parameters, 5.0 MB of gradients) on
               the images upscaled to 16 x 16 (bilinear, the same on every rank), He-initialised
               from the seed, the learning rate annealed to 0 over the run (cosine, per step: the
               final accuracy does not depend on where the last step lands); DDP's buckets of --bucket-mb (0.0625: 8 buckets once DDP has rebuilt
               them after the first step). The run fails unless DDP reports at least --min-buckets.

--backend panama: init_process_group("panama"), DDP's all-reduce through the accelerator.
--backend gloo:   init_process_group("gloo"); with --hook the buckets go through
                  panama_torch.allreduce_hook (Gloo stays the process group).
Every rank sees the same shuffled order; a global batch of --batch images is split over the ranks.
Rank 0 writes one CSV line per epoch (loss and accuracy on the whole training and test sets,
per-step time) and prints the final test accuracy; with --steps-csv also one line per step: its
time, and DDP's own timing of that step's backward pass (runtime statistics sampled at every
step: the backward computation, the all-reduces from the first bucket's launch to the last one's
end, and their overlap, the time from the first launch to the end of the computation).
"""
import argparse
import csv
import statistics
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from sklearn.datasets import load_digits

ap = argparse.ArgumentParser()
ap.add_argument("--backend", choices=["panama", "gloo"], default="panama")
ap.add_argument("--hook", action="store_true", help="gloo process group, panama_torch.allreduce_hook")
ap.add_argument("--model", choices=["small", "cnn1m"], default="small")
ap.add_argument("--epochs", type=int, default=30)
ap.add_argument("--batch", type=int, default=64, help="global batch (split over the ranks)")
ap.add_argument("--lr", type=float, default=0.05)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--bucket-mb", type=float, default=None, help="DDP's bucket_cap_mb (default: 25, cnn1m 0.0625)")
ap.add_argument("--min-buckets", type=int, default=0, help="fail unless DDP has at least this many buckets")
ap.add_argument("--csv", default="train.csv")
ap.add_argument("--steps-csv", default=None)
args = ap.parse_args()

torch.set_num_threads(1)
if args.backend == "panama" or args.hook:
    import panama_torch  # registers the backend
dist.init_process_group(args.backend)
rank, world = dist.get_rank(), dist.get_world_size()
if args.batch % world:
    sys.exit(f"--batch {args.batch} is not a multiple of the {world} workers")

# The data: 1797 digits, a fixed split (360 for the test), pixels scaled to [0, 1].
digits = load_digits()
x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
if args.model == "cnn1m":
    x = torch.nn.functional.interpolate(x, size=(16, 16), mode="bilinear", align_corners=False)
y = torch.tensor(digits.target, dtype=torch.long)
order = np.random.RandomState(0).permutation(len(y))
test_idx, train_idx = torch.tensor(order[:360]), torch.tensor(order[360:])
x_train, y_train, x_test, y_test = x[train_idx], y[train_idx], x[test_idx], y[test_idx]

torch.manual_seed(args.seed)
nn = torch.nn
if args.model == "small":
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))
else:
    def conv(i, o):
        return [nn.Conv2d(i, o, 3, padding=1), nn.ReLU()]
    model = nn.Sequential(  # 16x16 -> 8x8 -> 4x4 -> 2x2
        *conv(1, 16), *conv(16, 32), nn.MaxPool2d(2), *conv(32, 64), *conv(64, 64), nn.MaxPool2d(2),
        *conv(64, 128), *conv(128, 128), *conv(128, 128), nn.MaxPool2d(2), *conv(128, 256),
        nn.Flatten(), nn.Linear(256 * 2 * 2, 512), nn.ReLU(), nn.Linear(512, 10))
    for m in model:  # He initialisation: PyTorch's default leaves this depth of ReLUs untrained
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)
bucket_mb = args.bucket_mb if args.bucket_mb is not None else (0.0625 if args.model == "cnn1m" else 25)
ddp = DDP(model, bucket_cap_mb=bucket_mb)
if args.steps_csv:
    ddp._set_ddp_runtime_logging_sample_rate(1)  # DDP's timers at every step
if args.hook:
    ddp.register_comm_hook(panama_torch.HookState(), panama_torch.allreduce_hook)
opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
steps_per_epoch = len(y_train) // args.batch
sched = None
if args.model == "cnn1m":
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs * steps_per_epoch)
params = sum(p.numel() for p in model.parameters())


def evaluate(xs, ys):
    with torch.no_grad():
        out = model(xs)
        return loss_fn(out, ys).item(), (out.argmax(1) == ys).float().mean().item()


name = "panama" + (" (hook)" if args.hook else "") if args.backend == "panama" or args.hook else "gloo"
per = args.batch // world
if rank == 0:
    print(f"{name}: {world} workers, {params} parameters ({4 * params} bytes per all-reduce), "
          f"{steps_per_epoch} steps of {args.batch} images per epoch, bucket_cap_mb {bucket_mb}", flush=True)
    if args.steps_csv:
        sout = open(args.steps_csv, "w", newline="")
        sw = csv.writer(sout)
        sw.writerow(["backend", "step", "epoch", "step_ms", "buckets", "bwd_compute_ms", "bwd_comm_ms", "overlap_ms"])
    out = open(args.csv, "w", newline="")
    w = csv.writer(out)
    w.writerow(["backend", "epoch", "train_loss", "train_acc", "test_loss", "test_acc", "step_ms_mean",
                "step_ms_median", "epoch_s"])
step = 0
buckets = 0
for epoch in range(1, args.epochs + 1):
    perm = torch.randperm(len(y_train), generator=torch.Generator().manual_seed(args.seed * 1000 + epoch))
    step_ms = []
    t_epoch = time.monotonic()
    for s in range(steps_per_epoch):
        idx = perm[s * args.batch:(s + 1) * args.batch][rank * per:(rank + 1) * per]
        t0 = time.monotonic()
        opt.zero_grad()
        loss_fn(ddp(x_train[idx]), y_train[idx]).backward()  # DDP's all-reduce ends inside backward
        opt.step()
        if sched:
            sched.step()
        step_ms.append(1e3 * (time.monotonic() - t0))
        step += 1
        if args.steps_csv or args.min_buckets:
            ld = ddp._get_ddp_logging_data()
            # DDP buckets the first step as one, then rebuilds them in the gradients' order.
            sizes = ld.get("rebuilt_bucket_sizes") or ld.get("bucket_sizes", "")
            buckets = len([b for b in sizes.split(",") if b.strip()])
            if rank == 0 and args.steps_csv:
                ms = [ld.get(k, 0) / 1e6 for k in ("backward_compute_time", "backward_comm_time",
                                                    "backward_compute_comm_overlap_time")]
                sw.writerow([name, step, epoch, f"{step_ms[-1]:.3f}", buckets] + [f"{v:.3f}" for v in ms])
    epoch_s = time.monotonic() - t_epoch
    tr_loss, tr_acc = evaluate(x_train, y_train)
    te_loss, te_acc = evaluate(x_test, y_test)
    if rank == 0:
        w.writerow([name, epoch, f"{tr_loss:.6f}", f"{tr_acc:.6f}", f"{te_loss:.6f}", f"{te_acc:.6f}",
                    f"{statistics.mean(step_ms):.3f}", f"{statistics.median(step_ms):.3f}", f"{epoch_s:.3f}"])
        out.flush()
        print(f"{name} epoch {epoch:3d}: train loss {tr_loss:.4f} acc {100 * tr_acc:.2f} %, test loss {te_loss:.4f} "
              f"acc {100 * te_acc:.2f} %, step {statistics.mean(step_ms):.1f} ms", flush=True)
if rank == 0:
    out.close()
    if args.steps_csv:
        sout.close()
    print(f"{name}: final test accuracy {100 * te_acc:.2f} %", flush=True)
if args.min_buckets and buckets < args.min_buckets:
    sys.exit(f"{name}: DDP has {buckets} buckets, fewer than --min-buckets {args.min_buckets}")
if rank == 0 and buckets:
    print(f"{name}: DDP buckets: {buckets} of at most {bucket_mb} MB", flush=True)
dist.destroy_process_group()
