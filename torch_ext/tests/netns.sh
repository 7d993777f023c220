#!/usr/bin/env bash
# panama_torch end to end in network namespaces (ctest torch.netns.*; docs/torch.md "Tests"): the
# check scripts of this folder as every worker of scripts/testbed --torch.
#   netns.sh CASE BUILD_DIR      CASE: allreduce | formats | ddp | determinism | late | kill | fallback | compress
#                                      | cnn1m | exit
# Exit 0 pass, 1 fail, 77 skip (no network namespaces here).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case_=${1:?usage: netns.sh CASE BUILD_DIR}
build=${2:?usage: netns.sh CASE BUILD_DIR}
work=$(mktemp -d "${TMPDIR:-/tmp}/torch_netns.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PYTHONPATH=$here  # tblib for the check scripts
# Each testbed run's bound: a case runs at most 4 of them, which must end (and clean up their
# namespaces) before ctest's TIMEOUT of 900 s would kill the tree: 4 x 200 s leaves 100 s.
tb_timeout=200

testbed() {  # LABEL TESTBED_ARGS...: one run; its output indented; fails the case on failure
  local label=$1; shift
  echo "== $label: scripts/testbed $*"
  "$root/scripts/testbed" --build "$build" --timeout "$tb_timeout" "$@" >"$work/out" 2>&1
  local rc=$?
  sed 's/^/   /' "$work/out"
  [ $rc = 77 ] && { echo "SKIP: the testbed cannot run here (its SKIP line above says why)"; exit 77; }
  [ $rc = 0 ] || { echo "FAIL: $label (testbed exit $rc)"; exit 1; }
}

gen() {  # DIR ARGS...: a design
  "$build/panama-gen" --ports 4 --gbps 10 --mhz 200 "${@:2}" --out "$1" >/dev/null || { echo "FAIL: panama-gen ${*:2}"; exit 1; }
}

case $case_ in
  allreduce)  # fp32 tree design, workers on ports out of rank order
    testbed "fp32, 3 workers on ports 2,0,1" --engine soft --workers 3 --placement 2,0,1 \
      --torch "$here/check_allreduce.py" ;;
  formats)
    for f in bf16 fp16; do
      gen "$work/$f" --format "$f"
      testbed "$f design, 4 workers on ports 3,1,0,2" --engine soft --rtl "$work/$f" --workers 4 --placement 3,1,0,2 \
        --torch "$here/check_allreduce.py"
    done ;;
  ddp)
    testbed "DDP on the panama group, 4 workers" --engine soft --workers 4 --placement 1,3,0,2 \
      --torch "$here/check_ddp.py" pg 4
    testbed "DDP on Gloo with panama_torch.allreduce_hook, 2 workers" --engine soft --workers 2 --placement 1,0 \
      --torch "$here/check_ddp.py" hook 4
    # 3 workers: 1/3 is not exact in binary, so a division before the sum and one after give other
    # bits; the reference divides as DDP does, each rank's gradient times 1/W before the sum.
    testbed "DDP on the panama group, 3 workers" --engine soft --workers 3 --placement 2,0,1 \
      --torch "$here/check_ddp.py" pg 4
    testbed "DDP on Gloo with panama_torch.allreduce_hook, 3 workers" --engine soft --workers 3 --placement 1,2,0 \
      --torch "$here/check_ddp.py" hook 4 ;;
  determinism)
    # The parameters after N steps, workers on ports 0,1,2,3 and on 3,1,0,2 (the SystemC model:
    # the soft engine sums in tree order only). Every step of every run bit for bit against its
    # reference (the exact sum rounded once, or the tree order). Exact sums: identical across the
    # placements. Tree sums: must differ (else the placements did not change the tree order and the
    # exact check proves nothing).
    status=0
    for sum in exact tree; do
      gen "$work/d_$sum" --sum "$sum"
      for pl in 0,1,2,3 3,1,0,2; do
        testbed "$sum sums, placement $pl" --engine model --rtl "$work/d_$sum" --workers 4 --placement "$pl" \
          --keep "$work/$sum.$pl" --torch "$here/check_ddp.py" pg 6
      done
      n=$(python3 - "$work/$sum.0,1,2,3/params.0.bin" "$work/$sum.3,1,0,2/params.0.bin" <<'PY'
import sys
a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
assert len(a) == len(b) and a, "parameter files differ in size"
print(sum(a[k:k + 4] != b[k:k + 4] for k in range(0, len(a), 4)), len(a) // 4)
PY
)
      read -r diff total <<<"$n"
      if [ "$sum" = exact ]; then
        [ "$diff" = 0 ] && echo "exact sums: the parameters after 6 steps are bitwise identical under both placements ($total values)" ||
          { echo "FAIL: exact sums: $diff of $total parameters differ between the placements"; status=1; }
      elif [ "$diff" -gt 0 ]; then
        echo "tree sums: $diff of $total parameters differ between the placements after 6 steps (the tree order follows the ports)"
      else
        # Without this the exact-sum check above could pass because placement changed nothing.
        echo "FAIL: tree sums: the parameters are identical under both placements: the placements did not change the tree order"
        status=1
      fi
    done
    exit $status ;;
  late)  # c10d's timeout: a rank 12 s late is waited for within 60 s, fails every rank at 3 s
    # (expire without the fallback: the accelerator's own failure is the subject)
    for m in wait expire; do
      fb=gloo; [ "$m" = expire ] && fb=off
      env -u PANAMA_TIMEOUT_MS -u PANAMA_STATUS_WAIT_MS PANAMA_FALLBACK=$fb "$root/scripts/testbed" --build "$build" --timeout "$tb_timeout" \
        --engine soft --workers 3 --torch "$here/check_late.py" "$m" >"$work/out" 2>&1
      rc=$?
      sed 's/^/   /' "$work/out"
      [ $rc = 77 ] && { echo "SKIP: the testbed cannot run here (its SKIP line above says why)"; exit 77; }
      [ $rc = 0 ] || { echo "FAIL: late rank, $m (testbed exit $rc)"; exit 1; }
    done ;;
  kill)  # without the fallback: the failure is the job's end, named and bounded
    PANAMA_FALLBACK=off PANAMA_TIMEOUT_MS=1000 PANAMA_STATUS_WAIT_MS=50 testbed "stand-in killed mid-call, 3 workers" \
      --engine soft --workers 3 --torch "$here/check_kill.py" 5 ;;
  fallback)  # the stand-in killed mid-training and started again: Gloo, then the accelerator again
    PANAMA_TIMEOUT_MS=1000 PANAMA_STATUS_WAIT_MS=50 testbed "stand-in killed and restarted, 3 workers" --engine soft \
      --workers 3 --placement 2,0,1 --torch "$here/check_fallback.py" 30 6 14 pg
    PANAMA_TIMEOUT_MS=1000 PANAMA_STATUS_WAIT_MS=50 testbed "the same through the hooks' path on a Gloo group" \
      --engine soft --workers 3 --placement 1,2,0 --torch "$here/check_fallback.py" 30 6 14 hook ;;
  compress)  # compress_hook: fp32 gradients through 16-bit designs
    for f in bf16 fp16; do
      gen "$work/$f" --format "$f"
      testbed "compress_hook, $f design, 3 workers on ports 2,0,1" --engine soft --rtl "$work/$f" --workers 3 \
        --placement 2,0,1 --torch "$here/check_compress.py" 40
    done ;;
  cnn1m)  # scripts/train --model cnn1m's workload, one epoch on the panama group (the full run with
    # Gloo's baseline: scripts/train --model cnn1m, docs/torch.md "Training")
    testbed "cnn1m (1.25 M parameters, 64 KiB buckets), 1 epoch on the panama group, 4 workers" --engine soft \
      --workers 4 --placement 2,0,3,1 --keep "$work/cnn1m" --torch "$root/torch_ext/examples/train_digits.py" \
      --backend panama --model cnn1m --epochs 1 --lr 0.01 --min-buckets 8 --csv train.csv --steps-csv steps.csv
    /usr/bin/python3 - "$work/cnn1m" <<'PY' || exit 1
