#!/usr/bin/env bash
# End-to-end test of panama-host (docs/host.md): network namespaces and veth pairs, one
# `panama-host switch` (the Verilated RTL) and W workers over one backend, an all-reduce of
# random tensors checked bit for bit against the tree-order sum of the inputs, ten more in one
# run, a worker whose peers never answer must fail with a clear error in bounded time, then the
# same under 1 % loss (repair) and under ECN marking.
#
#   [BACKEND=udp|tins|dpdk] host_netns.sh PANAMA_HOST HOST_TREESUM RTL_DIR [WORKERS] [ELEMS]
#
# BACKEND (default udp) is the workers' --backend; the bypass case (kernel UDP between two
# workers through the stand-in) does not depend on it and runs with udp only.
#
# Every name carries a per-run suffix; the trap removes everything even on failure. Addresses
# (10.99.0.0/24, group 239.1.1.1) exist only inside the namespaces created here. Exits 77 (ctest:
# Skipped) when network namespaces are not permitted.
set -euo pipefail

PH=$1
SUMTOOL=$2
RTL=$3
W=${4:-3}
N=${5:-16384}   # elements per worker: 64 KiB of fp32
TREES=2
BACKEND=${BACKEND:-udp}
case "$BACKEND" in udp|tins|dpdk) ;; *) echo "FAIL: BACKEND must be udp, tins or dpdk"; exit 1;; esac
echo "backend: $BACKEND"

. "$(dirname "$0")/host_lib.sh"
host_scratch host_netns
NS_SW="phs-$SUF"
SW_PID=""
CREATED=()

# Stops the switch: SIGTERM to panama-host itself (the `timeout` wrapper would pass it on to its
# whole process group, the RTL harness included, which then dies before the counters are out).
stop_switch() {
  local child
  child=$(pgrep -P "$SW_PID" 2>/dev/null | head -1)
  kill -TERM "${child:-$SW_PID}" 2>/dev/null
  wait "$SW_PID" || true
  SW_PID=""
}

