#!/usr/bin/env bash
# Buffer accounting (accelerator.md rule 9), RTL and model: port 0 alone fills its contribution
# half with small frames of context 0, then larger frames of context 1 (panama-sim gen-traffic
# --scenario fill: the other members stay silent, nothing is consumed). The admitted and
# overflow counts expected from the spec's arithmetic (buffer_bytes, C, S, W; every frame's
# occupancy is its length rounded up to W/8 bytes; each context owns one frame of S, the rest of
# the half is a pool all contexts share) must be what both engines count, and their
# counters.json must be equal.
# usage: rtl_buffer_fill.sh BUILD_DIR WORK VECTORS panama-gen-args...
set -euo pipefail
build=$1; work=$2; vectors=$3; shift 3
"$(dirname "$0")/scenario_both_engines.sh" "$build" "$work" fill "$vectors" "$@"
python3 - "$work" "$(dirname "$0")" <<'PY'
import json, sys
work = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from rule9 import Rule9, pcap_frames, contexts, context_of
cfg = json.load(open(work + "/rtl/config.json"))
ctx = contexts(work)
r9 = Rule9(cfg)
bb, C, S, half, reserve, pool = r9.bb, r9.C, r9.S, r9.half, r9.reserve, r9.pool
# The frames port 0 receives, in order: (context index, length).
frames = [(context_of(f, ctx), len(f)) for f in pcap_frames(work + "/traffic/in/port00.pcap")]
used = [0] * C
admitted = overflow = 0
first_overflow = {}
for k, n in frames:
    if r9.admit(used, k, n):
        admitted += 1
    else:
        overflow += 1
        first_overflow.setdefault(k, admitted)
print(f"W/8 {bb}, C {C}, S {S}, half {half}, reserve {reserve}, pool {pool}: "
      f"{len(frames)} frames, expect agg_admitted {admitted}, overflow {overflow}, "
      f"first overflow after {first_overflow}")
ok = overflow > 0 and admitted > 0 and len(first_overflow) == len(ctx)
res = {}
for engine in ("rtl", "model"):
    c = json.load(open(f"{work}/{engine}/counters.json"))
    res[engine] = c
    p0 = c["ports"][0]
    print(f"{engine}: agg_admitted {p0['agg_admitted']}, overflow {p0['overflow']}")
    if p0["agg_admitted"] != admitted or p0["overflow"] != overflow:
        print(f"FAILED: {engine} does not admit what rule 9 admits")
        ok = False
if res["rtl"] != res["model"]:
    print("FAILED: counters.json of the RTL and the model differ")
    ok = False
if not ok:
    sys.exit(1)
print("rule 9 accounting: both engines admit exactly the expected frames; counters equal")
PY
