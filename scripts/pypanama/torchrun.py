"""scripts/testbed --torch SCRIPT [ARGS...] (docs/torch.md "Testbed").

Every worker namespace runs Debian's /usr/bin/python3 SCRIPT ARGS with the distributed and panama
settings in its environment, in the run's directory.
"""

import glob
import json
import os
import sys
import time

from . import netns
from .netns import sh

TORCH_PY = "/usr/bin/python3"  # Debian's interpreter: the one with torch, sklearn and panama_torch's ABI


def check_args(o, bad):
    if not os.path.isfile(o.torch):
        bad(f"--torch: no script '{o.torch}'")
    # The scripts run in the run's directory: absolute paths.
    o.torch, o.build, o.rtl = os.path.abspath(o.torch), os.path.abspath(o.build), os.path.abspath(o.rtl)
    if not os.access(TORCH_PY, os.X_OK):
        bad(f"--torch: {TORCH_PY} (Debian's python3 with python3-torch) is not installed (scripts/setup)")
    # A machine without PyTorch cannot run the case: SKIP (77), not a failure.
    import subprocess
    probe = subprocess.run([TORCH_PY, "-c", "import torch"], capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        from .testbed import Exit
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        print(f"SKIP: {TORCH_PY} cannot import torch ({last}; python3-torch, scripts/setup)", flush=True)
        raise Exit(77)
    if not glob.glob(os.path.join(o.build, "torch_ext", "panama_torch", "_C*.so")):
        bad(f"--torch: panama_torch is not built in {o.build} (cmake --build {o.build} --target panama_torch)")
    if int(o.kill_rank) >= 0:
        bad("--torch: not with --kill-rank (a script ends itself; TESTBED_STANDIN_PIDS names the stand-ins)")


def mgmt_net(run):
    """The management network: a bridge in a namespace of its own, one veth per worker
    (10.99.0.R+1), so that the TCP store (MASTER_ADDR, rank 0) is reachable from every worker
    whatever the stand-in does (it may be slow, lossy or stopped by a fault test)."""
    lab = run.lab
    ns, br = lab.ns_name("mgmt"), lab.if_name("br")
    lab.mkns(ns) or run_fail(f"ip netns add {ns}")
    sh("ip", "link", "add", br, "type", "bridge", ns=ns)
    sh("ip", "link", "set", br, "up", ns=ns)
    for i in range(run.W):
        a, b = lab.if_name(f"m{i}"), lab.if_name(f"b{i}")
        sh("ip", "link", "add", a, "netns", run.worker_ns[i], "type", "veth", "peer", "name", b, "netns", ns)
        sh("ip", "link", "set", b, "master", br, "up", ns=ns)
        sh("ip", "addr", "add", f"10.99.0.{i + 1}/24", "dev", a, ns=run.worker_ns[i])
        sh("ip", "link", "set", a, "up", ns=run.worker_ns[i])
        # Gloo's TCP crosses the stand-in: one segment per skb, or the kernel hands the stand-in
        # 64 KiB GSO super-frames that no port carries (the connection stalls; as scripts/bench-host).
        sh("ip", "link", "set", "dev", run.worker_if[i], "gso_max_segs", "1", ns=run.worker_ns[i])


def run_fail(msg):
    from .testbed import fail
    fail(msg)


def standin_pids(run):
    """The stand-ins' own process ids (the children of timeout(1)), "NAME:PID ...", for fault tests."""
    out = []
    for sw in run.switches:
        pid = run.sw_proc[sw].pid
        c = netns.children(pid)
        out.append(f"{sw}:{c[0] if c else pid}")
    return " ".join(out)


def standins_file(run):
    """standins.json in the run's directory: every stand-in's namespace and command line, so that a
    fault test can start a stand-in again after stopping it (ip netns exec NS ARGV...)."""
    with open(run.p("standins.json"), "w") as f:
        json.dump({sw: {"ns": run.sw_ns[sw], "argv": [str(a) for a in run.sw_argv[sw]]} for sw in run.switches}, f)


def run(run):
    from .testbed import say
    o, W, tmp = run.o, run.W, run.tmp
    mgmt_net(run)
    standins_file(run)
    os.environ["TESTBED_TORCH"] = "1"
    ports = ",".join(str(run.worker_port[i]) for i in range(W))
    standins = standin_pids(run)
    say(f"--torch: {os.path.basename(o.torch)} {' '.join(o.torch_args)} as {W} workers (ports {ports}), run "
        f"directory {tmp}{f' (kept in {o.keep})' if o.keep else ''}")
    start = time.time()
    procs = []
    for i in range(W):
        # A variable the caller set (PANAMA_TIMEOUT_MS, ...) passes through; the job's own are the testbed's.
        pp = os.environ.get("PYTHONPATH", "")
        env = {"RANK": i, "WORLD_SIZE": W, "LOCAL_RANK": 0, "LOCAL_WORLD_SIZE": 1, "MASTER_ADDR": "10.99.0.1",
               "MASTER_PORT": 29500, "GLOO_SOCKET_IFNAME": run.worker_if[i],
               "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS") or "1",
               "PYTHONPATH": os.path.join(o.build, "torch_ext") + (f":{pp}" if pp else ""),
               "PANAMA_DESIGN": run.rtl, "PANAMA_IFACE": run.worker_if[i], "PANAMA_AGG_IP": "10.98.0.254",
               "PANAMA_GROUP_IP": "239.1.1.1", "PANAMA_JOB": 1, "PANAMA_TREES": o.trees, "TESTBED_PORTS": ports,
               "TESTBED_ENGINE": o.engine, "TESTBED_BUILD": o.build, "TESTBED_STANDIN_PIDS": standins,
               "TESTBED_MGMT_IFACE": run.lab.if_name(f"m{i}")}
        argv = ["env"] + [f"{k}={v}" for k, v in env.items()] + [TORCH_PY, o.torch] + o.torch_args
        procs.append(run.lab.spawn(argv, ns=run.worker_ns[i], timeout=o.timeout, cwd=tmp,
                                   stdout=run.p(f"torch{i}.out"), stderr=run.p(f"torch{i}.err")))
    # Rank 0's output as it comes (epochs, tables), each line once.
    shown = 0
    while True:
        done = all(pr.poll() is not None for pr in procs)
        try:
            with open(run.p("torch0.out"), errors="replace") as f:
                lines = f.read().split("\n")[:-1]  # whole lines only
        except OSError:
            lines = []
        if len(lines) > shown:
            sys.stdout.write("".join(line + "\n" for line in lines[shown:]))
            sys.stdout.flush()
            shown = len(lines)
        if done:
            break
        time.sleep(0.5)
    run.elapsed = round(time.time() - start, 2)
    for i, pr in enumerate(procs):
        rc = pr.wait()
        if rc == 0:
            print(f"rank {i}: exit 0")
        else:
            run.status = 1
            print(f"FAIL: rank {i} exited {rc}{f' (killed by the {o.timeout} s timeout)' if rc == 124 else ''}:")
            with open(run.p(f"torch{i}.err"), errors="replace") as f:
                for line in f.read().splitlines()[-15:]:
                    print(f"  rank {i}: {line}")
    # The backend's notes (fallbacks, unknown variables), once.
    notes = set()
    for i in range(W):
        try:
            with open(run.p(f"torch{i}.err"), errors="replace") as f:
                notes |= {line.rstrip("\n") for line in f if line.startswith("panama_torch:")}
        except OSError:
            pass
    for line in sorted(notes):
        say(line)
    # Only the stand-ins still running when the scripts ended: one a script stopped has no final
    # counters to check.
    alive = []
    for sw in run.switches:
        if run.sw_proc[sw].poll() is None:
            alive.append(sw)
        else:
            say(f"stand-in {sw} ended during the run: its counters are not checked")
    run.switches = alive
