#!/usr/bin/python3
"""The figure presets of panama-dcsim (ctest label ns3; docs/sim.md "Presets").

fig10: the fairness preset, shortened (the job from 10 ms, until 50 ms, 1 ms bins): a TCP flow
alone fills server 0's uplink; once the job shares it, PANAMA's congestion control leaves the TCP
flow a share (Jain's index of the two classes >= 0.9), PANAMA without it (panama-nocc) starves
the TCP flow (under 10 % of the link). fig9: the load-balance preset's scenario: the spread job's
servers, the long flows' endpoints (free servers, other pods), four trees on four cores, and
--only-tree I the I-th of them alone. k16_design CONFIG: the paper preset reads the 8-port design
the build generated.

fig9_salts: scripts/simulate-fig fig9 --salts runs each salt into its folder, and its summary is the
mean over the salts with the 95 % Student-t interval (t = 4.303 for three), by their definition;
on three made-up salts (1, 2, 3 ms) it is the value worked out by hand. Skipped (77) without
matplotlib or numpy, as merge_plot.

merge_plot: scripts/simulate-merge pools two seeds of the smoke preset as the issue asks (the p99
of every measured short flow of both, an incomplete one infinitely slow) and simulate-plot draws
the single-load bars with their intervals.

usage: test_figs.py fig10|fig9|fig9_salts|merge_plot PANAMA_DCSIM
       test_figs.py k16_design PANAMA_DCSIM CONFIG_JSON
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

from test_sim import AGG_HDR, DESIGN, FAILS, IP, PPP, UDP, check, run as run_any  # noqa: E402  (this folder is on sys.path)

GBPS = 10.0
PAYLOAD = GBPS * 1448 / (1448 + 32 + 20 + 2)  # TCP payload rate of a 10 Gb/s link, Gb/s


def run(binary, *args):
    """One run's results.json, the presets being of the paper workload."""
    return run_any(binary, *args, workload="paper")


def fig10(b):
    job_at, end, bin_s = 0.01, 0.05, 0.001
    res = {}
    for scheme in ("panama", "panama-nocc"):
        r = run(b, "--preset", "fig10", "--scheme", scheme, "--job-at", job_at, "--duration", end,
                "--series-ms", bin_s * 1e3)
        if not r:
            return
        s = r["series"]
        res[scheme] = s
        fa = s["fairness"]
        print(f"{scheme}: {json.dumps(fa)}; job on {r['jobs'][0]['hosts']}")
        check(r["complete"] and r["jobs"][0]["hosts"][0] == s["host"] == 0,
              f"{scheme}: the run completes, the job includes server 0 (the bottleneck's sender)")
        alone = s["background_gbps"][1:int(job_at / bin_s)]
        check(min(alone) >= 0.95 * PAYLOAD and max(s["training_gbps"][:int(job_at / bin_s)]) == 0,
              f"{scheme}: before the job the TCP flow alone fills the link (min {min(alone):.2f} Gb/s)")
        check(abs(fa["from_s"] - job_at) < 1e-9 and abs(fa["to_s"] - end) < 1e-9, "shared period = [job, end)")
        total = fa["background_gbps"] + fa["training_gbps"]
        check(total >= 0.9 * PAYLOAD, f"{scheme}: the shared link stays busy ({total:.2f} Gb/s)")
    p, n = res["panama"]["fairness"], res["panama-nocc"]["fairness"]
    check(p["jain"] >= 0.9, f"panama: Jain's index {p['jain']:.3f} >= 0.9")
    check(p["background_gbps"] >= 0.25 * PAYLOAD,
          f"panama: the TCP flow keeps at least a quarter of the link ({p['background_gbps']:.2f} Gb/s)")
    check(n["background_gbps"] < 0.1 * PAYLOAD,
          f"panama-nocc: the TCP flow's share collapses ({n['background_gbps']:.2f} Gb/s)")
    check(n["jain"] < 0.6, f"panama-nocc: Jain's index {n['jain']:.3f} < 0.6")


