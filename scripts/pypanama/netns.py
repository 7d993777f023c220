"""Network-namespace testbeds: namespaces, veth pairs, addresses, processes, bounded waits.

One `Lab` per run: every name carries the run's suffix, every namespace and process it created is
removed or stopped by `cleanup()` whatever failed (the testbeds call it from a `finally`; an
`atexit` hook is the last resort). Standard library only.
"""

import atexit
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def run_suffix():
    """The per-run suffix: 4 hex digits of the pid, 2 random ones (interface names stay <= 15)."""
    return "%04x%02x" % (os.getpid() & 0xFFFF, random.getrandbits(8))


def sh(*cmd, ns=None, check=True, quiet=False, capture=False, timeout=None):
    """Runs a command (in namespace ns): its CompletedProcess; raises CalledProcessError if check."""
    argv = (["ip", "netns", "exec", ns] if ns else []) + [str(c) for c in cmd]
    out = subprocess.PIPE if capture else (subprocess.DEVNULL if quiet else None)
    err = subprocess.DEVNULL if quiet else None
    return subprocess.run(argv, stdout=out, stderr=err, check=check, text=True, timeout=timeout)


def read_sys(ns, path):
    """A file read inside a namespace (its own /sys): the text, stripped."""
    return sh("cat", path, ns=ns, capture=True).stdout.strip()


def wait_until(pred, timeout, interval=0.2):
    """Calls pred() until it is true or timeout seconds passed: its last value."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() >= end:
            return v
        time.sleep(interval)


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def children(pid):
    """The pids of pid's children (from /proc)."""
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def innermost(pid, depth=3):
    """The process a wrapper chain (timeout, ip netns exec, env) runs: first child, up to depth deep."""
    p = pid
    for _ in range(depth):
        c = children(p)
        if not c:
            break
        p = c[0]
    return p


class Lab:
    """A run's namespaces, processes and scratch directory."""

    def __init__(self, prefix, keep=None, tmp_prefix="testbed.", tmp=None, if_prefix="t"):
        self.prefix = prefix  # namespaces are PREFIX+SUFFIX-NAME, e.g. tb1a2b3c-sw
        self.if_prefix = if_prefix  # interfaces IF_PREFIX+SUFFIX+TAG, e.g. t1a2b3cw0
        self.suf = run_suffix()
        self.own_tmp = tmp is None  # a scratch directory given by the caller is the caller's to remove
        self.tmp = tmp or tempfile.mkdtemp(prefix=tmp_prefix, dir=os.environ.get("TMPDIR", "/tmp"))
        self.keep = keep
        self.procs = []  # every background process started here (Popen)
        self.created = []  # namespaces
        self._done = False
        atexit.register(self.cleanup)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def ns_name(self, name):
        return f"{self.prefix}{self.suf}-{name}"

    def if_name(self, tag):
        """An interface name of this run: <if_prefix><suffix><tag> (at most 15 characters)."""
        return f"{self.if_prefix}{self.suf}{tag}"

    def mkns(self, name, quiet=False):
        """Adds namespace NAME (the full name) with lo up and IPv6 off; False if ip netns refused."""
        if sh("ip", "netns", "add", name, check=False, quiet=quiet).returncode != 0:
            return False
        self.created.append(name)
        sh("ip", "link", "set", "lo", "up", ns=name)
        for k in ("all", "default"):
            sh("sysctl", "-qw", f"net.ipv6.conf.{k}.disable_ipv6=1", ns=name, check=False, quiet=True)
        return True

    def veth(self, a, ns_a, b, ns_b, up=True):
        """A veth pair a (in ns_a) <-> b (in ns_b), both up."""
        sh("ip", "link", "add", a, "netns", ns_a, "type", "veth", "peer", "name", b, "netns", ns_b)
        if up:
            sh("ip", "link", "set", a, "up", ns=ns_a)
            sh("ip", "link", "set", b, "up", ns=ns_b)

    def link_server(self, ns, w, sw_ns, s, addr, agg_ip):
        """A server's link: veth w (in ns, address addr, e.g. 10.98.0.1/24) <-> s (in sw_ns), both up."""
        sh("ip", "link", "add", w, "netns", ns, "type", "veth", "peer", "name", s, "netns", sw_ns)
        sh("ip", "addr", "add", addr, "dev", w, ns=ns)
        # One segment per skb, as a NIC puts them on the wire: the udp backend's GSO messages (and
        # TCP's) are segmented in software at the device instead of reaching the stand-in's raw
        # sockets as 64 KiB super-frames that no port carries.
        sh("ip", "link", "set", "dev", w, "gso_max_segs", "1", ns=ns, check=False, quiet=True)
        sh("ip", "link", "set", w, "up", ns=ns)
        # Nobody answers ARP for the aggregator's address: a static neighbour entry.
        sh("ip", "neigh", "replace", agg_ip, "lladdr", "02:aa:00:00:00:01", "dev", w, "nud", "permanent", ns=ns)
        sh("ip", "link", "set", s, "up", ns=sw_ns)

    def spawn(self, argv, ns=None, timeout=None, stdout=None, stderr=None, cwd=None, env=None, session=False,
              stdin=subprocess.DEVNULL):
        """A background process (in ns, under timeout(1) if given), remembered for cleanup. With
        session, it leads a process group of its own (kill_group stops it and every child)."""
        cmd = (["timeout", str(timeout)] if timeout else []) + (["ip", "netns", "exec", ns] if ns else [])
        cmd += [str(a) for a in argv]
        outs = [open(x, "w") if isinstance(x, str) else x for x in (stdout, stderr)]
        try:
            p = subprocess.Popen(cmd, stdout=outs[0], stderr=outs[1], cwd=cwd, env=env, stdin=stdin,
                                 start_new_session=session)
        finally:
            for f, x in zip(outs, (stdout, stderr)):
                if isinstance(x, str):
                    f.close()
        self.procs.append(p)
        return p

    def stop(self, procs=None, grace=3.0):
        """SIGTERM to every process (timeout(1) passes it on), then SIGKILL after grace seconds."""
        procs = self.procs if procs is None else procs
        for p in procs:
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGTERM)
                except OSError:
                    pass
        for p in procs:
            try:
                p.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                try:
                    p.kill()
                    p.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass

    def star(self, workers, subnet, tag="w", sw="sw", tcp_ecn=False, gso_max_size=None):
        """One stand-in namespace and `workers` server namespaces, each on its own veth to it (see Star)."""
        return Star(self, workers, subnet, tag, sw, tcp_ecn, gso_max_size)

    def cleanup(self):
        """Stops the processes, deletes the namespaces, keeps (--keep) and removes the scratch."""
        if self._done:
            return
        self._done = True
        try:
            self.stop()
        finally:
            for ns in self.created:
                sh("ip", "netns", "del", ns, check=False, quiet=True)
            if self.keep:
                try:
                    os.makedirs(self.keep, exist_ok=True)
                    shutil.copytree(self.tmp, self.keep, dirs_exist_ok=True)
                except OSError as e:
                    print(f"testbed: --keep {self.keep}: {e}", file=sys.stderr)
            if self.own_tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)


