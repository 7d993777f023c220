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
  double duration = -1;  // simulated seconds in which flows and iterations start
  int k = -1;
  double gbps = 10;
  double link_delay_us = 1;
  int ecn_k = 85;
  int queue_pkts = 1000;
  std::string cdf = "websearch";
  std::string data_dir;
  std::string design;
  double accel_buffer_mb = 64;  // the paper's accelerator buffer; 0 keeps the design's
  int trees = 4;
  int jobs = -1;
  int workers_min = -1, workers_max = -1;
  double job_fraction = 0.5;
  double model_scale = -1;
  std::string model;                       // fixed model name (else drawn by weight)
  double model_bytes = 0, compute_s = -1;  // a custom job (validation)
  int window_cap = 64;
  double short_bytes = 40e6;
  double single_flow = 0;  // bytes: one flow from host 0 to the last host, nothing else
  bool no_background = false, no_jobs = false;
  int iterations = 0;  // stop each job after this many iterations (0: duration decides)
  double max_time = -1;
  double rto_ms = 1;
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

// `where`: a generated design folder (its config.json is read) or a config.json.
Design load_design(const std::string& where);

}  // namespace dcsim
