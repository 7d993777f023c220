"""Data-parallel training of a small CNN on scikit-learn's digits (8 x 8 images, shipped inside
python3-sklearn: no download), one process per worker (scripts/train runs it through
`scripts/testbed --torch`; docs/torch.md "Training").

    train_digits.py --backend panama|gloo [--hook] [--epochs 30] [--batch 64] [--lr 0.05] [--seed 1]
                    [--csv train.csv]

--backend panama: init_process_group("panama"), DDP's all-reduce through the accelerator.
--backend gloo:   init_process_group("gloo"); with --hook the buckets go through
                  panama_torch.allreduce_hook (Gloo stays the process group).
Every rank sees the same shuffled order; a global batch of --batch images is split over the ranks.
Rank 0 writes one CSV line per epoch (loss and accuracy on the whole training and test sets,
per-step time) and prints the final test accuracy.
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
ap.add_argument("--epochs", type=int, default=30)
ap.add_argument("--batch", type=int, default=64, help="global batch (split over the ranks)")
ap.add_argument("--lr", type=float, default=0.05)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--csv", default="train.csv")
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
y = torch.tensor(digits.target, dtype=torch.long)
order = np.random.RandomState(0).permutation(len(y))
test_idx, train_idx = torch.tensor(order[:360]), torch.tensor(order[360:])
x_train, y_train, x_test, y_test = x[train_idx], y[train_idx], x[test_idx], y[test_idx]

torch.manual_seed(args.seed)
model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Linear(32 * 4 * 4, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
ddp = DDP(model)
if args.hook:
    ddp.register_comm_hook(panama_torch.HookState(), panama_torch.allreduce_hook)
opt = torch.optim.SGD(ddp.parameters(), lr=args.lr, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
params = sum(p.numel() for p in model.parameters())


def evaluate(xs, ys):
    with torch.no_grad():
        out = model(xs)
        return loss_fn(out, ys).item(), (out.argmax(1) == ys).float().mean().item()


name = "panama" + (" (hook)" if args.hook else "") if args.backend == "panama" or args.hook else "gloo"
per = args.batch // world
steps_per_epoch = len(y_train) // args.batch
if rank == 0:
    print(f"{name}: {world} workers, {params} parameters ({4 * params} bytes per all-reduce), "
          f"{steps_per_epoch} steps of {args.batch} images per epoch", flush=True)
    out = open(args.csv, "w", newline="")
    w = csv.writer(out)
    w.writerow(["backend", "epoch", "train_loss", "train_acc", "test_loss", "test_acc", "step_ms_mean",
                "step_ms_median", "epoch_s"])
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
        step_ms.append(1e3 * (time.monotonic() - t0))
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
    print(f"{name}: final test accuracy {100 * te_acc:.2f} %", flush=True)
dist.destroy_process_group()
