#!/usr/bin/env bash
# The contribution memory holds exactly the contribution half (docs/rtl.md, "Buffer depth"):
# scenario `refill` (panama-sim gen-traffic) fills port 0's half until frames overflow, lets
# admitted vectors complete (their beats go back to the free chain), then sends more vectors
# through port 0. When the frames' beats divide the half, the fill takes the very last free
# beat, so the allocator must wait for a freed frame and resume from it; with two contexts the
# freed frames lie between frames still queued, which phase 2 must not overwrite. The
# counts expected from the spec's arithmetic (rule 9 as in rtl_buffer_fill.sh; rule 6 for the
# VIDs port 0 lost) must be what both engines count, and both must build the same frames.
# usage: rtl_buffer_refill.sh BUILD_DIR WORK VECTORS panama-gen-args...
set -euo pipefail
build=$1; work=$2; vectors=$3; shift 3
"$(dirname "$0")/scenario_both_engines.sh" "$build" "$work" refill "$vectors" "$@"
python3 - "$work" "$vectors" "$(dirname "$0")" <<'PY'
import json, sys
work, V = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from rule9 import Rule9, pcap_frames, contexts, context_of
cfg = json.load(open(work + "/rtl/config.json"))
r9 = Rule9(cfg)
bb, C, half, reserve = r9.bb, r9.C, r9.half, r9.reserve

def is_agg(f):
    return len(f) > 46 and f[12:14] == b"\x08\x00"

ctx = contexts(work)
p0 = pcap_frames(work + "/traffic/in/port00.pcap")
p1 = pcap_frames(work + "/traffic/in/port01.pcap")
agg0 = [f for f in p0 if is_agg(f)]
byp0, byp1 = len(p0) - len(agg0), len(p1) - sum(1 for f in p1 if is_agg(f))
K = len(agg0) - V
J = len(ctx)                 # 1: job A only; 2: jobs A (context 0) and B (context 1)
per = V // J                 # phase 1 frames of each job
# Phase 1: port 0 alone fills its half (nothing is consumed yet): admitted per context, which
# must be each job's first VIDs (no frees, so once a job's frame is refused, all later ones are).
used = [0] * C
adm, refused = [0] * J, [False] * J
for f in agg0[:V]:
    k = context_of(f, ctx)
    if r9.admit(used, k, len(f)):
        if refused[k]:
            sys.exit("FAILED: the test's phase 1 admits a non-contiguous set of VIDs")
        adm[k] += 1
    else:
        refused[k] = True
lost = [per - a for a in adm]
full = sum(used) == half
print(f"W/8 {bb}, C {C}, half {half}, reserve {reserve}: port 0 admits {adm} of {per} per job "
      f"({sum(used)} bytes{', the whole half' if full else ''}), then {K} more of the last job")
# The last job (B, or A alone) completes its admitted VIDs and K more; its lost VIDs wait at port
# 1 until phase 2 and go as incomplete. With two jobs, A completes its admitted VIDs and its lost
# ones stay queued at port 1.
L = J - 1
want_p0 = dict(agg_admitted=sum(adm) + K, overflow=sum(lost), bypass_frames=byp0, incomplete=0, stale=0)
want_p1 = dict(agg_admitted=len(p1) - byp1, overflow=0, incomplete=lost[L], stale=0, bypass_frames=byp1)
want_ctx = [dict(vectors_completed=adm[k] + (K if k == L else 0), vectors_dropped=lost[k] if k == L else 0,
                 expected_vid=per + K if k == L else adm[k]) for k in range(J)]
built_n = sum(adm) + K
ok = all(l > 0 for l in lost) and all(a > 0 for a in adm)
res = {}
for engine in ("rtl", "model"):
    c = json.load(open(f"{work}/{engine}/counters.json"))
    res[engine] = c
    for port, want in ((0, want_p0), (1, want_p1)):
        got = {k: c["ports"][port][k] for k in want}
        if got != want:
            print(f"FAILED: {engine} port {port}: {got}, expected {want}")
            ok = False
    for k in range(J):
        got = {n: c["contexts"][k][n] for n in want_ctx[k]}
        if got != want_ctx[k]:
            print(f"FAILED: {engine} context {k}: {got}, expected {want_ctx[k]}")
            ok = False
    if c["agg_tx_frames"] != built_n:
        print(f"FAILED: {engine} agg_tx_frames {c['agg_tx_frames']}, expected {built_n}")
        ok = False
    print(f"{engine}: port 0 {[c['ports'][0][k] for k in want_p0]}, port 1 "
          f"{[c['ports'][1][k] for k in want_p1]}, contexts {[[c['contexts'][k][n] for n in want_ctx[k]] for k in range(J)]}")
if res["rtl"] != res["model"]:
    print("FAILED: counters.json of the RTL and the model differ")
    ok = False
built = {e: pcap_frames(f"{work}/{e}/agg.pcap") for e in ("rtl", "model")}
if built["rtl"] != built["model"]:
    print(f"FAILED: built frames differ ({len(built['rtl'])} RTL, {len(built['model'])} model)")
    ok = False
if not ok:
    sys.exit(1)
print(f"refill: both engines count as expected and build the same {len(built['rtl'])} frames")
PY
