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
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import fail, lab_or_skip, read, sh, skip, wait_exit, wait_until  # noqa: E402
from pypanama.standin import XDP_REFUSED, first_match  # noqa: E402

if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    sys.exit(0)
if len(sys.argv) != 3:
    print("usage: host_xdp_safety.py PANAMA_HOST XDP_FOREIGN", file=sys.stderr)
    sys.exit(2)
PH, FOREIGN = sys.argv[1:3]

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


def foreign(verb, iface):
    return subprocess.run(["ip", "netns", "exec", NS, FOREIGN, verb, iface], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def attached(iface):
    """(id, name) of the XDP program on iface: (0, '-') when none."""
    r = foreign("query", iface)
    if r.returncode != 0:
        fail(f"xdp_foreign query {iface}: {r.stderr.strip()}")
    pid, name = r.stdout.split()
    return int(pid), name


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
pid = attached(W)[0]
w.send_signal(signal.SIGKILL)
wait_exit(w, 10)
t0 = time.monotonic()
if not wait_until(lambda: attached(W)[0] == 0, 2, 0.05):
    fail(f"2 s after the worker's SIGKILL, its program is still attached: {attached(W)}")
print(f"ok: worker SIGKILLed with its program (id {pid}) attached: gone {int((time.monotonic() - t0) * 1000)} ms later")

# --- 3. a multi-queue interface ------------------------------------------------------------------
MW, MS = lab.if_name("mw"), lab.if_name("ms")
sh("ip", "link", "add", "name", MW, "numrxqueues", "4", "numtxqueues", "4", "type", "veth", "peer", "name", MS,
   "numrxqueues", "4", "numtxqueues", "4", ns=NS)
for i in (MW, MS):
    sh("ip", "link", "set", i, "up", ns=NS)
sh("ip", "addr", "add", "10.94.0.1/24", "dev", MW, ns=NS)
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
