#!/usr/bin/env bash
# One regression run: generate a design, a scenario's traffic, run the RTL and the model and
# compare them (panama-sim compare). Prints the replay command on failure.
# usage: rtl_compare.sh BUILD_DIR WORK SCENARIO SEED "SIM_OPTIONS" panama-gen-args...
set -uo pipefail
build=$1; work=$2; scenario=$3; seed=$4; simopts=$5; shift 5
rm -rf "$work"; mkdir -p "$work"
"$build/panama-gen" "$@" --out "$work/rtl" >/dev/null || exit 1
"$build/panama-sim" gen-traffic --rtl "$work/rtl" --scenario "$scenario" --seed "$seed" --vectors 24 \
  --out-dir "$work/traffic" || exit 1
# shellcheck disable=SC2086
cmd="$build/panama-sim compare --rtl $work/rtl --contexts $work/traffic/ctx.json --in-dir $work/traffic/in --out-dir $work/out --seed $seed $simopts"
out=$($cmd 2>&1); rc=$?
echo "$out" | tail -n 12
if [ $rc -ne 0 ] || ! echo "$out" | grep -q "compare: equal"; then
  echo "FAILED; replay with: $cmd"
  exit 1
fi
