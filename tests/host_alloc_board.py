#!/usr/bin/env python3
"""The allocator with a board (docs/allocator.md "Inventory"): the accelerator is a board shell
(panama-gen --board sume) in the stand-in, reached only over Ethernet management with its key. Two
workers run `worker --allocator`: rank 0 acquires a lease, the allocator programs the board's
contexts over management, both all-reduce on the board, bit-exact to the tree-order sum, every
iteration on the accelerator ('A'); at the end rank 0 releases and the board's contexts read back
disabled. An inventory entry for a board without its key, or with a key file open to others, is
refused with one line.

  host_alloc_board.py BUILD_DIR

The namespaces are scripts/pypanama's (netns.Star). Exit 0 pass, 1 fail, 77 skip (no namespaces).
"""

import functools
import json
import os
import subprocess
import sys
import time

print = functools.partial(print, flush=True)  # noqa: A001  (ctest keeps what a killed test printed)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import (fail, lab_or_skip, load_json, read, same_file, script_args, treesum_gen,  # noqa: E402
                     treesum_sum, wait_until)
from pypanama.scenario import allocator_request  # noqa: E402

BUILD, = script_args(__doc__, "BUILD_DIR", 1)
PH, GEN, SUMTOOL = (os.path.join(BUILD, "panama-host"), os.path.join(BUILD, "panama-gen"),
                    os.path.join(BUILD, "host_driver", "host_treesum"))
MGMT_IP, MGMT_MAC = "10.98.0.250", "02:50:4e:4d:00:fa"

