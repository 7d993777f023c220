"""scripts/testbed --jobs-from FILE: several jobs on one shared stand-in through `panama-host allocator`.

The scenario file (JSON; tests/scenario_shared.json is an example):
  {"design": "rtl_out/p8_100g_250mhz", "engine": "model", "lease_ms": 2000, "timeout": 150,
   "jobs": [{"name": "A", "at": 0, "ports": [0, 1], "trees": 3, "iterations": 40, "elems": 20000}, ...],
   "events": [{"at": 4, "kill": "B", "rank": 0}, {"at": 7, "restart_allocator": true}]}
- design (relative to the repository or absolute) and engine (model or rtl; --engine and --rtl on
  the command line override them): the one stand-in, started with no context and a --control
  socket that only the allocator writes (its inventory names that socket).
- jobs: arrival time in seconds, the stand-in ports of its ranks (rank r on server "ports[r]",
  one namespace per port), trees, iterations and elements (fp32) per worker. Each rank runs
  `panama-host worker --allocator` from its arrival: on the accelerator while its job holds a
  lease, on the host ring otherwise (docs/allocator.md "Fallback").
- events: {"kill": JOB, "rank": R} kills that worker (SIGKILL); the job's other ranks must end with
  a clear error and no output, and the lease (held by rank 0) ends by expiry or release and is
  reclaimed. {"restart_allocator": true} stops the allocator (SIGTERM) and starts it again on the
  same SQLite state, after "down_s" seconds (default 0.5).

Checks: every iteration of every surviving rank is exact: its result's digest (the worker's
--stats "modes" and "digests") equals the digest of the tree-order sum over the job's ports
(host_treesum sum, the design's sum mode) for an iteration on the accelerator, of the ring-order
sum (host_treesum ring) for one on the hosts; every rank of a job took the same path at every
iteration; the output is the last iteration's result. A monitor polls the stand-in's counters
(`controller --counters --json`), the allocator's status and the counters again, in a loop;
when the owners of the contexts changed between two polls a and b (a grant or a reclaim), every
context of every other lease held from the poll before a to the poll after b must read the same
JID, TID and enable, the same dropped count and no fewer completed vectors from a's first
counter read to b's second (the running job's own vectors may complete in the window). At least
one job must have fallen back to the ring and then moved onto the accelerator, and at the end
no lease is left. The report (stdout, and JSON at --report FILE) gives each
job's iterations and seconds on the accelerator and on the ring, grants and fallbacks, the
grants and reclaims seen, and the restart.
"""

import json
import os
import socket
import subprocess
import sys
import threading
import time

from . import design, netns
from .testbed import Exit, bad, cat, fail, in_lab, say

FALLBACK_TIMEOUT_MS = 8000


def fnv(path):
    h = 14695981039346656037
    with open(path, "rb") as f:
        for b in f.read():
            h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def last_error(path):
    """The worker's error line ("panama-host: ..."), the last one; None without."""
    try:
        with open(path, errors="replace") as f:
            lines = [x.rstrip("\n") for x in f if x.startswith("panama-host:")]
    except OSError:
        return None
    return lines[-1] if lines else None