cleanup() {
  set +e
  if [ -n "$SW_PID" ]; then
    kill -TERM "$SW_PID" 2>/dev/null
    for _ in $(seq 1 50); do kill -0 "$SW_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SW_PID" 2>/dev/null
  fi
  for ns in "${CREATED[@]}"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Namespaces first: a user who may not create them gets Skipped at once (exit 77), before any
# build work or any namespace exists.
if ! ip netns add "$NS_SW" 2>/dev/null; then
  echo "SKIP: ip netns is not permitted here"
  exit 77
fi
ip netns del "$NS_SW"

# The switch runs the Verilated RTL: verilate it first (cached after the first run), before any
# namespace exists, so that a slow first build that runs out of time leaves nothing behind.
cat > "$TMP/prepare.json" <<JSON
{ "contexts": [ { "jid": 1, "tid": 0, "members": [0, 1], "mode": "multicast",
                  "group_mac": "01:00:5e:01:01:01", "group_ip": "239.1.1.1" } ] }
JSON
timeout 900 "$PH" switch --rtl "$RTL" --contexts "$TMP/prepare.json" --ifaces none --prepare >/dev/null ||
  { echo "FAIL: could not verilate $RTL"; exit 1; }

ip netns add "$NS_SW"
CREATED+=("$NS_SW")
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
in_ns "$NS_SW" ip link set lo up
in_ns "$NS_SW" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 || true

IFACES=""
MEMBERS=""
for i in $(seq 0 $((W - 1))); do
  ns="phw$i-$SUF"
  ip netns add "$ns"
  CREATED+=("$ns")
  w="pv${SUF}w$i"
  s="pv${SUF}s$i"
  ip link add "$w" netns "$ns" type veth peer name "$s" netns "$NS_SW"
  in_ns "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 || true
  in_ns "$ns" ip link set lo up
  in_ns "$ns" ip addr add "10.99.0.$((i + 1))/24" dev "$w"
  in_ns "$ns" ip link set "$w" up
  # One segment per skb, as a NIC sends them: the udp backend's GSO messages are segmented at the
  # device instead of reaching the stand-in's raw socket as one super-frame (scripts/testbed).
  in_ns "$ns" ip link set dev "$w" gso_max_segs 1 2>/dev/null || true
  # The aggregator's address: nobody answers ARP for it, so the neighbour entry is static.
  in_ns "$ns" ip neigh replace 10.99.0.254 lladdr 02:aa:00:00:00:01 dev "$w" nud permanent
  in_ns "$NS_SW" ip link set "$s" up
  IFACES+="${IFACES:+,}$s"
  MEMBERS+="${MEMBERS:+, }$i"
done

cat > "$TMP/ctx.json" <<JSON
{ "agg_port": 9056,
  "contexts": [
    { "jid": 1, "tid": 0, "members": [$MEMBERS], "mode": "multicast",
      "group_mac": "01:00:5e:01:01:01", "group_ip": "239.1.1.1" },
    { "jid": 1, "tid": 1, "members": [$MEMBERS], "mode": "multicast",
      "group_mac": "01:00:5e:01:01:01", "group_ip": "239.1.1.1" } ] }
JSON

# Starts a fresh stand-in (contexts enabled again: VIDs from 0) and waits for its first counters.
start_switch() {  # WHAT [EXTRA SWITCH OPTIONS...]
  rm -f "$TMP/counters.json"
  timeout 120 ip netns exec "$NS_SW" "$PH" switch --rtl "$RTL" --contexts "$TMP/ctx.json" --ifaces "$IFACES" \
    --counters "$TMP/counters.json" --export-interval 0.2 --duration 100 "${@:2}" \
    >"$TMP/switch.out" 2>"$TMP/switch.err" &
  SW_PID=$!
  for _ in $(seq 1 100); do
    [ -s "$TMP/counters.json" ] && return 0
    kill -0 "$SW_PID" 2>/dev/null || { echo "FAIL: the $1 switch exited:"; cat "$TMP/switch.err"; exit 1; }
    sleep 0.1
  done
  echo "FAIL: the $1 switch did not start within 10 s"; cat "$TMP/switch.err"; exit 1
}

# Stops the switch and shows what its ports and contexts counted.
stop_and_show_switch() {
  stop_switch
  "$PY" - "$TMP/switch.out" <<'PY' || true
import json, sys
j = json.loads(open(sys.argv[1]).read())
print("switch:", json.dumps(j["switch_ports"]))
print("accelerator contexts:", json.dumps(j["accelerator"]["contexts"]))
PY
}

start_switch lossless

run_workers() {  # ITERATIONS TAG FIRST_VIDS [EXTRA WORKER OPTIONS...]
  local pids=() rc=0
  for i in $(seq 0 $((W - 1))); do
    timeout 60 ip netns exec "phw$i-$SUF" "$PH" worker --backend "$BACKEND" --iface "pv${SUF}w$i" --job 1 --rank "$i" --world "$W" \
      --trees "$TREES" --in "$TMP/in$i.bin" --out "$TMP/out$i.bin" --agg-ip 10.99.0.254 --group-ip 239.1.1.1 \
      --timeout-ms 3000 --iterations "$1" --first-vid "$3" --stats "$TMP/stats$2.$i.json" "${@:4}" 2>"$TMP/worker$i.err" &
    pids+=($!)
  done
  for i in $(seq 0 $((W - 1))); do
    if ! wait "${pids[$i]}"; then
      echo "FAIL: worker $i ($2):"; cat "$TMP/worker$i.err"; rc=1
    fi
  done
  return $rc
}

args=()
for i in $(seq 0 $((W - 1))); do
  "$SUMTOOL" gen $((1000 + i)) "$N" "$TMP/in$i.bin"
  args+=("$TMP/in$i.bin:$i")
done
"$SUMTOOL" sum 4 "$TMP/expected.bin" "${args[@]}"

PY=$(command -v python3 || echo /usr/bin/python3)
# 0. Bypass traffic through the accelerator and the switch chip (ARP flooding, MAC learning).
if [ "$BACKEND" = udp ]; then
in_ns "phw1-$SUF" timeout 10 "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("10.99.0.2", 7000)); s.settimeout(8)
d, a = s.recvfrom(100); s.sendto(d[::-1], a); print(d.decode(), file=open(sys.argv[1], "w"))' "$TMP/udp.rx" &
UDP_PID=$!
sleep 0.3
in_ns "phw0-$SUF" timeout 10 "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
for _ in range(8):
    s.sendto(b"bypass-hello", ("10.99.0.2", 7000))
    try:
        d, a = s.recvfrom(100); sys.exit(0 if d == b"olleh-ssapyb" else 1)
    except socket.timeout:
        pass
sys.exit(1)' || { echo "FAIL: UDP between workers through the stand-in"; cat "$TMP/counters.json" | tr -d " \n" | head -c 3000; exit 1; }
wait "$UDP_PID" || { echo "FAIL: UDP listener"; exit 1; }
echo "PASS: bypass traffic (UDP 10.99.0.1 <-> 10.99.0.2 through the stand-in, ARP flooded and learned)"
fi

# 1. One all-reduce; every output equals the tree-order sum, bit for bit.
run_workers 1 a 0 || { cat "$TMP/switch.err"; exit 1; }
for i in $(seq 0 $((W - 1))); do
  cmp "$TMP/expected.bin" "$TMP/out$i.bin" || { echo "FAIL: worker $i's output differs from the tree-order sum"; exit 1; }
done
echo "PASS: $BACKEND: $W workers, $TREES trees, $((N * 4)) bytes each: outputs bit-identical to the tree-order sum"

# 2. Ten more all-reduces in one run (VIDs continue across calls): goodput figure.
rm -f "$TMP"/out*.bin
# New processes continue the job's VIDs where the contexts are (the previous run's next_vid).
NEXT=$("$PY" -c 'import json,sys; print(",".join(str(t["next_vid"]) for t in json.load(open(sys.argv[1]))["trees"]))' "$TMP/statsa.0.json")
run_workers 10 b "$NEXT" --progress-bar on --progress-bar-interval 0.2 || exit 1
for i in $(seq 0 $((W - 1))); do
  cmp "$TMP/expected.bin" "$TMP/out$i.bin" || { echo "FAIL: worker $i (10 iterations) differs"; exit 1; }
done
# --progress-bar on without a terminal: plain lines, non-decreasing, the last one at 100 %.
"$PY" - "$TMP/worker0.err" <<'PY' || exit 1
import re, sys
p = [float(m.group(1)) for m in re.finditer(r"worker 0: progress ([0-9.]+) %", open(sys.argv[1]).read())]
if len(p) < 2 or p != sorted(p) or p[-1] != 100.0:
    sys.exit(f"FAIL: progress lines of worker 0: {p}")
print(f"PASS: progress lines of worker 0: {len(p)}, ending at {p[-1]} %")
PY
for i in $(seq 0 $((W - 1))); do echo "worker $i: $(cat "$TMP/statsb.$i.json" | tr -d ' \n')"; done

# 3. A worker whose peers never answer: a clear error within bounded time (stale VIDs are
#    dropped by the accelerator: the context has moved on).
if timeout 20 ip netns exec "phw0-$SUF" "$PH" worker --backend "$BACKEND" --iface "pv${SUF}w0" --job 1 --rank 0 --world "$W" \
    --trees "$TREES" --in "$TMP/in0.bin" --out "$TMP/lonely.bin" --agg-ip 10.99.0.254 --group-ip 239.1.1.1 \
    --timeout-ms 500 2>"$TMP/lonely.err"; then
  echo "FAIL: a lone worker succeeded"; exit 1
fi
grep -q "timeout: no result" "$TMP/lonely.err" || { echo "FAIL: unclear error:"; cat "$TMP/lonely.err"; exit 1; }
[ ! -e "$TMP/lonely.bin" ] || { echo "FAIL: output written despite the error"; exit 1; }
echo "PASS: lone worker: $(head -c 200 "$TMP/lonely.err")"

stop_and_show_switch

# 4. Loss repair: a fresh stand-in (contexts enabled again: VIDs from 0) that drops 1 % of the
#    frames in and out of every port; every output still exact.
rm -f "$TMP"/out*.bin
start_switch lossy --loss 0.01 --loss-seed 7
run_workers 5 c 0 || exit 1
for i in $(seq 0 $((W - 1))); do
  cmp "$TMP/expected.bin" "$TMP/out$i.bin" || { echo "FAIL: worker $i's output differs under loss"; exit 1; }
done
for i in $(seq 0 $((W - 1))); do
  echo "worker $i under 1 % loss: $("$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print({k: j[k] for k in ("lost","repaired","repair_rounds","goodput_mbps")})' "$TMP/statsc.$i.json")"
done
echo "PASS: $BACKEND: 1 % loss in and out of every port: outputs exact (loss repair)"
stop_and_show_switch

# 5. Congestion marks end to end: a slow egress (200 Mbit/s, ECN threshold 2 packets) marks the
#    results CE; the workers read the ECN bits (udp: the kernel's IP_RECVTOS; tins, dpdk: the
#    IPv4 header of the captured frame); every worker sees the same marks
#    and keeps the same window; outputs exact.
rm -f "$TMP"/out*.bin
start_switch slow --rate-mbps 200 --ecn-threshold 2
# A long status wait: a worker that starts first (dpdk's EAL takes a moment) must not settle its
# first vectors as lost while its peers start, which would give it other marks.
run_workers 3 d 0 --status-wait-ms 2000 || exit 1
for i in $(seq 0 $((W - 1))); do
  cmp "$TMP/expected.bin" "$TMP/out$i.bin" || { echo "FAIL: worker $i's output differs (ECN run)"; exit 1; }
done
"$PY" - "$TMP" "$W" <<'PY' || exit 1
import json, sys
tmp, w = sys.argv[1], int(sys.argv[2])
st = [json.load(open(f"{tmp}/statsd.{i}.json")) for i in range(w)]
ce = [s["results_ce"] for s in st]
win = [[(t["cwnd"], t["alpha"]) for t in s["trees"]] for s in st]
print("ECN run: results marked CE per worker", ce, "windows (cwnd, alpha) per tree", win[0])
if min(ce) == 0: sys.exit("FAIL: no CE-marked result reached a worker")
# Every worker sees the same marks on every result that all of them received in order (a result
# one worker settled as lost, e.g. a peer starting late on a loaded machine, is left out on all).
if any(s.get("evidence_dropped", 0) for s in st): sys.exit("FAIL: evidence lists capped: the run is too long for this check")
marked = [set(map(tuple, s["ce_vids"])) for s in st]
unseen = set().union(*(set(map(tuple, s["unseen_vids"])) for s in st))
common = [m - unseen for m in marked]
if any(c != common[0] for c in common): sys.exit(f"FAIL: workers disagree on the CE marks of common results")
if not common[0]: sys.exit("FAIL: no CE-marked result was received by every worker")
print(f"ECN marks agree on {len(common[0])} CE-marked results received by every worker")
# With no result unseen anywhere, the windows follow the same marks: equal, bit for bit.
if not unseen and any(x != win[0] for x in win): sys.exit("FAIL: workers disagree on windows")
PY
echo "PASS: $BACKEND: ECN marks from the stand-in's queues reach every worker alike"
stop_switch
echo "PASS ($BACKEND)"
