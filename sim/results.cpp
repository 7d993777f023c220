// The results of one run (results.json) and their summary.
#include "sim.h"

#include "results.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace dcsim {

json Sim::results() {
  json out;
  json flows = json::array();
  for (size_t i = 0; i < flows_.size(); ++i) {
    const auto& f = flows_[i];
    // A warm flow's class is its drawn size's; it starts with what is left of it.
    flows.push_back({{"id", flow_id_[i]},
                     {"kind", f.class_size < o_.short_bytes ? "short" : "long"},
                     {"cdf", f.cdf},
                     {"warm", f.warm},
                     {"size_bytes", f.size},
                     {"start_s", f.start},
                     {"measured", window(f.start) && !f.warm},
                     {"fct_s", f.fct >= 0 ? json(f.fct) : json(nullptr)},
                     {"src", f.src},
                     {"dst", f.dst},
                     {"sent_bytes", f.sent},
                     {"recv_bytes", f.recv}});
    if (f.warm) flows.back()["drawn_bytes"] = f.class_size;
  }
  out["flows"] = flows;
  json jobs = json::array();
  for (const auto& job : jobs_) {
    std::vector<int> hosts;
    if (job.placed)
      for (const auto& w : job.workers) hosts.push_back(w.host);
    auto t = [](double x) { return x >= 0 ? json(x) : json(nullptr); };
    double isum = 0;
    int in = 0;
    for (size_t i = 0; i < job.iter_s.size(); ++i)
      if (job.iter_start_s[i] >= o_.warmup) {
        isum += job.iter_s[i];
        ++in;
      }
    jobs.push_back({{"id", job.id},
                    {"workers", job.workers.size()},
                    {"model", job.model},
                    {"model_bytes", job.bytes},
                    {"compute_s", job.compute_s},
                    {"arrival_s", job.arrival},
                    {"start_s", t(job.start)},
                    {"end_s", t(job.end)},
                    {"hosts", hosts},
                    {"roots", job.roots},
                    {"iteration_s", job.iter_s},
                    {"iteration_start_s", job.iter_start_s},
                    {"iteration_mean_s", in ? json(isum / in) : json(nullptr)},  // after the warm-up
                    {"results", job.results},
                    {"results_ce", job.results_ce},
                    {"late_frames", job.late},
                    {"unsent_contributions", job.unsent}});
  }
  out["jobs"] = jobs;
  // Offered load over the measurement window: on the server uplinks (host_tx, payload bytes,
  // as a share of the servers' link capacity), and per layer of links (queue-disc bytes, both
  // directions, as a share of the layer's capacity).
  const double W = std::max(o_.duration - o_.warmup, 1e-12);
  const double cap = tree_.hosts() * o_.gbps * 1e9 / 8 * W;
  json fabric;
  for (const auto& [layer, bps] : layer_bps_) {
    auto b0 = snap_[0].find(layer), b1 = snap_[1].find(layer);
    if (b0 != snap_[0].end() && b1 != snap_[1].end()) fabric[layer] = (b1->second - b0->second) * 8.0 / (bps * W);
  }
  out["load"] = {{"background", tx_background_ / cap},
                 {"training", tx_training_ / cap},
                 {"total", (tx_background_ + tx_training_) / cap},
                 {"window_s", {o_.warmup, o_.duration}},
                 {"fabric", fabric}};
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
  if (o_.series_ms > 0) out["series"] = series_json();
  out["sim_end_s"] = sim_end_;
  out["complete"] = stopped_;
  out["undecodable"] = undecodable_;
  out["stale_frames"] = stale_;
  uint64_t unroutable = 0;
  for (const auto& r : routing_) unroutable += r->unroutable();
  out["unroutable_drops"] = unroutable;
  // What the run cost the engine: ns-3's events and the packets every port sent (packet-hops).
  uint64_t hops = 0;
  for (const auto& [layer, qs] : layer_q_)
    for (const auto& q : qs) hops += q->GetStats().nTotalSentPackets;
  out["engine"] = {{"events", Simulator::GetEventCount()}, {"packet_hops", hops}};
  return out;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(std::ceil(p * v.size())) - 1);
  return v[i];
}

