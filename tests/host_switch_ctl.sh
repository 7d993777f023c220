#!/usr/bin/env bash
# The stand-in's shutdown and the controller's checks (docs/host.md, issue 12):
#  1. for each engine (model, rtl) and each stopping signal (INT, TERM, HUP, QUIT): a stand-in on
#     the loopback interface of a fresh namespace, a context programmed live through the control
#     socket, frames flowing through the RTL harness's pipe (a traffic burst of contributions to
#     lo), then the signal: exit 0, and complete final counters (stdout and --counters file, JSON
#     with "complete": true) listing the live-programmed context with its JID and TID;
#  2. the controller refuses, with one line naming the difference and before any write, a
#     register map of another design (8-port map against the 4-port stand-in) and a job whose
#     members do not exist (--members 0..7 on 4 ports): the context table reads back unchanged;
#  3. controller --counters prints the table and --json the counters of the live context.
#
#   host_switch_ctl.sh PANAMA_HOST RTL_DIR OTHER_RTL_DIR
# Exit 0 pass, 1 fail, 77 skip (no network namespaces here).
set -euo pipefail
PH=$1
RTL=$2
OTHER=$3
. "$(dirname "$0")/host_lib.sh"
host_scratch host_sig
NS="hs$SUF"
PID=""
cleanup() {
  set +e
  [ -z "$PID" ] || { kill -KILL "$PID" 2>/dev/null; wait "$PID" 2>/dev/null; }
  ip netns del "$NS" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
fail() { echo "FAIL: $*"; exit 1; }

ip netns add "$NS" 2>/dev/null || { echo "SKIP: ip netns is not permitted here"; exit 77; }
ip netns exec "$NS" ip link set lo up
echo '{ "contexts": [] }' > "$TMP/empty.json"
timeout 1200 "$PH" switch --rtl "$RTL" --contexts "$TMP/empty.json" --ifaces none --prepare >/dev/null ||
  fail "could not verilate $RTL"

CTL=(--regmap "$RTL" --control "$TMP/ctl")
start() {  # ENGINE
  rm -f "$TMP/ctl" "$TMP/counters.json"
  ip netns exec "$NS" "$PH" switch --rtl "$RTL" --engine "$1" --contexts "$TMP/empty.json" --ifaces lo \
    --control "$TMP/ctl" --counters "$TMP/counters.json" --export-interval 0.2 \
    --queue-log "$TMP/queue.csv" --queue-log-interval 0.05 >"$TMP/out.json" 2>"$TMP/err.txt" &
  PID=$!
  for _ in $(seq 1 150); do
    [ -S "$TMP/ctl" ] && "$PH" controller "${CTL[@]}" --show >/dev/null 2>&1 && return 0
    kill -0 "$PID" 2>/dev/null || { cat "$TMP/err.txt"; fail "$1: the stand-in died at start"; }
    sleep 0.2
  done
  fail "$1: the stand-in did not come up"
}
check_counters() {  # FILE WHAT
  python3 - "$1" "$2" <<'PY'
import json, sys
path, what = sys.argv[1], sys.argv[2]
try:
    j = json.load(open(path))
except (OSError, ValueError) as e:
    sys.exit(f"FAIL: {what}: no complete JSON ({type(e).__name__})")
if j.get("complete") is not True:
    sys.exit(f"FAIL: {what}: not marked complete: {j.get('error')}")
ctx = j["accelerator"]["contexts"]
if not any(c["jid"] == 42 and c["tid"] == 3 and c["enabled"] for c in ctx):
    sys.exit(f"FAIL: {what}: the live-programmed context (JID 42, TID 3) is missing: {ctx}")
if len(j["accelerator"]["ports"]) != 4 or len(j["switch_ports"]) != 1:
    sys.exit(f"FAIL: {what}: port counters missing")
if j["switch_ports"][0]["rx_frames"] == 0:
    sys.exit(f"FAIL: {what}: no frame went through the stand-in")
PY
}
check_queue_log() {  # WHAT: one header, samples of port 0 over more than one counter-export slice
  python3 - "$TMP/queue.csv" "$1" <<'PY'
import csv, sys
path, what = sys.argv[1], sys.argv[2]
lines = open(path).read().splitlines()
if not lines or lines[0] != "unix_s,port,queue_frames,ce_marked" or sum(l.startswith("unix_s") for l in lines) != 1:
    sys.exit(f"FAIL: {what}: queue log header missing or repeated")
rows = [r for r in csv.DictReader(lines[0:1] + lines[1:])]
t = [float(r["unix_s"]) for r in rows if r["port"] == "0"]
if len(t) < 5 or t != sorted(t) or t[-1] - t[0] < 0.3:
    sys.exit(f"FAIL: {what}: queue log of port 0 has {len(t)} samples over {t[-1] - t[0] if t else 0:.2f} s")
PY
}
burst() {  # contributions to the live context through lo (the stand-in's only port)
  ip netns exec "$NS" python3 - <<'PY'
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0xE2)  # DSCP 56, ECT(0): an aggregation frame
for vid in range(200):
    # VER, FLAGS, JID, TID, reserved, COUNT, VID, RANK, COOKIE (wire-format.md), then 4 fp32
    hdr = struct.pack(">BBHBBHIHQ", 1, 0, 42, 3, 0, 4, vid, 0, 0)
    s.sendto(hdr + struct.pack("<4f", 1, 2, 3, vid), ("127.0.0.1", 9056))
PY
}

