#!/usr/bin/python3
"""scripts/testbed: a reusable testbed of network namespaces and veth pairs (docs/host.md).

  scripts/testbed [--workers W] [--elems N | --mib M] [--trees T] [--two-level] [--same-root]
                  [--iterations K] [--engine rtl|model|soft] [--rtl DIR] [--build DIR] [--seed S]
                  [--loss P] [--dup P] [--reorder P] [--fault-at NAME] [--fault-ports P0,P1,...] [--fault-seed S]
                  [--kill-rank R] [--kill-after SEC] [--kill-bound SEC] [--rate-mbps R] [--ecn-threshold K]
                  [--worker-args "..."] [--timeout SEC] [--keep DIR] [--placement P0,P1,...]
                  [--ctx-timeout CYCLES] [--shell [--standalone] [--board sume|u250] --mgmt net]
                  [--backend udp|tins|dpdk|xdp] [--threads N] [--switch-backend afpacket|xdp] [--switch-threads M]
                  [--torch SCRIPT [ARGS...]]

Topologies (every stand-in is `panama-host switch` on the Verilated RTL, started with an empty
context table and programmed live by `panama-host controller` through its control socket):
  default       W workers (W <= ports) on one stand-in "sw": worker i on port i (--placement:
                on port P_i, a permutation of 0..W-1); every tree is a multicast context over
                the workers' ports.
  --two-level   two leaf stand-ins "leaf0", "leaf1" under a root stand-in "root". Leaf L holds
                its workers on ports 0..n_L-1 and its uplink on port n_L (leaf0 the first
                ceil(W/2) workers); the root's ports 0 and 1 lead to the leaves. Tree 0 is
                rooted at the root (leaves in upstream mode, the root a multicast context over
                the uplinks; final sums pass down through the leaves, rule 3); tree 1 (T = 2) is
                rooted at leaf0: leaf0 runs a multicast context over its workers and its uplink,
                the root an upstream-mode context (member: leaf1's uplink, upstream: leaf0's),
                leaf1 an upstream context. --same-root roots every tree at the root.
The all-reduce of random fp32 tensors (N elements per worker, default 4 Mi = 16 MiB) is checked
bit for bit against the sum computed from the inputs (tests/host_treesum.cpp) in the
accelerator's sum mode (config.json "sum": tree order, or exact sum rounded once, numerics.md):
per tree, the root's sum over its members' partial sums, each a leaf's sum over its ports,
spliced vector by vector (vector k of a call goes to tree k mod T).

Faults: --loss P / --dup P / --reorder P drop / duplicate / reorder (the next frame of the port
and direction overtakes it) frames in and out of the ports --fault-ports (default all) of the
stand-ins --fault-at (default the first: sw or leaf0; a list NAME,NAME; all: every stand-in, so
that a link between two stand-ins sees the faults at both ends), seeded. On two levels,
--fault-at leaf0,leaf1 puts the faults on every link exactly once in each direction. --kill-rank R
kills worker R (SIGKILL) --kill-after seconds into the run: every other worker must then end
with a clear error within --kill-bound seconds (default 30; never hang, never write an
output); the run passes when they do. The stand-ins must end with complete final counters,
per-context counters of the contexts programmed here included, or the run fails.

--ctx-timeout CYCLES programs every context with that timeout (accelerator.md rule 7: a head
waiting that long while a member queue is empty is dropped) and lets the stand-ins' simulated
time pass while their links are quiet; 0 (the default) = never.

--shell --mgmt net: the stand-in runs the whole board shell of `panama-gen --board` (default
sume; generated here with the testbed's management key, IPv4 10.98.0.250 and MAC
02:50:4e:4d:00:fa, management on port 0): the MACs' side at their own clocks, the core on its
own clock, management over Ethernet. The accelerator is programmed only through Ethernet: the
controller runs on the server of port 0 (`controller --target 10.98.0.250 --key`), and the
final counters are read the same way. The stand-in's switch chip gets the same contexts as its
multicast groups (a switch beside the board is configured by its own control plane); one
stand-in only. --standalone: the board is generated with the switch functions in its RTL
(panama-gen --standalone): it forwards, replicates and ECN-marks by itself, the stand-in around
it is only wires, and its switch is programmed too (ECN threshold 8; on one level a
forwarding-table entry per worker) and its counters checked. With --two-level every stand-in is
a standalone board (leaf0 10.98.0.240, leaf1 .241, root .242; management on the port facing
worker 0: leaf0's port 0, the root's port 0, leaf1's uplink), all programmed from worker 0's
server, the requests to the root and leaf1 crossing the other boards.

--engine soft: the stand-in runs `switch --engine soft` (the rules in C++, CPU tree-order sums;
one stand-in, tree-sum designs), with its contexts from a file instead of the controller.
--switch-backend afpacket|xdp and --switch-threads M (soft engine only): the stand-in's links
and loops (`switch --backend --threads`, docs/host.md "Benchmark"); xdp links refused here
make the run SKIP (77) with the stand-in's one line.

--backend NAME: the workers' data path (`worker --backend`, docs/host.md "Backends"; default
udp). --threads N: each worker spreads its trees over N threads, each with its own socket
(`worker --threads`). A backend the kernel, the driver or the build refuses here (AF_XDP not
permitted, built without DPDK) makes the run SKIP (77) with the worker's one line.

--torch SCRIPT [ARGS...] (the last option: everything after SCRIPT is its arguments; docs/torch.md):
instead of `panama-host worker`, every worker runs Debian's /usr/bin/python3 SCRIPT ARGS in its
namespace, in the run's directory (kept by --keep), with RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT (rank 0's TCP store on a management bridge 10.99.0.0/24 beside the data path),
GLOO_SOCKET_IFNAME (Gloo's traffic crosses the stand-in, like every server's), PYTHONPATH (the
build's panama_torch) and the PANAMA_* settings of the job programmed here, so that
`import panama_torch; dist.init_process_group("panama")` needs nothing else. The run passes
when every script exits 0.

Everything carries a per-run suffix; whatever fails, the processes started here are stopped and the
namespaces and the scratch directory removed (scripts/pypanama). Exit 0 = pass, 1 = fail, 2 = usage
error, 77 = SKIP (network namespaces, or the backend, are not permitted here).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from pypanama import testbed  # noqa: E402

if __name__ == "__main__":
    sys.exit(testbed.main(sys.argv[1:], __doc__))
