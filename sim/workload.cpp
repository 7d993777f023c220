// Reading panama-dcsim's data files and the design (workload.h).
#include "workload.h"

#include "config.h"  // panama_config: the generator's Config and its config.json reader

#include "ns3/core-module.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace dcsim {

using json = nlohmann::json;

std::vector<std::string> data_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto h = line.find('#');
    if (h != std::string::npos) line.resize(h);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    out.push_back(line);
  }
  return out;
}

Cdf load_cdf(const std::string& path) {
  Cdf c;
  int n = 0;
  for (const auto& l : data_lines(path)) {
    ++n;
    std::istringstream s(l);
    double b, p;
    if (!(s >> b >> p) || b <= 0 || p < 0 || p > 1 ||
        (!c.pts.empty() && (b < c.pts.back().first || p < c.pts.back().second)))
      throw std::runtime_error(path + ": bad CDF point on data line " + std::to_string(n) + ": '" + l + "'");
    c.pts.emplace_back(b, p);
  }
  if (c.pts.size() < 2 || c.pts.back().second != 1.0)
    throw std::runtime_error(path + ": a CDF needs at least two points and must end at 1");
  if (c.pts.front().second > 0) c.pts.insert(c.pts.begin(), {c.pts.front().first, 0.0});
  return c;
}

std::vector<Model> load_models(const std::string& path) {
  std::vector<Model> v;
  for (const auto& l : data_lines(path)) {
    std::istringstream s(l);
    Model m;
    double mparams;
    if (!(s >> m.name >> mparams >> m.compute_s >> m.weight) || mparams <= 0 || m.compute_s < 0 || m.weight < 0)
      throw std::runtime_error(path + ": bad model line '" + l + "'");
    m.bytes = mparams * 1e6 * 4;  // fp32 gradients
    v.push_back(m);
  }
  if (v.empty()) throw std::runtime_error(path + ": no models");
  return v;
}

std::vector<int> spread_hosts(int n, int k) {
  const int half = k / 2, racks = k * k / 2;
  if (n > racks) throw std::runtime_error("--placement spread: more workers than racks");
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<int>(static_cast<int64_t>(i) * racks / n) * half);
  return out;
}