def allocator_request(sock, req, timeout=3.0):
    """One JSON-lines request to `panama-host allocator` on its Unix socket: the reply object."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(sock)
        s.sendall((json.dumps(req) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            d = s.recv(65536)
            if not d:
                break
            buf += d
        return json.loads(buf)
    finally:
        s.close()


def load(o, argv):
    try:
        with open(o.jobs_from) as f:
            sc = json.load(f)
    except (OSError, ValueError) as e:
        bad(f"--jobs-from {o.jobs_from}: {e}")
    if not isinstance(sc, dict) or not isinstance(sc.get("jobs"), list) or not sc["jobs"]:
        bad(f"--jobs-from {o.jobs_from}: an object with a non-empty \"jobs\" list")
    if "--rtl" not in argv and "design" in sc:
        d = sc["design"]
        o.rtl = d if os.path.isabs(d) else os.path.join(o.root, d)
    if "--engine" not in argv:
        o.engine = sc.get("engine", "model")
    if o.engine not in ("model", "rtl"):
        bad(f"--jobs-from: engine model or rtl (the allocator writes registers; not '{o.engine}')")
    try:
        cfg = design.load_design(o.rtl)
    except design.DesignError as e:
        bad(f"--jobs-from: {e}")
    names, used = set(), set()
    for j in sc["jobs"]:
        ok = (isinstance(j, dict) and isinstance(j.get("name"), str) and isinstance(j.get("ports"), list)
              and j["ports"] and all(isinstance(p, int) and 0 <= p < cfg["ports"] for p in j["ports"])
              and len(set(j["ports"])) == len(j["ports"]) and j.get("workers", len(j["ports"])) == len(j["ports"]))
        for k in ("trees", "iterations", "elems"):
            ok = ok and isinstance(j.get(k), int) and j[k] >= 1
        ok = ok and isinstance(j.get("at", 0), (int, float)) and j["name"] not in names
        if not ok:
            bad(f"--jobs-from: job {j!r}: name (unique), ports (distinct, < {cfg['ports']}), trees, "
                f"iterations, elems (positive integers), at (seconds)")
        if used & set(j["ports"]):
            bad(f"--jobs-from: job {j['name']}: ports shared with another job (one server per rank)")
        names.add(j["name"])
        used |= set(j["ports"])
        j.setdefault("at", 0)
    for e in sc.get("events", []):
        ok = isinstance(e, dict) and isinstance(e.get("at"), (int, float))
        ok = ok and ((e.get("kill") in names and isinstance(e.get("rank"), int)) or e.get("restart_allocator"))
        if ok and "kill" in e:
            ok = 0 <= e["rank"] < len(next(j for j in sc["jobs"] if j["name"] == e["kill"])["ports"])
        if not ok:
            bad(f"--jobs-from: event {e!r}: {{\"at\": S, \"kill\": JOB, \"rank\": R}} or "
                f"{{\"at\": S, \"restart_allocator\": true}}")
    sc.setdefault("events", [])
    sc["ports_used"] = max(used) + 1
    return sc, cfg


class Scenario:
    def __init__(self, o, sc, cfg, lab):
        self.o, self.sc, self.cfg, self.lab = o, sc, cfg, lab
        self.p = lab.path
        self.sock, self.ctl = self.p("alloc.sock"), self.p("ctl.sw")
        self.lease_ms = int(sc.get("lease_ms", 2000))
        self.t0 = None
        self.alloc = None
        self.observed, self.violations = [], []
        self.mu = threading.Lock()
        self.monitor_stop = False
        self.restarts = []
        self.polls = 0
        self.poll_errors = []
        self.poll_s = 0.0
        self.starts = 0

    def now(self):
        return round(time.monotonic() - self.t0, 2)

    # --- the allocator -------------------------------------------------------------------------
    def request(self, req, timeout=3.0):
        return allocator_request(self.sock, req, timeout)

    def start_allocator(self):
        o = self.o
        n = self.starts
        self.starts += 1
        self.alloc = self.lab.spawn([o.ph, "allocator", "--socket", self.sock, "--state", self.p("alloc.sqlite"),
                                     "--inventory", self.p("inventory.json"), "--lease-ms", self.lease_ms],
                                    stdout=self.p(f"allocator{n}.out"), stderr=self.p(f"allocator{n}.err"))

        def up():
            try:
                return self.request({"op": "status"}, 1.0).get("ok")
            except (OSError, ValueError):
                return False

        if not netns.wait_until(up, 30):
            cat(self.p(f"allocator{n}.err"))
            fail("the allocator did not answer within 30 s")

    # --- the stand-in --------------------------------------------------------------------------
    def counters(self):
        try:
            r = subprocess.run([self.o.ph, "controller", "--regmap", self.o.rtl, "--control", self.ctl, "--counters",
                                "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            self.poll_errors.append(f"{self.now() if self.t0 else 0} s: counters: no answer within 30 s")
            return None
        if r.returncode != 0:
            self.poll_errors.append(f"{self.now() if self.t0 else 0} s: counters: {r.stderr.strip()[:160]}")
            return None
        return {c["index"]: c for c in json.loads(r.stdout)["contexts"]}

    def start_standin(self, star):
        o = self.o
        with open(self.p("empty.json"), "w") as f:
            f.write('{ "contexts": [] }\n')
        if o.engine == "rtl":
            r = subprocess.run(["timeout", "1200", o.ph, "switch", "--rtl", o.rtl, "--contexts", self.p("empty.json"),
                                "--ifaces", "none", "--prepare"], stdout=subprocess.DEVNULL)
            if r.returncode != 0:
                fail(f"could not verilate {o.rtl}")
        t = int(self.sc.get("timeout", 300))
        self.lab.spawn([o.ph, "switch", "--rtl", o.rtl, "--engine", o.engine, "--ifaces", star.ifaces, "--contexts",
                        self.p("empty.json"), "--control", self.ctl, "--counters", self.p("counters.sw.json"),
                        "--export-interval", "0.5", "--duration", t + 30], ns=star.sw_ns, timeout=t + 60,
                       stdout=self.p("switch.out"), stderr=self.p("switch.err"))
        if not netns.wait_until(lambda: os.path.exists(self.ctl) and self.counters() is not None, 60):
            cat(self.p("switch.err"))
            fail("the stand-in did not come up within 60 s")

    # --- the monitor: grants and reclaims, and the other leases' counters across them ---------
    def poll(self):
        t = time.monotonic()
        try:
            return self.poll_once()
        finally:
            self.poll_s += time.monotonic() - t

    def poll_once(self):
        c0 = self.counters()
        try:
            st = self.request({"op": "status"}, 2.0)
        except (OSError, ValueError) as e:
            self.poll_errors.append(f"{self.now()} s: status: {e}")
            return None
        c1 = self.counters()
        if c0 is None or c1 is None or not st.get("ok"):
            return None
        owner = st["accelerators"][0]["owner"]
        with open(self.p("polls.log"), "a") as f:
            f.write(f"{self.now()} {owner} " + " ".join(f"{x['lease']}:{x['expires_ms'] - int(time.time() * 1000)}"
                                                        for x in st["leases"]) + "\n")
        return {"t": self.now(), "c0": c0, "c1": c1, "owner": owner,
                "leases": {ls["lease"]: ls for ls in st["leases"]}}

    @staticmethod
    def held(s):
        return {lid: [i for i, w in enumerate(s["owner"]) if w == lid] for lid in s["leases"]}

    def compare(self, a, b, c):
        """A grant or reclaim between polls a and b; c is the poll after b."""
        ha, hb, hc = self.held(a), self.held(b), self.held(c)
        granted = [lid for lid in hb if lid not in ha]
        ended = [lid for lid in ha if lid not in hb]
        if not granted and not ended:
            return
        ev = {"t": b["t"], "granted": granted, "reclaimed": ended, "others": []}
        for lid, ctxs in ha.items():
            # Only leases held from the poll before a to the poll after b (lease ids are never
            # reused): one granted between a's first counter read and its status, or ended between
            # b's status and its second counter read, would look changed by its own grant or end.
            if (lid in granted or lid in ended or hb.get(lid) != ctxs or hc.get(lid) != ctxs
                    or lid not in a["settled"]):
                continue
            for c in ctxs:
                x, y = a["c0"].get(c), b["c1"].get(c)
                ok = (x is not None and y is not None and x["enabled"] and y["enabled"] and x["jid"] == y["jid"]
                      and x["tid"] == y["tid"] and x["vectors_dropped"] == y["vectors_dropped"]
                      and y["vectors_completed"] >= x["vectors_completed"])
                d = {"lease": lid, "context": c, "ok": ok,
                     "completed_delta": (y["vectors_completed"] - x["vectors_completed"]) if x and y else None,
                     "dropped_delta": (y["vectors_dropped"] - x["vectors_dropped"]) if x and y else None}
                ev["others"].append(d)
                if not ok:
                    self.violations.append(f"lease {lid}'s context {c} changed across "
                                           f"grant {granted} / reclaim {ended}: {x} -> {y}")
        with self.mu:
            self.observed.append(ev)
        say(f"{ev['t']} s: granted {granted or '-'}, reclaimed {ended or '-'}; other leases' contexts "
            f"checked: {len(ev['others'])}, unchanged but their own completions "
            f"({'ok' if all(d['ok'] for d in ev['others']) else 'CHANGED'})")

    def monitor(self):
        hist = []  # the last successful polls, in a row
        while not self.monitor_stop:
            cur = self.poll()
            self.polls += 1
            if cur is None:
                hist = []
            else:
                ph = self.held(hist[-1]) if hist else {}
                cur["settled"] = {lid for lid, c in self.held(cur).items() if ph.get(lid) == c}
                hist = (hist + [cur])[-3:]
                if len(hist) == 3:
                    self.compare(*hist)
            time.sleep(0.1)

    # --- jobs ------------------------------------------------------------------------------------
    def inputs(self):
        o, run = self.o, self
        tool = lambda *a: subprocess.run([o.sumtool] + [str(x) for x in a], check=True)
        sumopts = ["--sum", self.cfg.get("sum", "tree"), "--subnormals", self.cfg.get("subnormals", "ieee")]
        for k, j in enumerate(self.sc["jobs"]):
            ins = []
            for r, port in enumerate(j["ports"]):
                ins.append(run.p(f"in.{j['name']}.{r}.bin"))
                tool("gen", o.seed * 1000 + 100 * k + r, j["elems"], ins[-1])
            tool("sum", *sumopts, self.cfg["ports"], run.p(f"tree.{j['name']}.bin"),
                 *[f"{x}:{port}" for x, port in zip(ins, j["ports"])])
            tool("ring", run.p(f"ring.{j['name']}.bin"), *ins)
            j["digest"] = {"A": fnv(run.p(f"tree.{j['name']}.bin")), "R": fnv(run.p(f"ring.{j['name']}.bin"))}

    def start_job(self, k, j, star):
        o = self.o
        j["procs"], j["started"] = [], self.now()
        t = int(self.sc.get("timeout", 300))
        W = len(j["ports"])
        for r, port in enumerate(j["ports"]):
            n = f"{j['name']}.{r}"
            argv = [o.ph, "worker", "--allocator", self.sock, "--job", 10 + k, "--rank", r, "--world", W, "--trees",
                    j["trees"], "--iface", star.wif[port], "--in", self.p(f"in.{n}.bin"), "--out",
                    self.p(f"out.{n}.bin"), "--agg-ip", star.agg_ip, "--iterations", j["iterations"], "--stats",
                    self.p(f"stats.{n}.json"), "--fallback-timeout-ms", FALLBACK_TIMEOUT_MS]
            if r == 0:
                argv += ["--alloc-ports", json.dumps({"sw": j["ports"]})]
            j["procs"].append(self.lab.spawn(argv, ns=star.ns[port], timeout=t, stderr=self.p(f"worker.{n}.err")))
        say(f"{j['started']} s: job {j['name']} arrives: {W} workers on ports {j['ports']}, {j['trees']} trees, "
            f"{j['iterations']} iterations of {j['elems']} elements")

    def event(self, e):
        jobs = {j["name"]: j for j in self.sc["jobs"]}
        if "kill" in e:
            j = jobs[e["kill"]]
            if "procs" not in j or j["procs"][e["rank"]].poll() is not None:
                fail(f"event at {e['at']} s: job {e['kill']}'s rank {e['rank']} is not running (started late "
                     f"or finished: more iterations or elements)")
            victim = netns.innermost(j["procs"][e["rank"]].pid, 3)
            try:
                os.kill(victim, 9)
            except OSError:
                pass
            j["killed"] = e["rank"]
            e["done_at"] = self.now()
            say(f"{e['done_at']} s: killed job {e['kill']}'s rank {e['rank']} (pid {victim})")
        else:
            t = time.monotonic()
            self.alloc.terminate()
            try:
                self.alloc.wait(10)
            except subprocess.TimeoutExpired:
                self.alloc.kill()
                self.alloc.wait(5)
            time.sleep(float(e.get("down_s", 0.5)))
            self.start_allocator()
            down = round(time.monotonic() - t, 2)
            st = self.request({"op": "status"})
            self.restarts.append({"at": e["at"], "down_s": down, "leases_after": sorted(st_l["lease"] for st_l in
                                                                                        st["leases"])})
            say(f"{self.now()} s: allocator restarted on its state ({down} s down); leases after: "
                f"{self.restarts[-1]['leases_after']}")

    # --- verdicts --------------------------------------------------------------------------------
    def verdict(self, j):
        out = {"name": j["name"], "workers": len(j["ports"]), "trees": j["trees"], "iterations": j["iterations"],
               "elems": j["elems"], "arrived_s": j.get("started")}
        rcs = [p.wait() for p in j["procs"]]
        out["exit"] = rcs
        errs = []
        if "killed" in j:
            out["killed_rank"] = j["killed"]
            for r, rc in enumerate(rcs):
                if r == j["killed"]:
                    continue
                line = last_error(self.p(f"worker.{j['name']}.{r}.err"))
                if rc == 0 or os.path.exists(self.p(f"out.{j['name']}.{r}.bin")) or not line:
                    errs.append(f"job {j['name']} rank {r}: exit {rc} after its peer was killed (expected a clear "
                                f"error and no output)")
                else:
                    say(f"job {j['name']} rank {r}: exit {rc}: {line[:160]}")
            return out, errs
        stats = []
        for r, rc in enumerate(rcs):
            n = f"{j['name']}.{r}"
            if rc != 0:
                cat(self.p(f"worker.{n}.err"))
                errs.append(f"job {j['name']} rank {r} exited {rc}")
                continue
            with open(self.p(f"stats.{n}.json")) as f:
                s = json.load(f)
            stats.append(s)
            if len(s["digests"]) != j["iterations"]:
                errs.append(f"job {j['name']} rank {r}: {len(s['digests'])} digests for {j['iterations']} iterations")
            for it, (m, d) in enumerate(zip(s["modes"], s["digests"])):
                if d != j["digest"][m]:
                    errs.append(f"job {j['name']} rank {r} iteration {it + 1} ({'accelerator' if m == 'A' else 'ring'}): "
                                f"not the {'tree' if m == 'A' else 'ring'}-order sum")
            if fnv(self.p(f"out.{n}.bin")) != s["digests"][-1]:
                errs.append(f"job {j['name']} rank {r}: the output is not the last iteration's result")
        if len(stats) == len(rcs) and len({s["modes"] for s in stats}) != 1:
            errs.append(f"job {j['name']}: the ranks took different paths: {[s['modes'] for s in stats]}")
        if stats:
            s0 = stats[0]
            m = s0["modes"]
            out.update({"modes": m, "accel_iterations": s0["accel_iterations"], "ring_iterations": s0["ring_iterations"],
                        "redone": s0["redone"], "grants": s0["grants"],
                        "fallbacks": sum(1 for i, c in enumerate(m) if c == "R" and (i == 0 or m[i - 1] == "A")),
                        "accel_seconds": round(max(s["accel_seconds"] for s in stats), 3),
                        "ring_seconds": round(max(s["ring_seconds"] for s in stats), 3),
                        "boundary_seconds": round(max(s["boundary_seconds"] for s in stats), 3)})
        return out, errs

    def run(self):
        o, sc = self.o, self.sc
        try:
            star = self.lab.star(sc["ports_used"], "10.98.0", tag="s")
        except RuntimeError as e:
            print(f"SKIP: network namespaces refused here ({e})")
            raise Exit(77)
        self.start_standin(star)
        with open(self.p("inventory.json"), "w") as f:
            json.dump({"accelerators": [{"name": "sw", "design": o.rtl, "control": self.ctl,
                                         "agg_ip": star.agg_ip}]}, f)
        self.inputs()
        self.t0 = time.monotonic()
        self.start_allocator()
        say(f"design {o.rtl} ({self.cfg['ports']} ports, {self.cfg['contexts']} contexts), engine {o.engine}; "
            f"{len(sc['jobs'])} jobs needing {sum(j['trees'] for j in sc['jobs'])} contexts; lease {self.lease_ms} ms")
        mon = threading.Thread(target=self.monitor, daemon=True)
        mon.start()
        todo = sorted([(j["at"], 0, k) for k, j in enumerate(sc["jobs"])] +
                      [(e["at"], 1, k) for k, e in enumerate(sc["events"])])
        deadline = self.t0 + int(sc.get("timeout", 300))
        for at, kind, k in todo:
            while time.monotonic() < self.t0 + at:
                time.sleep(0.02)
            if kind == 0:
                self.start_job(k, sc["jobs"][k], star)
            else:
                self.event(sc["events"][k])
        procs = [p for j in sc["jobs"] for p in j["procs"]]
        while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
            time.sleep(0.2)
        # The killed job's lease ends (expiry, or the survivors' release): wait for its reclaim.
        netns.wait_until(lambda: not self.request({"op": "status"})["leases"], self.lease_ms / 1000 + 5)
        time.sleep(0.5)
        self.monitor_stop = True
        mon.join(30)
        elapsed = self.now()
        report = {"scenario": o.jobs_from, "design": o.rtl, "engine": o.engine, "contexts": self.cfg["contexts"],
                  "lease_ms": self.lease_ms, "elapsed_s": elapsed, "jobs": [], "events": sc["events"],
                  "restarts": self.restarts, "grants_and_reclaims": self.observed, "polls": self.polls,
                  "poll_errors": self.poll_errors}
        errs = []
        for j in sc["jobs"]:
            v, e = self.verdict(j)
            report["jobs"].append(v)
            errs += e
        left = self.request({"op": "status"})["leases"]
        if left:
            errs.append(f"leases left at the end: {[x['lease'] for x in left]}")
        errs += self.violations
        if not any(v.get("fallbacks") and v.get("accel_iterations") for v in report["jobs"]):
            errs.append("no job fell back to the ring and then moved onto the accelerator (the scenario's timing)")
        if not any(ev["others"] for ev in self.observed):
            errs.append("no grant or reclaim was seen while another lease ran (the scenario checks nothing)")
        for v in report["jobs"]:
            if "modes" in v:
                say(f"job {v['name']}: {v['accel_iterations']} iterations on the accelerator ({v['accel_seconds']} s), "
                    f"{v['ring_iterations']} on the ring ({v['ring_seconds']} s), redone {v['redone']}, grants "
                    f"{v['grants']}, fallbacks {v['fallbacks']}, boundaries {v['boundary_seconds']} s; path {v['modes']}")
            else:
                say(f"job {v['name']}: rank {v.get('killed_rank')} killed; exits {v['exit']}")
        checked = sum(len(ev["others"]) for ev in self.observed)
        say(f"{len(self.observed)} grants/reclaims seen in {self.polls} polls "
            f"({round(self.poll_s / max(1, self.polls), 2)} s each, {len(self.poll_errors)} failed); {checked} contexts of other leases "
            f"checked across them: {'none changed' if not self.violations else 'CHANGED'} "
            f"(JID, TID, enable, dropped equal; completed never lower)")
        report["ok"] = not errs
        report["failures"] = errs
        if o.report:
            with open(o.report, "w") as f:
                json.dump(report, f, indent=1, default=str)
            say(f"report: {o.report}")
        for e in errs:
            print(f"FAIL: {e}")
        if errs:
            cat(self.p("allocator0.err"))
            return 1
        print(f"PASS: {len(sc['jobs'])} jobs on {self.cfg['contexts']} contexts, every iteration exact on the path "
              f"it took, no other lease's context changed across a grant or reclaim ({elapsed} s)")
        return 0


def main(o, argv):
    try:
        sc, cfg = load(o, argv)
    except Exit as e:
        return e.code
    o.ph = os.path.join(o.build, "panama-host")
    o.sumtool = os.path.join(o.build, "host_driver", "host_treesum")
    for f in (o.ph, o.sumtool):
        if not os.access(f, os.X_OK):
            print(f"testbed: {f} not built (cmake --build build)", file=sys.stderr)
            return 1
    o.seed = int(o.seed) if str(o.seed).isdigit() else 1
    return in_lab("sc", o.keep, lambda lab: Scenario(o, sc, cfg, lab).run())