import csv, sys
d = sys.argv[1]
steps = list(csv.DictReader(open(f"{d}/steps.csv")))
epoch = list(csv.DictReader(open(f"{d}/train.csv")))
ok = True
def check(cond, what):
    global ok
    print(("" if cond else "FAIL: ") + what)
    ok &= bool(cond)
check(len(steps) == 22, f"{len(steps)} steps of 64 images")
check(steps[-1]["buckets"] == "8", f"DDP reports {steps[-1]['buckets']} buckets after its rebuild (8 expected)")
late = steps[2:]  # DDP buckets the first step as one, then rebuilds
comm = [float(s["bwd_comm_ms"]) for s in late]
hid = [float(s["overlap_ms"]) for s in late]
check(all(c > 0 for c in comm), f"DDP timed the all-reduces of every step from the third (median {sorted(comm)[len(comm) // 2]:.1f} ms)")
check(all(0 < h <= c for h, c in zip(hid, comm)),
      f"on every one the first bucket's all-reduce began before backward ended: {100 * sum(hid) / sum(comm):.1f} % of "
      "the all-reduce time overlapped backward")
acc = float(epoch[-1]["test_acc"])
check(acc > 0.5, f"test accuracy after one epoch {100 * acc:.1f} % (chance: 10 %)")
sys.exit(0 if ok else 1)
PY
    ;;
  exit)  # shutdown with an all_reduce in flight: destroy_process_group returns with the exact sum;
    # an exit waits for it (one log line per rank) and every rank exits 0
    testbed "destroy_process_group with an all_reduce in flight, 3 workers" --engine soft --workers 3 \
      --placement 2,0,1 --keep "$work/destroy" --torch "$here/check_exit.py" destroy
    testbed "exit with an all_reduce in flight, 3 workers" --engine soft --workers 3 --placement 1,2,0 \
      --keep "$work/exit" --torch "$here/check_exit.py" exit
    n=$(grep -c "testbed: panama_torch: waiting at exit (at most 60 s) for 1 all_reduce(s) of job" "$work/out")
    [ "$n" = 1 ] || { echo "FAIL: the exit handler's line 'waiting at exit (at most 60 s) for 1 all_reduce(s)' was printed $n times (1 expected: testbed prints each distinct line once)"; exit 1; }
    # The all_reduce in flight ran to its end: the stand-in's final counters (kept by the testbed)
    # show every rank's port admitting the same vectors, all completed, none dropped, and as many
    # as the same 3,000,000-element call completed in the destroy run (the only call either run
    # sent to the accelerator: the barriers go to Gloo).
    /usr/bin/python3 - "$work/exit/counters.sw.json" "$work/destroy/counters.sw.json" <<'PY' || exit 1
import json, sys
def done(path):
    c = json.load(open(path))["accelerator"]
    return (sum(x["vectors_completed"] for x in c["contexts"]), sum(x["vectors_dropped"] for x in c["contexts"]),
            sorted({p["agg_admitted"] for p in c["ports"] if p["rx_frames"]}))
(n, dropped, admitted), (want, _, _) = done(sys.argv[1]), done(sys.argv[2])
print(f"the stand-in's contexts completed {n} vectors (the destroy run's call: {want}), dropped {dropped}; "
      f"admitted per port {admitted}")
if not (admitted == [n] and dropped == 0 and n == want > 0):
    print("FAIL: the all_reduce in flight at exit did not complete on the accelerator")
    sys.exit(1)
PY
    echo "every rank waited at exit for its all_reduce in flight (logged), it completed, and every rank exited 0" ;;
  *) echo "netns.sh: unknown case $case_"; exit 2 ;;
esac
echo "PASS: $case_"
