#!/usr/bin/env bash
# panama-host controller --target over management over Ethernet (docs/mgmt.md), against the
# Verilated board shell (mgmt_eth_tb --serve: UDP datagrams on 127.0.0.1 <-> frames on port 0):
#  1. with the board's key: the design is identified, a job's context is programmed and read
#     back (--show), the counters are read;
#  2. with a wrong key: no response ever verifies; the controller ends with one error line that
#     names the key or the port, and exit code 1.
# usage: mgmt_controller.sh PANAMA_HOST HARNESS GEN_DIR WORKDIR
set -euo pipefail
host=$1; harness=$2; gen=$3; work=$4
rm -rf "$work"; mkdir -p "$work"
"$harness" --serve "$work/port" >"$work/harness.log" 2>&1 &
hpid=$!
trap 'kill "$hpid" 2>/dev/null || true' EXIT
for _ in $(seq 300); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "mgmt_controller: the harness did not start"; cat "$work/harness.log"; exit 1; }
target=127.0.0.1:$(cat "$work/port")
# The key the harness's shell is verilated with (testbench/board/board.cmake).
(umask 077; echo 2b7e151628aed2a6abf7158809cf4f3c >"$work/good.key"; echo 000102030405060708090a0b0c0d0e0f >"$work/wrong.key")

echo "== program a job through $target"
"$host" controller --regmap "$gen" --target "$target" --key "$work/good.key" --job 5 --trees 2 --index 3 \
  --members 1,2 --group-mac 02:aa:00:00:00:05 --group-ip 10.9.9.5 --show --counters \
  >"$work/good.out" 2>"$work/good.err" || { echo "mgmt_controller: good key failed"; cat "$work/good.err"; exit 1; }
cat "$work/good.err"
show=$(head -1 "$work/good.out")
python3 - "$show" <<'PY'
import json, sys
t = json.loads(sys.argv[1])
got = sorted((c["index"], c["jid"], c["tid"], c["members"], c["group_mac"], c["group_ip"]) for c in t["contexts"])
want = [(3, 5, 0, [1, 2], "02:aa:00:00:00:05", "10.9.9.5"), (4, 5, 1, [1, 2], "02:aa:00:00:00:05", "10.9.9.5")]
if got != want:
    sys.exit("mgmt_controller: read back %s, want %s" % (got, want))
PY
grep -q "port" "$work/good.out" || { echo "mgmt_controller: no counters table"; cat "$work/good.out"; exit 1; }
# The management counters: every request so far accepted, none refused.
grep -E "^management: accepted [1-9][0-9]* bad_port 0 malformed 0 bad_tag 0 replay 0 rx_busy 0$" "$work/good.out" \
  || { echo "mgmt_controller: management counters"; cat "$work/good.out"; exit 1; }

echo "== wrong key"
set +e
"$host" controller --regmap "$gen" --target "$target" --key "$work/wrong.key" --counters \
  >"$work/wrong.out" 2>"$work/wrong.err"
rc=$?
set -e
cat "$work/wrong.err"
[ "$rc" = 1 ] || { echo "mgmt_controller: wrong key gave exit code $rc"; exit 1; }
[ "$(wc -l <"$work/wrong.err")" = 1 ] || { echo "mgmt_controller: want one error line"; exit 1; }
grep -q "key or the port is probably wrong" "$work/wrong.err" || { echo "mgmt_controller: unclear error"; exit 1; }
[ ! -s "$work/wrong.out" ] || { echo "mgmt_controller: output with a wrong key"; exit 1; }
# The refused requests were counted: read them with the good key.
"$host" controller --regmap "$gen" --target "$target" --key "$work/good.key" --counters --json >"$work/after.out"
python3 - "$(cat "$work/after.out")" <<'PY'
import json, sys
m = json.loads(sys.argv[1])["management"]
if m["bad_tag"] != 5 or m["replay"] or m["malformed"] or m["bad_port"]:
    sys.exit("mgmt_controller: after five wrong-key tries the counters read %s" % m)
PY
echo "mgmt_controller: PASS"
