#!/usr/bin/env python3
"""The stand-in's shutdown and the controller's checks (docs/host-testing.md):
 1. for each engine (model, rtl) and each stopping signal (INT, TERM, HUP, QUIT): a stand-in on the
    loopback interface of a fresh namespace, a context programmed live through the control socket,
    frames flowing through the engine (a burst of contributions to lo), then the signal: exit 0,
    and complete final counters (stdout and --counters file, JSON with "complete": true) listing
    the live-programmed context with its JID and TID, and a queue log sampled over time;
 2. the controller refuses, with one line naming the difference and before any write, a register
    map of another design (8-port map against the 4-port stand-in) and a job whose members do not
    exist (--members 0..7 on 4 ports): the context table reads back unchanged;
 3. controller --counters prints the table and --json the counters of the live context; --job-out.

  host_switch_ctl.py PANAMA_HOST RTL_DIR OTHER_RTL_DIR

The namespace is scripts/pypanama's (netns.Lab). Exit 0 pass, 1 fail, 77 skip (no namespaces here).
"""

import csv
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import fail, lab_or_skip, read, script_args, sh, stop, wait_exit  # noqa: E402

PH, RTL, OTHER = script_args(__doc__, "PANAMA_HOST RTL_DIR OTHER_RTL_DIR", 3)

lab = lab_or_skip("hs", "host_sig.")
P = lab.path
NS = lab.ns_name("lo")
lab.mkns(NS) or fail(f"ip netns add {NS}")
with open(P("empty.json"), "w") as f:
    f.write('{ "contexts": [] }\n')
if subprocess.run(["timeout", "1200", PH, "switch", "--rtl", RTL, "--contexts", P("empty.json"), "--ifaces", "none",
                   "--prepare"], stdout=subprocess.DEVNULL).returncode != 0:
    fail(f"could not verilate {RTL}")

CTL = [PH, "controller", "--regmap", RTL, "--control", P("ctl")]
LIVE = ["--job", "42", "--trees", "1", "--tids", "3", "--index", "5", "--members", "0", "--group-mac",
        "01:00:5e:01:01:2a", "--group-ip", "239.1.1.42"]


def ctl(*args, **kw):
    return subprocess.run(CTL + list(args), **kw)


def start(engine):
    for f in ("ctl", "counters.json"):
        if os.path.exists(P(f)):
            os.remove(P(f))
    p = lab.spawn([PH, "switch", "--rtl", RTL, "--engine", engine, "--contexts", P("empty.json"), "--ifaces", "lo",
                   "--control", P("ctl"), "--counters", P("counters.json"), "--export-interval", "0.2", "--queue-log",
                   P("queue.csv"), "--queue-log-interval", "0.05"], ns=NS, stdout=P("out.json"), stderr=P("err.txt"))
    for _ in range(150):
        if os.path.exists(P("ctl")) and ctl("--show", stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL).returncode == 0:
            return p
        if p.poll() is not None:
            fail(f"{engine}: the stand-in died at start", P("err.txt"))
        time.sleep(0.2)
    fail(f"{engine}: the stand-in did not come up", P("err.txt"))


def check_counters(path, what):
    try:
        with open(path) as f:
            j = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{what}: no complete JSON ({type(e).__name__})")
    if j.get("complete") is not True:
        fail(f"{what}: not marked complete: {j.get('error')}")
    ctx = j["accelerator"]["contexts"]
    if not any(c["jid"] == 42 and c["tid"] == 3 and c["enabled"] for c in ctx):
        fail(f"{what}: the live-programmed context (JID 42, TID 3) is missing: {ctx}")
    if len(j["accelerator"]["ports"]) != 4 or len(j["switch_ports"]) != 1:
        fail(f"{what}: port counters missing")
    if j["switch_ports"][0]["rx_frames"] == 0:
        fail(f"{what}: no frame went through the stand-in")


def check_queue_log(what):
    """One header, samples of port 0 over more than one counter-export slice."""
    lines = read(P("queue.csv")).splitlines()
    if not lines or lines[0] != "unix_s,port,queue_frames,ce_marked" or sum(x.startswith("unix_s") for x in lines) != 1:
        fail(f"{what}: queue log header missing or repeated")
    t = [float(r["unix_s"]) for r in csv.DictReader(lines) if r["port"] == "0"]
    if len(t) < 5 or t != sorted(t) or t[-1] - t[0] < 0.3:
        fail(f"{what}: queue log of port 0 has {len(t)} samples over {t[-1] - t[0] if t else 0:.2f} s")