class Star:
    """The single-switch testbed: namespace `sw` for the stand-in and one namespace per server i,
    linked by veth pair (wif[i] in ns[i], address SUBNET.(i+1)/24) <-> (sif[i] in sw_ns), so that
    the stand-in's port i is server i. SUBNET.254 is the aggregator (a static neighbour entry).
    Raises RuntimeError when a namespace is refused (the first one: the caller skips)."""

    def __init__(self, lab, workers, subnet, tag, sw, tcp_ecn, gso_max_size):
        self.lab, self.subnet = lab, subnet
        self.agg_ip = f"{subnet}.254"
        self.sw_ns = lab.ns_name(sw)
        if not lab.mkns(self.sw_ns, quiet=True):
            raise RuntimeError(f"ip netns add {self.sw_ns} refused")
        self.ns, self.wif, self.sif, self.ip = [], [], [], []
        for i in range(workers):
            ns, w, s = lab.ns_name(f"{tag}{i}"), lab.if_name(f"{tag}{i}"), lab.if_name(f"p{i}")
            if not lab.mkns(ns):
                raise RuntimeError(f"ip netns add {ns} refused")
            if tcp_ecn:
                sh("sysctl", "-qw", "net.ipv4.tcp_ecn=1", ns=ns)
            lab.link_server(ns, w, self.sw_ns, s, f"{subnet}.{i + 1}/24", self.agg_ip)
            if gso_max_size:
                # A frame longer than the MTU cannot leave through the next veth (TCP sees it as loss).
                sh("ip", "link", "set", "dev", w, "gso_max_size", gso_max_size, ns=ns)
            self.ns.append(ns)
            self.wif.append(w)
            self.sif.append(s)
            self.ip.append(f"{subnet}.{i + 1}")

    @property
    def ifaces(self):
        """The stand-in's --ifaces: its ports in order."""
        return ",".join(self.sif)


def refusal():
    """None where this user may build the tests' networks, else why not (the SKIP line's reason).
    A namespace (`ip netns add`, root with CAP_SYS_ADMIN) and a veth pair inside it (the veth
    module may be missing or forbidden where namespaces are allowed); the probe namespace, and
    the pair with it, is removed."""
    name = f"probe{run_suffix()}"
    try:
        if sh("ip", "netns", "add", name, check=False, quiet=True).returncode != 0:
            return "ip netns is not permitted here"
    except FileNotFoundError:
        return "the ip command (iproute2) is not installed"
    try:
        r = subprocess.run(["ip", "-n", name, "link", "add", "pa", "type", "veth", "peer", "name", "pb"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or ["?"])[-1]
            return f"veth pairs are not permitted here (ip link add type veth: {last})"
        return None
    finally:
        sh("ip", "netns", "del", name, check=False, quiet=True)


def kill_group(p, sig=signal.SIGKILL):
    """Signals a process started with session=True and everything in its group."""
    try:
        os.killpg(p.pid, sig)
    except OSError:
        pass


def exit_on_signals(code=1):
    """SIGINT / SIGTERM end the run through its finally (cleanup), with exit code code."""

    def handler(signum, frame):
        raise SystemExit(code)

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
