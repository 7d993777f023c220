# scripts/testbed's --torch SCRIPT [ARGS...] (sourced by scripts/testbed; docs/torch.md "Testbed").
# Every worker namespace runs Debian's /usr/bin/python3 SCRIPT ARGS with the distributed and
# panama settings in its environment, in the run's directory. Uses the testbed's variables (W,
# TREES, RTL, BUILD, TMP, SUF, WORKER_NS, WORKER_IF, WORKER_PORT, SW_PID, SWITCHES, PIDS, CREATED).

TORCH_PY=/usr/bin/python3  # Debian's interpreter: the one with torch, sklearn and panama_torch's ABI

torch_check_args() {
  [ -f "$TORCH" ] || bad "--torch: no script '$TORCH'"
  TORCH=$(cd "$(dirname "$TORCH")" && pwd)/$(basename "$TORCH")
  BUILD=$(cd "$BUILD" && pwd); RTL=$(cd "$RTL" && pwd)  # the scripts run in the run's directory
  [ -x "$TORCH_PY" ] || bad "--torch: $TORCH_PY (Debian's python3 with python3-torch) is not installed (scripts/setup)"
  compgen -G "$BUILD/torch_ext/panama_torch/_C*.so" >/dev/null ||
    bad "--torch: panama_torch is not built in $BUILD (cmake --build $BUILD --target panama_torch)"
  [ "$KILL_RANK" -lt 0 ] || bad "--torch: not with --kill-rank (a script ends itself; TESTBED_STANDIN_PIDS names the stand-ins)"
}

# The management network: a bridge in a namespace of its own, one veth per worker (10.99.0.R+1),
# so that the TCP store (MASTER_ADDR, rank 0) is reachable from every worker whatever the stand-in
# does (it may be slow, lossy or stopped by a fault test).
torch_mgmt_net() {
  local ns="tb$SUF-mgmt" br="t${SUF}br" i a b
  mkns "$ns"
  ip netns exec "$ns" ip link add "$br" type bridge
  ip netns exec "$ns" ip link set "$br" up
  for i in $(seq 0 $((W - 1))); do
    a="t${SUF}m$i"; b="t${SUF}b$i"
    ip link add "$a" netns "${WORKER_NS[$i]}" type veth peer name "$b" netns "$ns"
    ip netns exec "$ns" ip link set "$b" master "$br" up
    ip netns exec "${WORKER_NS[$i]}" ip addr add "10.99.0.$((i + 1))/24" dev "$a"
    ip netns exec "${WORKER_NS[$i]}" ip link set "$a" up
    # Gloo's TCP crosses the stand-in: one segment per skb, or the kernel hands the stand-in
    # 64 KiB GSO super-frames that no port carries (the connection stalls; as scripts/bench-host).
    ip netns exec "${WORKER_NS[$i]}" ip link set dev "${WORKER_IF[$i]}" gso_max_segs 1
  done
}

# The stand-ins' own process ids (the children of timeout(1)), "NAME:PID ...", for fault tests.
torch_standin_pids() {
  local sw out="" p
  for sw in "${SWITCHES[@]}"; do
    p=$(pgrep -P "${SW_PID[$sw]}" | head -1 || true)
    out+="${out:+ }$sw:${p:-${SW_PID[$sw]}}"
  done
  echo "$out"
}

torch_run() {
  torch_mgmt_net
  export TESTBED_TORCH=1
  local ports="" i pids=() rc
  for i in $(seq 0 $((W - 1))); do ports+="${ports:+,}${WORKER_PORT[$i]}"; done
  local standins sw
  standins=$(torch_standin_pids)
  # A stand-in a fault test kills is not bash's news ("Killed" on stderr): out of the job table
  # (the testbed stops them by pid).
  for sw in "${SWITCHES[@]}"; do disown "${SW_PID[$sw]}" 2>/dev/null || true; done
  say "--torch: $(basename "$TORCH") ${TORCH_ARGS[*]} as $W workers (ports $ports), run directory $TMP$([ -n "$KEEP" ] && echo " (kept in $KEEP)")"
  start=$(date +%s.%N)
  for i in $(seq 0 $((W - 1))); do
    # A variable the caller set (PANAMA_TIMEOUT_MS, ...) passes through; the job's own are the testbed's.
    (cd "$TMP" && exec timeout "$RUN_TIMEOUT" ip netns exec "${WORKER_NS[$i]}" env \
      RANK="$i" WORLD_SIZE="$W" LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=10.99.0.1 MASTER_PORT=29500 \
      GLOO_SOCKET_IFNAME="${WORKER_IF[$i]}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" \
      PYTHONPATH="$BUILD/torch_ext${PYTHONPATH:+:$PYTHONPATH}" \
      PANAMA_DESIGN="$RTL" PANAMA_IFACE="${WORKER_IF[$i]}" PANAMA_AGG_IP=10.98.0.254 PANAMA_GROUP_IP=239.1.1.1 \
      PANAMA_JOB=1 PANAMA_TREES="$TREES" \
      TESTBED_PORTS="$ports" TESTBED_ENGINE="$ENGINE" TESTBED_BUILD="$BUILD" TESTBED_STANDIN_PIDS="$standins" \
      "$TORCH_PY" "$TORCH" "${TORCH_ARGS[@]}" >"$TMP/torch$i.out" 2>"$TMP/torch$i.err") &
    pids[$i]=$!
    PIDS+=($!)
  done
  # Rank 0's output as it comes (epochs, tables), each line once.
  local shown=0 n alive
  while :; do
    alive=0
    for i in $(seq 0 $((W - 1))); do kill -0 "${pids[$i]}" 2>/dev/null && alive=1; done
    n=$(wc -l <"$TMP/torch0.out" 2>/dev/null || echo 0)
    [ "$n" -le "$shown" ] || { sed -n "$((shown + 1)),${n}p" "$TMP/torch0.out"; shown=$n; }
    [ $alive = 1 ] || break
    sleep 0.5
  done
  elapsed=$(python3 -c "print(round($(date +%s.%N) - $start, 2))")
  for i in $(seq 0 $((W - 1))); do
    set +e; wait "${pids[$i]}"; rc=$?; set -e
    if [ "$rc" = 0 ]; then
      echo "rank $i: exit 0"
    else
      status=1
      echo "FAIL: rank $i exited $rc$([ "$rc" = 124 ] && echo " (killed by the $RUN_TIMEOUT s timeout)"):"
      tail -n 15 "$TMP/torch$i.err" | sed "s/^/  rank $i: /"
    fi
  done
  # The backend's notes (fallbacks, unknown variables), once.
  cat "$TMP"/torch*.err 2>/dev/null | grep -h "^panama_torch:" | sort -u | sed 's/^/testbed: /' || true
  torch_alive_switches
}

# Keeps in SWITCHES the stand-ins still running when the scripts ended: one a script stopped has
# no final counters to check.
torch_alive_switches() {
  local sw alive=()
  for sw in "${SWITCHES[@]}"; do
    if kill -0 "${SW_PID[$sw]}" 2>/dev/null; then alive+=("$sw"); else say "stand-in $sw ended during the run: its counters are not checked"; fi
  done
  SWITCHES=("${alive[@]}")
}