def fig9(b):
    """The load-balance scenario, shortened to 2 iterations of 0.5 MB: the scenario is what the
    preset says; its effect is docs/sim.md's run."""
    k = 4
    common = ["--preset", "fig9", "--model-bytes", 5e5, "--iterations", 2]
    r4 = run(b, *common, "--long-flows", 8)
    if not r4:
        return
    job = r4["jobs"][0]
    hosts = list(range(0, k ** 3 // 4, k // 2))  # one per rack: the first server of each
    check(job["hosts"] == hosts, f"spread placement: {job['hosts']} = {hosts}")
    flows = r4["flows"]
    check(len(flows) == 8, f"{len(flows)} long flows")
    check(all(f["src"] not in hosts and f["dst"] not in hosts for f in flows),
          "long flows between servers the job does not use")
    per_pod = (k // 2) ** 2
    check(all(f["src"] // per_pod != f["dst"] // per_pod for f in flows), "each long flow crosses pods")
    check(all(f["fct_s"] is None for f in flows), "the long flows last the job (cut when it leaves)")
    roots = job["roots"]
    check(len(roots) == 4 and len(set(roots)) == 4, f"four trees on four cores: {roots}")
    check(r4["complete"] and len(job["iteration_s"]) == 2, "the run stops after the job's 2 iterations")
    for i in (1, 3):
        r1 = run(b, *common, "--long-flows", 0, "--only-tree", i)
        if not r1:
            return
        check(r1["jobs"][0]["roots"] == [roots[i]], f"--only-tree {i}: {r1['jobs'][0]['roots']} = [{roots[i]}]")
        check(r1["jobs"][0]["hosts"] == hosts, f"--only-tree {i}: the same servers")
    # --ecmp-salt draws other up-paths for the same flows (the figure's seeds): 0 is the default;
    # the others keep the job, its trees and the flows, and move the flows, so tree 1 alone beside
    # 8 long flows meets other congestion (a different all-reduce time for some salt).
    one = ["--long-flows", 8, "--only-tree", 1]
    base = run(b, *common, *one)
    if not base:
        return
    times = {}
    for salt in range(4):
        r = run(b, *common, *one, "--ecmp-salt", salt)
        if not r:
            return
        check(r["config"]["ecmp_salt"] == salt, f"salt {salt} recorded")
        check([(f["src"], f["dst"]) for f in r["flows"]] == [(f["src"], f["dst"]) for f in base["flows"]]
              and r["jobs"][0]["hosts"] == base["jobs"][0]["hosts"] and r["jobs"][0]["roots"] == base["jobs"][0]["roots"],
              f"salt {salt}: the same flows, servers and tree")
        times[salt] = tuple(r["jobs"][0]["iteration_s"])
    print("tree 1 alone, 8 senders, iterations by salt (ms): " +
          ", ".join(f"{s}: " + "/".join(f"{x * 1e3:.3f}" for x in t) for s, t in times.items()))
    check(base["config"]["ecmp_salt"] == 0 and times[0] == tuple(base["jobs"][0]["iteration_s"]),
          "without --ecmp-salt the run is salt 0's")
    check(len(set(times.values())) >= 2, "another salt, other paths: the all-reduce time changes")


def k16_design(b, config):
    """k = 16 (the paper preset, or fig8 at --k 16) runs on the 8-port 10G design the build generated (config), not
    the checked-in 4-port one: its throughput is 8 x 10 Gb/s, one port per server of a rack."""
    with open(config) as f:
        c = json.load(f)
    r = run(b, "--preset", "paper", "--no-background", "--no-jobs", "--duration", 1e-4)
    if not r:
        return
    d = r["design"]
    print(f"design {json.dumps(d)}")
    check(os.path.samefile(d["path"], config), f"the paper preset reads {config}")
    check(c["ports"] == 16 // 2 and c["gbps"] == GBPS, "the generated design: k/2 = 8 ports of 10 Gb/s")
    check(abs(d["throughput_gbps"] - c["ports"] * c["gbps"]) < 1e-9, f"throughput {d['throughput_gbps']} Gb/s")
    check(abs(d["latency_s"] - c["agg_latency"] / (c["mhz"] * 1e6)) < 1e-15, "latency = agg_latency / clock")
    check(d["contexts"] == c["contexts"], "contexts as generated")
    # Every preset at k = 16 (8 servers per rack) takes it: the fig8 point at the paper's size.
    r8 = run(b, "--preset", "fig8", "--k", 16, "--no-background", "--no-jobs", "--duration", 1e-4, "--warmup", 0)
    if r8:
        check(os.path.samefile(r8["design"]["path"], config), f"fig8 at --k 16 reads {config} too")
    # Measured at k = 16: one 8-worker job fills a rack, its edge accelerator aggregates all 8
    # servers sending at line rate (no congestion control, one tree, 4 MB). The 8-port design takes
    # their 8 x 10 Gb/s; the 4-port 40 Gb/s design in its place would halve them. Expected: the
    # design's throughput times the UDP payload's share of a frame, within 5 %.
    for path in (config, DESIGN):
        with open(path) as f:
            dz = json.load(f)
        r = run_any(b, "--k", 16, "--design", path, "--scheme", "panama-nocc", "--no-background", "--jobs", 1,
                    "--workers-min", 8, "--workers-max", 8, "--trees", 1, "--model-bytes", 4e6, "--compute-s", 0,
                    "--iterations", 1, "--accel-buffer-mb", 0)
        if not r:
            return
        acc = [a for a in r["accelerators"] if a["rx_bytes"] > 0]
        frame = dz["max_elems"] * dz["elem_bytes"] + AGG_HDR + UDP
        want = dz["ports"] * dz["gbps"] * frame / (frame + IP + PPP)
        got = acc[0]["rx_bytes"] * 8 / (acc[0]["last_rx_s"] - acc[0]["first_rx_s"]) / 1e9 if len(acc) == 1 else 0
        print(f"{dz['ports']}-port design at k = 16: the rack's accelerator takes in {got:.2f} Gb/s (expected "
              f"{want:.2f})")
        check(len(acc) == 1 and acc[0]["level"] == "edge" and abs(got - want) <= 0.05 * want,
              f"{dz['ports']} ports of {dz['gbps']} Gb/s: one edge accelerator takes in its throughput within 5 %")


def merge_plot(b):
    scripts = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts")
    with tempfile.TemporaryDirectory() as d:
        fcts = []
        for seed in (1, 2):
            out = os.path.join(d, f"panama_s{seed}")
            p = subprocess.run([b, "--quiet", "--preset", "smoke", "--load", "0.6", "--seed", str(seed), "--out", out],
                               capture_output=True, text=True, timeout=600)
            if p.returncode not in (0, 3):
                check(False, f"smoke seed {seed} ran (exit {p.returncode}: {p.stderr.strip()})")
                return
            with open(os.path.join(out, "results.json")) as f:
                r = json.load(f)
            fcts += [math.inf if x["fct_s"] is None else x["fct_s"] for x in r["flows"]
                     if x["measured"] and x["size_bytes"] < r["config"]["short_bytes"]]
        for tool in ("simulate-merge", "simulate-plot"):
            p = subprocess.run(["/usr/bin/python3", os.path.join(scripts, tool), d], capture_output=True, text=True,
                               timeout=300)
            check(p.returncode == 0, f"{tool} exits 0 ({p.stderr.strip()[-200:]})")
        with open(os.path.join(d, "merged.json")) as f:
            row = json.load(f)["table"][0]
        fcts.sort()
        want = fcts[max(0, math.ceil(0.99 * len(fcts)) - 1)] if fcts else None
        got = row["short_fct_p99_pooled"]
        print(f"{len(fcts)} short flows pooled; p99 {want} (merge: {got}, CI {row['short_fct_p99_lo']}-"
              f"{row['short_fct_p99_hi']})")
        check(row["seeds"] == 2 and row["short_flows_pooled"] == len(fcts) > 0, "both seeds' short flows pooled")
        check(want is not None and (got is None if math.isinf(want) else abs(got - want) < 1e-12),
              "the pooled p99 is the ceil(0.99 n)-th smallest of them")
        lo, hi = row["short_fct_p99_lo"], row["short_fct_p99_hi"]
        check(got is None or (lo is not None and lo <= got <= (hi if hi is not None else math.inf)),
              "the interval holds the p99")
        check(all(os.path.getsize(os.path.join(d, f)) > 1000 for f in ("panels.png", "fct.png", "load.png")), "the panels drawn")


def fig9_salts(b):
    fig = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "simulate-fig")
    env = dict(os.environ, PANAMA_BUILD=os.path.dirname(os.path.dirname(os.path.abspath(b))))
    short = ["--", "--model-bytes", "5e5", "--iterations", "2"]
    with tempfile.TemporaryDirectory() as d:
        for bad in (["--salts", "0,x"], ["--salts", "1,1"], ["--salts", str(2 ** 32)], ["--", "--ecmp-salt", "2"],
                    ["--", "--ecmp-salt=2"]):
            p = subprocess.run(["/usr/bin/python3", fig, "fig9", "--out", os.path.join(d, "bad"), *bad], env=env,
                               capture_output=True, text=True, timeout=60)
            check(p.returncode != 0 and "simulate-fig:" in p.stderr and not os.path.exists(os.path.join(d, "bad")),
                  f"{' '.join(bad)}: one error, nothing run")
        p = subprocess.run(["/usr/bin/python3", fig, "fig9", "--out", d, "--senders", "4", "--variants", "tree1",
                            "--salts", "0,1,2", *short], env=env, capture_output=True, text=True, timeout=300)
        check(p.returncode == 0, f"simulate-fig fig9 --salts 0,1,2 exits 0 ({p.stderr.strip()[-200:]})")
        if p.returncode:
            return
        vals = []
        for salt in (0, 1, 2):
            base = d if salt == 0 else os.path.join(d, f"salt{salt}")
            with open(os.path.join(base, "senders4", "tree1", "results.json")) as f:
                r = json.load(f)
            check(r["config"]["ecmp_salt"] == salt, f"salt {salt}'s folder holds a run with --ecmp-salt {salt}")
            vals.append(r["summary"]["iteration_mean_s"] * 1e3)
        with open(os.path.join(d, "fig9_summary.csv")) as f:
            rows = list(csv.DictReader(f))
        check(len(rows) == 1 and rows[0]["salts"] == "0 1 2", f"one point over the three salts: {rows}")
        m = sum(vals) / 3
        h = 4.303 * (sum((v - m) ** 2 for v in vals) / 2) ** 0.5 / 3 ** 0.5
        got = [float(rows[0][k]) for k in ("allreduce_ms_mean", "ci_lo", "ci_hi")]
        print(f"tree 1 alone by salt: {', '.join(f'{v:.4f}' for v in vals)} ms; summary {got}, expected "
              f"{m:.4f} ({m - h:.4f}-{m + h:.4f})")
        check(all(abs(g - w) < 2e-4 for g, w in zip(got, (m, m - h, m + h))), "mean and 95 % t-interval over the salts")
    with tempfile.TemporaryDirectory() as d:
        fig9_summary_known_answer(fig, d)


def fig9_summary_known_answer(fig, d):
    """simulate-fig's summary on three made-up salts of 1, 2 and 3 ms: mean 2 ms, 95 % interval
    2 -/+ t(0.975, 2) x 1 / sqrt(3) = 2 -/+ 4.303 x 0.57735 (by hand: -0.4843, 4.4843)."""
    for salt, ms in ((0, 1.0), (1, 2.0), (2, 3.0)):
        pt = os.path.join(d, *([] if salt == 0 else [f"salt{salt}"]), "senders4", "tree1")
        os.makedirs(pt)
        with open(os.path.join(pt, "results.json"), "w") as f:
            json.dump({"summary": {"iteration_mean_s": ms / 1e3, "iterations": 2}, "jobs": [{"roots": [2]}]}, f)
    p = subprocess.run(["/usr/bin/python3", fig, "plot", d], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"simulate-fig plot on made-up salts exits 0 ({p.stderr.strip()[-200:]})")
    with open(os.path.join(d, "fig9_summary.csv")) as f:
        rows = list(csv.DictReader(f))
    got = [float(rows[0][k]) for k in ("allreduce_ms_mean", "ci_lo", "ci_hi", "min", "max")] if len(rows) == 1 else []
    print(f"made-up salts 1, 2, 3 ms: summary {got}")
    check(len(got) == 5 and all(abs(g - w) < 1e-4 for g, w in zip(got, (2.0, -0.4843, 4.4843, 1.0, 3.0))),
          "mean 2, interval (-0.4843, 4.4843), range 1-3 ms")


def main():
    case, binary = sys.argv[1], sys.argv[2]
    if not os.access(binary, os.X_OK):
        print("no panama-dcsim: skipped")
        return 77
    if case in ("fig9_salts", "merge_plot"):  # the scripts draw with matplotlib, merge with numpy
        try:
            import matplotlib  # noqa: F401
            import numpy  # noqa: F401
        except ImportError as e:
            print(f"{case}: skipped: {e} (python3-matplotlib, python3-numpy)")
            return 77
    if case == "k16_design":
        k16_design(binary, sys.argv[3])
    else:
        {"fig10": fig10, "fig9": fig9, "fig9_salts": fig9_salts, "merge_plot": merge_plot}[case](binary)
    print(f"{case}: {'FAIL' if FAILS else 'pass'}")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
