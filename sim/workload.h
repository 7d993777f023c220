// panama-dcsim's inputs: the command-line options, the flow-size CDFs, the models of the jobs, and
// the accelerator's figures read from a generated design (docs/sim.md).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dcsim {

struct Options {
  std::string preset = "smoke";
  std::string scheme = "panama";
  double load = 0.5;
  uint32_t seed = 1;
  uint32_t ecmp_salt = 0;  // the switches' ECMP hash salt (0: the default paths)
  double duration = -1;    // simulated seconds in which flows and iterations start
  int k = -1;
  double gbps = 10;
  double link_delay_us = 1;
  int ecn_k = 85;
  int queue_pkts = 1000;
  // paper: jobs arrive (Poisson) so that background + training = --load; legacy: a fixed set of
  // jobs at t = 0 filling --job-fraction, --load the background alone (docs/sim.md "Workload").
  std::string workload = "paper";
  double background = 0.2;         // paper workload: the background's share of the server links
  double warmup = -1;              // flows and iterations that start before this are not measured
  std::string cdf;                 // websearch, datamining, both (half the background load each), FILE
  double quorum_hold_us = 100;     // partial sync: how long an accelerator below the root waits
  double slow_worker_s = 0;        // worker 0 of every job computes this much longer per iteration
  std::string mcast_ecn = "copy";  // copy: each multicast copy's own CE; root: the root's mark only
  bool warm_start = false;         // background flows that arrived before t = 0 (docs/sim.md "Window")
  bool legacy_flows = false;       // the background drawn as earlier versions did (ns-3 streams)
  int flow_class = 0;              // 0 all flows, 1 short ones only, 2 long ones only (ideal)
  std::string data_dir;
  std::string design;
  double accel_buffer_mb = 64;  // the paper's accelerator buffer; 0 keeps the design's
  int trees = 4;
  int jobs = -1;
  int workers_min = -1, workers_max = -1;
  double job_fraction = 0.5;
  double model_scale = -1;
  double compute_scale = 1;                // multiplies compute times on top of --model-scale (faster GPUs: < 1)
  std::string model;                       // fixed model name (else drawn by weight)
  double model_bytes = 0, compute_s = -1;  // a custom job (validation)
  int window_cap = 64;
  double short_bytes = 40e6;
  double single_flow = 0;  // bytes: one flow from host 0 to the last host, nothing else
  // The figure presets' scenarios (docs/sim.md "Presets"): one job arriving at --job-at instead of
  // Poisson arrivals; --long-flows N long flows from t = 0 crossing the fabric from the racks of a
  // --placement spread job; --only-tree I: a job on the I-th of its --trees trees alone; the run
  // stops when every job has left (--stop-after-jobs); a throughput time series per class.
  double job_at = -1;
  int long_flows = -1;
  double long_flow_bytes = 1e12;
  std::string placement = "close";  // close: as close together as possible; spread: one per rack
  int only_tree = -1;
  bool stop_after_jobs = false;
  double series_ms = 0;  // bin of the time series of --series-host's sent payload per class; 0: none
  int series_host = 0;
  bool no_background = false, no_jobs = false;
  int iterations = -1;  // per job (legacy 0: until --duration; paper default 5)
  double max_time = -1;
  double rto_ms = 1;
  double tcp_msl_s = 0.002;          // TCP's maximum segment lifetime (TIME_WAIT is 2 MSL)
  double tcp_min_rto_ms = 5;         // the background's and the ring's TCP minimum RTO
  std::string aggregation = "hier";  // hier: at every switch of the tree; core: at the root only
  std::string out;
  bool progress = true;
};

struct Cdf {
  std::vector<std::pair<double, double>> pts;  // (bytes, cumulative probability), increasing
  double mean() const {
    double m = 0;
    for (size_t i = 1; i < pts.size(); ++i)
      m += (pts[i].second - pts[i - 1].second) * (pts[i].first + pts[i - 1].first) / 2;
    return m;
  }
  double max() const { return pts.back().first; }
  double sample(double u) const {
    for (size_t i = 1; i < pts.size(); ++i)
      if (u <= pts[i].second) {
        const double span = pts[i].second - pts[i - 1].second;
        const double f = span > 0 ? (u - pts[i - 1].second) / span : 1;
        return pts[i - 1].first + f * (pts[i].first - pts[i - 1].first);
      }
    return pts.back().first;
  }
};

// The data files: '#' starts a comment, blank lines are skipped.
std::vector<std::string> data_lines(const std::string& path);
Cdf load_cdf(const std::string& path);

// The workload, drawn up front from the seed alone (std::mt19937_64, never ns-3's streams), so
// that every scheme of a seed sees the same flows and the same jobs at the same times.
struct FlowArrival {
  double t = 0;
  int src = 0, dst = 0;
  uint64_t size = 0;
  int cdf = 0;  // index into the CDFs used
  // --warm-start: a flow that arrived before t = 0 and starts at 0 with what it would still have
  // to send; drawn is its size as drawn (its class: short or long).
  bool warm = false;
  uint64_t drawn = 0;
  uint64_t class_size() const { return warm ? drawn : size; }
};

struct JobArrival {
  double t = 0;
  int workers = 0;
  int model = -1;  // index into the models; -1: the custom model (--model-bytes)
};

struct Model {
  std::string name;
  double bytes = 0, compute_s = 0, weight = 1;
};

std::vector<Model> load_models(const std::string& path);

// The accelerator's figures, from a generated design's config.json (panama::Config). The
// simulation may change them: --accel-buffer-mb, and SwitchML* (the switch's own pipeline).
struct Design {
  std::string path;
  double gbps = 0;
  int ports = 0;
  double mhz = 0;
  int agg_latency = 0;
  double buffer_bytes = 0;
  int contexts = 0;
  int max_elems = 0;
  int elem_bytes = 0;
  double throughput_bps() const { return ports * gbps * 1e9; }
  double latency_s() const { return agg_latency / (mhz * 1e6); }
  uint32_t payload() const { return static_cast<uint32_t>(max_elems * elem_bytes); }
};

struct Workload {
  std::vector<FlowArrival> flows;
  std::vector<JobArrival> jobs;
  double job_rate = 0;        // jobs per second (paper workload)
  double job_bytes_mean = 0;  // E[workers x model bytes x iterations]
  double flow_rate = 0;       // flows per second, all CDFs
};

// Draws the flows (until --duration) and the jobs; `servers` from --k.
Workload make_workload(const Options& o, int servers, const std::vector<Cdf>& cdfs, const std::vector<Model>& models);

// The servers a --placement spread job of n workers takes when all are free: one per rack, the
// racks spread evenly (rack floor(i x racks / n)), the first server of each.
std::vector<int> spread_hosts(int n, int k);

// `where`: a generated design folder (its config.json is read) or a config.json.
Design load_design(const std::string& where);

}  // namespace dcsim
