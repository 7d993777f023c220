"""scripts/testbed: namespace testbeds of `panama-host switch` stand-ins and workers (docs/host.md).

The flags, their checks and the run; the help text is the script's docstring. Exit 0 pass,
1 fail, 2 usage, 77 skip.
"""

import os
import re
import subprocess
import sys
import time

from . import design, netns, standin


class Exit(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def say(msg):
    print(f"testbed: {msg}", flush=True)


def fail(msg):
    print(f"FAIL: {msg}", flush=True)
    raise Exit(1)


def bad(msg):
    print(f"testbed: {msg}", file=sys.stderr, flush=True)
    raise Exit(2)


def cat(path, stream=None):
    try:
        with open(path, errors="replace") as f:
            (stream or sys.stdout).write(f.read())
    except OSError:
        pass
    (stream or sys.stdout).flush()


FLAGS = {"--two-level": "two", "--same-root": "same_root", "--shell": "shell", "--standalone": "standalone"}
VALUES = {"--workers": "W", "--elems": "elems", "--mib": "mib", "--trees": "trees", "--iterations": "iter",
          "--engine": "engine", "--rtl": "rtl", "--build": "build", "--seed": "seed", "--loss": "loss",
          "--ctx-timeout": "ctx_tmo", "--dup": "dup", "--reorder": "reorder", "--fault-at": "fault_at",
          "--fault-ports": "fault_ports", "--fault-seed": "fault_seed", "--kill-rank": "kill_rank",
          "--kill-after": "kill_after", "--kill-bound": "kill_bound", "--rate-mbps": "rate",
          "--ecn-threshold": "ecn", "--worker-args": "worker_args", "--timeout": "timeout", "--keep": "keep",
          "--placement": "placement", "--board": "board", "--mgmt": "mgmt", "--backend": "backend",
          "--threads": "threads", "--switch-backend": "sw_backend", "--switch-threads": "sw_threads",
          "--jobs-from": "jobs_from", "--report": "report"}


class Opts:
    def __init__(self, root):
        self.root = root
        self.build = os.path.join(root, "build")
        self.rtl = os.path.join(root, "rtl_out", "p4_10g_200mhz")
        self.W = ""
        self.elems = str(4 * 1024 * 1024)
        self.trees, self.iter, self.engine, self.seed = "2", "1", "rtl", "1"
        self.loss, self.dup, self.reorder, self.ctx_tmo = "0", "0", "0", "0"
        self.fault_at, self.fault_ports, self.fault_seed = "", "", "7"
        self.kill_rank, self.kill_after, self.kill_bound = "-1", "1", "30"
        self.rate, self.ecn, self.worker_args, self.timeout = "0", "85", "", "600"
        self.keep, self.placement, self.board, self.mgmt = "", "", "sume", "socket"
        self.backend, self.threads, self.sw_backend, self.sw_threads = "udp", "1", "afpacket", "1"
        self.two = self.same_root = self.shell = self.standalone = False
        self.rtl_given = False
        self.mib = ""
        self.jobs_from, self.report = "", ""
        self.torch, self.torch_args = "", []


def parse(argv, root, doc):
    o = Opts(root)
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            try:
                print(doc.strip("\n"), flush=True)
            except BrokenPipeError:  # --help | head
                sys.stdout = None
            raise Exit(0)
        if a in FLAGS:
            setattr(o, FLAGS[a], True)
            i += 1
            continue
        if a in VALUES or a == "--torch":
            if i + 1 >= len(argv):
                bad(f"{a} needs a value")
            if a == "--torch":
                o.torch, o.torch_args = argv[i + 1], argv[i + 2:]
                break
            setattr(o, VALUES[a], argv[i + 1])
            o.rtl_given |= a == "--rtl"
            i += 2
            continue
        bad(f"unknown option {a} (--help: the options)")
    return o


UINT = re.compile(r"^[0-9]+$")
NUM = re.compile(r"^[0-9]+([.][0-9]*)?$|^[.][0-9]+$")


def is_uint(s):
    return bool(UINT.match(s))


def is_num(s):
    return bool(NUM.match(s))


def is_prob(s):
    return is_num(s) and 0 <= float(s) <= 1


def check(o):
    """Every flag is checked before anything starts."""
    if o.mib:
        if not is_num(o.mib):
            bad(f"--mib: '{o.mib}' is not a number of MiB")
        m = float(o.mib) * 262144
        o.elems = str(int(m) if m == int(m) else -1)
        if int(o.elems) < 1:
            bad(f"--mib {o.mib}: not a whole number of fp32 elements (a multiple of 1/262144 MiB, > 0)")
    if not (is_uint(o.elems) and int(o.elems) >= 1):
        bad(f"--elems: '{o.elems}' is not a positive element count")
    if o.W and not (is_uint(o.W) and int(o.W) >= 1):
        bad(f"--workers: '{o.W}' is not a positive number")
    if not (is_uint(o.trees) and 1 <= int(o.trees) <= 2):
        bad(f"--trees: 1 or 2 (one multicast context per tree; got '{o.trees}')")
    if not (is_uint(o.iter) and int(o.iter) >= 1):
        bad(f"--iterations: '{o.iter}' is not a positive number")
    if o.engine not in ("rtl", "model", "soft"):
        bad(f"--engine: rtl, model or soft (not '{o.engine}')")
    if o.backend not in ("udp", "tins", "dpdk", "xdp"):
        bad(f"--backend: udp, tins, dpdk or xdp (not '{o.backend}')")
    if o.sw_backend not in ("afpacket", "xdp"):
        bad(f"--switch-backend: afpacket or xdp (not '{o.sw_backend}')")
    if not (is_uint(o.sw_threads) and 1 <= int(o.sw_threads) <= 16):
        bad(f"--switch-threads: 1..16 (got '{o.sw_threads}')")
    o.trees, o.iter, o.sw_threads = int(o.trees), int(o.iter), int(o.sw_threads)
    if not (o.sw_backend == "afpacket" and o.sw_threads == 1) and o.engine != "soft":
        bad("--switch-backend/--switch-threads: with --engine soft only")
    if o.sw_threads != 1 and o.sw_backend != "xdp":
        bad(f"--switch-threads {o.sw_threads}: needs --switch-backend xdp")
    if not (is_uint(o.threads) and 1 <= int(o.threads) <= o.trees):
        bad(f"--threads: 1..--trees ({o.trees}; each thread owns whole trees; got '{o.threads}')")
    o.threads = int(o.threads)
    if o.threads != 1 and o.backend not in ("udp", "xdp"):
        bad(f"--threads {o.threads}: only --backend udp and xdp have a socket per thread (docs/host.md \"Backends\")")
    if o.threads != 1 and o.two:
        bad("--threads: one level only (a thread's vectors travel on its own trees, the expected sums splice tree by tree)")
    if o.backend != "udp":
        o.worker_args = f"--backend {o.backend} {o.worker_args}"
    if o.threads != 1:
        o.worker_args = f"--threads {o.threads} {o.worker_args}"
    if o.mgmt not in ("socket", "net"):
        bad(f"--mgmt: socket (the stand-in's control socket) or net (management over Ethernet; not '{o.mgmt}')")
    if o.board not in ("sume", "u250"):
        bad(f"--board: sume or u250 (not '{o.board}')")
    if o.shell:
        if o.mgmt != "net":
            bad("--shell: the board's registers are reached only over Ethernet: give --mgmt net")
        if o.engine != "rtl":
            bad(f"--shell runs the Verilated board shell: not with --engine {o.engine}")
        if o.two and not o.standalone:
            bad("--shell --two-level needs --standalone (boards beside software switch chips are one stand-in only)")
        if o.rtl_given:
            bad("--shell generates its board output (--board); not with --rtl")
    else:
        if o.mgmt != "socket":
            bad("--mgmt net needs --shell (only the board shell has management over Ethernet)")
        if o.standalone:
            bad("--standalone needs --shell (it is an option of the board shell)")
    if not os.path.isfile(os.path.join(o.rtl, "config.json")):
        bad(f"--rtl: {o.rtl} has no config.json (a generator output directory)")
    if not os.path.isfile(os.path.join(o.rtl, "regmap.json")):
        bad(f"--rtl: {o.rtl} has no regmap.json")
    if not os.path.isdir(o.build):
        bad(f"--build: no directory {o.build}")
    if not is_uint(o.seed):
        bad(f"--seed: '{o.seed}' is not a number")
    if not is_prob(o.loss):
        bad(f"--loss: '{o.loss}' is not a probability in [0, 1]")
    if not is_prob(o.dup):
        bad(f"--dup: '{o.dup}' is not a probability in [0, 1]")
    if not is_uint(o.ctx_tmo):
        bad(f"--ctx-timeout: '{o.ctx_tmo}' is not a number of cycles")
    if not is_uint(o.fault_seed):
        bad(f"--fault-seed: '{o.fault_seed}' is not a number")
    if o.fault_ports and not re.match(r"^[0-9]+(,[0-9]+)*$", o.fault_ports):
        bad(f"--fault-ports: '{o.fault_ports}' is not a list P0,P1,...")
    if not re.match(r"^-?[0-9]+$", o.kill_rank):
        bad(f"--kill-rank: '{o.kill_rank}' is not a rank")
    for flag, v, what in (("--kill-after", o.kill_after, "a number of seconds"),
                          ("--kill-bound", o.kill_bound, "a number of seconds"), ("--rate-mbps", o.rate, "a rate")):
        if not is_num(v):
            bad(f"{flag}: '{v}' is not {what}")
    if not is_uint(o.ecn):
        bad(f"--ecn-threshold: '{o.ecn}' is not a number of packets")
    if not (is_uint(o.timeout) and int(o.timeout) >= 1):
        bad(f"--timeout: '{o.timeout}' is not a positive number of seconds")
    o.seed, o.ctx_tmo, o.fault_seed, o.kill_rank, o.timeout = (int(o.seed), int(o.ctx_tmo), int(o.fault_seed),
                                                               int(o.kill_rank), int(o.timeout))
    o.elems = int(o.elems)
    if o.keep:
        try:
            os.makedirs(o.keep, exist_ok=True)
        except OSError:
            pass
        if not (os.path.isdir(o.keep) and os.access(o.keep, os.W_OK)):
            bad(f"--keep: cannot write to {o.keep}")
    if o.engine == "soft":
        if o.two or o.ctx_tmo != 0:
            bad("--engine soft: one stand-in, no context timeout (its contexts come from a file)")
        try:
            exact = design.load_design(o.rtl).get("sum", "tree") == "exact"
        except design.DesignError as e:
            bad(f"--rtl: {e}")
        if exact:
            bad("--engine soft sums in tree order: not for a --sum exact design (use --engine model)")
    if o.torch:
        from . import torchrun
        torchrun.check_args(o, bad)
    o.ph = os.path.join(o.build, "panama-host")
    o.sumtool = os.path.join(o.build, "host_driver", "host_treesum")
    if not os.access(o.sumtool, os.X_OK):
        o.sumtool = os.path.join(o.build, "host_treesum")
    for f in (o.ph, o.sumtool):
        if not os.access(f, os.X_OK):
            print(f"testbed: {f} not built (cmake --build build)", file=sys.stderr)
            raise Exit(1)


def main(argv, doc):
    sys.stdout.reconfigure(line_buffering=True)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        o = parse(argv, root, doc)
        if o.jobs_from:  # several jobs through the allocator (scenario.py)
            from . import scenario
            return scenario.main(o, argv)
        check(o)
    except Exit as e:
        return e.code
    return in_lab("tb", o.keep, lambda lab: Run(o, lab).run())


def in_lab(prefix, keep, body):
    """body(lab) in a fresh Lab: its exit code; a failed command is one line; the lab always goes."""
    lab = netns.Lab(prefix, keep=keep or None)
    netns.exit_on_signals(1)
    try:
        return body(lab)
    except Exit as e:
        return e.code
    except subprocess.CalledProcessError as e:
        print(f"testbed: {' '.join(map(str, e.cmd))} exited {e.returncode}", file=sys.stderr, flush=True)
        return 1
    finally:
        lab.cleanup()


class Run:
    def __init__(self, o, lab):
        self.o, self.lab, self.tmp = o, lab, lab.tmp
        self.rtl = o.rtl
        self.b_dir, self.b_ip, self.b_mport = {}, {}, {}
        self.sw_ns, self.sw_ifs, self.sw_proc, self.sw_argv = {}, {}, {}, {}
        self.worker_ns, self.worker_if, self.worker_sw, self.worker_port = {}, {}, {}, {}
        self.show_ms = 0
        self.ecn_k = 8
        self.status = 0
        self.elapsed = 0.0

    def p(self, name):
        return os.path.join(self.tmp, name)

    # --- boards (--shell) ----------------------------------------------------------------------
    def gen_board(self, name, ip, mac, mport):
        o = self.o
        self.b_dir[name], self.b_ip[name], self.b_mport[name] = self.p(f"board.{name}"), ip, mport
        with open(self.p("gen.err"), "w") as err:
            r = subprocess.run([os.path.join(o.build, "panama-gen"), "--board", o.board]
                               + (["--standalone"] if o.standalone else [])
                               + ["--mgmt-key", self.p("mgmt.key"), "--mgmt-ip", ip, "--mgmt-mac", mac,
                                  "--mgmt-ports", str(mport), "--out", self.b_dir[name]],
                               stdout=subprocess.DEVNULL, stderr=err)
        if r.returncode != 0:
            cat(self.p("gen.err"))
            fail(f"panama-gen --board {o.board}")

    def boards(self):
        # A fixed key and fixed addresses: the verilated shells are cached by content, so every
        # run with them reuses one build each.
        o = self.o
        # A key is private: created mode 600 (panama-gen and the controller refuse any other).
        fd = os.open(self.p("mgmt.key"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("7465737462656421706e6d6b65793031\n")
        if o.two:
            w = int(o.W or 4)
            self.gen_board("leaf0", "10.98.0.240", "02:50:4e:4d:00:f0", 0)
            self.gen_board("leaf1", "10.98.0.241", "02:50:4e:4d:00:f1", w - (w + 1) // 2)  # its uplink
            self.gen_board("root", "10.98.0.242", "02:50:4e:4d:00:f2", 0)
            self.rtl = self.b_dir["leaf0"]
        else:
            self.gen_board("sw", "10.98.0.250", "02:50:4e:4d:00:fa", 0)
            self.rtl = self.b_dir["sw"]

    # --- design and shape ----------------------------------------------------------------------
    def shape(self):
        o = self.o
        cfg = design.load_design(self.rtl)
        self.ports, self.max_elems = cfg["ports"], cfg["max_elems"]
        # The expected sum follows the accelerator's sum mode and subnormal handling.
        self.summode = cfg.get("sum", "tree")
        self.sumopts = ["--sum", self.summode, "--subnormals", cfg.get("subnormals", "ieee")]
        self.W = W = int(o.W) if o.W else (4 if o.two else 3)
        if o.two:
            self.n0 = (W + 1) // 2
            self.n1 = W - self.n0
            if not (self.n1 >= 1 and self.n0 + 1 <= self.ports):
                print(f"testbed: --two-level needs 2 <= W <= {2 * (self.ports - 1)}", file=sys.stderr)
                raise Exit(1)
        elif not 1 <= W <= self.ports:
            print(f"testbed: 1 <= W <= {self.ports} workers on one stand-in", file=sys.stderr)
            raise Exit(1)
        if o.kill_rank >= W:
            bad(f"--kill-rank {o.kill_rank}: only {W} workers")
        self.order = list(range(W))  # order[p] = the worker on port p of the one stand-in
        if o.placement:
            if o.two:
                bad("--placement: one stand-in only (not with --two-level)")
            pl = o.placement.split(",")
            if not (re.match(r"^[0-9]+(,[0-9]+)*$", o.placement) and len(pl) == W
                    and sorted(int(x) for x in pl) == list(range(W))):
                bad(f"--placement: '{o.placement}' is not a permutation of 0..{W - 1} (port of each worker)")
            for i, x in enumerate(pl):
                self.order[int(x)] = i
        if o.fault_ports:
            for x in o.fault_ports.split(","):
                if int(x) >= self.ports:
                    bad(f"--fault-ports: port {x} >= PORTS ({self.ports})")

    def prepare(self):
        """Verilates the stand-ins' RTL (cached) before any namespace exists, so that a slow first
        build that runs out of time leaves nothing behind."""
        o = self.o
        with open(self.p("empty.json"), "w") as f:
            f.write('{ "contexts": [] }\n')
        dirs = list(self.b_dir.values()) if o.shell else ([self.rtl] if o.engine == "rtl" else [])
        for d in dirs:
            r = subprocess.run(["timeout", "1200", o.ph, "switch", "--rtl", d] + (["--shell"] if o.shell else [])
                               + ["--contexts", self.p("empty.json"), "--ifaces", "none", "--prepare"],
                               stdout=subprocess.DEVNULL)
            if r.returncode != 0:
                fail(f"could not verilate {d}")

    # --- topology ------------------------------------------------------------------------------
    def add_switch(self, name):
        self.sw_ns[name] = self.lab.ns_name(name)
        self.lab.mkns(self.sw_ns[name]) or fail(f"ip netns add {self.sw_ns[name]}")
        self.sw_ifs[name] = []

    def link_worker(self, i, sw):
        lab = self.lab
        ns, w, s = lab.ns_name(f"w{i}"), lab.if_name(f"w{i}"), lab.if_name(f"p{i}")
        lab.mkns(ns) or fail(f"ip netns add {ns}")
        # (The boards' management addresses, --shell, are found by ARP: the boards answer it.)
        lab.link_server(ns, w, self.sw_ns[sw], s, f"10.98.0.{i + 1}/24", "10.98.0.254")
        self.worker_port[i] = len(self.sw_ifs[sw])
        self.sw_ifs[sw].append(s)
        self.worker_ns[i], self.worker_if[i], self.worker_sw[i] = ns, w, sw

    def link_switches(self, child, parent):
        """The child's next port <-> the parent's next port."""
        a, b = self.lab.if_name(f"u{child}"), self.lab.if_name(f"d{child}")
        self.lab.veth(a, self.sw_ns[child], b, self.sw_ns[parent])
        self.sw_ifs[child].append(a)
        self.sw_ifs[parent].append(b)

    def topology(self):
        o, W = self.o, self.W
        if o.two:
            for sw in ("leaf0", "leaf1", "root"):
                self.add_switch(sw)
            for i in range(W):
                self.link_worker(i, "leaf0" if i < self.n0 else "leaf1")
            self.link_switches("leaf0", "root")  # leaf0 port N0 <-> root port 0
            self.link_switches("leaf1", "root")  # leaf1 port N1 <-> root port 1
            self.switches = ["leaf0", "leaf1", "root"]
        else:
            self.add_switch("sw")
            for i in self.order:  # ports in order: port p gets order[p]
                self.link_worker(i, "sw")
            self.switches = ["sw"]
        fa = o.fault_at or self.switches[0]
        if fa == "all":
            fa = ",".join(self.switches)
        self.fault_at = fa.split(",")
        for f in self.fault_at:
            if f not in self.sw_ns:
                fail(f"--fault-at: no stand-in '{f}' ({' '.join(self.switches)}, a list of them, or all)")

    # --- stand-ins -----------------------------------------------------------------------------
    def mgmt(self, sw, *args, stdout=None, stderr=None):
        """The controller on worker 0's server (the management port), to that stand-in's board."""
        o = self.o
        # A Verilated board answers in tens of milliseconds per board crossed, more on a loaded machine.
        cmd = ["ip", "netns", "exec", self.worker_ns[self.order[0]], o.ph, "controller", "--regmap", self.rtl,
               "--target", self.b_ip[sw], "--key", self.p("mgmt.key"), "--mgmt-timeout-ms", "3000"] + list(args)
        return subprocess.run(cmd, stdout=stdout, stderr=stderr, text=True)

    def controller(self, sw, *args, stdout=None, stderr=None):
        o = self.o
        cmd = [o.ph, "controller", "--regmap", self.rtl, "--control", self.p(f"ctl.{sw}")] + list(args)
        return subprocess.run(cmd, stdout=stdout, stderr=stderr, text=True)

    def start_standins(self):
        o = self.o
        for sw in self.switches:
            extra = []
            # A context timeout needs simulated time to pass while the links are quiet.
            if o.ctx_tmo:
                extra += ["--idle-cycles-per-ms", "200"]
            if sw in self.fault_at:
                extra += ["--loss", o.loss, "--dup", o.dup, "--reorder", o.reorder, "--loss-seed", str(o.fault_seed)]
                if o.fault_ports:
                    extra += ["--loss-ports", o.fault_ports]
            if o.engine == "soft":  # no register port: the contexts of the controller below, as a file
                standin.multicast_contexts(self.p(f"ctx.{sw}.json"), o.trees, self.W)
                extra += ["--contexts", self.p(f"ctx.{sw}.json")]
                if o.sw_backend != "afpacket":
                    extra += ["--backend", o.sw_backend]
                if o.sw_threads != 1:
                    extra += ["--threads", str(o.sw_threads)]
            elif o.shell and o.standalone:
                extra += ["--shell", "--contexts", self.p("empty.json")]  # the board switches by itself
            elif o.shell:
                # The switch chip's multicast groups: the contexts programmed below, over management.
                standin.multicast_contexts(self.p(f"chip.{sw}.json"), o.trees, self.W, o.ctx_tmo)
                extra += ["--shell", "--contexts", self.p(f"chip.{sw}.json")]
            else:
                extra += ["--contexts", self.p("empty.json"), "--control", self.p(f"ctl.{sw}")]
            argv = [o.ph, "switch", "--rtl", self.b_dir.get(sw, self.rtl), "--engine", o.engine,
                    "--ifaces", ",".join(self.sw_ifs[sw]), "--counters", self.p(f"counters.{sw}.json"),
                    "--export-interval", "0.5", "--duration", str(o.timeout + 30), "--rate-mbps", o.rate,
                    "--ecn-threshold", o.ecn] + extra
            self.sw_argv[sw] = argv
            self.sw_proc[sw] = self.lab.spawn(argv, ns=self.sw_ns[sw], timeout=o.timeout + 60,
                                              stdout=self.p(f"switch.{sw}.out"), stderr=self.p(f"switch.{sw}.err"))
        for sw in self.switches:
            err = self.p(f"switch.{sw}.err")
            ok = False
            for _ in range(150):
                if o.shell or o.engine == "soft":
                    if self.sw_proc[sw].poll() is not None:
                        break
                    if o.engine == "soft" and standin.file_has(err, "engine:"):
                        ok = True
                        break
                    if (os.path.getsize(err) > 0 and standin.file_has(err, "engine:")
                            and self.mgmt(sw, "--show", stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL).returncode == 0):
                        ok = True
                        break
                elif os.path.exists(self.p(f"ctl.{sw}")) and self.controller(
                        sw, "--show", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
                    ok = True
                    break
                time.sleep(0.2)
            if not ok:
                refused = standin.first_match(err, standin.XDP_REFUSED)
                if refused:
                    print(f"SKIP: the stand-in's xdp links refused here: {refused}")
                    raise Exit(77)
                cat(err)
                fail(f"stand-in {sw} did not come up within 30 s")
            if o.sw_backend != "afpacket" and not standin.file_has(err, "links: AF_XDP"):
                cat(err)
                fail(f"stand-in {sw}: --switch-backend {o.sw_backend}, but its links are not AF_XDP")

    # --- contexts (live, through the controller) ---------------------------------------------
    def log(self, line):
        with open(self.p("program.log"), "a") as f:
            f.write(line + "\n")

    def ctl(self, sw, *args):
        o = self.o
        if o.engine == "soft":
            return  # programmed from its file
        self.log(f"  {sw}: controller {' '.join(args)}")
        writes = self.p(f"writes.{sw}.{time.time_ns()}")
        with open(self.p("program.log"), "a") as log:
            if o.shell:
                r = self.mgmt(sw, "--writes", writes, *args, "--timeout-cycles", str(o.ctx_tmo), stderr=log)
            else:
                r = self.controller(sw, "--writes", writes, *args, "--timeout-cycles", str(o.ctx_tmo), stderr=log)
        if r.returncode != 0:
            cat(self.p("program.log"))
            fail(f"programming {sw}{' over management' if o.shell else ''}")

    def program(self):
        o, W = self.o, self.W
        group = ["--group-mac", standin.GROUP_MAC, "--group-ip", standin.GROUP_IP]

        def seqc(n):
            return ",".join(str(k) for k in range(n))

        split = o.trees == 2 and not o.same_root
        if o.two:
            for L in (0, 1):
                n = self.n0 if L == 0 else self.n1
                up = ["--mode", "upstream", "--upstream-port", str(n), "--src-mac", f"02:aa:00:00:01:0{L}",
                      "--src-ip", f"10.98.0.25{L}"]
                if split and L == 0:
                    self.ctl("leaf0", "--job", "1", "--trees", "1", "--tids", "0", "--index", "0", "--members",
                             seqc(n), *up)
                    self.ctl("leaf0", "--job", "1", "--trees", "1", "--tids", "1", "--index", "1", "--members",
                             seqc(n + 1), "--mode", "multicast", *group)
                else:
                    self.ctl(f"leaf{L}", "--job", "1", "--trees", str(o.trees), "--members", seqc(n), *up)
            if split:
                self.ctl("root", "--job", "1", "--trees", "1", "--tids", "0", "--index", "0", "--members", "0,1",
                         "--mode", "multicast", *group)
                self.ctl("root", "--job", "1", "--trees", "1", "--tids", "1", "--index", "1", "--members", "1",
                         "--mode", "upstream", "--upstream-port", "0", "--src-mac", "02:aa:00:00:01:0f",
                         "--src-ip", "10.98.0.249")
            else:
                self.ctl("root", "--job", "1", "--trees", str(o.trees), "--members", "0,1", "--mode", "multicast",
                         *group)
        else:
            self.ctl("sw", "--job", "1", "--trees", str(o.trees), "--members", seqc(W), "--mode", "multicast", *group)
        # --standalone: the board's switch: its ECN threshold and, on one level, a forwarding-table
        # entry per worker (so that their unicast frames are not flooded).
        if o.standalone:
            for sw in self.switches:
                fdb = []
                if not o.two:
                    for port in range(W):
                        i = self.order[port]
                        mac = netns.read_sys(self.worker_ns[i], f"/sys/class/net/{self.worker_if[i]}/address")
                        fdb += ["--fdb", f"{mac}={port}"]
                self.log(f"  {sw}: controller {' '.join(fdb)} --ecn-k {self.ecn_k}")
                with open(self.p("program.log"), "a") as log:
                    r = self.mgmt(sw, *fdb, "--ecn-k", str(self.ecn_k), stderr=log)
                if r.returncode != 0:
                    cat(self.p("program.log"))
                    fail(f"programming {sw}'s switch")
        for sw in self.switches:
            if o.shell:
                t0 = time.monotonic_ns()
                r = self.mgmt(sw, "--show", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                ms = (time.monotonic_ns() - t0) // 1000000
                self.show_ms = max(self.show_ms, ms)
                self.log(f"  {sw} (over management, {ms} ms): {(r.stdout or '').rstrip(chr(10))}")
            elif o.engine == "soft":
                self.log(f"  {sw}: contexts from {self.p(f'ctx.{sw}.json')}")
            else:
                r = self.controller(sw, "--show", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                self.log(f"  {sw}: {(r.stdout or '').rstrip(chr(10))}")
        head = ""
        if o.shell:
            head = f"board shell {o.board}{' (standalone)' if o.standalone else ''}, programmed over Ethernet; "
        shape = f"two-level (leaf0: {self.n0} workers, leaf1: {self.n1})" if o.two else "one stand-in"
        say(f"{head}{W} workers, {o.trees} tree(s), {shape}, {o.elems} elements ({o.elems * 4} bytes) per worker, "
            f"engine {o.engine}")
        with open(self.p("program.log")) as f:
            for line in f:
                if "register writes applied" not in line:
                    say(line.rstrip("\n"))

    # --- the run -------------------------------------------------------------------------------
    def run(self):
        o = self.o
        if o.shell:
            self.boards()
        self.shape()
        why = netns.refusal()
        if why:
            print(f"SKIP: {why}")
            return 77
        self.prepare()
        self.topology()
        self.start_standins()
        self.program()
        if o.torch:
            from . import torchrun
            torchrun.run(self)
        else:
            from . import allreduce
            allreduce.run(self)
        self.finish()
        return self.status

    def finish(self):
        """Counters over management (--shell), then the stand-ins stopped and their final counters."""
        o = self.o
        if o.shell:
            for sw in self.switches:
                with open(self.p(f"acc.{sw}.json"), "w") as out, open(self.p(f"acc.{sw}.err"), "w") as err:
                    r = self.mgmt(sw, "--counters", "--json", stdout=out, stderr=err)
                if r.returncode != 0:
                    cat(self.p(f"acc.{sw}.err"))
                    print(f"FAIL: reading {sw}'s counters over management")
                    self.status = 1
        # The stand-ins are stopped with SIGTERM (to timeout(1), which passes it on) and must print
        # complete final counters, per-context counters of the contexts programmed here included.
        self.lab.stop(grace=10.0)
        for sw in self.switches:
            lines, err = standin.check_final_counters(
                sw, self.p(f"switch.{sw}.out"), self.p(f"acc.{sw}.json"), self.b_mport.get(sw, -1), o.standalone,
                self.ecn_k, o.two, sw_threads=o.sw_threads, torch=bool(o.torch))
            for line in lines:
                print(line)
            if err:
                print(err, file=sys.stderr, flush=True)
                self.status = 1
        if self.status == 0:
            if o.torch:
                print(f"PASS: {self.W} workers ran {os.path.basename(o.torch)} to the end, exit 0 ({self.elapsed} s)")
            elif o.kill_rank >= 0:
                print(f"PASS: worker {o.kill_rank} killed; every other worker ended with a clear error, no output "
                      f"written ({self.elapsed} s)")
            else:
                print(f"PASS: {self.W} workers x {o.elems * 4} bytes x {o.iter} iteration(s), {o.trees} tree(s)"
                      f"{', two-level' if o.two else ''}: every output bit-identical to the expected {self.summode} "
                      f"sum ({self.elapsed} s)")

