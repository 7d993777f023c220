"""The testbed's all-reduce: inputs, the expected sum, the workers, their checks (scripts/testbed)."""

import filecmp
import os
import shutil
import subprocess
import sys
import time

from . import netns, workers
from .testbed import Exit, cat, fail, say


def tool(run, *args):
    r = subprocess.run([run.o.sumtool] + [str(a) for a in args])
    if r.returncode != 0:
        raise Exit(1)


def expected(run):
    """Inputs (seeded per worker) and the expected result: per tree, the root's sum over its
    members' partial sums, each a leaf's sum over its ports, spliced vector by vector."""
    o, W, p = run.o, run.W, run.p
    for i in range(W):
        tool(run, "gen", o.seed * 1000 + i, o.elems, p(f"in{i}.bin"))

    def leaf_sum(sw, out, *extra):  # the stand-in's tree over its workers' ports
        args = [f"{p(f'in{i}.bin')}:{run.worker_port[i]}" for i in range(W) if run.worker_sw[i] == sw]
        tool(run, "sum", *run.sumopts, run.ports, out, *args, *extra)

    if o.two:
        leaf_sum("leaf0", p("p0.bin"))
        leaf_sum("leaf1", p("p1.bin"))
        tool(run, "sum", *run.sumopts, run.ports, p("tree0.bin"), f"{p('p0.bin')}:0", f"{p('p1.bin')}:1")
        if o.trees == 2 and not o.same_root:
            tool(run, "sum", *run.sumopts, run.ports, p("r1.bin"), f"{p('p1.bin')}:1")  # the root's one-member tree
            leaf_sum("leaf0", p("tree1.bin"), f"{p('r1.bin')}:{run.n0}")  # leaf0 over its workers + uplink
        else:
            shutil.copyfile(p("tree0.bin"), p("tree1.bin"))
    else:
        leaf_sum("sw", p("tree0.bin"))
        shutil.copyfile(p("tree0.bin"), p("tree1.bin"))
    # Vector k of a call goes to tree k mod T; with loss repair on (the default) a vector carries
    # COUNT - 1 elements, COUNT = min(MAX_ELEMS, floor((MTU - 50) / 4)).
    mtu = int(netns.read_sys(run.worker_ns[0], f"/sys/class/net/{run.worker_if[0]}/mtu"))
    repair = " --repair-rounds 0 " not in f" {o.worker_args} "
    # The status wait (how long a worker waits for a repair round's status before going on) is
    # sized for a real accelerator's round trip (200 ms by default, far above it). A Verilated
    # stand-in on a shared CPU answers 10-15x more slowly than the SystemC one, and more results
    # then arrive after their wait; with loss or duplication on the RTL engine the testbed gives
    # the workers 600 ms unless --worker-args sets it (docs/results/host.md "Loss sweep").
    if o.engine == "rtl" and (o.loss != "0" or o.dup != "0" or o.reorder != "0"):
        if " --status-wait-ms " not in f" {o.worker_args} ":
            o.worker_args = f"--status-wait-ms 600 {o.worker_args}"
            say("RTL engine with faults: workers wait 600 ms for a status (--worker-args overrides)")
    # Verilated board shells answer at the speed of their simulation, which a loaded machine slows
    # down many times over (three boards deep, a result crosses five). The workers' waits are
    # scaled to the speed measured at programming: the slowest board's context-table read over
    # management (about a dozen request round trips through the same boards) is one status wait,
    # and the call timeout is ten of them; never below the defaults (200 ms, 2 s), and not when
    # --worker-args sets them.
    if o.shell:
        if " --status-wait-ms " not in f" {o.worker_args} ":
            o.worker_args = f"--status-wait-ms {max(run.show_ms, 200)} {o.worker_args}"
        if " --timeout-ms " not in f" {o.worker_args} ":
            o.worker_args = f"--timeout-ms {max(10 * run.show_ms, 2000)} {o.worker_args}"
        say(f"board shells answer management in {run.show_ms} ms: worker waits {o.worker_args}")
    run.vec = workers.vector_elems(mtu, run.max_elems, repair)
    workers.splice([p("tree0.bin"), p("tree1.bin")], p("expected.bin"), run.vec, o.trees)


