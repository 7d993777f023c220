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
python3 - "$work" <<'PY'
import json, struct, sys
work = sys.argv[1]
cfg = json.load(open(work + "/rtl/config.json"))
ctx = json.load(open(work + "/traffic/ctx.json"))["contexts"]
bb = cfg["bus_bits"] // 8
C = cfg["contexts"]
S = 64 + cfg["elem_bytes"] * cfg["max_elems"]
half = cfg["buffer_bytes"] - cfg["buffer_bytes"] // 2      # bypass_bytes = buffer_bytes / 2
occ = lambda n: -(-n // bb) * bb                             # length rounded up to W/8 bytes
reserve = occ(S)                                             # room for one frame of S
pool = half - C * reserve                                    # the rest, shared by all contexts
# The frames port 0 receives, in order: (context index, length).
raw = open(work + "/traffic/in/port00.pcap", "rb").read()
frames, at = [], 24
while at < len(raw):
    incl = struct.unpack("<I", raw[at + 8:at + 12])[0]
    f = raw[at + 16:at + 16 + incl]
    at += 16 + incl
    jid, tid = struct.unpack(">H", f[44:46])[0], f[46]
    k = [i for i, e in enumerate(ctx) if e["jid"] == jid and e["tid"] == tid][0]
    frames.append((k, len(f)))
used = [0] * C
over = lambda u: max(0, u - reserve)
admitted = overflow = 0
first_overflow = {}
for k, n in frames:
    grow = over(used[k] + occ(n)) - over(used[k])
    if grow <= pool - sum(over(u) for u in used):
        used[k] += occ(n)
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
