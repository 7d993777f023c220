// Reading panama-dcsim's data files and the design (workload.h).
#include "workload.h"

#include "config.h"  // panama_config: the generator's Config and its config.json reader

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <fstream>
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

}  // namespace dcsim
