#!/usr/bin/env bash
# Checks one board shell as panama-gen --board writes it, without Vivado:
#  1. the build script runs end to end with Vivado's commands stubbed, every file it reads exists,
#     every Tcl/XDC file is complete Tcl (board_vivado_stub.tcl);
#  2. filelist.f alone (core, shell, IP and primitive stubs; no vendor library) elaborates in
#     Icarus (-g2005), Verilator (--lint-only) and Yosys (hierarchy -check, proc, check -assert);
#  3. every port the XDC names exists and every top-level port is placed; every clock in the
#     design is traced to a create_clock / create_generated_clock (board_check.py);
#  4. Yosys synth_xilinx for the board's family synthesises the shell (core and IP as black
#     boxes, the real primitives from Yosys's Xilinx cells) and prints its resources.
# usage: board_check.sh PANAMA_GEN WORKDIR BOARD [MORE panama-gen OPTIONS, e.g. --standalone]
set -euo pipefail
gen=$1; work=$2; board=$3; shift 3
here=$(cd "$(dirname "$0")" && pwd)
for tool in yosys tclsh python3 iverilog verilator; do
  command -v $tool >/dev/null || { echo "board_check: $tool not installed, skipped"; exit 77; }
done
rm -rf "$work"; mkdir -p "$work"
out=$work/out
"$gen" --board "$board" --insecure-dev-key "$@" --out "$out" 2>"$work/gen.err" >/dev/null ||
  { cat "$work/gen.err"; exit 1; }

tclsh "$here/board_vivado_stub.tcl" "$out" >"$work/stub.txt" || { grep ERROR "$work/stub.txt"; exit 1; }
top=$(sed -n 's/^top //p' "$work/stub.txt")
part=$(sed -n 's/^part //p' "$work/stub.txt")
core=$(python3 "$here/../scripts/pypanama/design.py" "$out" top)
case $part in
  xc7*) family=xc7 ;;
  xcu*|xcvu*p*|xczu*) family=xcup ;;
  xcvu*|xcku*) family=xcu ;;
  *) echo "board_check: no Yosys family for part $part"; exit 1 ;;
esac
cd "$out"
files=$(tr '\n' ' ' <filelist.f)
# The core's own files are those panama-gen writes without --board: everything up to its top.
# The shell instantiates the core with packed streams (PREFIX_core), read as a black box below.
core_bb=${core%_top}_core
core_files=$(sed -n "1,/^$core\.v\$/p" filelist.f | tr '\n' ' ')
shell_files=$(sed -n "/^$core\.v\$/,\$p" filelist.f | tail -n +2 | tr '\n' ' ')
synth_files=$(sed -n "/^$core\.v\$/,\$p" filelist.f | tail -n +2 | grep -v '_prim_stubs\.v$' | tr '\n' ' ')

echo "== $board: elaborate $top from filelist.f alone (Icarus, Verilator, Yosys)"
iverilog -g2005 -s "$top" -o /dev/null $files
verilator --lint-only --top-module "$top" -F filelist.f
yosys -q -l "$work/elab.log" -p "read_verilog $files; hierarchy -check -top $top; proc; check -assert" \
  >/dev/null 2>&1 || { grep -iE "error|problem" "$work/elab.log" | head; exit 1; }

echo "== $board: XDC ports and clocks"
yosys -q -l "$work/net.log" -p "read_verilog -lib $core_bb.v; read_verilog $shell_files;
  hierarchy -top $top; proc; flatten; memory -nomap; opt_clean; write_json $work/net.json" \
  >/dev/null 2>&1 || { grep -iE "error" "$work/net.log" | head; exit 1; }
python3 "$here/board_check.py" "$work/stub.txt" "$work/net.json" "$out"

echo "== $board: synth_xilinx -family $family of the shell (core and IP as black boxes)"
yosys -q -l "$work/synth.log" -p "read_verilog -lib $core_bb.v; read_verilog $synth_files;
  synth_xilinx -family $family -top $top; tee -o $work/stat.txt stat" >/dev/null 2>&1 \
  || { grep -iE "error" "$work/synth.log" | head; exit 1; }
# The whole-design block of stat (after "design hierarchy"): one line of totals.
awk '/design hierarchy/ {h = 1} h && NF == 2 && $2 ~ /^[0-9]+$/ {
       if ($1 ~ /^LUT/) lut += $2; else if ($1 ~ /^FD/) ff += $2;
       else if ($1 ~ /^RAM(B|32|64|128|256)|^RAMB/) ram = ram " " $1 " " $2;
       else if ($1 ~ /^SRL/) srl += $2 }
     END { printf "  shell (without core and IP): %d LUTs, %d flip-flops, %d SRLs,%s\n", lut, ff, srl, ram }' \
  "$work/stat.txt"
echo "board_check: $board OK"
