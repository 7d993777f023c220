#!/usr/bin/env bash
# One regression run: generate a design, a scenario's traffic, run the RTL and the model and
# compare them (panama-sim compare). The RTL run measures its rates (--stats, one "rate:" line);
# a line-rate run without idle cycles or back-pressure must accept every receive beat (1.0000
# beats per cycle on every port), send sums at one beat per cycle and drop nothing (the
# performance contract of accelerator.md).
# On failure prints two one-line commands: the self-contained replay (regenerates everything,
# writes an FST waveform) and the bare panama-sim run with --trace.
# usage: rtl_compare.sh BUILD_DIR WORK SCENARIO SEED "SIM_OPTIONS" panama-gen-args...
# env PANAMA_TRACE=FILE.fst: the RTL run writes a waveform there (a separate --trace-fst build).
# env PANAMA_VECTORS=N: vectors per job (24).
# Scenario late: the comparison must be exact (its timeouts are longer than any head waits, so
#   a timeout counted by the RTL is a head that timed out early).
set -uo pipefail
build=$1; work=$2; scenario=$3; seed=$4; simopts=$5; shift 5
here=$(cd "$(dirname "$0")" && pwd)
self="$here/rtl_compare.sh $build $work $scenario $seed \"$simopts\" $*"
rm -rf "$work"; mkdir -p "$work"
"$build/panama-gen" "$@" --out "$work/rtl" >/dev/null || { echo "FAILED: panama-gen $*"; exit 1; }
"$build/panama-sim" gen-traffic --rtl "$work/rtl" --scenario "$scenario" --seed "$seed" \
  --vectors "${PANAMA_VECTORS:-24}" --out-dir "$work/traffic" || { echo "FAILED: gen-traffic"; exit 1; }
trace=()
[ -n "${PANAMA_TRACE:-}" ] && trace=(--trace "$PANAMA_TRACE")
# shellcheck disable=SC2086
cmd="$build/panama-sim compare --rtl $work/rtl --contexts $work/traffic/ctx.json --in-dir $work/traffic/in --out-dir $work/out --seed $seed $simopts"
out=$($cmd --stats "${trace[@]}" 2>&1); rc=$?
echo "$out" | tail -n 12
ok=1
if [ $rc -ne 0 ] || ! echo "$out" | grep -q "compare: equal"; then ok=0; fi
if [ "$scenario" = late ] && ! echo "$out" | grep -q "^compare: exact comparison"; then
  echo "not an exact comparison: $(echo "$out" | grep '^compare:' | head -n 1)"
  ok=0
fi
if [ "$scenario" = line-rate ] && [ -z "$simopts" ]; then
  # rate: rx beats offered O accepted A; rx accepted beats/cycle per port (min) R; m_agg beats B
  # in C cycles, S beats/cycle; drops D, vectors dropped V
  rate=$(echo "$out" | grep '^rate:' | tail -n 1)
  if ! echo "$rate" | grep -Eq 'offered ([0-9]+) accepted \1;.*per port \(min\) 1\.0000;.*cycles, 1\.0000 beats/cycle; drops 0, vectors dropped 0$'; then
    echo "line rate not met: ${rate:-no rate line}"
    ok=0
  fi
fi
if [ $ok = 0 ]; then
  echo "FAILED; replay (with a waveform): PANAMA_TRACE=$work/replay.fst $self"
  echo "        or: $cmd --trace $work/replay.fst"
  exit 1
fi
