// The results of one run (results.json) and their summary.
#include "sim.h"

#include "results.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace dcsim {

json Sim::results() {
  json out;
  json flows = json::array();
  for (const auto& f : flows_)
    flows.push_back({{"kind", f.size < o_.short_bytes ? "short" : "long"},
                     {"size_bytes", f.size},
                     {"start_s", f.start},
                     {"fct_s", f.fct >= 0 ? json(f.fct) : json(nullptr)},
                     {"src", f.src},
                     {"dst", f.dst},
                     {"sent_bytes", f.sent},
                     {"recv_bytes", f.recv}});
  out["flows"] = flows;
  json jobs = json::array();
  for (const auto& job : jobs_)
    jobs.push_back({{"id", job.id},
                    {"workers", job.workers.size()},
                    {"model", job.model},
                    {"model_bytes", job.bytes},
                    {"compute_s", job.compute_s},
                    {"roots", job.roots},
                    {"iteration_s", job.iter_s},
                    {"results", job.results},
                    {"results_ce", job.results_ce}});
  out["jobs"] = jobs;

  json links;
  const double t = std::max(sim_end_, 1e-12);
  for (const auto& [layer, qs] : layer_q_) {
    uint64_t bytes = 0, marks = 0, drops = 0;
    for (const auto& q : qs) {
      const auto& s = q->GetStats();
      bytes += s.nTotalSentBytes;
      marks += s.nTotalMarkedPackets;
      drops += s.nTotalDroppedPackets;
    }
    links[layer] = {{"tx_bytes", bytes},
                    {"utilisation", bytes * 8.0 / (layer_bps_[layer] * t)},
                    {"ecn_marks", marks},
                    {"drops", drops}};
  }
  uint64_t dev_drops = 0;
  for (const auto& d : devs_) dev_drops += DynamicCast<PointToPointNetDevice>(d)->GetQueue()->GetTotalDroppedPackets();
  links["device_queue_drops"] = dev_drops;
  out["links"] = links;
  json acc = json::array();
  for (const auto& a : acc_) {
    if (a.st.rx_frames == 0) continue;
    acc.push_back({{"level", a.level == ps::Role::edge  ? "edge"
                             : a.level == ps::Role::agg ? "agg"
                                                        : "core"},
                   {"core", a.core},
                   {"rx_frames", a.st.rx_frames},
                   {"rx_bytes", a.st.rx_bytes},
                   {"tx_frames", a.st.tx_frames},
                   {"first_rx_s", a.st.first_rx},
                   {"last_rx_s", a.st.last_rx},
                   {"first_tx_s", a.st.first_tx},
                   {"last_tx_s", a.st.last_tx},
                   {"late", a.st.late},
                   {"duplicates", a.st.dup},
                   {"overflow", a.st.overflow},
                   {"repairs_answered", a.st.resent},
                   {"max_open_vectors", a.st.max_open},
                   {"rx_ce", a.st.rx_ce},
                   {"tx_ce", a.st.tx_ce}});
  }
  out["accelerators"] = acc;
  out["design"] = {{"path", design_.path},
                   {"throughput_gbps", design_.throughput_bps() / 1e9},
                   {"latency_s", design_.latency_s()},
                   {"buffer_bytes", design_.buffer_bytes},
                   {"contexts", design_.contexts},
                   {"payload_bytes", design_.payload()}};
  out["sim_end_s"] = sim_end_;
  out["complete"] = stopped_;
  out["undecodable"] = undecodable_;
  return out;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p * v.size())) - 1);
  return v[i];
}

json summary(const json& r, double short_bytes) {
  std::vector<double> short_fct, long_tput, iters;
  int open = 0;
  for (const auto& f : r["flows"]) {
    if (f["fct_s"].is_null()) {
      ++open;
      continue;
    }
    const double fct = f["fct_s"].get<double>();
    if (f["size_bytes"].get<double>() < short_bytes)
      short_fct.push_back(fct);
    else
      long_tput.push_back(f["size_bytes"].get<double>() * 8 / fct / 1e9);
  }
  for (const auto& j : r["jobs"])
    for (const auto& t : j["iteration_s"]) iters.push_back(t.get<double>());
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? std::nan("") : s / v.size();
  };
  auto num = [](double x) { return std::isnan(x) ? json(nullptr) : json(x); };
  return {{"flows", r["flows"].size()},
          {"flows_incomplete", open},
          {"short_flows", short_fct.size()},
          {"short_fct_p99_s", num(percentile(short_fct, 0.99))},
          {"short_fct_mean_s", num(mean(short_fct))},
          {"long_flows", long_tput.size()},
          {"long_throughput_gbps_mean", num(mean(long_tput))},
          {"iterations", iters.size()},
          {"iteration_mean_s", num(mean(iters))}};
}

}  // namespace dcsim
