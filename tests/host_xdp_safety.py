#!/usr/bin/env python3
"""Safe XDP (docs/host.md "Backends"): the xdp backend never replaces another XDP program, leaves
nothing attached after a SIGKILL, and refuses a multi-queue interface with a clear line.
 1. coexistence: a foreign XDP program (xdp_foreign: netlink, generic mode) on a worker's interface
    and on a stand-in's port: `worker --backend xdp` and `switch --backend xdp` each exit with one
    line naming it ("'foreign_pass' (id N)", "not replaced"), and the same program is still there;
 2. SIGKILL: a worker waiting in an all-reduce with its program attached is killed; its program
    is gone from the interface within 2 s (a bpf_link dies with its process);
 3. queues: a veth with 4 receive queues is refused with one line naming the queue count and the
    ethtool settings, and nothing stays attached.

  host_xdp_safety.py PANAMA_HOST XDP_FOREIGN

The namespaces are scripts/pypanama's. Exit 0 pass, 1 fail, 77 skip (no namespaces, or AF_XDP or
XDP programs refused here).
"""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import (XdpOn, fail, lab_or_skip, multiqueue_veth,  # noqa: E402
                     read, script_args, sh, skip, wait_until)
from pypanama.standin import XDP_REFUSED, first_match  # noqa: E402

PH, FOREIGN = script_args(__doc__, "PANAMA_HOST XDP_FOREIGN", 2)

lab = lab_or_skip("xs", "host_xdp.")
P = lab.path
NS = lab.ns_name("x")
lab.mkns(NS) or fail(f"ip netns add {NS}")
W, S = lab.if_name("w"), lab.if_name("s")  # one veth pair: the worker's end and the stand-in's
sh("ip", "link", "add", "name", W, "type", "veth", "peer", "name", S, ns=NS)
for i in (W, S):
    sh("ip", "link", "set", i, "up", ns=NS)
sh("ip", "addr", "add", "10.95.0.1/24", "dev", W, ns=NS)
sh("ip", "neigh", "replace", "10.95.0.254", "lladdr", "02:aa:00:00:00:01", "dev", W, "nud", "permanent", ns=NS)
with open(P("grad.bin"), "wb") as f:
    f.write(os.urandom(400000))
with open(P("ctx.json"), "w") as f:
    f.write('{ "contexts": [ { "jid": 1, "tid": 0, "members": [0], "mode": "multicast",'
            ' "group_mac": "01:00:5e:01:01:01", "group_ip": "239.1.1.1" } ] }\n')
RTL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rtl_out", "p4_10g_200mhz")


XDP = XdpOn(FOREIGN, NS)
foreign, attached = XDP.run, XDP.attached


def worker(iface, timeout_ms=3000, **kw):
    return [PH, "worker", "--backend", "xdp", "--iface", iface, "--job", "1", "--rank", "0", "--world", "2", "--in",
            P("grad.bin"), "--out", P("res.bin"), "--agg-ip", "10.95.0.254", "--group-ip", "239.1.1.1", "--timeout-ms",
            str(timeout_ms)]


def refused_here(err_path):
    line = first_match(err_path, XDP_REFUSED)
    if line and "already has" not in line and "receive queues" not in line:
        skip(f"AF_XDP or XDP programs are refused here: {line}")


# --- 1. coexistence ----------------------------------------------------------------------------
r = foreign("attach", W)
if r.returncode != 0:
    skip(f"XDP programs cannot be attached here: {r.stderr.strip()}")
fid = int(r.stdout.strip())
for what, argv, iface in (("worker", worker(W), W),
                          ("stand-in", [PH, "switch", "--rtl", RTL, "--engine", "soft", "--contexts", P("ctx.json"),
                                        "--backend", "xdp", "--ifaces", W, "--duration", "5"], W)):
    rc = subprocess.run(["timeout", "30", "ip", "netns", "exec", NS] + argv, stdout=subprocess.DEVNULL,
                        stderr=open(P(f"{what}.err"), "w")).returncode
    refused_here(P(f"{what}.err"))
    err = read(P(f"{what}.err")).strip()
    if rc == 0:
        fail(f"{what}: started on an interface with a foreign XDP program")
    if f"'foreign_pass' (id {fid})" not in err or "not replaced" not in err or len(err.splitlines()) != 1:
        fail(f"{what}: not one line naming the foreign program: {err}")
    if attached(iface) != (fid, "foreign_pass"):
        fail(f"{what}: the foreign program is no longer attached: {attached(iface)}")
    print(f"ok: {what} refused, the foreign program kept: {err}")
if foreign("detach", W).returncode != 0 or attached(W)[0] != 0:
    fail("detaching the foreign program")

# --- 2. SIGKILL leaves nothing attached ----------------------------------------------------------
w = lab.spawn(worker(W, timeout_ms=60000) + ["--status-wait-ms", "10000"], ns=NS, stderr=P("kill.err"))
if not wait_until(lambda: attached(W)[1] == "panama_steer" or w.poll() is not None, 20):
    fail("the worker's program never appeared on the interface", P("kill.err"))
if w.poll() is not None:
    refused_here(P("kill.err"))
    fail("the worker ended early", P("kill.err"))
XDP.killed_leaves_nothing(w, W)

# --- 3. a multi-queue interface ------------------------------------------------------------------
MW, MS = multiqueue_veth(lab, NS, 4, "10.94.0.1/24")
rc = subprocess.run(["timeout", "30", "ip", "netns", "exec", NS] + worker(MW), stdout=subprocess.DEVNULL,
                    stderr=open(P("mq.err"), "w")).returncode
refused_here(P("mq.err"))
err = read(P("mq.err")).strip()
if rc == 0 or len(err.splitlines()) != 1 or "4 receive queues" not in err or "ethtool -N" not in err:
    fail(f"a 4-queue interface: not one refusal naming the queues and the ntuple rule (exit {rc}): {err}")
if attached(MW)[0] != 0:
    fail(f"the refused worker left its program attached: {attached(MW)}")
print(f"ok: 4-queue interface refused: {err}")
print("PASS")
