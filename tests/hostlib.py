"""Shared by the host namespace tests (host_netns.py, host_controller.py, host_switch_ctl.py,
host_stop_load.py, host_xdp_safety.py, host_dpdk_xdp.py, host_alloc_board.py): the testbed package
(scripts/pypanama), one-line verdicts and small waits.

A test prints "PASS: ..." / "ok: ..." lines as it goes and ends with exit 0; a failure prints one
"FAIL: ..." line (with what explains it) and exits 1; a test that cannot run here exits 77.
"""

import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

from pypanama import netns  # noqa: E402,F401  (re-exported for the tests)
from pypanama.netns import sh, wait_until  # noqa: E402,F401

SKIP = 77


def fail(msg, *show):
    """One FAIL line, then the text of each file in show (what explains it), then exit 1."""
    print(f"FAIL: {msg}", flush=True)
    for path in show:
        try:
            with open(path, errors="replace") as f:
                sys.stdout.write(f.read()[-4000:])
        except OSError:
            pass
    sys.exit(1)


def skip(msg):
    print(f"SKIP: {msg}", flush=True)
    sys.exit(SKIP)


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def load_json(path):
    with open(path) as f:
        return json.load(f)


def same_file(a, b):
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


def lab_or_skip(prefix, tmp_prefix):
    """A Lab whose cleanup runs on exit and on SIGINT/SIGTERM; Skipped where namespaces are refused."""
    why = netns.refusal()
    if why:
        skip(why)
    lab = netns.Lab(prefix, tmp_prefix=tmp_prefix, if_prefix=prefix[:2])
    netns.exit_on_signals(1)
    return lab


def treesum_gen(tool, seed, n, path):
    subprocess.run([tool, "gen", str(seed), str(n), path], check=True)


def treesum_sum(tool, out, inputs, fmt_bytes=4):
    """The tree-order sum of inputs [(path, port), ...] into out (the host CPU's own additions)."""
    subprocess.run([tool, "sum", str(fmt_bytes), out] + [f"{p}:{port}" for p, port in inputs], check=True)


def stop(p, sig=signal.SIGTERM, grace=10.0):
    """Signals p (the process itself) and waits: its exit code (None if it had to be killed)."""
    if p.poll() is None:
        try:
            p.send_signal(sig)
        except OSError:
            pass
    try:
        return p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        return None


def wait_exit(p, timeout):
    """p's exit code once it ends within timeout seconds, else None (still running)."""
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def ms_since(t0):
    return int((time.monotonic() - t0) * 1000)


def script_args(doc, usage, required, optional=0):
    """The command line of a test script: --help prints doc (exit 0); fewer than `required` or more
    than required + optional arguments print `usage` (exit 2). Returns the arguments."""
    args = sys.argv[1:]
    if args and args[0] in ("-h", "--help"):
        print(doc.strip())
        sys.exit(0)
    if not required <= len(args) <= required + optional:
        print(f"usage: {os.path.basename(sys.argv[0])} {usage}", file=sys.stderr)
        sys.exit(2)
    return args


class XdpOn:
    """The XDP program on a namespace's interfaces, through tests/xdp_foreign.cpp's binary:
    query, attach and detach the foreign program."""

    def __init__(self, tool, ns):
        self.tool, self.ns = tool, ns

    def run(self, verb, iface):
        return subprocess.run(["ip", "netns", "exec", self.ns, self.tool, verb, iface], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)

    def attached(self, iface):
        """(id, name) of the XDP program on iface: (0, '-') when none."""
        r = self.run("query", iface)
        if r.returncode != 0:
            fail(f"xdp_foreign query {iface}: {r.stderr.strip()}")
        pid, name = r.stdout.split()
        return int(pid), name

    def killed_leaves_nothing(self, w, iface):
        """SIGKILLs the worker w whose program is on iface; fails unless the program is gone
        within 2 s, and says how soon it went."""
        pid = self.attached(iface)[0]
        w.send_signal(signal.SIGKILL)
        wait_exit(w, 10)
        t0 = time.monotonic()
        if not wait_until(lambda: self.attached(iface)[0] == 0, 2, 0.05):
            fail(f"2 s after the worker's SIGKILL, its program is still attached: {self.attached(iface)}")
        print(f"ok: worker SIGKILLed with its program (id {pid}) attached: gone {ms_since(t0)} ms later")


def multiqueue_veth(lab, ns, queues, cidr):
    """A veth pair with `queues` receive and transmit queues in ns, up, the first end at cidr.
    Returns the two interface names."""
    a, b = lab.if_name("mw"), lab.if_name("ms")
    q = str(queues)
    sh("ip", "link", "add", "name", a, "numrxqueues", q, "numtxqueues", q, "type", "veth", "peer", "name", b,
       "numrxqueues", q, "numtxqueues", q, ns=ns)
    for i in (a, b):
        sh("ip", "link", "set", i, "up", ns=ns)
    sh("ip", "addr", "add", cidr, "dev", a, ns=ns)
    return a, b
