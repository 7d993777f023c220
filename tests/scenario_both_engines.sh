#!/usr/bin/env bash
# Generates a design and one traffic scenario, and replays it on both engines: WORK/rtl (the
# generator's output), WORK/traffic (panama-sim gen-traffic, seed 1), WORK/rtl and WORK/model
# (each engine's outputs: portNN.pcap, agg.pcap, counters.json). For the checks that compute
# what the spec says those runs must count (rtl_buffer_fill.sh, rtl_buffer_refill.sh).
# usage: scenario_both_engines.sh BUILD_DIR WORK SCENARIO VECTORS panama-gen-args...
set -euo pipefail
build=$1; work=$2; scenario=$3; vectors=$4; shift 4
rm -rf "$work"; mkdir -p "$work"
"$build/panama-gen" "$@" --out "$work/rtl" >/dev/null
"$build/panama-sim" gen-traffic --rtl "$work/rtl" --scenario "$scenario" --seed 1 --vectors "$vectors" \
  --out-dir "$work/traffic"
for engine in rtl model; do
  "$build/panama-sim" replay --rtl "$work/rtl" --engine $engine --contexts "$work/traffic/ctx.json" \
    --in-dir "$work/traffic/in" --out-dir "$work/$engine"
done
