#!/usr/bin/env python3
"""End-to-end test of panama-host (docs/host-testing.md): network namespaces and veth pairs, one
`panama-host switch` (the Verilated RTL) and W workers over one backend, an all-reduce of random
tensors checked bit for bit against the tree-order sum of the inputs, ten more in one run, a
worker whose peers never answer must fail with a clear error in bounded time, then the same under
1 % loss (repair) and under ECN marking.

  [BACKEND=udp|tins|dpdk] host_netns.py PANAMA_HOST HOST_TREESUM RTL_DIR [WORKERS] [ELEMS]

BACKEND (default udp) is the workers' --backend; the bypass case (kernel UDP between two workers
through the stand-in) does not depend on it and runs with udp only. The topology is
scripts/pypanama's (netns.Star): every name carries a per-run suffix and everything is removed on
exit, failure included. Addresses (10.99.0.0/24, group 239.1.1.1) exist only inside the namespaces
created here. Exits 77 (Skipped) when network namespaces are not permitted.
"""

import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import (fail, lab_or_skip, load_json, read, same_file, script_args, stop,  # noqa: E402
                     treesum_gen, treesum_sum, wait_exit)

ARGS = script_args(__doc__, "PANAMA_HOST HOST_TREESUM RTL_DIR [WORKERS] [ELEMS]", 3, 2)
PH, SUMTOOL, RTL = ARGS[:3]
W = int(ARGS[3]) if len(ARGS) > 3 else 3
N = int(ARGS[4]) if len(ARGS) > 4 else 16384  # elements per worker: 64 KiB of fp32
TREES = 2
BACKEND = os.environ.get("BACKEND", "udp")
if BACKEND not in ("udp", "tins", "dpdk"):
    fail("BACKEND must be udp, tins or dpdk")
print(f"backend: {BACKEND}", flush=True)

# Namespaces first (a user who may not create them is Skipped at once), then the RTL verilated
# (cached after the first run) before any namespace exists: a slow first build that runs out of
# time leaves nothing behind.
lab = lab_or_skip("ph", "host_netns.")
P = lab.path
with open(P("prepare.json"), "w") as f:
    json.dump({"contexts": [{"jid": 1, "tid": 0, "members": [0, 1], "mode": "multicast",
                             "group_mac": "01:00:5e:01:01:01", "group_ip": "239.1.1.1"}]}, f)
if subprocess.run(["timeout", "900", PH, "switch", "--rtl", RTL, "--contexts", P("prepare.json"), "--ifaces", "none",
                   "--prepare"], stdout=subprocess.DEVNULL).returncode != 0:
    fail(f"could not verilate {RTL}")

star = lab.star(W, "10.99.0")
ctx = [{"jid": 1, "tid": t, "members": list(range(W)), "mode": "multicast", "group_mac": "01:00:5e:01:01:01",
        "group_ip": "239.1.1.1"} for t in range(TREES)]
with open(P("ctx.json"), "w") as f:
    json.dump({"agg_port": 9056, "contexts": ctx}, f)

sw = None


def start_switch(what, *extra):
    """A fresh stand-in (contexts enabled again: VIDs from 0), up once its first counters are out.
    It runs as itself under ip netns exec (no timeout(1) wrapper, which would pass a SIGTERM on to
    its whole process group, the RTL harness included, before the counters are out)."""
    global sw
    if os.path.exists(P("counters.json")):
        os.remove(P("counters.json"))
    sw = lab.spawn([PH, "switch", "--rtl", RTL, "--contexts", P("ctx.json"), "--ifaces", star.ifaces, "--counters",
                    P("counters.json"), "--export-interval", "0.2", "--duration", "100"] + list(extra),
                   ns=star.sw_ns, stdout=P("switch.out"), stderr=P("switch.err"))
    for _ in range(100):
        if os.path.exists(P("counters.json")) and os.path.getsize(P("counters.json")) > 0:
            return
        if sw.poll() is not None:
            fail(f"the {what} switch exited:", P("switch.err"))
        time.sleep(0.1)
    fail(f"the {what} switch did not start within 10 s", P("switch.err"))


def stop_and_show_switch():
    stop(sw)
    try:
        j = json.loads(read(P("switch.out")))
        print("switch:", json.dumps(j["switch_ports"]))
        print("accelerator contexts:", json.dumps(j["accelerator"]["contexts"]), flush=True)
    except (OSError, ValueError, KeyError):
        pass