BURST = """
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0xE2)  # DSCP 56, ECT(0): an aggregation frame
for vid in range(200):
    # VER, FLAGS, JID, TID, reserved, COUNT, VID, RANK, COOKIE (wire-format.md), then 4 fp32
    hdr = struct.pack(">BBHBBHIHQ", 1, 0, 42, 3, 0, 4, vid, 0, 0)
    s.sendto(hdr + struct.pack("<4f", 1, 2, 3, vid), ("127.0.0.1", 9056))
"""

for engine in ("model", "rtl"):
    for sig in ("INT", "TERM", "HUP", "QUIT"):
        p = start(engine)
        if ctl(*LIVE, stderr=open(P("ctl.err"), "w")).returncode != 0:
            fail("programming", P("ctl.err"))
        sh(sys.executable, "-c", BURST, ns=NS)
        time.sleep(0.3)
        p.send_signal(getattr(signal, f"SIG{sig}"))
        rc = wait_exit(p, 10)
        if rc is None:
            stop(p, signal.SIGKILL)
            fail(f"{engine} SIG{sig}: the stand-in did not stop within 10 s")
        if rc != 0:
            fail(f"{engine} SIG{sig}: exit {rc}", P("err.txt"))
        check_counters(P("out.json"), f"{engine} SIG{sig} stdout")
        check_counters(P("counters.json"), f"{engine} SIG{sig} --counters file")
        check_queue_log(f"{engine} SIG{sig} queue log")
        print(f"ok: {engine} SIG{sig}: complete final counters with the live context", flush=True)

# --- controller: checks before writes ----------------------------------------------------------
p = start("model")
ctl(*LIVE, stderr=subprocess.DEVNULL)
before = ctl("--show", stdout=subprocess.PIPE, text=True).stdout


def refuse(what, pattern, args):
    """exit != 0, one "panama-host:" line naming pattern, the context table unchanged."""
    r = subprocess.run([PH, "controller"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode == 0:
        fail(f"controller accepted {what}")
    if len(r.stderr.splitlines()) != 1:
        fail(f"{what}: not one line: {r.stderr}")
    if pattern not in r.stderr:
        fail(f"{what}: the line does not name '{pattern}': {r.stderr}")
    if ctl("--show", stdout=subprocess.PIPE, text=True).stdout != before:
        fail(f"{what}: the context table changed")
    print(f"ok: refused {what}: {r.stderr.strip()}")


ONE = ["--index", "0", "--group-mac", "01:00:5e:01:01:01", "--group-ip", "239.1.1.1"]
refuse("an 8-port register map on a 4-port design", "PORTS reads 4",
       ["--regmap", OTHER, "--control", P("ctl"), "--job", "1", "--members", "0,1"] + ONE)
refuse("members 0..7 on 4 ports", "member port 4 out of range: the design has PORTS = 4",
       CTL[2:] + ["--job", "1", "--members", "0,1,2,3,4,5,6,7"] + ONE)
table = ctl("--counters", stdout=subprocess.PIPE, text=True).stdout.splitlines()
if not any(x.startswith("port rx_frames tx_frames") for x in table):
    fail(f"--counters: no port table: {table}")
if not any(x.startswith("5 42 3 1 ") for x in table):
    fail(f"--counters: no line for context 5: {table}")
j = json.loads(ctl("--counters", "--json", stdout=subprocess.PIPE, text=True).stdout)
if len(j["ports"]) != 4 or not any(c["index"] == 5 and c["jid"] == 42 for c in j["contexts"]):
    fail(f"--counters --json: {j}")
ctl("--job-out", P("job.json"), check=True)
with open(P("job.json")) as f:
    job = json.load(f)
if job.get("max_elems") != 362 or job.get("format") != "fp32":
    fail(f"--job-out: {job}")
print("ok: controller --counters (table, JSON) and --job-out")
stop(p)
print("PASS")
