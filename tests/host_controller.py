#!/usr/bin/env python3
"""Test of `panama-host controller` against the Verilated RTL (docs/host-testing.md):
 1. offline: the register-write list computed from regmap.json, applied to the RTL's register file
    (the design's harness, AXI4-Lite), reads back exactly as the same CTX.json loaded by the
    harness itself (every configuration register of every context, AGG_PORT);
 2. live: a running stand-in (`switch --control`, started with no context) is programmed through
    its control socket; 3 workers all-reduce exactly; the job's contexts are disabled (a worker
    then gets the timeout error: no context); they are re-enabled with two members instead of
    three, and the two workers all-reduce exactly.

  host_controller.py PANAMA_HOST HOST_TREESUM RTL_DIR

Part 2's topology is scripts/pypanama's (netns.Star, 10.96.0.0/24). Exit 0 pass, 1 fail, 77 skip
(no network namespaces here: part 1 has then passed).
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import fail, netns, read, same_file, script_args, skip, treesum_gen, treesum_sum  # noqa: E402

PH, SUMTOOL, RTL = script_args(__doc__, "PANAMA_HOST HOST_TREESUM RTL_DIR", 3)

lab = netns.Lab("pc", tmp_prefix="host_ctl.", if_prefix="pc")  # its scratch directory goes with it
netns.exit_on_signals(1)
P = lab.path

with open(P("ctx.json"), "w") as f:
    json.dump({"agg_port": 9100, "contexts": [
        {"jid": 7, "tid": 0, "members": [0, 1, 2], "mode": "multicast", "group_mac": "01:00:5e:01:07:00",
         "group_ip": "239.1.7.0", "timeout_cycles": 5000},
        {"jid": 7, "tid": 1, "members": [0, 2], "mode": "upstream", "upstream_port": 3,
         "src_mac": "02:aa:00:00:00:09", "src_ip": "10.0.0.253"},
        {"jid": 300, "tid": 255, "members": [3], "mode": "multicast", "group_mac": "01:00:5e:7f:00:01",
         "group_ip": "239.127.0.1"}]}, f)
with open(P("empty.json"), "w") as f:
    f.write('{ "contexts": [] }\n')

# --- 1. offline list on the RTL register file --------------------------------------------------
prep = subprocess.run(["timeout", "1200", PH, "switch", "--rtl", RTL, "--contexts", P("empty.json"), "--ifaces", "none",
                       "--prepare"], stdout=subprocess.PIPE, text=True)
if prep.returncode != 0:
    fail(f"could not verilate {RTL}")
harness = prep.stdout.strip()
subprocess.run([PH, "controller", "--regmap", RTL, "--contexts", P("ctx.json"), "--writes", P("writes.txt")], check=True)
writes = read(P("writes.txt"))
if "CTX_JID" not in writes and "JID 7" not in writes:
    fail("no comments in the list")
with open(os.path.join(RTL, "regmap.json")) as f:
    m = json.load(f)
reads = [f"read {[r for r in m['global'] if r['name'] == 'AGG_PORT'][0]['offset']}"]
cb = m["context_block"]
for c in range(cb["count"]):
    for r in cb["registers"]:
        if "VECTORS" not in r["name"]:
            reads.append(f"read {cb['base'] + c * cb['stride'] + r['offset']}")


def harness_session(contexts, commands):
    """The harness's live register file loaded with contexts, the commands applied: its answers."""
    r = subprocess.run(["timeout", "60", harness, "--live", "--config", os.path.join(RTL, "config.json"), "--contexts",
                        contexts], input="\n".join(commands + ["quit"]) + "\n", stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        fail(f"the harness exited {r.returncode}")
    return [line for line in r.stdout.splitlines() if line != "ok"]


loaded = harness_session(P("ctx.json"), reads)
write_cmds = ["write " + line.split("#")[0].strip() for line in writes.splitlines() if line.split("#")[0].strip()]
written = harness_session(P("empty.json"), write_cmds + reads)
if len(loaded) != len(reads):
    fail(f"harness reads: {len(loaded)} answers to {len(reads)} reads")
if loaded != written:
    diff = [(r, a, b) for r, a, b in zip(reads, loaded, written) if a != b][:5]
    fail(f"the offline list gives another register state than CTX.json loading: {diff}")
print(f"PASS: offline list ({len(write_cmds)} writes) on the RTL register file = CTX.json loading ({len(reads)} registers)")

# --- 2. live reprogramming of a running stand-in -----------------------------------------------
why = netns.refusal()
if why:
    skip(f"{why} (offline part passed)")
star = lab.star(3, "10.96.0")
sw = lab.spawn([PH, "switch", "--rtl", RTL, "--contexts", P("empty.json"), "--ifaces", star.ifaces, "--control",
                P("ctl"), "--duration", "90"], ns=star.sw_ns, timeout=100, stdout=P("switch.out"),
               stderr=P("switch.err"))
CTL = [PH, "controller", "--regmap", RTL, "--control", P("ctl")]


def ctl(*args, **kw):
    return subprocess.run(CTL + list(args), **kw)


for _ in range(100):
    if os.path.exists(P("ctl")) and ctl("--show", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
        break
    time.sleep(0.1)
GROUP = ["--group-mac", "01:00:5e:01:01:01", "--group-ip", "239.1.1.1"]
show = ctl("--job", "3", "--trees", "2", "--members", "0,1,2", "--mode", "multicast", *GROUP, "--show",
           stdout=subprocess.PIPE, text=True)
if show.returncode != 0:
    fail("live programming", P("switch.err"))
table = json.loads(show.stdout)["contexts"]
got = [(c["index"], c["jid"], c["tid"], c["members"]) for c in table]
if got != [(0, 3, 0, [0, 1, 2]), (1, 3, 1, [0, 1, 2])]:
    fail(f"the table read back: {got}")
for i in range(3):
    treesum_gen(SUMTOOL, 77 + i, 20000, P(f"in{i}.bin"))


def workers(tag, ranks):
    """An all-reduce among these servers (world = their number, rank = position, port = server)."""
    procs = [lab.spawn([PH, "worker", "--iface", star.wif[i], "--job", 3, "--rank", k, "--world", len(ranks),
                        "--trees", 2, "--in", P(f"in{i}.bin"), "--out", P(f"out{tag}.{i}.bin"), "--agg-ip",
                        star.agg_ip, "--group-ip", "239.1.1.1", "--timeout-ms", 1500],
                       ns=star.ns[i], timeout=30, stderr=P(f"worker{tag}.{i}.err")) for k, i in enumerate(ranks)]
    return all([p.wait() == 0 for p in procs])


treesum_sum(SUMTOOL, P("exp3.bin"), [(P(f"in{i}.bin"), i) for i in range(3)])
if not workers("a", [0, 1, 2]):
    fail("all-reduce after live programming", *[P(f"workera.{i}.err") for i in range(3)])
for i in range(3):
    if not same_file(P("exp3.bin"), P(f"outa.{i}.bin")):
        fail(f"worker {i} output (3 members)")
print("PASS: live programming through the control socket; 3 workers exact")

if ctl("--disable", "0,1").returncode != 0:
    fail("disable")
if workers("b", [0, 1, 2]):
    fail("an all-reduce succeeded with the contexts disabled")
if "timeout: no result" not in read(P("workerb.0.err")):
    fail("unclear error", P("workerb.0.err"))
if os.path.exists(P("outb.0.bin")):
    fail("output written with the contexts disabled")
print(f"PASS: contexts disabled live: {read(P('workerb.0.err'))[:120]}")

# Re-enabled with two members (ports 0 and 2): expected VID 0 again, the two workers exact.
if ctl("--job", "3", "--trees", "2", "--members", "0,2", "--mode", "multicast", *GROUP).returncode != 0:
    fail("re-enable")
treesum_sum(SUMTOOL, P("exp2.bin"), [(P("in0.bin"), 0), (P("in2.bin"), 2)])
if not workers("c", [0, 2]):
    fail("all-reduce after changing the members", P("workerc.0.err"), P("workerc.2.err"))
for i in (0, 2):
    if not same_file(P("exp2.bin"), P(f"outc.{i}.bin")):
        fail(f"worker {i} output (2 members)")
print("PASS: members changed live (0,1,2 -> 0,2): 2 workers exact")
print("PASS")