for engine in model rtl; do
  for sig in INT TERM HUP QUIT; do
    start "$engine"
    "$PH" controller "${CTL[@]}" --job 42 --trees 1 --tids 3 --index 5 --members 0 \
      --group-mac 01:00:5e:01:01:2a --group-ip 239.1.1.42 2>"$TMP/ctl.err" || { cat "$TMP/ctl.err"; fail "programming"; }
    burst
    sleep 0.3
    kill -s "$sig" "$PID"
    rc=0
    for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$PID" 2>/dev/null && fail "$engine SIG$sig: the stand-in did not stop within 10 s"
    wait "$PID" || rc=$?
    PID=""
    [ "$rc" = 0 ] || { cat "$TMP/err.txt"; fail "$engine SIG$sig: exit $rc"; }
    check_counters "$TMP/out.json" "$engine SIG$sig stdout"
    check_counters "$TMP/counters.json" "$engine SIG$sig --counters file"
    check_queue_log "$engine SIG$sig queue log"
    echo "ok: $engine SIG$sig: complete final counters with the live context"
  done
done

# --- controller: checks before writes ----------------------------------------------------------
start model
"$PH" controller "${CTL[@]}" --job 42 --trees 1 --tids 3 --index 5 --members 0 \
  --group-mac 01:00:5e:01:01:2a --group-ip 239.1.1.42 2>/dev/null
before=$("$PH" controller "${CTL[@]}" --show)
refuse() {  # WHAT PATTERN ARGS...: exit != 0, one "panama-host:" line matching PATTERN, table unchanged
  local what=$1 pat=$2; shift 2
  local rc=0
  "$PH" controller "$@" >"$TMP/r.out" 2>"$TMP/r.err" || rc=$?
  [ "$rc" != 0 ] || fail "controller accepted $what"
  [ "$(wc -l < "$TMP/r.err")" = 1 ] || { cat "$TMP/r.err"; fail "$what: not one line"; }
  grep -q "$pat" "$TMP/r.err" || { cat "$TMP/r.err"; fail "$what: the line does not name '$pat'"; }
  [ "$("$PH" controller "${CTL[@]}" --show)" = "$before" ] || fail "$what: the context table changed"
  echo "ok: refused $what: $(cat "$TMP/r.err")"
}
refuse "an 8-port register map on a 4-port design" "PORTS reads 4" \
  --regmap "$OTHER" --control "$TMP/ctl" --job 1 --members 0,1 --index 0 --group-mac 01:00:5e:01:01:01 --group-ip 239.1.1.1
refuse "members 0..7 on 4 ports" "member port 4 out of range: the design has PORTS = 4" \
  "${CTL[@]}" --job 1 --members 0,1,2,3,4,5,6,7 --index 0 --group-mac 01:00:5e:01:01:01 --group-ip 239.1.1.1
"$PH" controller "${CTL[@]}" --counters > "$TMP/table.txt"
grep -q "^port rx_frames tx_frames" "$TMP/table.txt" || { cat "$TMP/table.txt"; fail "--counters: no port table"; }
grep -q "^5 42 3 1 " "$TMP/table.txt" || { cat "$TMP/table.txt"; fail "--counters: no line for context 5"; }
"$PH" controller "${CTL[@]}" --counters --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert len(j["ports"]) == 4 and any(c["index"] == 5 and c["jid"] == 42 for c in j["contexts"]), j
' || fail "--counters --json"
"$PH" controller "${CTL[@]}" --job-out "$TMP/job.json"
python3 -c 'import json,sys; j = json.load(open(sys.argv[1])); assert j["max_elems"] == 362 and j["format"] == "fp32", j' \
  "$TMP/job.json" || fail "--job-out"
echo "ok: controller --counters (table, JSON) and --job-out"
kill -TERM "$PID"; wait "$PID" || true; PID=""
echo "PASS"
