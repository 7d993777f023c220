#!/usr/bin/env bash
# Replay with a waveform: a small run of the trace build of the harness (panama-sim replay
# --engine rtl --trace FILE.fst, verilated with --trace-fst into its own cache entry) writes an
# FST file, and gives the same outputs as the fast build.
# usage: rtl_trace.sh BUILD_DIR WORK panama-gen-args...
set -euo pipefail
build=$1; work=$2; shift 2
rm -rf "$work"; mkdir -p "$work"
"$build/panama-gen" "$@" --out "$work/rtl" >/dev/null
"$build/panama-sim" gen-traffic --rtl "$work/rtl" --scenario faults --seed 1 --vectors 3 --out-dir "$work/t"
common=(--rtl "$work/rtl" --engine rtl --contexts "$work/t/ctx.json" --in-dir "$work/t/in" --seed 1)
"$build/panama-sim" replay "${common[@]}" --out-dir "$work/fast"
"$build/panama-sim" replay "${common[@]}" --out-dir "$work/traced" --trace "$work/run.fst"
size=$(stat -c %s "$work/run.fst" 2>/dev/null || echo 0)
# An FST file opens with its header block (block type 0, then the 64-bit section length 329).
head=$(od -An -tx1 -N9 "$work/run.fst" | tr -d ' \n')
[ "$size" -gt 1000 ] && [ "$head" = 000000000000000149 ] || { echo "no FST written ($size bytes, header $head)"; exit 1; }
for f in counters.json agg.pcap port00.pcap port01.pcap; do
  cmp -s "$work/fast/$f" "$work/traced/$f" || { echo "traced run differs from the fast build in $f"; exit 1; }
done
echo "trace: $work/run.fst, $size bytes; outputs equal to the fast build's"