// The 99th percentile of the measured short flows' FCTs and a 95 % bootstrap confidence interval
// (1,000 resamples, a fixed generator so the file is reproducible). An incomplete flow counts as
// infinitely slow: a percentile that lands on one is reported as null (unknown, not small).
json summary(const json& r, double short_bytes, int servers) {
  std::vector<double> short_fct, long_tput, iters, job_means;
  int open = 0, short_open = 0, measured = 0;
  for (const auto& f : r["flows"]) {
    if (f.contains("measured") && !f["measured"].get<bool>()) continue;
    ++measured;
    const bool is_short = f["size_bytes"].get<double>() < short_bytes;
    if (f["fct_s"].is_null()) {
      ++open;
      if (is_short) {
        ++short_open;
        short_fct.push_back(HUGE_VAL);
      }
      continue;
    }
    const double fct = f["fct_s"].get<double>();
    if (is_short)
      short_fct.push_back(fct);
    else
      long_tput.push_back(f["size_bytes"].get<double>() * 8 / fct / 1e9);
  }
  const double warmup = r.contains("load") ? r["load"]["window_s"][0].get<double>() : 0;
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? std::nan("") : s / v.size();
  };
  // Iteration time: per job the mean of its iterations that started after the warm-up; over jobs
  // the mean of those means (every job weighs the same, however fast it iterates).
  for (const auto& j : r["jobs"]) {
    std::vector<double> mine;
    const auto& it = j["iteration_s"];
    const auto& st = j.contains("iteration_start_s") ? j["iteration_start_s"] : json::array();
    for (size_t i = 0; i < it.size(); ++i)
      if (i >= st.size() || st[i].get<double>() >= warmup) mine.push_back(it[i].get<double>());
    iters.insert(iters.end(), mine.begin(), mine.end());
    if (!mine.empty()) job_means.push_back(mean(mine));
  }
  auto num = [](double x) { return std::isnan(x) || std::isinf(x) ? json(nullptr) : json(x); };
  json ci = nullptr;
  if (short_fct.size() >= 2) {
    std::mt19937_64 g(12345);
    std::uniform_int_distribution<size_t> pick(0, short_fct.size() - 1);
    std::vector<double> p99s, b(short_fct.size());
    for (int rep = 0; rep < 1000; ++rep) {
      for (auto& x : b) x = short_fct[pick(g)];
      p99s.push_back(percentile(b, 0.99));
    }
    ci = {num(percentile(p99s, 0.025)), num(percentile(p99s, 0.975))};
  }
  // The jobs' queue: how many were placed, how long they waited for servers, and the share of
  // server-time they held in the measurement window (what bounds the training load they offer).
  const double w0 = warmup, w1 = r.contains("load") ? r["load"]["window_s"][1].get<double>() : 0;
  int placed = 0;
  double wait = 0, held = 0;
  for (const auto& j : r["jobs"]) {
    if (j["start_s"].is_null()) continue;
    ++placed;
    const double start = j["start_s"].get<double>(), end = j["end_s"].is_null() ? w1 : j["end_s"].get<double>();
    wait += std::max(0.0, start - j["arrival_s"].get<double>());
    held += j["workers"].get<double>() * std::max(0.0, std::min(end, w1) - std::max(start, w0));
  }
  const json occupancy = w1 > w0 && servers > 0 ? json(held / (servers * (w1 - w0))) : json(nullptr);
  return {{"flows", r["flows"].size()},
          {"flows_measured", measured},
          {"flows_incomplete", open},
          {"short_flows", short_fct.size()},
          {"short_flows_incomplete", short_open},
          {"short_fct_p99_s", num(percentile(short_fct, 0.99))},
          {"short_fct_p99_ci95_s", ci},
          {"short_fct_mean_s", short_open ? json(nullptr) : num(mean(short_fct))},
          {"long_flows", long_tput.size()},
          {"long_throughput_gbps_mean", num(mean(long_tput))},
          {"iterations", iters.size()},
          {"iteration_mean_s", num(mean(job_means))},
          {"iteration_pooled_mean_s", num(mean(iters))},
          {"jobs_iterating", job_means.size()},
          {"jobs", r["jobs"].size()},
          {"jobs_placed", placed},
          {"job_wait_mean_s", placed ? json(wait / placed) : json(nullptr)},
          {"server_occupancy", occupancy}};
}

}  // namespace dcsim