def run(run):
    o, W, p = run.o, run.W, run.p
    expected(run)
    procs = []
    start = time.time()
    for i in range(W):
        argv = [o.ph, "worker", "--iface", run.worker_if[i], "--job", "1", "--rank", i, "--world", W,
                "--trees", o.trees, "--in", p(f"in{i}.bin"), "--out", p(f"out{i}.bin"), "--agg-ip", "10.98.0.254",
                "--group-ip", "239.1.1.1", "--iterations", o.iter, "--stats", p(f"stats{i}.json"),
                "--progress", p(f"progress{i}.csv")] + o.worker_args.split()
        procs.append(run.lab.spawn(argv, ns=run.worker_ns[i], timeout=o.timeout, stderr=p(f"worker{i}.err")))
    killed_at = None
    if o.kill_rank >= 0:
        time.sleep(float(o.kill_after))
        wp = procs[o.kill_rank]
        if wp.poll() is not None:
            fail(f"worker {o.kill_rank} finished before the kill (use more --iterations)")
        # The worker itself (the child of timeout / ip netns exec).
        victim = netns.innermost(wp.pid, 3)
        try:
            os.kill(victim, 9)
        except OSError:
            pass
        killed_at = time.time()
        say(f"killed worker {o.kill_rank} (pid {victim}) at {round(killed_at - start, 2)} s")
    # Progress while the workers run (worker 0's --progress CSV: results received): a live bar
    # with rate and ETA on a terminal, a plain line every 10 s otherwise. Repair results count
    # too, so the fraction can pass 100 % near the end; it is capped.
    tty = sys.stdout.isatty()
    total = (o.elems + run.vec - 1) // run.vec * o.iter
    ends = [None] * W
    tick = 0
    while True:
        for _ in range(10):
            now = time.time()
            for i, pr in enumerate(procs):
                if ends[i] is None and pr.poll() is not None:
                    ends[i] = now
            if all(e is not None for e in ends):
                break
            time.sleep(0.1)
        if all(e is not None for e in ends):
            break
        tick += 1
        if tty or tick % 10 == 0:
            got = workers.results_received(p("progress0.csv"))
            line = workers.progress_line(got, total, time.time() - start, run.vec * 4)
            if tty:
                sys.stdout.write("\r" + line)
                sys.stdout.flush()
            else:
                say(line)
    if tty:
        print()
    rc = [pr.wait() for pr in procs]
    run.elapsed = round(time.time() - start, 2)
    if o.kill_rank >= 0:
        for i in range(W):
            if i == o.kill_rank:
                continue
            took = round(ends[i] - killed_at, 2)
            msg = None
            with open(p(f"worker{i}.err"), errors="replace") as f:
                for line in f:
                    if "panama-host:" in line:
                        msg = line.rstrip("\n")
                        break
            if rc[i] == 0:
                if same(p("expected.bin"), p(f"out{i}.bin")):
                    print(f"worker {i}: finished (exact) before noticing")
                else:
                    print(f"FAIL: worker {i} wrote a WRONG result after a peer was killed")
                print(f"FAIL: worker {i} did not report the dead peer")
                run.status = 1
            elif rc[i] == 124:
                print(f"FAIL: worker {i} hung (killed by the {o.timeout} s timeout)")
                run.status = 1
            elif os.path.exists(p(f"out{i}.bin")):
                print(f"FAIL: worker {i} failed but wrote an output")
                run.status = 1
            elif took > float(o.kill_bound):
                print(f"FAIL: worker {i} took {took} s after the kill (bound {o.kill_bound} s)")
                run.status = 1
            elif not msg:
                print(f"FAIL: worker {i} failed without a clear message:")
                cat(p(f"worker{i}.err"))
                run.status = 1
            else:
                print(f"worker {i}: exit {rc[i]} {took} s after the kill: {msg}")
    else:
        for i in range(W):
            refused = None
            if rc[i] != 0:
                from .standin import first_match
                refused = first_match(p(f"worker{i}.err"), workers.BACKEND_REFUSED)
            if refused:
                print(f"SKIP: backend {o.backend} refused here: {refused}")
                raise Exit(77)
            if rc[i] != 0:
                print(f"FAIL: worker {i} exited {rc[i]}:")
                with open(p(f"worker{i}.err"), errors="replace") as f:
                    sys.stdout.write("".join(f.readlines()[-3:]))
                run.status = 1
            elif not same(p("expected.bin"), p(f"out{i}.bin")):
                print(f"FAIL: worker {i}'s output differs from the expected {run.summode} sum")
                run.status = 1
    for i in range(W):
        s = p(f"stats{i}.json")
        if os.path.exists(s) and os.path.getsize(s) > 0:
            try:
                print(workers.stats_line(s))
            except (ValueError, KeyError, TypeError) as e:
                print(f"testbed: worker {i}'s statistics unreadable: {e}", file=sys.stderr)


def same(a, b):
    try:
        return filecmp.cmp(a, b, shallow=False)
    except OSError:
        return False