def run_workers(iterations, tag, first_vids, *extra):
    """W workers of one all-reduce run: True when every one exits 0 (a failure shows its stderr)."""
    procs = []
    for i in range(W):
        procs.append(lab.spawn(
            [PH, "worker", "--backend", BACKEND, "--iface", star.wif[i], "--job", 1, "--rank", i, "--world", W,
             "--trees", TREES, "--in", P(f"in{i}.bin"), "--out", P(f"out{i}.bin"), "--agg-ip", star.agg_ip,
             "--group-ip", "239.1.1.1", "--timeout-ms", 3000, "--iterations", iterations, "--first-vid", first_vids,
             "--stats", P(f"stats{tag}.{i}.json")] + list(extra),
            ns=star.ns[i], timeout=60, stderr=P(f"worker{i}.err")))
    ok = True
    for i, p in enumerate(procs):
        if p.wait() != 0:
            print(f"FAIL: worker {i} ({tag}):\n{read(P(f'worker{i}.err'))}")
            ok = False
    return ok


def check_outputs(what, each=0):
    """Every worker's output (and with each = K, its K per-iteration outputs, --out-each) is the
    tree-order sum, bit for bit."""
    for i in range(W):
        for name in [f"out{i}.bin"] + [f"out{i}.bin.{k}" for k in range(1, each + 1)]:
            if not same_file(P("expected.bin"), P(name)):
                fail(f"worker {i}'s output {name} differs from the tree-order sum ({what})")


def remove_outputs():
    for name in os.listdir(lab.tmp):
        if name.startswith("out"):
            os.remove(P(name))


start_switch("lossless")
for i in range(W):
    treesum_gen(SUMTOOL, 1000 + i, N, P(f"in{i}.bin"))
treesum_sum(SUMTOOL, P("expected.bin"), [(P(f"in{i}.bin"), i) for i in range(W)])

