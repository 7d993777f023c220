#!/usr/bin/env bash
# Parameter contracts (docs/rtl.md, "Parameter contracts"): a module elaborated with a parameter
# out of its stated range stops with the module's own message, in Verilator (lint, as every build
# verilates with -Werror-USERERROR) and in Yosys (hierarchy); Icarus reports it at time 0 naming
# the instance. The same modules with their defaults elaborate cleanly, so the checks are not
# simply always failing. Cases: panama_port as panama-gen writes it (DATA_W 48, CONTEXTS 0,
# a derived width overridden), and rtl/panama_l2sw.v read from the source tree (FDB 65).
# usage: rtl_param_contract.sh PANAMA_GEN SOURCE_DIR WORKDIR
# Exit 0 pass, 1 fail, 77 when Verilator or Yosys is missing.
set -uo pipefail
gen=$1; src=$2; work=$3
command -v verilator >/dev/null && command -v yosys >/dev/null || { echo "SKIP: needs verilator and yosys"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
"$gen" --ports 4 --gbps 10 --mhz 200 --out "$work/rtl" >/dev/null || exit 1
cd "$work/rtl" || exit 1
fail=0
port_files="panama_parser.v panama_port_bypass.v panama_port_alloc.v panama_port_admit.v panama_port_queues.v panama_port.v"
l2sw_files="$src/rtl/panama_l2sw.v"

# expect NAME OUTCOME MESSAGE -- command...: runs the command; ok: it succeeds; error: it fails and
# its output holds MESSAGE; says: its output holds MESSAGE (vvp ends with status 0 after $finish).
expect() {
  local name=$1 outcome=$2 msg=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$outcome" = says ]; then
    if ! grep -qF -- "$msg" <<<"$out"; then echo "FAIL $name: no \"$msg\" in:"; echo "$out" | head -5; fail=1; return; fi
  elif [ "$outcome" = ok ]; then
    if [ $rc -ne 0 ]; then echo "FAIL $name: expected to elaborate, got:"; echo "$out" | head -5; fail=1; return; fi
  else
    if [ $rc -eq 0 ]; then echo "FAIL $name: elaborated, expected \"$msg\""; fail=1; return; fi
    if ! grep -qF -- "$msg" <<<"$out"; then echo "FAIL $name: no \"$msg\" in:"; echo "$out" | head -5; fail=1; return; fi
  fi
  echo "ok   $name"
}

vl() { verilator --lint-only -Wno-fatal -Werror-USERERROR -I"$src/rtl" -I"$work/rtl" "$@"; }
ys() {  # ys TOP "chparam ..." files...
  local top=$1 set=$2; shift 2
  yosys -q -p "read_verilog -I$src/rtl -I$work/rtl $*; ${set:+chparam $set $top;} hierarchy -check -top $top"
}

expect verilator.port.defaults ok "" -- vl --top-module panama_port $port_files
expect verilator.port.data_w error "panama_port: DATA_W must be a power of two, 64..4096" -- \
  vl --top-module panama_port -GDATA_W=48 $port_files
expect verilator.port.contexts error "panama_port: CONTEXTS must be 1..256" -- \
  vl --top-module panama_port -GCONTEXTS=0 $port_files
expect verilator.port.derived error "panama_port: MEM_PTR_W is derived from MEM_BEATS" -- \
  vl --top-module panama_port -GMEM_PTR_W=20 $port_files
expect yosys.port.defaults ok "" -- ys panama_port "" $port_files
expect yosys.port.data_w error "panama_port: DATA_W must be a power of two, 64..4096" -- \
  ys panama_port "-set DATA_W 48" $port_files
expect yosys.port.contexts error "panama_port: CONTEXTS must be 1..256" -- \
  ys panama_port "-set CONTEXTS 0" $port_files
expect verilator.l2sw.defaults ok "" -- vl --top-module panama_l2sw $l2sw_files
expect verilator.l2sw.fdb error "panama_l2sw: FDB must be 1..64" -- vl --top-module panama_l2sw -GFDB=65 $l2sw_files
expect yosys.l2sw.defaults ok "" -- ys panama_l2sw "" $l2sw_files
expect yosys.l2sw.fdb error "panama_l2sw: FDB must be 1..64" -- ys panama_l2sw "-set FDB 65" $l2sw_files
if command -v iverilog >/dev/null; then
  # Icarus has no elaboration-time $error in Verilog-2005: the initial block reports at time 0,
  # naming the instance.
  expect icarus.port.data_w says "panama_port.g_req_data_w: panama_port: DATA_W must be a power of two" -- \
    sh -c "iverilog -g2005 -s panama_port -Ppanama_port.DATA_W=48 -o '$work/port.vvp' $port_files && vvp -n '$work/port.vvp'"
else
  # One of the three tools users run is missing: the contract was not checked whole.
  [ $fail = 0 ] && { echo "rtl_param_contract: SKIP: iverilog is not installed (the Verilator and Yosys checks passed)"; exit 77; }
fi
[ $fail = 0 ] && echo "rtl_param_contract: PASS"
exit $fail
