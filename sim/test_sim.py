#!/usr/bin/python3
"""Validation of panama-dcsim against analytic cases (ctest label ns3; docs/sim.md).

usage: test_sim.py CASE PANAMA_DCSIM

Every expected value is computed here from first principles (link rate, header sizes, hop
counts, the design's config.json), never read back from the simulator's own output.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DESIGN = os.path.join(HERE, "..", "rtl_out", "p4_10g_200mhz", "config.json")
GBPS = 10e9
PPP = 2        # point-to-point header
IP = 20
TCP = 32       # 20 + the timestamp option
UDP = 8
MSS = 1448     # TCP segment payload (the simulator's setting)
AGG_HDR = 24   # the aggregation header inside the UDP payload
HOP_DELAY = 1e-6
FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILS.append(what)


def run(binary, *args, workload="legacy"):
    """One run's results.json. The analytic cases use the legacy workload (a fixed set of jobs at
    t = 0, --load the background alone), in which their expectations are defined."""
    with tempfile.TemporaryDirectory() as d:
        cmd = [binary, "--quiet", "--out", d, "--workload", workload, *map(str, args)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            print(p.stdout, p.stderr)
            check(False, "exit status 0 from " + " ".join(cmd))
            return None
        with open(os.path.join(d, "results.json")) as f:
            return json.load(f)


def design():
    with open(DESIGN) as f:
        return json.load(f)


def within(x, expect, tol):
    return abs(x - expect) <= tol * expect


def flow_line_rate(b):
    size = 8_000_000
    r = run(b, "--single-flow", size, "--load", 0)
    if not r:
        return
    f = r["flows"][0]
    check(f["fct_s"] is not None, "the flow completes")
    # k = 4, host 0 to host 15: different pods, 6 links each way.
    hops = 6
    seg_wire = MSS + TCP + IP + PPP
    serial = math.ceil(size / MSS) * seg_wire * 8 / GBPS
    rtt = 2 * hops * HOP_DELAY + hops * seg_wire * 8 / GBPS
    expect = serial + rtt
    goodput = size * 8 / f["fct_s"]
    print(f"fct {f['fct_s']:.6f} s, expected size/rate + RTT = {expect:.6f} s; "
          f"goodput {goodput / 1e9:.3f} Gb/s")
    check(within(f["fct_s"], expect, 0.05), "FCT = size/rate + RTT within 5 %")
    check(goodput >= 0.95 * GBPS * MSS / seg_wire, "one flow alone reaches line rate (95 %)")
    check(f["sent_bytes"] == size and f["recv_bytes"] == size, "bytes counted at both ends")
    # Every segment crosses the 6 links; the receiver ACKs every second one (delayed ACKs), so the
    # links carry at most 1.6 packets per segment, handshake included (2 with an ACK per segment).
    segs = math.ceil(size / MSS)
    e = r["engine"]
    print(f"engine: {e['events']} events, {e['packet_hops']} packet-hops ({segs} segments)")
    check(hops * segs < e["packet_hops"] <= hops * 1.6 * segs, "packet-hops: every segment, an ACK per two")
    check(e["events"] > e["packet_hops"], "events counted")
    # One segment: the FCT is the handshake's round trip (SYN and SYN-ACK, small packets: 2 x 6
    # hop delays, their serialisation under 1 us) and the segment's one-way trip, stored and
    # forwarded at every hop: 6 x (serialisation + hop delay), 25.2 us. The 8 MB flow's FCT
    # hides this term inside its 5 %; here it is the whole.
    r1 = run(b, "--single-flow", MSS, "--load", 0)
    if not r1:
        return
    one = 2 * hops * HOP_DELAY + hops * (seg_wire * 8 / GBPS + HOP_DELAY)
    f1 = r1["flows"][0]["fct_s"]
    print(f"one segment: fct {f1 if f1 is None else f'{f1 * 1e6:.3f} us'}, expected {one * 1e6:.3f} us")
    check(f1 is not None and within(f1, one, 0.05), "one segment: handshake RTT + one-way trip within 5 %")


def accel_figures(b):
    d = design()
    expect_gbps = d["ports"] * d["gbps"]
    expect_lat = d["agg_latency"] / (d["mhz"] * 1e6)
    # Saturate one accelerator: all 16 servers of k = 4 in one job on one tree, fixed window.
    r = run(b, "--scheme", "panama-nocc", "--no-background", "--jobs", 1, "--workers-min", 16,
            "--workers-max", 16, "--job-fraction", 1, "--trees", 1, "--model-bytes", 4e6, "--compute-s", 0,
            "--iterations", 1, "--accel-buffer-mb", 0, "--design", DESIGN, "--aggregation", "core")
    if not r:
        return
    check(abs(r["design"]["throughput_gbps"] - expect_gbps) < 1e-9,
          f"the model's accelerator throughput is the design's {expect_gbps} Gb/s")
    check(abs(r["design"]["latency_s"] - expect_lat) < 1e-15,
          f"the model's per-frame latency is the design's {expect_lat * 1e9:.1f} ns")
    check(r["design"]["buffer_bytes"] == d["buffer_bytes"] and
          r["design"]["contexts"] == d["contexts"], "buffer and contexts from the design")
    a = r["accelerators"][0]
    rate = a["rx_bytes"] * 8 / (a["last_rx_s"] - a["first_rx_s"])
    frame = d["max_elems"] * d["elem_bytes"] + AGG_HDR + UDP
    expect_rate = expect_gbps * 1e9 * frame / (frame + IP + PPP)
    print(f"measured accelerator input {rate / 1e9:.2f} Gb/s of UDP payload, "
          f"expected {expect_rate / 1e9:.2f}")
    check(within(rate, expect_rate, 0.05), "a saturated accelerator takes in its throughput")
    # The latency: one vector, two workers under one edge switch, one tree. The path is
    # host-edge-agg-core-accel and back (4 links each way), every frame the same size.
    r = run(b, "--no-background", "--jobs", 1, "--workers-min", 2, "--workers-max", 2,
            "--trees", 1, "--model-bytes", 1000, "--compute-s", 0, "--iterations", 1,
            "--design", DESIGN, "--aggregation", "core")
    if not r:
        return
    wire = d["max_elems"] * d["elem_bytes"] + AGG_HDR + UDP + IP + PPP
    ser, ser_acc = wire * 8 / GBPS, wire * 8 / (expect_gbps * 1e9)
    # Up: both contributions cross their host links at once, then queue one behind the other on
    # the edge's uplink: the second reaches the accelerator one 10G frame time later.
    up = 3 * (ser + HOP_DELAY) + ser + ser_acc + HOP_DELAY
    # Down: the two results leave back to back and share the core-agg-edge path, so the second
    # worker's result arrives one 10G frame time after the first.
    down = ser_acc + HOP_DELAY + 3 * (ser + HOP_DELAY) + ser
    expect = up + expect_lat + down
    t = r["jobs"][0]["iteration_s"][0]
    print(f"one vector: {t * 1e9:.1f} ns, expected {expect * 1e9:.1f} ns "
          f"(of which the pipeline latency {expect_lat * 1e9:.1f} ns)")
    check(abs(t - expect) < 5e-9, "one vector's round trip = links + the design's latency (5 ns)")


def ring_alone(b):
    n, size = 4, 8e6
    r = run(b, "--scheme", "ring", "--no-background", "--jobs", 1, "--workers-min", n,
            "--workers-max", n, "--model-bytes", size, "--compute-s", 0, "--iterations", 2)
    if not r:
        return
    seg_wire = MSS + TCP + IP + PPP
    # Each server's uplink carries its own segments and the ACKs (one per segment) of the
    # segments it receives from its predecessor.
    ack_wire = TCP + IP + PPP
    expect = 2 * (n - 1) / n * size * 8 / GBPS * (seg_wire + ack_wire) / MSS
    t = r["jobs"][0]["iteration_s"]
    print(f"ring iterations {t} s, expected 2(N-1)/N S/B = {expect:.6f} s")
    # The first iteration also opens the connections and leaves slow start.
    check(within(t[-1], expect, 0.05), "a lone ring all-reduce takes 2(N-1)/N S/B within 5 %")


def panama_alone(b):
    n, size = 4, 4e6
    d = design()
    r = run(b, "--scheme", "panama", "--no-background", "--jobs", 1, "--workers-min", n,
            "--workers-max", n, "--model-bytes", size, "--compute-s", 0.001, "--iterations", 1,
            "--aggregation", "core")
    if not r:
        return
    payload = d["max_elems"] * d["elem_bytes"]
    wire = payload + AGG_HDR + UDP + IP + PPP
    vectors = math.ceil(size / payload)
    latency = d["agg_latency"] / (d["mhz"] * 1e6)
    rtt = 2 * 4 * (HOP_DELAY + wire * 8 / GBPS)
    expect = 0.001 + vectors * wire * 8 / GBPS + latency + rtt
    t = r["jobs"][0]["iteration_s"][0]
    print(f"panama iteration {t:.6f} s, expected compute + S/B + latency = {expect:.6f} s")
    check(within(t, expect, 0.05), "a lone PANAMA all-reduce takes S/B + pipeline latency")


def panama_hier(b):
    """Hierarchical aggregation: 8 workers of k = 4 (hosts 0-7: four edge switches, two pods),
    so every tree has an accelerator at 4 edges, 2 aggregation switches and 1 core."""
    d = design()
    n, levels = 8, 3
    latency = d["agg_latency"] / (d["mhz"] * 1e6)
    wire = d["max_elems"] * d["elem_bytes"] + AGG_HDR + UDP + IP + PPP
    ser, ser_acc = wire * 8 / GBPS, wire * 8 / (d["ports"] * d["gbps"] * 1e9)
    # One vector, one tree. At each level two children's frames reach the switch at the same
    # instant and queue one behind the other on the accelerator's link (2 ser_acc); the partial
    # sum goes back through the switch (ser_acc) and one 10G link up. The root's result is
    # replicated by the switches: core, aggregation, edge switch, host (4 links), every worker at
    # the same instant.
    host_up = ser + HOP_DELAY
    into_acc = 2 * ser_acc + HOP_DELAY
    acc_to_next = ser_acc + HOP_DELAY + ser + HOP_DELAY
    down = ser_acc + HOP_DELAY + 3 * (ser + HOP_DELAY)
    one = host_up + levels * (into_acc + latency) + (levels - 1) * acc_to_next + down
    r = run(b, "--no-background", "--jobs", 1, "--workers-min", n, "--workers-max", n, "--trees", 1,
            "--model-bytes", 1000, "--compute-s", 0, "--iterations", 1, "--design", DESIGN)
    if not r:
        return
    t = r["jobs"][0]["iteration_s"][0]
    print(f"one vector through {levels} levels: {t * 1e9:.1f} ns, expected {one * 1e9:.1f} ns "
          f"(of which {levels} pipeline latencies {levels * latency * 1e9:.1f} ns)")
    check(abs(t - one) < 5e-9, "one vector = links + one pipeline latency per level (5 ns)")
    levels_seen = sorted({a["level"] for a in r["accelerators"]})
    check(levels_seen == ["agg", "core", "edge"], f"accelerators used at {levels_seen}")
    rx = {lv: sum(a["rx_frames"] for a in r["accelerators"] if a["level"] == lv)
          for lv in levels_seen}
    # Each accelerator gets one frame per child: 8 workers, 4 edge sums, 2 pod sums.
    check(rx == {"edge": 8, "agg": 4, "core": 2}, f"frames per level {rx} (edge 8, agg 4, core 2)")
    # Multicast: the core's links carry the result once per pod, not once per worker.
    down_frames = r["links"]["agg-core"]["tx_bytes"] / (wire - PPP)
    check(abs(down_frames - 4) < 1e-9,
          f"agg-core frames {down_frames:g} (2 partial sums up, 2 results down)")
    # A lone all-reduce of 4 MB: compute + S / B + one vector's trip (its latencies included).
    size, compute = 4e6, 0.001
    r = run(b, "--scheme", "panama", "--no-background", "--jobs", 1, "--workers-min", n,
            "--workers-max", n, "--model-bytes", size, "--compute-s", compute, "--iterations", 1)
    if not r:
        return
    vectors = math.ceil(size / (d["max_elems"] * d["elem_bytes"]))
    expect = compute + vectors * ser + one
    t = r["jobs"][0]["iteration_s"][0]
    print(f"hierarchical all-reduce {t:.6f} s, expected compute + S/B + latencies = {expect:.6f} s")
    check(within(t, expect, 0.05), "a lone hierarchical PANAMA all-reduce takes S/B + latencies")
    # ECN OR through every level: one tree, a fixed window, a lower marking threshold, and
    # background flows that mark some racks' contributions more than others'. A partial sum
    # carries CE when any of its inputs did, so each level receives at least the marked sums its
    # children sent, the root marks at least as many vectors as any accelerator below it (and
    # more than the least-marked rack: not an AND), and every marked result reaches all the
    # workers (one multicast frame, replicated by the switches). The uneven marking is that of
    # the earlier versions' background draw (--legacy-flows).
    size = 1e6
    r = run(b, "--scheme", "panama-nocc", "--load", 0.5, "--duration", 0.002, "--jobs", 1,
            "--workers-min", n, "--workers-max", n, "--trees", 1, "--model-bytes", size,
            "--compute-s", 0, "--iterations", 1, "--ecn-k", 30, "--legacy-flows")
    if not r:
        return
    acc = r["accelerators"]
    lv = {x: [a for a in acc if a["level"] == x] for x in ("edge", "agg", "core")}
    tx = {x: sum(a["tx_ce"] for a in lv[x]) for x in lv}
    rx = {x: sum(a["rx_ce"] for a in lv[x]) for x in lv}
    root = lv["core"][0]["tx_ce"]
    job = r["jobs"][0]
    edge_tx = [a["tx_ce"] for a in lv["edge"]]
    print(f"CE frames in {rx}, out {tx}, per edge {edge_tx}, root {root}; results with CE at the "
          f"workers {job['results_ce']} of {job['results']}")
    check(rx["edge"] > 0, "contributions were marked below the edge accelerators")
    check(rx["agg"] >= tx["edge"] and rx["core"] >= tx["agg"],
          "every marked partial sum arrives marked")
    check(all(root >= a["tx_ce"] for a in lv["edge"] + lv["agg"]) and root > min(edge_tx),
          "the root marks every vector marked anywhere below it (OR)")
    vectors = math.ceil(size / (d["max_elems"] * d["elem_bytes"]))
    check(job["results"] == n * vectors and job["results_ce"] >= n * root,
          "every result, and every marked one, reaches all the workers")


def conservation(b, scheme="panama"):
    r = run(b, "--preset", "smoke", "--scheme", scheme)
    if not r:
        return
    check(r["complete"], "the run completes")
    flows = r["flows"]
    check(len(flows) > 0, f"{len(flows)} background flows")
    check(all(f["fct_s"] is not None for f in flows), "every flow completes")
    check(all(f["sent_bytes"] == f["size_bytes"] == f["recv_bytes"] for f in flows),
          "no flow byte lost or invented (sent = received = size)")
    check(all(len(j["iteration_s"]) >= 1 for j in r["jobs"]) and len(r["jobs"]) > 0,
          f"{len(r['jobs'])} jobs, each with at least one iteration")
    check(r["undecodable"] == 0, "no frame the receivers could not place")
    # --job-fraction 0.5: jobs on half the servers from t = 0 until after the window, none waiting.
    sm = r["summary"]
    check(sm["jobs_placed"] == sm["jobs"] == len(r["jobs"]) and sm["job_wait_mean_s"] == 0,
          "every job placed at once")
    check(abs(sm["server_occupancy"] - 0.5) < 1e-9, f"server occupancy {sm['server_occupancy']} = 0.5")
    print(json.dumps(r["summary"]))


def paper_load(b):
    """The paper workload offers what --load asks: background 0.2 of the server links, jobs
    arriving at the rate that makes the total 0.4, measured on the server uplinks over the
    measurement window (payload bytes). Flow sizes uniform in 100 KB - 1 MB and one small job
    size keep the Poisson noise of this 16-server run small (about 700 flows and 470 jobs: a
    standard deviation of about 2 % of the total), so that 10 % tests the rates, not the luck."""
    load, bg = 0.4, 0.2
    with tempfile.TemporaryDirectory() as d:
        cdf = os.path.join(d, "uniform.cdf")
        with open(cdf, "w") as f:
            f.write("100000 0\n1000000 1\n")
        r = run(b, "--k", 4, "--load", load, "--background", bg, "--cdf", cdf,
                "--model-bytes", 2e5, "--compute-s", 1e-4, "--workers-min", 2, "--workers-max", 2,
                "--iterations", 2, "--duration", 0.1, "--warmup", 0.02, workload="paper")
    if not r:
        return
    m = r["load"]
    print(f"measured load {json.dumps(m)}; jobs {len(r['jobs'])}, flows {len(r['flows'])}")
    check(abs(m["total"] - load) <= 0.1 * load, f"total offered load {m['total']:.3f} within 10 % of {load}")
    check(abs(m["background"] - bg) <= 0.1 * bg, f"background {m['background']:.3f} within 10 % of {bg}")
    check(r["unroutable_drops"] == 0 and r["undecodable"] == 0, "nothing unroutable or undecodable")


def warm_start(b):
    """--warm-start adds the background flows still running at t = 0, as if they had arrived
    before it at the same rate and run at line rate: with one flow size S, their number is Poisson
    with mean background x servers (Little's law: arrival rate x S / line rate) and what they have
    left is uniform on (0, S], mean S / 2. Four seeds at k = 8 (64 expected each), and the flows
    after t = 0 are those of a run without it. A warm flow keeps the class of its drawn size: with
    --short-bytes 0.6 S every one is long, though many have less than 0.6 S left."""
    size, bg, servers, seeds = 1e5, 0.5, 128, 4
    count, left = 0, []
    with tempfile.TemporaryDirectory() as d:
        cdf = os.path.join(d, "one.cdf")
        with open(cdf, "w") as f:
            f.write(f"{size:.0f} 0\n{size:.0f} 1\n")
        args = ["--k", 8, "--load", bg, "--background", bg, "--cdf", cdf, "--no-jobs", "--warmup", 1e-4,
                "--duration", 2e-4, "--max-time", 0.05, "--short-bytes", 0.6 * size]
        for seed in range(1, seeds + 1):
            r = run(b, *args, "--seed", seed, "--warm-start", workload="paper")
            if not r:
                return
            warm = [f for f in r["flows"] if f["warm"]]
            count += len(warm)
            left += [f["size_bytes"] for f in warm]
            check(all(f["start_s"] < 1e-6 and not f["measured"] for f in warm), f"seed {seed}: warm flows start at 0, unmeasured")
            check(all(f["kind"] == "long" and f.get("drawn_bytes") == size for f in warm),
                  f"seed {seed}: warm flows are long (drawn {size:.0f} bytes), whatever is left")
            if seed == 1:
                cold = run(b, *args, "--seed", seed, workload="paper")
                key = lambda f: (round(f["start_s"], 12), f["src"], f["dst"], f["size_bytes"])
                check(sorted(map(key, (f for f in r["flows"] if not f["warm"]))) == sorted(map(key, cold["flows"])),
                      "the flows after t = 0 are those of a run without --warm-start")
    expect = bg * servers * seeds
    mean_left = sum(left) / len(left) if left else 0
    print(f"warm flows {count} (expected {expect:.0f}), mean left {mean_left / size:.3f} S (expected 0.5), "
          f"{sum(x < 0.6 * size for x in left)} with less than the short threshold left")
    check(sum(x < 0.6 * size for x in left) > 0, "some warm flows have less than --short-bytes left (the class check bites)")
    check(abs(count - expect) <= 0.2 * expect, "their number within 20 % of background x servers (3 sd)")
    check(all(0 < x <= size for x in left) and abs(mean_left / size - 0.5) <= 0.05,
          "what they have left in (0, S], mean within 0.05 S of S / 2 (3 sd)")


SCHEMES = ("panama", "ring", "switchml", "panama-nocc", "panama-0.88", "panama-0.94", "ideal")


def same_workload(b):
    """Every scheme of a seed sees the same flows (arrival, endpoints, size) and the same jobs
    (arrival, workers, model, its bytes and compute time); the ideal scheme's three clusters
    together too. Jobs of 2-4 workers, so that the drawn sizes can differ."""
    seen = {}
    for scheme in SCHEMES:
        r = run(b, "--preset", "smoke", "--scheme", scheme, "--seed", 3, "--workers-min", 2, "--workers-max", 4,
                workload="paper")
        if not r:
            return
        flows = sorted((f["id"], round(f["start_s"], 12), f["src"], f["dst"], f["size_bytes"])
                       for f in r["flows"])
        jobs = [(round(j["arrival_s"], 12), j["workers"], j["model"], j["model_bytes"], j["compute_s"])
                for j in r["jobs"]]
        seen[scheme] = (flows, jobs)
        placed = [j for j in r["jobs"] if j["start_s"] is not None]
        print(f"{scheme}: {len(flows)} flows, {len(jobs)} jobs ({len(placed)} placed), "
              f"load {r['load']['total']:.3f}")
        check(r["complete"], f"{scheme}: the run completes")
        check(all(f["fct_s"] is not None and f["sent_bytes"] == f["size_bytes"] == f["recv_bytes"]
                  for f in r["flows"]), f"{scheme}: every flow completes with its bytes")
        check(all(len(j["iteration_s"]) >= 1 for j in placed), f"{scheme}: every placed job iterates")
        check(r["undecodable"] == 0 and r["unroutable_drops"] == 0, f"{scheme}: no frame lost to decoding or routing")
    ref = seen["panama"]
    check(len(ref[0]) > 0 and len(ref[1]) > 0, "the seed draws flows and jobs")
    check(len({j[1] for j in ref[1]}) > 1, "the jobs' worker counts differ (the draw is compared, not a constant)")
    for scheme, v in seen.items():
        check(v[0] == ref[0], f"{scheme}: the same flows as panama")
        check(v[1] == ref[1], f"{scheme}: the same jobs as panama")


def quorum(b):
    """PANAMA-0.88's quorum is the job's: with 9 workers (ceil(0.88 x 9) = 8) and worker 0
    computing 5 ms longer, panama waits for it every iteration, panama-0.88 goes on without it
    (its contributions ignored, and counted)."""
    n, compute, slow, size = 9, 0.001, 0.005, 2e6
    d = design()
    comm = size / (d["max_elems"] * d["elem_bytes"]) * (d["max_elems"] * d["elem_bytes"] + AGG_HDR + UDP + IP + PPP) * 8 / GBPS
    res = {}
    for scheme in ("panama", "panama-0.88"):
        r = run(b, "--scheme", scheme, "--no-background", "--jobs", 1, "--job-fraction", 1,
                "--workers-min", n, "--workers-max", n, "--model-bytes", size, "--compute-s", compute,
                "--iterations", 2, "--slow-worker-s", slow)
        if not r:
            return
        res[scheme] = r["jobs"][0]
        print(f"{scheme}: iterations {res[scheme]['iteration_s']}, ignored (unsent) "
              f"{res[scheme]['unsent_contributions']}, late frames {res[scheme]['late_frames']}")
    vectors = math.ceil(size / (d["max_elems"] * d["elem_bytes"]))
    for scheme in res:
        check(len(res[scheme]["iteration_s"]) == 2, f"{scheme}: both iterations measured")
    p, q = res["panama"]["iteration_s"], res["panama-0.88"]["iteration_s"]
    check(all(compute + slow + comm <= t <= 1.1 * (compute + slow + comm) for t in p),
          f"panama waits for the slow worker: compute + delay + S/B ({1e3 * (compute + slow + comm):.2f} ms) "
          "to 10 % above it")
    check(all(t < compute + slow for t in q),
          "panama-0.88 finishes each iteration before the slow worker has computed")
    check(len(q) == 2 and compute + comm <= q[1] <= 1.15 * (compute + comm),
          f"panama-0.88's second iteration (windows open): compute + S/B ({1e3 * (compute + comm):.2f} ms) to 15 % "
          "above it")
    check(res["panama"]["unsent_contributions"] == 0, "panama ignores no contribution")
    check(res["panama-0.88"]["unsent_contributions"] == 2 * vectors,
          f"panama-0.88 ignores the slow worker's every vector of both iterations ({2 * vectors})")


def cli(b):
    """The command-line convention: --help exits 0; an unknown flag or a bad value exits 2 with
    one line on stderr and nothing on stdout."""
    p = subprocess.run([b, "--help"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0 and "--design" in p.stdout and p.stderr == "",
          f"--help exits 0 (got {p.returncode}) with the options on stdout")
    for bad in (["--no-such-flag"], ["--load", "2"], ["--scheme", "nonesuch"]):
        p = subprocess.run([b, *bad], capture_output=True, text=True, timeout=60)
        lines = p.stderr.splitlines()
        print(f"{' '.join(bad)}: exit {p.returncode}, stderr {lines}")
        check(p.returncode == 2 and len(lines) == 1 and lines[0].strip() and p.stdout == "",
              f"{' '.join(bad)}: exit 2 with one line on stderr")
    # --compute-scale multiplies the model's compute time after --model-scale: ResNet-50's 0.29 s
    # (sim/data/models.txt) x 0.01 x 0.25. The fig8 preset's default is 0.1.
    r = run(b, "--preset", "smoke", "--model", "ResNet50", "--model-scale", 0.01, "--compute-scale", 0.25,
            "--no-background", workload="paper")
    got = {j["compute_s"] for j in r["jobs"]}
    print(f"compute_s of the jobs: {sorted(got)}; config {r['config'].get('compute_scale')}")
    check(r["jobs"] and all(abs(c - 0.29 * 0.01 * 0.25) < 1e-12 for c in got), "compute 0.29 x 0.01 x 0.25 s")


def main():
    case, binary = sys.argv[1], sys.argv[2]
    if not os.access(binary, os.X_OK):
        print("no panama-dcsim: skipped")
        return 77
    if case.startswith("smoke_"):
        conservation(binary, case[len("smoke_"):])
    else:
        {"flow_line_rate": flow_line_rate, "accel_figures": accel_figures,
         "ring_alone": ring_alone, "panama_alone": panama_alone, "panama_hier": panama_hier,
         "conservation": conservation, "cli": cli, "paper_load": paper_load,
         "same_workload": same_workload, "quorum": quorum, "warm_start": warm_start}[case](binary)
    print(f"{case}: {'FAIL' if FAILS else 'pass'}")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
