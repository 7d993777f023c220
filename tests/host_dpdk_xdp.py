#!/usr/bin/env python3
"""The dpdk backend's net_af_xdp PMD with the project's XDP program (docs/host.md "Backends `tins`
and `dpdk`"): the PMD loads `panama_steer` (`xdp_prog=`), which takes only aggregation traffic, so
the kernel keeps the rest of the interface while a DPDK worker runs.
 1. kernel traffic: while `worker --backend dpdk` (PANAMA_DPDK_PMD=af_xdp; its next hop's MAC not
    in the neighbour table, resolved by the kernel) waits in an all-reduce, a UDP datagram to
    another port crosses the worker's veth both ways with the neighbour caches flushed (ARP request
    and reply through the interface, the datagram and its echo), and the program on the interface
    is `panama_steer`. The PMD's default program takes every frame of queue 0 and fails this;
 2. its private copy of the program object is gone (TMPDIR stays empty);
 3. SIGKILL: the worker's program is gone from the interface within 2 s (bpf_link);
 4. coexistence: a foreign XDP program (xdp_foreign) on the interface: the worker exits with one
    line naming it ("'foreign_pass' (id N)", "not replaced"), and the same program is still there;
 5. queues: on a veth with 4 receive queues PANAMA_DPDK_PMD=af_xdp is refused with one line naming
    the count and the ethtool settings, and the default (auto) runs the af_packet PMD instead.

  host_dpdk_xdp.py PANAMA_HOST XDP_FOREIGN

Exit 0 pass, 1 fail, 77 skip (no namespaces, or AF_XDP / the net_af_xdp PMD refused here).
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import (XdpOn, fail, lab_or_skip, multiqueue_veth, read,  # noqa: E402
                     script_args, sh, skip, stop, wait_until)
from pypanama.workers import BACKEND_REFUSED  # noqa: E402

PH, FOREIGN = script_args(__doc__, "PANAMA_HOST XDP_FOREIGN", 2)

lab = lab_or_skip("dx", "host_dpdk_xdp.")
P = lab.path
NS, PEER = lab.ns_name("w"), lab.ns_name("p")  # the worker's namespace and its peer's
for n in (NS, PEER):
    lab.mkns(n) or fail(f"ip netns add {n}")
W, S = lab.if_name("w"), lab.if_name("p")
lab.veth(W, NS, S, PEER)
sh("ip", "addr", "add", "10.93.0.1/24", "dev", W, ns=NS)
sh("ip", "addr", "add", "10.93.0.2/24", "dev", S, ns=PEER)
sh("ip", "neigh", "replace", "10.93.0.254", "lladdr", "02:aa:00:00:00:01", "dev", W, "nud", "permanent", ns=NS)
with open(P("grad.bin"), "wb") as f:
    f.write(os.urandom(400000))
TMP = P("tmp")  # the worker's TMPDIR: where its private copy of the program object lives
os.mkdir(TMP, 0o700)
ENV = dict(os.environ, PANAMA_DPDK_PMD="af_xdp", TMPDIR=TMP)


XDP = XdpOn(FOREIGN, NS)
foreign, attached = XDP.run, XDP.attached


def worker(timeout_ms, agg_ip="10.93.0.254", iface=W):
    return [PH, "worker", "--backend", "dpdk", "--iface", iface, "--job", "1", "--rank", "0", "--world", "2", "--in",
            P("grad.bin"), "--out", P("res.bin"), "--agg-ip", agg_ip, "--group-ip", "239.1.1.1",
            "--timeout-ms", str(timeout_ms), "--status-wait-ms", "10000"]


def refused_here(err_path):
    for line in read(err_path).splitlines():
        if BACKEND_REFUSED.match(line):
            skip(f"the net_af_xdp PMD is refused here: {line}")


ECHO = ("import socket,sys\n"
        "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
        "s.bind(('10.93.0.1',7000))\n"
        "print('ready',flush=True)\n"
        "while True:\n"
        "    d,a=s.recvfrom(2048)\n"
        "    s.sendto(d,a)\n")
ASK = ("import socket,sys\n"
       "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
       "s.settimeout(1.0)\n"
       "for i in range(3):\n"
       "    s.sendto(b'kernel traffic %d' % i,('10.93.0.1',7000))\n"
       "    try:\n"
       "        d,a=s.recvfrom(2048)\n"
       "    except socket.timeout:\n"
       "        continue\n"
       "    sys.exit(0 if d==b'kernel traffic %d' % i else 3)\n"
       "sys.exit(2)\n")


def kernel_echo():
    """True when a datagram to 10.93.0.1:7000 from the peer comes back, ARP both ways included."""
    sh("ip", "neigh", "flush", "dev", S, ns=PEER, check=False, quiet=True)
    sh("ip", "neigh", "del", "10.93.0.2", "dev", W, ns=NS, check=False, quiet=True)
    return subprocess.run(["timeout", "10", "ip", "netns", "exec", PEER, "/usr/bin/python3", "-c", ASK]).returncode == 0


# --- 1. the kernel keeps the interface while the DPDK worker runs ----------------------------------
echo = lab.spawn(["/usr/bin/python3", "-c", ECHO], ns=NS, stdout=P("echo.out"), stderr=P("echo.err"))
if not wait_until(lambda: "ready" in read(P("echo.out")), 10):
    fail("the echo server did not start", P("echo.err"))
if not kernel_echo():
    fail("no echo across the veth before any worker ran")
# The aggregator's address is the peer's, without a neighbour entry: the worker has the kernel resolve
# it (the ARP reply reaches the kernel, not the PMD). Its contributions meet a closed port there.
sh("ip", "neigh", "del", "10.93.0.2", "dev", W, ns=NS, check=False, quiet=True)
w = lab.spawn(worker(60000, agg_ip="10.93.0.2"), ns=NS, stderr=P("run.err"), env=ENV)
if not wait_until(lambda: attached(W)[0] != 0 or w.poll() is not None, 30):
    fail("the worker's XDP program never appeared on the interface", P("run.err"))
if w.poll() is not None:
    refused_here(P("run.err"))
    fail(f"the worker ended early (exit {w.returncode})", P("run.err"))
time.sleep(1)  # the worker configures the program after the PMD attached it
if w.poll() is not None:
    refused_here(P("run.err"))
    fail(f"the worker ended early (exit {w.returncode})", P("run.err"))
pid, name = attached(W)
t0 = time.monotonic()
if not kernel_echo():
    fail(f"the kernel lost the interface to the DPDK worker: no UDP echo (ARP) while it runs, program {name!r}",
         P("run.err"))
print("ok: the worker started with the next hop's MAC resolved by the kernel (no neighbour entry before)")
print(f"ok: UDP echo and ARP through the kernel while the DPDK worker runs "
      f"({int((time.monotonic() - t0) * 1000)} ms)")
if name != "panama_steer":
    fail(f"the program on {W} is {name!r} (id {pid}), not the project's panama_steer")
print(f"ok: the net_af_xdp PMD runs the project's program 'panama_steer' (id {pid})")
left = os.listdir(TMP)
if left:
    fail(f"the worker's copy of the program object is still there while it runs: {left}")
print("ok: the program object's private copy is removed once loaded")

# --- 3. SIGKILL leaves nothing attached ----------------------------------------------------------
XDP.killed_leaves_nothing(w, W)
if os.listdir(TMP):
    fail(f"files left in the worker's TMPDIR: {os.listdir(TMP)}")

# --- 4. coexistence ------------------------------------------------------------------------------
r = foreign("attach", W)
if r.returncode != 0:
    skip(f"XDP programs cannot be attached here: {r.stderr.strip()}")
fid = int(r.stdout.strip())
rc = subprocess.run(["timeout", "60", "ip", "netns", "exec", NS] + worker(3000), stdout=subprocess.DEVNULL,
                    stderr=open(P("foreign.err"), "w"), env=ENV).returncode
err = read(P("foreign.err")).strip()
if rc == 0:
    fail("the DPDK worker started on an interface with a foreign XDP program")
if f"'foreign_pass' (id {fid})" not in err or "not replaced" not in err or len(err.splitlines()) != 1:
    fail(f"not one line naming the foreign program: {err}")
if attached(W) != (fid, "foreign_pass"):
    fail(f"the foreign program is no longer attached: {attached(W)}")
print(f"ok: the DPDK worker refused, the foreign program kept: {err}")
if not kernel_echo():
    fail("no echo across the veth after the refusal")
stop(echo)
if foreign("detach", W).returncode != 0 or attached(W)[0] != 0:
    fail("detaching the foreign program")

# --- 5. a multi-queue interface ------------------------------------------------------------------
MW, MS = multiqueue_veth(lab, NS, 4, "10.92.0.1/24")
sh("ip", "neigh", "replace", "10.92.0.254", "lladdr", "02:aa:00:00:00:01", "dev", MW, "nud", "permanent", ns=NS)
rc = subprocess.run(["timeout", "60", "ip", "netns", "exec", NS] + worker(3000, "10.92.0.254", MW),
                    stdout=subprocess.DEVNULL, stderr=open(P("mq.err"), "w"), env=ENV).returncode
err = read(P("mq.err")).strip()
if rc == 0 or len(err.splitlines()) != 1 or "4 receive queues" not in err or "ethtool -N" not in err:
    fail(f"PANAMA_DPDK_PMD=af_xdp on a 4-queue interface: not one refusal naming the queues (exit {rc}): {err}")
if attached(MW)[0] != 0:
    fail(f"the refused worker left a program attached: {attached(MW)}")
print(f"ok: af_xdp on a 4-queue interface refused: {err}")
auto = {k: v for k, v in ENV.items() if k != "PANAMA_DPDK_PMD"}
w = lab.spawn(worker(60000, "10.92.0.254", MW), ns=NS, stderr=P("mq_auto.err"), env=auto)
time.sleep(2)
if w.poll() is not None:
    fail(f"the worker on a 4-queue interface ended early (exit {w.returncode})", P("mq_auto.err"))
if attached(MW)[0] != 0:
    fail(f"the worker on a 4-queue interface runs net_af_xdp (program {attached(MW)}), not af_packet")
stop(w)
print("ok: on a 4-queue interface the default is the af_packet PMD (no XDP program attached)")
print("PASS")
