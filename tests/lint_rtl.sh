#!/usr/bin/env bash
# Generates one configuration and runs the three tools users will: Verilator's lint (-Wall),
# Icarus (-g2005, the language we promise) and Yosys (read + generic synth). Any warning fails.
# usage: lint_rtl.sh PANAMA_GEN WORKDIR panama-gen-args...
set -euo pipefail
gen=$1; work=$2; shift 2
for tool in verilator iverilog yosys; do
  command -v $tool >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
design=$(cd "$(dirname "$0")/.." && pwd)/scripts/pypanama/design.py
rm -rf "$work"; mkdir -p "$work"
"$gen" "$@" --out "$work/rtl"
cd "$work/rtl"
top=$(python3 "$design" . top)
files=$(tr '\n' ' ' <filelist.f)
# The top module is the last file of filelist.f while the full datapath is being built.
last=$(tail -n 1 filelist.f); last=${last%.v}
[ -f "$top.v" ] || top=$last
fail=0
if ! out=$(verilator --lint-only -Wall --top-module "$top" -F filelist.f 2>&1) || [ -n "$out" ]; then
  echo "verilator:"; echo "$out"; fail=1; fi
if ! out=$(iverilog -g2005 -Wall -s "$top" -o /dev/null $files 2>&1) || [ -n "$out" ]; then
  echo "iverilog:"; echo "$out"; fail=1; fi
if ! out=$(yosys -q -p "read_verilog $files; hierarchy -check -top $top; proc; opt_clean; check -assert" 2>&1) \
   || echo "$out" | grep -qi warning; then
  echo "yosys:"; echo "$out" | head -20; fail=1; fi
[ $fail = 0 ] && echo "lint clean: $top ($*)"
exit $fail
