#!/usr/bin/env bash
# Functional coverage by outcome: across the conformance traffic and the regression scenarios,
# every drop reason and every other counter of accelerator.md rule 10 is reached, in both the
# RTL and the model, and both context modes build frames. (rx_error needs tuser on a received
# frame, which pcap replay cannot express; the parser's testbench covers it.)
# usage: rtl_coverage.sh BUILD_DIR WORK CONFORMANCE_DIR
set -euo pipefail
build=$1; work=$2; conf=$3
[ -d "$conf" ] || { echo "FAIL: no conformance vectors at $conf (the repository's tests/conformance)"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
"$build/panama-gen" --ports 4 --gbps 10 --mhz 200 --out "$work/rtl" >/dev/null
runs=()
for engine in rtl model; do
  "$build/panama-sim" replay --rtl "$work/rtl" --engine $engine --contexts "$conf/ctx.json" --in-dir "$conf/in" \
    --out-dir "$work/conf_$engine"
  runs+=("$work/conf_$engine")
  for sc in mixed faults timeout; do for seed in 1 2; do
    t=$work/t_${sc}_$seed
    [ -d "$t" ] || "$build/panama-sim" gen-traffic --rtl "$work/rtl" --scenario $sc --seed $seed --vectors 24 --out-dir "$t"
    "$build/panama-sim" replay --rtl "$work/rtl" --engine $engine --contexts "$t/ctx.json" --in-dir "$t/in" \
      --out-dir "$work/${engine}_${sc}_$seed" --seed $seed
    runs+=("$work/${engine}_${sc}_$seed")
  done; done
done
python3 - "$conf" "$work" "${runs[@]}" <<'PY'
import json, os, sys
conf, work, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
total = {"rtl": {}, "model": {}}
modes = {"rtl": set(), "model": set()}
for d in runs:
    name = os.path.basename(d)
    if name.startswith("conf_"):
        engine, ctx_path = name[5:], conf + "/ctx.json"
    else:
        engine, rest = name.split("_", 1)
        ctx_path = work + "/t_" + rest + "/ctx.json"
    c = json.load(open(d + "/counters.json"))
    for p in c["ports"]:
        for k, v in p.items():
            total[engine][k] = total[engine].get(k, 0) + v
    entries = json.load(open(ctx_path))["contexts"]
    for x, e in zip(c["contexts"], entries):
        if x["vectors_completed"]:
            modes[engine].add(e["mode"])
missing = []
for engine in ("rtl", "model"):
    missing += [f"{engine}: {k}" for k, v in total[engine].items() if k != "rx_error" and v == 0]
    missing += [f"{engine}: {m} mode" for m in ("multicast", "upstream") if m not in modes[engine]]
    print(engine, " ".join(f"{k}={v}" for k, v in total[engine].items()))
if missing:
    print("not reached:", ", ".join(missing))
    sys.exit(1)
print("every counter of rule 10 reached in both engines, both modes built frames (rx_error: parser testbench)")
PY
