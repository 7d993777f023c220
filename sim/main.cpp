// panama-dcsim: a packet-level ns-3 simulation of a shared fat-tree cluster with background
// DCTCP flows and data-parallel training jobs that all-reduce through PANAMA accelerators, a
// ring over TCP, or SwitchML*-style aggregation (docs/sim.md).
#include "results.h"
#include "sim.h"

#include <CLI/CLI.hpp>

#include "cli_parse.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using namespace dcsim;

namespace {

void add_options(CLI::App& app, Options& o) {
  app.add_option("--preset", o.preset,
                 "smoke (k=4), paper (k=16), or one of the paper's experiments: fig8 (k=8 load sweep point), "
                 "fig9 (load balance), fig10 (fairness); docs/sim.md \"Presets\"")
      ->check(CLI::IsMember({"smoke", "paper", "fig8", "fig9", "fig10"}));
  app.add_option("--scheme", o.scheme)
      ->check(CLI::IsMember({"panama", "ring", "switchml", "panama-nocc", "panama-0.88", "panama-0.94", "ideal"}));
  app.add_option("--workload", o.workload,
                 "paper: Poisson job arrivals, --load the total (background + training) offered load; "
                 "legacy: jobs at t = 0 filling --job-fraction, --load the background alone")
      ->check(CLI::IsMember({"paper", "legacy"}));
  app.add_option("--load", o.load, "offered load per server link, 0..1 (see --workload)")->check(CLI::Range(0.0, 1.0));
  app.add_option("--background", o.background, "paper workload: the background's share of --load")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--warmup", o.warmup, "flows and iterations that start before this are not measured (s)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--slow-worker-s", o.slow_worker_s, "worker 0 of every job computes this much longer")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--quorum-hold-us", o.quorum_hold_us,
                 "panama-0.88/0.94: how long an accelerator below the root waits for its last children")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--mcast-ecn", o.mcast_ecn,
                 "copy: a worker reacts to its own copy's CE; root: only to the root's mark (in the header)")
      ->check(CLI::IsMember({"copy", "root"}));
  app.add_flag("--legacy-flows", o.legacy_flows,
               "draw the background from ns-3's streams as earlier versions did (one CDF)");
  app.add_option("--tcp-msl-s", o.tcp_msl_s, "TCP maximum segment lifetime (TIME_WAIT = 2 MSL)")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", o.seed)->check(CLI::PositiveNumber);
  app.add_option("--ecmp-salt", o.ecmp_salt,
                 "the switches' ECMP hash salt: another draw of the up-paths for the same flows (0: the default)");
  app.add_option("--duration", o.duration, "simulated seconds in which work starts")->check(CLI::PositiveNumber);
  app.add_option("--k", o.k, "fat-tree arity (even, >= 2)");
  app.add_option("--gbps", o.gbps, "link rate")->check(CLI::PositiveNumber);
  app.add_option("--link-delay-us", o.link_delay_us)->check(CLI::NonNegativeNumber);
  app.add_option("--ecn-k", o.ecn_k, "ECN marking threshold, packets")->check(CLI::PositiveNumber);
  app.add_option("--queue-pkts", o.queue_pkts, "queue capacity per port")->check(CLI::PositiveNumber);
  app.add_option("--cdf", o.cdf,
                 "websearch, datamining, both (each half the background load), or a CDF file "
                 "(default: paper workload both, legacy websearch)");
  app.add_option("--data-dir", o.data_dir, "folder of the data files (default: next to sim/)");
  app.add_option("--design", o.design,
                 "DIR: a generated design folder (reads DIR/config.json), or a config.json file "
                 "(default: " PANAMA_SIM_DESIGN ")")
      ->envname("PANAMA_DESIGN");
  app.add_option("--accel-buffer-mb", o.accel_buffer_mb,
                 "accelerator buffer, MB (the paper's 64); 0 keeps the design's")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--trees", o.trees, "aggregation trees per job")->check(CLI::PositiveNumber);
  app.add_option("--jobs", o.jobs, "number of jobs (default: fill --job-fraction)");
  app.add_option("--workers-min", o.workers_min)->check(CLI::Range(2, kMaxWorkers));
  app.add_option("--workers-max", o.workers_max)->check(CLI::Range(2, kMaxWorkers));
  app.add_option("--job-fraction", o.job_fraction)->check(CLI::Range(0.0, 1.0));
  app.add_option("--model-scale", o.model_scale, "scales model sizes and compute times")->check(CLI::PositiveNumber);
  app.add_option("--compute-scale", o.compute_scale,
                 "multiplies every model's compute time again (after --model-scale): < 1 models faster GPUs")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--model", o.model, "use this model for every job");
  app.add_option("--model-bytes", o.model_bytes, "a custom job's gradient bytes")->check(CLI::PositiveNumber);
  app.add_option("--compute-s", o.compute_s, "a custom job's compute time")->check(CLI::NonNegativeNumber);
  app.add_option("--window-cap", o.window_cap)->check(CLI::PositiveNumber);
  app.add_option("--short-bytes", o.short_bytes, "flows below this are short")->check(CLI::PositiveNumber);
  app.add_option("--single-flow", o.single_flow, "bytes: one flow, host 0 to the last host")
      ->check(CLI::PositiveNumber);
  app.add_flag("--no-background", o.no_background);
  app.add_flag("--no-jobs", o.no_jobs);
  app.add_option("--iterations", o.iterations,
                 "iterations per job (paper workload default 5; legacy default 0: until --duration)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-time", o.max_time, "hard stop, simulated seconds")->check(CLI::PositiveNumber);
  app.add_option("--rto-ms", o.rto_ms, "aggregation repair timeout")->check(CLI::PositiveNumber);
  app.add_option("--tcp-min-rto-ms", o.tcp_min_rto_ms, "TCP's minimum retransmission timeout")
      ->check(CLI::PositiveNumber);
  app.add_option("--aggregation", o.aggregation,
                 "hier: accelerators at every switch of a job's tree, results multicast by the switches; "
                 "core: at the core only, results unicast")
      ->check(CLI::IsMember({"hier", "core"}));
  app.add_option("--job-at", o.job_at, "one job, arriving at this time (s), instead of Poisson arrivals")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--long-flows", o.long_flows,
                 "N long flows from t = 0, from the free servers of a spread job's racks to the other half "
                 "of the cluster, instead of the background")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--long-flow-bytes", o.long_flow_bytes, "size of each --long-flows flow")->check(CLI::PositiveNumber);
  app.add_option("--placement", o.placement, "close: as close together as possible; spread: one server per rack")
      ->check(CLI::IsMember({"close", "spread"}));
  app.add_option("--only-tree", o.only_tree, "a job on the I-th of its --trees trees alone (0-based)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--warm-start,!--no-warm-start", o.warm_start,
               "start with the background flows that arrived before t = 0 still running (fig8: on)");
  app.add_flag("--stop-after-jobs", o.stop_after_jobs, "end the run when every job has left (open flows are cut)");
  app.add_option("--series-ms", o.series_ms, "time series of --series-host's sent payload per class, bin in ms")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--series-host", o.series_host, "the server of --series-ms")->check(CLI::NonNegativeNumber);
  app.add_option("--out", o.out, "write DIR/results.json");
}

