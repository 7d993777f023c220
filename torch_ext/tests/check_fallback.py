"""The stand-in killed mid-training and started again: the job goes on on Gloo, then back on the
accelerator, every all_reduce exact to the path it took (ctest torch.netns.fallback; docs/torch.md
"Fallback and re-join").

    PANAMA_TIMEOUT_MS=1000 PANAMA_STATUS_WAIT_MS=50 \
      scripts/testbed --engine soft --workers 3 --placement 2,0,1 \
      --torch torch_ext/tests/check_fallback.py [STEPS KILL_AT RESTART_AT [pg|hook]]

Each rank trains a small MLP on its own shard of a synthetic set; its gradient goes through
dist.all_reduce on the "panama" group (pg), or through panama_torch.allreduce, the hooks' path,
with Gloo as the default group (hook); re-join probes every 4 requests. Before each step's
all_reduce every rank computes both references of that input: the tree-order sum over the
accelerator's ports (torch_ref_sum) and Gloo's own all_reduce on a separate Gloo group. Rank 0
kills the stand-in (SIGKILL) just before its all_reduce of step KILL_AT and starts it again (its command
line from standins.json) before step RESTART_AT. The path of each step (the channel's counter of
requests served by Gloo) must be: the accelerator before KILL_AT, Gloo from KILL_AT until the
re-join probe at or after RESTART_AT, the accelerator to the end; each result equal bit for bit to its path's reference, the two references different on some
steps (else the check would prove nothing), one log line per switch, the parameters identical on
every rank, the loss lower at the end, and the restarted stand-in's contexts completed vectors.
Gloo's traffic takes the management network (TESTBED_MGMT_IFACE): it must outlive the stand-in.
"""
import atexit
import datetime
import json
import os
import signal
import subprocess
import sys
import time

os.environ["GLOO_SOCKET_IFNAME"] = os.environ["TESTBED_MGMT_IFACE"]
os.environ.setdefault("PANAMA_REJOIN_EVERY", "4")
os.environ.setdefault("PANAMA_REJOIN_PROBE_MS", "1000")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import panama_torch  # noqa: E402
import tblib  # noqa: E402
from tblib import say  # noqa: E402

steps, kill_at, restart_at = (int(a) for a in (sys.argv[1:4] if len(sys.argv) > 3 else (30, 6, 14)))
mode = sys.argv[4] if len(sys.argv) > 4 else "pg"
assert mode in ("pg", "hook"), "mode: pg or hook"
torch.set_num_threads(1)
dist.init_process_group("panama" if mode == "pg" else "gloo", timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
if mode == "pg":
    ch = dist.distributed_c10d._get_default_group().channel
else:
    state = panama_torch.HookState()  # the hooks' path on a Gloo group: its fallback is that group
    ch = state.channel
ref_gloo = dist.new_group(backend="gloo")  # Gloo's order, for the steps the fallback runs on Gloo

torch.manual_seed(0)  # the same model on every rank; each rank its own data
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 4))
g = torch.Generator().manual_seed(100 + rank)
X = torch.randn(256, 32, generator=g)
teacher = torch.randn(32, 4, generator=torch.Generator().manual_seed(7))
Y = (X @ teacher).argmax(dim=1)
params = list(model.parameters())
restarted = None


def kill():
    name, pid = os.environ["TESTBED_STANDIN_PIDS"].split()[0].split(":")
    os.kill(int(pid), signal.SIGKILL)
    say(f"killed stand-in {name} (pid {pid})")


def restart():
    with open("standins.json") as f:
        sw, s = next(iter(json.load(f).items()))
    out, err = open("restarted.out", "w"), open("restarted.err", "w")
    # Bounded as the testbed's run is (netns.sh: 200 s), so that it cannot outlive the run by much
    # even if this script is killed outright (SIGKILL runs no handler).
    p = subprocess.Popen(["timeout", "200", "ip", "netns", "exec", s["ns"]] + s["argv"], stdout=out, stderr=err,
                         stdin=subprocess.DEVNULL)
    for _ in range(100):
        if tblib_has("restarted.err", "engine:"):
            break
        time.sleep(0.1)
    say(f"started stand-in {sw} again (pid {p.pid})")
    atexit.register(stop_restarted, p)  # an exit, an exception, or SIGTERM (below) stops it too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the testbed's timeout: run atexit
    return p


