#!/usr/bin/env bash
# Test of `panama-host controller` against the Verilated RTL (docs/host.md):
#  1. offline: the register-write list computed from regmap.json, applied to the RTL's register
#     file (the design's harness, AXI4-Lite), reads back exactly as the same CTX.json loaded by
#     the harness itself (every configuration register of every context, AGG_PORT);
#  2. live: a running stand-in (`switch --control`, started with no context) is programmed
#     through its control socket; 3 workers all-reduce exactly; the job's contexts are disabled
#     (a worker then gets the timeout error: no context); they are re-enabled with two members
#     instead of three, and the two workers all-reduce exactly.
#
#   host_controller.sh PANAMA_HOST HOST_TREESUM RTL_DIR
set -euo pipefail
PH=$1
SUMTOOL=$2
RTL=$3
. "$(dirname "$0")/host_lib.sh"
host_scratch host_ctl
PIDS=()
CREATED=()
cleanup() {
  set +e
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 1 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null
  done
  for ns in "${CREATED[@]}"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

cat > "$TMP/ctx.json" <<'JSON'
{ "agg_port": 9100, "contexts": [
  { "jid": 7, "tid": 0, "members": [0, 1, 2], "mode": "multicast",
    "group_mac": "01:00:5e:01:07:00", "group_ip": "239.1.7.0", "timeout_cycles": 5000 },
  { "jid": 7, "tid": 1, "members": [0, 2], "mode": "upstream", "upstream_port": 3,
    "src_mac": "02:aa:00:00:00:09", "src_ip": "10.0.0.253" },
  { "jid": 300, "tid": 255, "members": [3], "mode": "multicast",
    "group_mac": "01:00:5e:7f:00:01", "group_ip": "239.127.0.1" } ] }
JSON
echo '{ "contexts": [] }' > "$TMP/empty.json"

# --- 1. offline list on the RTL register file ---------------------------------------------------
HARNESS=$(timeout 1200 "$PH" switch --rtl "$RTL" --contexts "$TMP/empty.json" --ifaces none --prepare) ||
  { echo "FAIL: could not verilate $RTL"; exit 1; }
"$PH" controller --regmap "$RTL" --contexts "$TMP/ctx.json" --writes "$TMP/writes.txt"
grep -q "CTX_JID\|JID 7" "$TMP/writes.txt" || { echo "FAIL: no comments in the list"; exit 1; }
python3 - "$RTL/regmap.json" > "$TMP/reads.txt" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(f"read {[r for r in m['global'] if r['name'] == 'AGG_PORT'][0]['offset']}")
cb = m["context_block"]
for c in range(cb["count"]):
    for r in cb["registers"]:
        if "VECTORS" not in r["name"]:
            print(f"read {cb['base'] + c * cb['stride'] + r['offset']}")
PY
{ cat "$TMP/reads.txt"; echo quit; } | timeout 60 "$HARNESS" --live --config "$RTL/config.json" --contexts "$TMP/ctx.json" > "$TMP/loaded.txt"
{ sed 's/^/write /; s/#.*//' "$TMP/writes.txt"; cat "$TMP/reads.txt"; echo quit; } |
  timeout 60 "$HARNESS" --live --config "$RTL/config.json" --contexts "$TMP/empty.json" | grep -v '^ok$' > "$TMP/written.txt"
[ "$(wc -l < "$TMP/loaded.txt")" = "$(wc -l < "$TMP/reads.txt")" ] || { echo "FAIL: harness reads"; exit 1; }
cmp "$TMP/loaded.txt" "$TMP/written.txt" || { echo "FAIL: the offline list gives another register state than CTX.json loading"; diff "$TMP/loaded.txt" "$TMP/written.txt" | head; exit 1; }
echo "PASS: offline list ($(grep -c . "$TMP/writes.txt") writes) on the RTL register file = CTX.json loading ($(wc -l < "$TMP/reads.txt") registers)"

# --- 2. live reprogramming of a running stand-in ------------------------------------------------
NS_SW="pcs-$SUF"
if ! ip netns add "$NS_SW" 2>/dev/null; then echo "SKIP: ip netns is not permitted here (offline part passed)"; exit 77; fi
CREATED+=("$NS_SW")
IFACES=""
for i in 0 1 2; do
  ns="pcw$i-$SUF"; ip netns add "$ns"; CREATED+=("$ns")
  ip link add "pc${SUF}w$i" netns "$ns" type veth peer name "pc${SUF}s$i" netns "$NS_SW"
  ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 || true
  ip netns exec "$ns" ip addr add "10.96.0.$((i + 1))/24" dev "pc${SUF}w$i"
  ip netns exec "$ns" ip link set "pc${SUF}w$i" up
  # One segment per skb, as a NIC sends them (the udp backend's GSO; scripts/testbed).
  ip netns exec "$ns" ip link set dev "pc${SUF}w$i" gso_max_segs 1 2>/dev/null || true
  ip netns exec "$ns" ip neigh replace 10.96.0.254 lladdr 02:aa:00:00:00:01 dev "pc${SUF}w$i" nud permanent
  ip netns exec "$NS_SW" ip link set "pc${SUF}s$i" up
  IFACES+="${IFACES:+,}pc${SUF}s$i"
done
timeout 100 ip netns exec "$NS_SW" "$PH" switch --rtl "$RTL" --contexts "$TMP/empty.json" --ifaces "$IFACES" \
  --control "$TMP/ctl" --duration 90 >"$TMP/switch.out" 2>"$TMP/switch.err" &
PIDS+=($!)
for _ in $(seq 1 100); do
  [ -S "$TMP/ctl" ] && "$PH" controller --regmap "$RTL" --control "$TMP/ctl" --show >/dev/null 2>&1 && break
  sleep 0.1
done
CTL=("$PH" controller --regmap "$RTL" --control "$TMP/ctl")
GROUP=(--group-mac 01:00:5e:01:01:01 --group-ip 239.1.1.1)
"${CTL[@]}" --job 3 --trees 2 --members 0,1,2 --mode multicast "${GROUP[@]}" --show > "$TMP/table1.json" ||
  { echo "FAIL: live programming"; cat "$TMP/switch.err"; exit 1; }
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["contexts"]; assert [(c["index"],c["jid"],c["tid"],c["members"]) for c in t]==[(0,3,0,[0,1,2]),(1,3,1,[0,1,2])], t' "$TMP/table1.json" ||
  { echo "FAIL: the table read back"; exit 1; }
for i in 0 1 2; do "$SUMTOOL" gen $((77 + i)) 20000 "$TMP/in$i.bin"; done
workers() {  # TAG RANKS...: all-reduce among these ranks (world = their number), ports = ranks
  local tag=$1; shift
  local w=$# pids=() k=0 rc=0
  for i in "$@"; do
    timeout 30 ip netns exec "pcw$i-$SUF" "$PH" worker --iface "pc${SUF}w$i" --job 3 --rank $k --world $w --trees 2 \
      --in "$TMP/in$i.bin" --out "$TMP/out$tag.$i.bin" --agg-ip 10.96.0.254 --group-ip 239.1.1.1 --timeout-ms 1500 \
      2>"$TMP/worker$tag.$i.err" &
    pids+=($!); PIDS+=($!); k=$((k + 1))
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  return $rc
}
"$SUMTOOL" sum 4 "$TMP/exp3.bin" "$TMP/in0.bin:0" "$TMP/in1.bin:1" "$TMP/in2.bin:2"
workers a 0 1 2 || { echo "FAIL: all-reduce after live programming"; cat "$TMP"/workera.*.err; exit 1; }
for i in 0 1 2; do cmp -s "$TMP/exp3.bin" "$TMP/outa.$i.bin" || { echo "FAIL: worker $i output (3 members)"; exit 1; }; done
echo "PASS: live programming through the control socket; 3 workers exact"

"${CTL[@]}" --disable 0,1 || { echo "FAIL: disable"; exit 1; }
if workers b 0 1 2; then echo "FAIL: an all-reduce succeeded with the contexts disabled"; exit 1; fi
grep -q "timeout: no result" "$TMP/workerb.0.err" || { echo "FAIL: unclear error"; cat "$TMP/workerb.0.err"; exit 1; }
[ ! -e "$TMP/outb.0.bin" ] || { echo "FAIL: output written with the contexts disabled"; exit 1; }
echo "PASS: contexts disabled live: $(head -c 120 "$TMP/workerb.0.err")"

# Re-enabled with two members (ports 0 and 2): expected VID 0 again, the two workers exact.
"${CTL[@]}" --job 3 --trees 2 --members 0,2 --mode multicast "${GROUP[@]}" || { echo "FAIL: re-enable"; exit 1; }
"$SUMTOOL" sum 4 "$TMP/exp2.bin" "$TMP/in0.bin:0" "$TMP/in2.bin:2"
workers c 0 2 || { echo "FAIL: all-reduce after changing the members"; cat "$TMP"/workerc.*.err; exit 1; }
for i in 0 2; do cmp -s "$TMP/exp2.bin" "$TMP/outc.$i.bin" || { echo "FAIL: worker $i output (2 members)"; exit 1; }; done
echo "PASS: members changed live (0,1,2 -> 0,2): 2 workers exact"
echo "PASS"