// The paper's experiments (docs/sim.md "Presets"): their settings, each unless given on the
// command line.
void apply_figure_preset(const CLI::App& app, Options& o) {
  auto set = [&](const char* flag, auto& field, auto value) {
    if (app.count(flag) == 0) field = value;
  };
  if (o.preset == "fig8") {
    // One point of Fig. 8 at k = 8: 1 % models computing 10x faster than a P100 (docs/sim.md
    // "Jobs"), 3 iterations per job, a 50 ms warm-up (longer than a job's life) and 150 ms of
    // measurement (about 1,750 short flows per seed).
    set("--k", o.k, 8);
    set("--model-scale", o.model_scale, 0.01);
    set("--compute-scale", o.compute_scale, 0.1);  // GPUs 10x a P100: jobs that can offer the load
    set("--iterations", o.iterations, 3);
    set("--warm-start", o.warm_start, true);
    set("--duration", o.duration, 0.2);
    set("--warmup", o.warmup, 0.05);
  } else if (o.preset == "fig9") {
    // Load balance: one 8-worker job (4 MB, no compute: every iteration is one all-reduce) spread
    // one worker per rack at k = 4 from 2 ms, beside --long-flows long flows from t = 0; 3
    // iterations, the first (connection set-up, window ramp) not measured.
    set("--k", o.k, 4);
    set("--placement", o.placement, std::string("spread"));
    set("--workers-min", o.workers_min, 8);
    set("--workers-max", o.workers_max, 8);
    set("--job-at", o.job_at, 0.002);
    set("--long-flows", o.long_flows, 0);
    set("--model-bytes", o.model_bytes, 4e6);
    set("--compute-s", o.compute_s, 0.0);
    set("--iterations", o.iterations, 3);
    set("--warmup", o.warmup, 0.0025);
    set("--duration", o.duration, 1.0);
    o.stop_after_jobs = true;
  } else if (o.preset == "fig10") {
    // Fairness: one TCP flow from server 0 to the last server from t = 0, and a 4-worker job
    // (server 0 among them; 10 MB, no compute) from 0.25 s until 0.5 s; 5 ms bins of server 0's
    // uplink, the bottleneck both share.
    set("--k", o.k, 4);
    set("--single-flow", o.single_flow, 1e12);
    set("--workers-min", o.workers_min, 4);
    set("--workers-max", o.workers_max, 4);
    set("--job-at", o.job_at, 0.25);
    set("--model-bytes", o.model_bytes, 10e6);
    set("--compute-s", o.compute_s, 0.0);
    set("--iterations", o.iterations, 1000000);
    set("--duration", o.duration, 0.5);
    set("--warmup", o.warmup, o.job_at);
    set("--series-ms", o.series_ms, 5.0);
    o.stop_after_jobs = true;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"panama-dcsim: PANAMA in a shared fat-tree cluster (ns-3); docs/sim.md"};
  add_options(app, o);
  bool quiet = false;
  app.add_flag("--quiet", quiet, "no progress bar");
  if (const auto code = panama::parse_command_line(app, argc, argv, "panama-dcsim")) return *code;
  o.progress = !quiet;

  try {
    apply_figure_preset(app, o);
    const bool smoke = o.preset == "smoke";
    if (o.k < 0) o.k = smoke ? 4 : 16;
    if (o.k < 2 || o.k % 2 || o.k > 64) throw std::runtime_error("--k must be even, 2..64");
    const bool paper_wl = o.workload == "paper";
    // The paper workload's smoke run is longer than the legacy one's, so that jobs arrive.
    if (o.duration < 0) o.duration = smoke ? (paper_wl ? 0.02 : 0.005) : 1.0;
    const int servers = o.k * o.k * o.k / 4;
    const bool paper = o.workload == "paper";
    // The paper's 16-96 workers of 1,024 servers; at another size the same share of the cluster
    // (at least 2), unless the preset (smoke: 4) or the command line says otherwise.
    const bool scaled = !smoke && paper && o.k != 16;
    if (o.workers_min < 0)
      o.workers_min = smoke ? 4 : scaled ? std::max(2, static_cast<int>(std::lround(16.0 * servers / 1024))) : 16;
    if (o.workers_max < 0)
      o.workers_max = smoke    ? 4
                      : scaled ? std::max(o.workers_min, static_cast<int>(std::lround(96.0 * servers / 1024)))
                               : 96;
    o.workers_max = std::min(o.workers_max, servers);
    o.workers_min = std::min(o.workers_min, o.workers_max);
    if (o.iterations < 0) o.iterations = paper ? (smoke ? 2 : 5) : 0;
    if (paper && o.iterations == 0) throw std::runtime_error("the paper workload needs --iterations >= 1");
    if (o.warmup < 0) o.warmup = paper ? 0.2 * o.duration : 0;
    if (o.warmup >= o.duration) throw std::runtime_error("--warmup must be below --duration");
    if (o.cdf.empty()) o.cdf = paper ? "both" : "websearch";
    if (o.only_tree >= std::min(o.trees, o.k * o.k / 4))
      throw std::runtime_error("--only-tree must be below --trees and the number of cores");
    if (o.workers_max < o.workers_min) throw std::runtime_error("--workers-max is below --workers-min");
    if (o.model_scale < 0) o.model_scale = smoke ? 0.005 : 1.0;
    if (o.max_time < 0) o.max_time = 20 * o.duration + 2;
    if (o.data_dir.empty()) {
      // The data files sit in the source tree's sim/data; the build records where.
      o.data_dir = PANAMA_SIM_DATA;
    }
    std::vector<std::string> cdf_paths;
    for (const std::string& c :
         o.cdf == "both" ? std::vector<std::string>{"websearch", "datamining"} : std::vector<std::string>{o.cdf})
      cdf_paths.push_back(c == "websearch" || c == "datamining" ? o.data_dir + "/" + c + ".cdf" : c);
    std::vector<Cdf> cdfs;
    for (const auto& c : cdf_paths) cdfs.push_back(load_cdf(c));
    auto models = load_models(o.data_dir + "/models.txt");
    const Workload wl = make_workload(o, servers, cdfs, models);
    // k = 16 (8 servers per rack, any preset) uses the 8-port 10G design the build generates.
    if (o.design.empty()) o.design = o.k == 16 ? PANAMA_SIM_DESIGN_K16 : PANAMA_SIM_DESIGN;
    Design d = load_design(o.design);
    if (o.accel_buffer_mb > 0) d.buffer_bytes = o.accel_buffer_mb * 1e6;
    std::string out_dir = o.out;
    if (!out_dir.empty()) {
      std::error_code ec;
      if (::access(out_dir.c_str(), W_OK) != 0 && ::mkdir(out_dir.c_str(), 0755) != 0)
        throw std::runtime_error("cannot create " + out_dir);
    }

    json r;
    const std::string& s = o.scheme;
    auto run = [&](Options oo, Design dd) {
      Sim sim(std::move(oo), std::move(dd), wl, models);
      if (s == "ring")
        sim.scheme(true, true, 1);
      else if (s == "switchml" || s == "panama-nocc")
        sim.scheme(false, false, 1);
      else if (s == "panama-0.88")
        sim.scheme(false, true, 0.88);
      else if (s == "panama-0.94")
        sim.scheme(false, true, 0.94);
      else
        sim.scheme(false, true, 1);
      return sim.run();
    };
    if (s == "switchml") {
      // The aggregation runs in the switch's own pipeline: as fast as all of its ports.
      d.ports = o.k;
      d.gbps = o.gbps;
    }
    if (s == "ideal") {
      // Three separate clusters, each with the same workload's part: the short flows alone, the
      // long flows alone, the jobs (PANAMA) alone.
      Options a = o, b = o, c = o;
      a.no_jobs = b.no_jobs = true;
      a.flow_class = 1;
      b.flow_class = 2;
      c.no_background = true;
      json ra = run(a, d), rb = run(b, d), rc = run(c, d);
      r = ra;
      for (const auto& f : rb["flows"]) r["flows"].push_back(f);
      std::stable_sort(r["flows"].begin(), r["flows"].end(),
                       [](const json& x, const json& y) { return x["id"].get<int>() < y["id"].get<int>(); });
      r["jobs"] = rc["jobs"];
      r["accelerators"] = rc["accelerators"];
      r["links_long"] = rb["links"];
      r["links_jobs"] = rc["links"];
      for (const char* k : {"background", "training", "total"})
        r["load"][k] = ra["load"][k].get<double>() + rb["load"][k].get<double>() + rc["load"][k].get<double>();
      r["load"]["fabric"] = {
          {"short", ra["load"]["fabric"]}, {"long", rb["load"]["fabric"]}, {"jobs", rc["load"]["fabric"]}};
      for (const char* k : {"undecodable", "stale_frames", "unroutable_drops"})
        r[k] = ra[k].get<uint64_t>() + rb[k].get<uint64_t>() + rc[k].get<uint64_t>();
      for (const char* k : {"events", "packet_hops"})
        r["engine"][k] =
            ra["engine"][k].get<uint64_t>() + rb["engine"][k].get<uint64_t>() + rc["engine"][k].get<uint64_t>();
      r["complete"] = ra["complete"].get<bool>() && rb["complete"].get<bool>() && rc["complete"].get<bool>();
      r["sim_end_s"] =
          std::max({ra["sim_end_s"].get<double>(), rb["sim_end_s"].get<double>(), rc["sim_end_s"].get<double>()});
    } else {
      r = run(o, d);
    }
    r["summary"] = summary(r, o.short_bytes, servers);
    if (r.contains("series") && !r["series"]["fairness"].is_null()) {
      r["summary"]["jain"] = r["series"]["fairness"]["jain"];
      r["summary"]["shared_gbps"] = {r["series"]["fairness"]["background_gbps"],
                                     r["series"]["fairness"]["training_gbps"]};
    }
    r["config"] = {{"preset", o.preset},
                   {"scheme", o.scheme},
                   {"workload", o.workload},
                   {"load", o.load},
                   {"background", paper ? std::min(o.background, o.load) : o.load},
                   {"warmup_s", o.warmup},
                   {"iterations", o.iterations},
                   {"workers", {o.workers_min, o.workers_max}},
                   {"job_rate_per_s", wl.job_rate},
                   {"jobs_offered", wl.jobs.size()},
                   {"mcast_ecn", o.mcast_ecn},
                   {"slow_worker_s", o.slow_worker_s},
                   {"quorum_hold_us", o.quorum_hold_us},
                   {"seed", o.seed},
                   {"ecmp_salt", o.ecmp_salt},
                   {"duration_s", o.duration},
                   {"k", o.k},
                   {"servers", servers},
                   {"gbps", o.gbps},
                   {"ecn_k", o.ecn_k},
                   {"queue_pkts", o.queue_pkts},
                   {"cdf", cdf_paths},
                   {"trees", o.trees},
                   {"aggregation", o.aggregation},
                   {"model_scale", o.model_scale},
                   {"compute_scale", o.compute_scale},
                   {"warm_start", o.warm_start},
                   {"short_bytes", o.short_bytes},
                   {"placement", o.placement},
                   {"only_tree", o.only_tree},
                   {"job_at_s", o.job_at},
                   {"long_flows", o.long_flows},
                   {"series_ms", o.series_ms},
                   {"stop_after_jobs", o.stop_after_jobs},
                   {"design", o.design}};
    std::cout << o.scheme << " load " << o.load << " seed " << o.seed << ": " << r["summary"].dump() << "\n";
    if (!out_dir.empty()) {
      const std::string path = out_dir + "/results.json", tmp = path + ".tmp";
      {
        std::ofstream f(tmp);
        f << r.dump(1) << "\n";
        if (!f) throw std::runtime_error("cannot write " + tmp);
      }
      if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
    }
    return r["complete"].get<bool>() ? 0 : 3;
  } catch (const std::exception& e) {
    std::cerr << "panama-dcsim: " << e.what() << "\n";
    return 2;
  }
}