Design load_design(const std::string& where) {
  struct stat st {};
  const std::string path = ::stat(where.c_str(), &st) == 0 && S_ISDIR(st.st_mode) ? where + "/config.json" : where;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read design " + path);
  json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
  // The generator's own reader: it validates the inputs and re-derives the figures (the
  // pipeline latency, the buffer) as panama-gen did.
  panama::Config c;
  try {
    c = panama::Config::from_json(j);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  Design d;
  d.path = path;
  d.gbps = c.in.gbps;
  d.ports = c.in.ports;
  d.mhz = c.in.mhz;
  d.agg_latency = c.agg_latency;
  d.buffer_bytes = static_cast<double>(c.buffer_bytes);
  d.contexts = c.in.contexts;
  d.max_elems = c.max_elems;
  d.elem_bytes = c.fmt.elem_bytes;
  return d;
}

namespace {

// A model's index by name, or by weight; -1 for the custom model.
int draw_model(const Options& o, const std::vector<Model>& models, std::mt19937_64& g) {
  if (o.model_bytes > 0) return -1;
  if (!o.model.empty()) {
    for (size_t i = 0; i < models.size(); ++i)
      if (models[i].name == o.model) return static_cast<int>(i);
    throw std::runtime_error("unknown model " + o.model);
  }
  double wsum = 0;
  for (const auto& m : models) wsum += m.weight;
  double u = std::uniform_real_distribution<double>(0, wsum)(g);
  for (size_t i = 0; i < models.size(); ++i)
    if ((u -= models[i].weight) <= 0) return static_cast<int>(i);
  return static_cast<int>(models.size()) - 1;
}

// --warm-start: the background as it stands at t = 0 after running for ever. The same Poisson
// arrivals and sizes as from t = 0 (their own generator, so the flows after 0 are unchanged) are
// drawn backwards from 0 for as long as the largest flow takes at line rate; a flow that arrived
// at -a has sent a x line rate by then (the most it could have: what remains errs low) and, if
// bytes remain, starts at 0 with them. They start before --warmup, so they are never measured.
void add_warm_flows(const Options& o, double bg, int servers, double bps, const std::vector<Cdf>& cdfs, Workload& w) {
  for (size_t c = 0; c < cdfs.size(); ++c) {
    std::mt19937_64 g(o.seed * 0x9E3779B97F4A7C15ull + 211 + c);
    const double rate = bg / cdfs.size() * servers * bps / (8 * cdfs[c].mean());
    const double horizon = cdfs[c].max() * 8 / bps;
    std::exponential_distribution<double> gap(rate);
    std::uniform_real_distribution<double> u01(0, 1);
    std::uniform_int_distribution<int> any(0, servers - 1), other(0, servers - 2);
    for (double age = gap(g); age < horizon; age += gap(g)) {
      FlowArrival f;
      f.src = any(g);
      f.dst = other(g);
      if (f.dst >= f.src) ++f.dst;
      f.drawn = static_cast<uint64_t>(std::max(1.0, std::round(cdfs[c].sample(u01(g)))));
      const double left = static_cast<double>(f.drawn) - age * bps / 8;
      if (left < 1) continue;
      f.size = static_cast<uint64_t>(std::ceil(left));
      f.cdf = static_cast<int>(c);
      f.warm = true;
      w.flows.push_back(f);
    }
  }
}

}  // namespace

Workload make_workload(const Options& o, int servers, const std::vector<Cdf>& cdfs, const std::vector<Model>& models) {
  Workload w;
  const bool paper = o.workload == "paper";
  const double bps = o.gbps * 1e9;
  // Background: one Poisson process per CDF, each with an equal share of the background load,
  // endpoints uniform over the servers (distinct). Its own generator, seeded from the seed.
  const double bg = paper ? std::min(o.background, o.load) : o.load;
  if (o.single_flow > 0) {
    w.flows.push_back({0, 0, servers - 1, static_cast<uint64_t>(o.single_flow), 0});
  } else if (o.long_flows >= 0) {
    // Long flows that cross the fabric where a spread job's trees do: sender m is the m-th free
    // server of the job's racks (the second server of each rack in turn, then the third, ...),
    // its receiver the server half the cluster away (another pod, never one of the job's).
    const int half = o.k / 2, n = std::max(2, o.workers_min);
    const auto job = spread_hosts(n, o.k);
    std::vector<int> cand;
    for (int q = 1; q < half; ++q)
      for (int h : job) cand.push_back(h + q);
    if (o.long_flows > static_cast<int>(cand.size()))
      throw std::runtime_error("--long-flows " + std::to_string(o.long_flows) + ": only " +
                               std::to_string(cand.size()) + " free servers in the job's racks at this --k");
    for (int m = 0; m < o.long_flows; ++m)
      w.flows.push_back(
          {m * 1e-6, cand[m], (cand[m] + servers / 2) % servers, static_cast<uint64_t>(o.long_flow_bytes), 0});
  } else if (bg > 0 && servers > 1 && o.legacy_flows) {
    // The earlier versions' background: ns-3's streams 1 (endpoints, sizes) and 2 (gaps) of the
    // seed, the first flow at t = 0, one CDF (a validation case is defined on these flows).
    ns3::RngSeedManager::SetSeed(o.seed);
    ns3::RngSeedManager::SetRun(1);
    auto rng = ns3::CreateObject<ns3::UniformRandomVariable>();
    auto gap = ns3::CreateObject<ns3::ExponentialRandomVariable>();
    rng->SetStream(1);
    gap->SetStream(2);
    const double rate = bg * servers * bps / (8 * cdfs[0].mean());
    gap->SetAttribute("Mean", ns3::DoubleValue(1 / rate));
    w.flow_rate = rate;
    for (double t = 0; t < o.duration; t += gap->GetValue()) {
      FlowArrival f;
      f.t = t;
      f.src = static_cast<int>(rng->GetInteger(0, servers - 1));
      f.dst = static_cast<int>(rng->GetInteger(0, servers - 2));
      if (f.dst >= f.src) ++f.dst;
      f.size = static_cast<uint64_t>(std::max(1.0, std::round(cdfs[0].sample(rng->GetValue(0, 1)))));
      w.flows.push_back(f);
    }
  } else if (bg > 0 && servers > 1) {
    for (size_t c = 0; c < cdfs.size(); ++c) {
      std::mt19937_64 g(o.seed * 0x9E3779B97F4A7C15ull + 101 + c);
      const double rate = bg / cdfs.size() * servers * bps / (8 * cdfs[c].mean());
      w.flow_rate += rate;
      std::exponential_distribution<double> gap(rate);
      std::uniform_real_distribution<double> u01(0, 1);
      std::uniform_int_distribution<int> any(0, servers - 1), other(0, servers - 2);
      for (double t = 0;;) {
        t += gap(g);
        if (t >= o.duration) break;
        FlowArrival f;
        f.t = t;
        f.src = any(g);
        f.dst = other(g);
        if (f.dst >= f.src) ++f.dst;
        f.size = static_cast<uint64_t>(std::max(1.0, std::round(cdfs[c].sample(u01(g)))));
        f.cdf = static_cast<int>(c);
        w.flows.push_back(f);
      }
    }
    if (o.warm_start) add_warm_flows(o, bg, servers, bps, cdfs, w);
    std::stable_sort(w.flows.begin(), w.flows.end(),
                     [](const FlowArrival& a, const FlowArrival& b) { return a.t < b.t; });
  }
  std::mt19937_64 g(o.seed * 0x9E3779B97F4A7C15ull + 7);
  const int wmin = std::max(2, o.workers_min), wmax = std::max(wmin, o.workers_max);
  if (o.job_at >= 0) {  // one job, at a given time (the figure presets)
    JobArrival j;
    j.t = o.job_at;
    j.workers = wmin;
    j.model = draw_model(o, models, g);
    w.jobs.push_back(j);
    return w;
  }
  if (o.single_flow > 0 || o.long_flows >= 0) return w;
  if (!paper) {
    // Legacy: jobs at t = 0 on --job-fraction of the servers.
    int budget = static_cast<int>(std::floor(o.job_fraction * servers));
    while (budget >= wmin && (o.jobs < 0 || static_cast<int>(w.jobs.size()) < o.jobs)) {
      JobArrival j;
      j.workers = std::uniform_int_distribution<int>(wmin, std::min(wmax, budget))(g);
      j.model = draw_model(o, models, g);
      budget -= j.workers;
      w.jobs.push_back(j);
    }
    return w;
  }
  // Paper: Poisson job arrivals whose rate makes the training load --load - --background. A
  // job's training bytes are what its workers offer in the in-network schemes: workers x model
  // bytes per iteration, for its iterations (the ring offers 2 (N - 1) / N of that on the wire).
  const double training = o.load - bg;
  if (training <= 0 || wmin > servers) return w;
  double msize = 0;
  if (o.model_bytes > 0) {
    msize = o.model_bytes;
  } else if (!o.model.empty()) {
    msize = models[draw_model(o, models, g)].bytes * o.model_scale;
  } else {
    double wsum = 0;
    for (const auto& m : models) {
      msize += m.weight * m.bytes * o.model_scale;
      wsum += m.weight;
    }
    msize /= wsum;
  }
  w.job_bytes_mean = (wmin + wmax) / 2.0 * msize * o.iterations;
  w.job_rate = training * servers * bps / 8 / w.job_bytes_mean;
  std::exponential_distribution<double> gap(w.job_rate);
  for (double t = 0;;) {
    t += gap(g);
    if (t >= o.duration) break;
    JobArrival j;
    j.t = t;
    j.workers = std::uniform_int_distribution<int>(wmin, wmax)(g);
    j.model = draw_model(o, models, g);
    w.jobs.push_back(j);
  }
  return w;
}

}  // namespace dcsim