lab = lab_or_skip("ab", "host_alloc_board.")
P = lab.path
# The testbed's board (same key and addresses as scripts/testbed --shell: one cached build).
fd = os.open(P("mgmt.key"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, b"7465737462656421706e6d6b65793031\n")
os.close(fd)
BOARD = P("board")
if subprocess.run([GEN, "--board", "sume", "--mgmt-key", P("mgmt.key"), "--mgmt-ip", MGMT_IP, "--mgmt-mac",
                   MGMT_MAC, "--mgmt-ports", "0", "--out", BOARD], stdout=subprocess.DEVNULL).returncode:
    fail("panama-gen --board sume")
with open(P("empty.json"), "w") as f:
    f.write('{ "contexts": [] }\n')
if subprocess.run(["timeout", "1200", PH, "switch", "--rtl", BOARD, "--shell", "--contexts", P("empty.json"), "--ifaces",
                   "none", "--prepare"], stdout=subprocess.DEVNULL).returncode:
    fail("could not verilate the board shell")


def inventory(path, **entry):
    with open(path, "w") as f:
        json.dump({"accelerators": [dict(name="board", design=BOARD, agg_ip="10.98.0.254", mgmt_timeout_ms=3000,
                                         **entry)]}, f)


def refused(what, inv, pattern):
    """The allocator exits at once with one line naming pattern."""
    r = subprocess.run(["timeout", "20", PH, "allocator", "--socket", P("bad.sock"), "--state", P("bad.sqlite"),
                        "--inventory", inv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = r.stderr.strip()
    if r.returncode == 0 or len(err.splitlines()) != 1 or pattern not in err:
        fail(f"{what}: not one refusal naming '{pattern}' (exit {r.returncode}): {err}")
    print(f"ok: refused {what}: {err}")


inventory(P("nokey.json"), target=MGMT_IP)
refused("a board without its key", P("nokey.json"), "needs key")
fd = os.open(P("open.key"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"7465737462656421706e6d6b65793031\n")
os.close(fd)
os.chmod(P("open.key"), 0o644)
inventory(P("open.json"), target=MGMT_IP, key=P("open.key"))
refused("a key file readable by others", P("open.json"), "open.key")

star = lab.star(2, "10.98.0")
sw = lab.spawn([PH, "switch", "--rtl", BOARD, "--shell", "--contexts", P("empty.json"), "--ifaces", star.ifaces],
               ns=star.sw_ns, stdout=P("switch.out"), stderr=P("switch.err"))
CTL = [PH, "controller", "--regmap", BOARD, "--target", MGMT_IP, "--key", P("mgmt.key"), "--mgmt-timeout-ms", "3000"]


# The board's management address is reached without ARP (a simulated board can be seconds late on
# a loaded machine; a lost ARP reply would fail a management request as unreachable). The board
# shell's ARP answer is exercised by host.testbed.shell (management resolved by ARP), not here.
if subprocess.run(["ip", "netns", "exec", star.ns[0], "ip", "neigh", "replace", MGMT_IP, "lladdr", MGMT_MAC, "nud",
                   "permanent", "dev", star.wif[0]]).returncode:
    fail(f"could not pin {MGMT_IP}'s neighbour entry")


def show_once():
    try:
        r = subprocess.run(["ip", "netns", "exec", star.ns[0]] + CTL + ["--show"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return None
    if r.returncode:
        return None
    return json.loads(r.stdout)["contexts"]


def show(tries=3):
    """The board's context table, read over management from server 0 (None: no answer in tries)."""
    for _ in range(tries):
        t = show_once()
        if t is not None:
            return t
    return None


t0 = time.monotonic()
while show_once() is None:
    if sw.poll() is not None or time.monotonic() - t0 > 120:
        fail("the board shell did not answer management", P("switch.err"))
    time.sleep(1)
inventory(P("inventory.json"), target=MGMT_IP, key=P("mgmt.key"))
# The allocator runs on server 0 (the board's management is reached through the data ports).
alloc = lab.spawn([PH, "allocator", "--socket", P("alloc.sock"), "--state", P("alloc.sqlite"), "--inventory",
                   P("inventory.json"), "--lease-ms", "120000"], ns=star.ns[0], stderr=P("alloc.err"))

# Ready once it says so (after listen(); the socket file exists from bind() on). Its start reads
# the board over management first.
up = wait_until(lambda: alloc.poll() is not None or "serving on" in read(P("alloc.err")), 120)
if not up or alloc.poll() is not None:
    fail("the allocator did not start", P("alloc.err"))


def request(req):
    try:
        return allocator_request(P("alloc.sock"), req, timeout=120)
    except (OSError, ValueError) as e:  # no reply in time, or not one line of JSON
        fail(f"allocator request {req['op']}: {e}", P("alloc.err"))


# A lease by hand: its contexts appear on the board (read over management), and go at release.
g = request({"op": "acquire", "workers": 1, "trees": 2, "ports": {"board": [1]}})
if not g.get("ok"):
    fail(f"acquire: {g}", P("alloc.err"))
table = show()
if table is None:
    fail("the board did not answer management after a grant", P("switch.err"))
got = sorted((c["jid"], c["tid"], c["members"]) for c in table if c.get("enabled", True))
if got != [(g["jid"], 0, [1]), (g["jid"], 1, [1])]:
    fail(f"the board's table after a grant of JID {g['jid']} on port 1: {got}")
rel = request({"op": "release", "lease": g["lease"]})
table = show()
if not rel.get("ok") or table is None or [c for c in table if c.get("enabled", True)]:
    fail(f"the release ({rel}) left contexts on the board: {table}", P("alloc.err"))
print(f"ok: a lease (JID {g['jid']}, 2 trees) programmed onto the board and reclaimed, read back over management")

N, ITER = 20000, 2
for i in range(2):
    treesum_gen(SUMTOOL, 300 + i, N, P(f"in{i}.bin"))
treesum_sum(SUMTOOL, P("expected.bin"), [(P("in0.bin"), 0), (P("in1.bin"), 1)])
procs = []
for r in range(2):
    argv = [PH, "worker", "--allocator", P("alloc.sock"), "--job", "5", "--rank", r, "--world", "2", "--trees", "2",
            "--iface", star.wif[r], "--in", P(f"in{r}.bin"), "--out", P(f"out{r}.bin"), "--agg-ip", star.agg_ip,
            "--iterations", ITER, "--stats", P(f"stats{r}.json"), "--timeout-ms", "20000",
            "--alloc-timeout-ms", "120000"]
    if r == 0:
        argv += ["--alloc-ports", json.dumps({"board": [0, 1]})]
    procs.append(lab.spawn(argv, ns=star.ns[r], timeout=400, stderr=P(f"worker{r}.err")))
for r, p in enumerate(procs):
    if p.wait() != 0:
        fail(f"worker {r} failed", P(f"worker{r}.err"), P("alloc.err"))
for r in range(2):
    st = load_json(P(f"stats{r}.json"))
    modes = "".join(st.get("modes") or [])
    if modes != "A" * ITER:
        fail(f"worker {r}: not every iteration on the board: modes {modes}", P(f"worker{r}.err"), P("alloc.err"))
    if not same_file(P("expected.bin"), P(f"out{r}.bin")):
        fail(f"worker {r}: output differs from the tree-order sum")
print(f"ok: 2 workers x {ITER} iterations on the board, leased through the allocator over management: exact")
table = show()
if table is None or any(c.get("enabled", True) for c in table):
    fail(f"after the release the board still has the job's contexts enabled: {table}")
print(f"ok: released: the board's table reads back without the job's contexts ({table})")
print("PASS")