def stop_restarted(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)  # timeout(1) passes it on to the stand-in
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def tblib_has(path, text):
    with open(path, errors="replace") as f:
        return text in f.read()


failures, path, differ = [], "", 0
first_loss = last_loss = None
with tblib.captured_stderr() as logged:
    for step in range(steps):
        model.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(X), Y)
        loss.backward()
        first_loss = first_loss if first_loss is not None else loss.item()
        last_loss = loss.item()
        grad = torch.cat([p.grad.reshape(-1) for p in params])
        want_acc = tblib.reference(f"s{step}", grad, "fp32")
        want_gloo = grad.clone()
        dist.all_reduce(want_gloo, group=ref_gloo)
        differ += tblib.mismatches(want_acc, want_gloo) > 0
        if rank == 0 and step == restart_at:
            restarted = restart()
        dist.barrier()
        if rank == 0 and step == kill_at:
            kill()
        before = ch.stats()["gloo_requests"]
        if mode == "pg":
            dist.all_reduce(grad)
        else:
            panama_torch.allreduce(state, grad).wait()
        on_gloo = ch.stats()["gloo_requests"] > before
        path += "G" if on_gloo else "A"
        bad = tblib.mismatches(grad, want_gloo if on_gloo else want_acc)
        if bad:
            failures.append(f"step {step} ({'Gloo' if on_gloo else 'accelerator'}): {bad} elements differ from "
                            "that path's reference")
        with torch.no_grad():
            off = 0
            for p in params:
                p -= 0.3 * grad[off:off + p.numel()].view_as(p) / world
                off += p.numel()
st = ch.stats()
say(f"paths {path}; loss {first_loss:.4f} -> {last_loss:.4f}; the references differ on {differ} of {steps} steps; "
    f"fallbacks {st['fallbacks']}, rejoins {st['rejoins']} of {st['rejoin_attempts']} attempts, "
    f"{st['gloo_requests']} requests on Gloo")
lines = [x for x in logged if x.startswith("panama_torch: ")]
# The paths: A.. then G from the kill's step .. then A from a re-join probe at or after the restart.
first_g, last_g = path.find("G"), path.rfind("G")
if first_g != kill_at:
    failures.append(f"the first step on Gloo is {first_g}, not {kill_at}")
elif "A" in path[first_g:last_g + 1]:
    failures.append("a step between the fallback and the re-join ran on the accelerator")
if last_g < restart_at - 1 or last_g >= steps - 3:
    failures.append(f"the last step on Gloo is {last_g}: not back on the accelerator after the restart")
if (st["fallbacks"], st["rejoins"]) != (1, 1) or st["on_gloo"]:
    failures.append(f"fallbacks {st['fallbacks']}, rejoins {st['rejoins']}, on Gloo {st['on_gloo']}: expected 1, 1, no")
if sum("the accelerator failed at request" in x for x in lines) != 1 or sum("back on the accelerator" in x
                                                                             for x in lines) != 1:
    failures.append(f"not one log line per switch: {lines}")
if differ == 0:
    failures.append("the tree-order and Gloo references never differ: the path checks prove nothing")
if not last_loss < first_loss:
    failures.append(f"the loss did not go down ({first_loss} -> {last_loss})")
flat = torch.cat([p.detach().reshape(-1) for p in params])
r0 = flat.clone()
dist.broadcast(r0, 0, group=ref_gloo)
if tblib.mismatches(flat, r0):
    failures.append("the parameters differ from rank 0's")
dist.barrier(group=ref_gloo)
if rank == 0 and restarted is not None:
    restarted.send_signal(signal.SIGTERM)
    restarted.wait(timeout=30)
    try:
        with open("restarted.out") as f:
            done = sum(c["vectors_completed"] for c in json.load(f)["accelerator"]["contexts"])
        say(f"the restarted stand-in's contexts completed {done} vectors")
        if done == 0:
            failures.append("the restarted stand-in summed nothing")
    except (OSError, ValueError, KeyError) as e:
        failures.append(f"no final counters of the restarted stand-in: {e}")
for f in failures:
    say(f"FAIL: {f}")
say("ok" if not failures else "failed")
sys.exit(1 if failures else 0)