# 0. Bypass traffic through the accelerator and the switch chip (ARP flooding, MAC learning).
if BACKEND == "udp":
    listener = lab.spawn([sys.executable, "-c", f"""
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("{star.ip[1]}", 7000)); s.settimeout(8)
d, a = s.recvfrom(100); s.sendto(d[::-1], a)"""], ns=star.ns[1], timeout=10)
    time.sleep(0.3)
    talk = subprocess.run(["ip", "netns", "exec", star.ns[0], "timeout", "10", sys.executable, "-c", f"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
for _ in range(8):
    s.sendto(b"bypass-hello", ("{star.ip[1]}", 7000))
    try:
        d, a = s.recvfrom(100); sys.exit(0 if d == b"olleh-ssapyb" else 1)
    except socket.timeout:
        pass
sys.exit(1)"""])
    if talk.returncode != 0:
        fail("UDP between workers through the stand-in", P("counters.json"))
    if wait_exit(listener, 10) != 0:
        fail("UDP listener")
    print(f"PASS: bypass traffic (UDP {star.ip[0]} <-> {star.ip[1]} through the stand-in, ARP flooded and learned)")

# 1. One all-reduce; every output equals the tree-order sum, bit for bit.
if not run_workers(1, "a", 0):
    fail("first all-reduce", P("switch.err"))
check_outputs("one all-reduce")
print(f"PASS: {BACKEND}: {W} workers, {TREES} trees, {N * 4} bytes each: outputs bit-identical to the tree-order sum")

# 2. Ten more all-reduces in one run; new processes continue the job's VIDs where the contexts are
#    (the previous run's next_vid).
remove_outputs()
nxt = ",".join(str(t["next_vid"]) for t in load_json(P("statsa.0.json"))["trees"])
if not run_workers(10, "b", nxt, "--progress-bar", "on", "--progress-bar-interval", "0.2", "--out-each"):
    fail("ten all-reduces")
check_outputs("10 iterations", each=10)
print("PASS: every one of the 10 iterations' outputs of every worker bit-identical to the tree-order sum")
# --progress-bar on without a terminal: plain lines, non-decreasing, the last one at 100 %.
prog = [float(m.group(1)) for m in re.finditer(r"worker 0: progress ([0-9.]+) %", read(P("worker0.err")))]
if len(prog) < 2 or prog != sorted(prog) or prog[-1] != 100.0:
    fail(f"progress lines of worker 0: {prog}")
print(f"PASS: progress lines of worker 0: {len(prog)}, ending at {prog[-1]} %")
for i in range(W):
    print(f"worker {i}: {json.dumps(load_json(P(f'statsb.{i}.json')), separators=(',', ':'))}")

# 3. A worker whose peers never answer: a clear error within bounded time (stale VIDs are dropped
#    by the accelerator: the context has moved on).
t_lone = time.monotonic()
lone = subprocess.run(["timeout", "20", "ip", "netns", "exec", star.ns[0], PH, "worker", "--backend", BACKEND, "--iface",
                       star.wif[0], "--job", "1", "--rank", "0", "--world", str(W), "--trees", str(TREES), "--in",
                       P("in0.bin"), "--out", P("lonely.bin"), "--agg-ip", star.agg_ip, "--group-ip", "239.1.1.1",
                       "--timeout-ms", "500"], stderr=open(P("lonely.err"), "w"))
t_lone = time.monotonic() - t_lone
if lone.returncode == 0:
    fail("a lone worker succeeded")
if lone.returncode == 124 or t_lone > 15:  # 124: killed by timeout(1), it did not end by itself
    fail(f"the lone worker ended after {t_lone:.1f} s (exit {lone.returncode}), not by itself within 15 s (its wait is 8 s)")
if "timeout: no result" not in read(P("lonely.err")):
    fail("unclear error:", P("lonely.err"))
if os.path.exists(P("lonely.bin")):
    fail("output written despite the error")
print(f"PASS: lone worker, {t_lone:.1f} s: {read(P('lonely.err'))[:200]}")
stop_and_show_switch()

# 4. Loss repair: a fresh stand-in (VIDs from 0) that drops 1 % of the frames in and out of every
#    port; every output still exact.
remove_outputs()
start_switch("lossy", "--loss", "0.01", "--loss-seed", "7")
if not run_workers(5, "c", 0):
    fail("all-reduces under 1 % loss")
check_outputs("under loss")
for i in range(W):
    j = load_json(P(f"statsc.{i}.json"))
    print(f"worker {i} under 1 % loss: {({k: j[k] for k in ('lost', 'repaired', 'repair_rounds', 'goodput_mbps')})}")
print(f"PASS: {BACKEND}: 1 % loss in and out of every port: outputs exact (loss repair)")
stop_and_show_switch()

# 5. Congestion marks end to end: a slow egress (200 Mbit/s, ECN threshold 2 packets) marks the
#    results CE; the workers read the ECN bits (udp: the kernel's IP_RECVTOS; tins, dpdk: the IPv4
#    header of the captured frame); every worker sees the same marks and keeps the same window.
#    A long status wait: a worker that starts first (dpdk's EAL takes a moment) must not settle
#    its first vectors as lost while its peers start, which would give it other marks.
remove_outputs()
start_switch("slow", "--rate-mbps", "200", "--ecn-threshold", "2")
if not run_workers(3, "d", 0, "--status-wait-ms", "2000"):
    fail("all-reduces through a slow egress")
check_outputs("ECN run")
st = [load_json(P(f"statsd.{i}.json")) for i in range(W)]
ce = [s["results_ce"] for s in st]
win = [[(t["cwnd"], t["alpha"]) for t in s["trees"]] for s in st]
print("ECN run: results marked CE per worker", ce, "windows (cwnd, alpha) per tree", win[0])
if min(ce) == 0:
    fail("no CE-marked result reached a worker")
# Every worker sees the same marks on every result all of them received in order (a result one
# worker settled as lost, e.g. a peer starting late on a loaded machine, is left out on all).
if any(s.get("evidence_dropped", 0) for s in st):
    fail("evidence lists capped: the run is too long for this check")
marked = [set(map(tuple, s["ce_vids"])) for s in st]
unseen = set().union(*(set(map(tuple, s["unseen_vids"])) for s in st))
common = [m - unseen for m in marked]
if any(c != common[0] for c in common):
    fail("workers disagree on the CE marks of common results")
if not common[0]:
    fail("no CE-marked result was received by every worker")
print(f"ECN marks agree on {len(common[0])} CE-marked results received by every worker")
# With no result unseen anywhere, the windows follow the same marks: equal, bit for bit.
if not unseen and any(x != win[0] for x in win):
    fail("workers disagree on windows")
print(f"PASS: {BACKEND}: ECN marks from the stand-in's queues reach every worker alike")
stop(sw)
print(f"PASS ({BACKEND})")
