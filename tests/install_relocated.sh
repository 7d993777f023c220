#!/usr/bin/env bash
# The installed tools work away from the checkout: `cmake --install` into a scratch prefix, then
# the installed panama-gen writes a design into a scratch folder and the installed panama-sim
# replays the conformance traffic through both engines, the RTL verilated from the installed
# harness into a per-user cache (a scratch HOME), never from the source or build tree.
#
#   install_relocated.sh BUILD_DIR CONFORMANCE_DIR
set -euo pipefail
BUILD=$1
CONF=$2
[ -d "$CONF/in" ] || { echo "FAIL: $CONF not found (tests/conformance/ is part of the repository)"; exit 1; }
SRC=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/panama_install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null
P=$TMP/prefix
for t in panama-gen panama-sim panama-host; do [ -x "$P/bin/$t" ] || { echo "FAIL: $t not installed"; exit 1; }; done

"$P/bin/panama-gen" --ports 4 --gbps 10 --mhz 200 --out "$TMP/design"
export HOME=$TMP/home XDG_CACHE_HOME=
unset PANAMA_SIM_CACHE
for engine in model rtl; do
  "$P/bin/panama-sim" replay --rtl "$TMP/design" --engine "$engine" --contexts "$CONF/ctx.json" \
    --in-dir "$CONF/in" --out-dir "$TMP/out.$engine"
  python3 - "$CONF/expected" "$TMP/out.$engine" <<'PY' || { echo "FAIL: $engine output differs from the conformance case"; exit 1; }
import glob, json, os, struct, sys
def records(path):  # classic pcap, either magic and byte order: the frames' bytes, no timestamps
    b = open(path, "rb").read()
    e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    out, i = [], 24
    while i < len(b):
        n = struct.unpack(e + "I", b[i + 8:i + 12])[0]
        out.append(b[i + 16:i + 16 + n]); i += 16 + n
    return out
exp, got = sys.argv[1], sys.argv[2]
def by_ctx(frames):  # tools.md: built frames of each context in order; contexts may interleave
    m = {}
    for f in frames: m.setdefault(f[44:47], []).append(f)
    return m
for f in sorted(glob.glob(exp + "/*.pcap")):
    a, b = records(f), records(os.path.join(got, os.path.basename(f)))
    same = (by_ctx(a) == by_ctx(b) and sorted(a) == sorted(b)) if f.endswith("agg.pcap") else a == b
    if not same: sys.exit(os.path.basename(f) + " differs")
if json.load(open(exp + "/counters.json")) != json.load(open(got + "/counters.json")): sys.exit("counters differ")
PY
  echo "PASS: installed panama-sim --engine $engine reproduces the conformance case"
done
# The RTL was verilated in the per-user cache from the installed harness, not from the checkout.
mk=$(find "$HOME/.cache/panama/rtl_cache" -name 'Vtop.mk' | head -1)
[ -n "$mk" ] || { echo "FAIL: no verilated design in $HOME/.cache/panama/rtl_cache"; exit 1; }
grep -q "$P/share/panama/harness/standin/engines/rtl_harness.cpp" "$mk" || { echo "FAIL: harness not taken from the prefix"; exit 1; }
if grep -q "$SRC/" "$mk"; then echo "FAIL: the verilated design refers to the source tree $SRC"; exit 1; fi
echo "PASS: the RTL engine verilated the design from $P into the per-user cache"
