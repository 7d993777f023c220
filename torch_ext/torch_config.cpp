#include "torch_config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "design.h"  // the design's folder (config.json)
#include "job.h"
#include "parse_num.h"
#include "wire.h"

extern char** environ;

namespace panama::torchx {

std::string to_string(Cause c) {
  switch (c) {
    case Cause::config:
      return "configuration";
    case Cause::unreachable:
      return "switch unreachable";
    case Cause::timeout:
      return "no result in time";
    case Cause::loss:
      return "loss beyond repair";
    case Cause::design:
      return "design mismatch";
    case Cause::too_large:
      return "tensor larger than the job's buffers";
    case Cause::failed_before:
      return "the job failed earlier";
    case Cause::transport:
      return "link error";
    case Cause::peer:
      return "another rank failed";
  }
  return "error";
}

const std::vector<std::pair<std::string, std::string>>& variables() {
  static const std::vector<std::pair<std::string, std::string>> v = {
      {"PANAMA_CONFIG", "a file of PANAMA_NAME=VALUE lines (# comments); the environment wins over it"},
      {"PANAMA_DESIGN", "the design's directory (panama-gen --out: config.json, regmap.json); required"},
      {"PANAMA_IFACE", "the network interface towards the accelerator; required"},
      {"PANAMA_BACKEND", "the host library's link: udp (default), tins, dpdk or xdp"},
      {"PANAMA_AGG_IP", "the aggregator's (tree root's) IPv4 address; required"},
      {"PANAMA_GROUP_IP", "the job's multicast group address; required"},
      {"PANAMA_PORT", "the aggregation UDP port (default 9056)"},
      {"PANAMA_AGG_MAC", "tins/dpdk: eth.dst of contributions (default: resolved)"},
      {"PANAMA_EAL", "dpdk: EAL arguments, blank-separated (default: derived from the interface)"},
      {"PANAMA_MTU", "the MTU the vectors are sized for (default: the interface's)"},
      {"PANAMA_JOB", "the job id (JID 0..65535) the controller programmed; required"},
      {"PANAMA_TREES", "aggregation trees T (TIDs 0..T-1, default 1)"},
      {"PANAMA_FIRST_VID", "the contexts' first VID: one for every tree or V0,V1,... (default 0)"},
      {"PANAMA_MAX_ELEMS", "elements per vector at most (default and ceiling: the design's MAX_ELEMS)"},
      {"PANAMA_TIMEOUT_MS", "error after this long without a result (default 2000; with repair >= 40 status waits)"},
      {"PANAMA_STATUS_WAIT_MS", "loss repair's status wait (default 200)"},
      {"PANAMA_REPAIR_ROUNDS", "loss repair rounds per call (default 16, 0: off)"},
      {"PANAMA_WINDOW_INIT", "initial window per tree, vectors (default min(4, max))"},
      {"PANAMA_WINDOW_MAX", "window ceiling per tree (default max(1, floor(12 / T)))"},
      {"PANAMA_BUFFER_MB", "the job's buffer: the largest tensor one all_reduce takes, MiB (default 256)"},
      {"PANAMA_CHUNK_KB", "bytes per host-library call, KiB (default 4096)"},
      {"PANAMA_FALLBACK", "gloo (default): an accelerator failure moves the job to Gloo; off: it ends the job"},
      {"PANAMA_REJOIN_EVERY",
       "requests on Gloo between probes of the accelerator after a fallback (default 50, 0: never)"},
      {"PANAMA_REJOIN_PROBE_MS", "how long one re-join probe waits for its results (default 2000)"},
      {"PANAMA_PROBE", "1 (default): a start-up all-reduce of known values checks path and design; 0: none"},
  };
  return v;
}

namespace {

// Other tools of the project read these prefixes: not reported as unknown.
bool other_tools_variable(const std::string& k) {
  for (const char* p : {"PANAMA_HOST_", "PANAMA_DPDK_", "PANAMA_SIM_", "PANAMA_HARNESS_", "PANAMA_SHELL_",
                        "PANAMA_TESTBED", "PANAMA_TRACE", "PANAMA_BUILD", "PANAMA_TORCH_"})
    if (k.rfind(p, 0) == 0) return true;
  return false;
}

bool known(const std::string& k) {
  for (const auto& v : variables())
    if (v.first == k) return true;
  return false;
}

[[noreturn]] void bad(const std::string& s) { throw PanamaError(Cause::config, s); }

int num(const std::map<std::string, std::string>& m, const std::string& k, int def, int lo, int hi) {
  const auto it = m.find(k);
  if (it == m.end()) return def;
  const auto v = host::parse_unsigned(it->second, 10, static_cast<uint64_t>(hi));
  if (!v || static_cast<int64_t>(*v) < lo)
    bad(k + "='" + it->second + "': expected a whole number " + std::to_string(lo) + ".." + std::to_string(hi));
  return static_cast<int>(*v);
}

std::string str(const std::map<std::string, std::string>& m, const std::string& k, const std::string& def = "") {
  const auto it = m.find(k);
  return it == m.end() ? def : it->second;
}

std::string required(const std::map<std::string, std::string>& m, const std::string& k) {
  const std::string v = str(m, k);
  if (v.empty())
    bad(k + " is not set (" +
        [&] {
          for (const auto& x : variables())
            if (x.first == k) return x.second;
          return std::string();
        }() +
        ")");
  return v;
}

void check_ipv4(const std::string& k, const std::string& v, bool multicast) {
  wire::Ipv4 a = 0;
  try {
    a = wire::parse_ipv4(v);
  } catch (const std::exception&) {
    bad(k + "='" + v + "' is not an IPv4 address");
  }
  const bool mc = (a >> 28) == 0xE;
  if (multicast && !mc) bad(k + "='" + v + "' is not a multicast address (224.0.0.0/4)");
  if (!multicast && mc) bad(k + "='" + v + "' is a multicast address; the aggregator's own address is needed");
}

// PANAMA_CONFIG's file: NAME=VALUE lines, blank lines and # comments; every name must be known.
void read_file(const std::string& path, std::map<std::string, std::string>& out) {
  std::ifstream in(path);
  if (!in) bad("PANAMA_CONFIG=" + path + ": cannot open the file");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    const auto b = line.find_first_not_of(" \t");
    if (b == std::string::npos || line[b] == '#') continue;
    const auto eq = line.find('=');
    std::string k = line.substr(b, eq == std::string::npos ? std::string::npos : eq - b);
    while (!k.empty() && (k.back() == ' ' || k.back() == '\t')) k.pop_back();
    const std::string where = path + ":" + std::to_string(n);
    if (eq == std::string::npos) bad(where + ": expected NAME=VALUE, got '" + line + "'");
    if (!known(k) || k == "PANAMA_CONFIG") bad(where + ": unknown name '" + k + "'");
    std::string v = line.substr(eq + 1);
    const auto vb = v.find_first_not_of(" \t"), ve = v.find_last_not_of(" \t\r");
    v = vb == std::string::npos ? "" : v.substr(vb, ve - vb + 1);
    out[k] = v;
  }
}

// The design's directory (load_design: its config.json, re-derived by Config::from_json).
void read_design(Config& c) {
  try {
    const panama::Config d = load_design(c.design).config;
    c.format = d.in.format;
    c.exact_sum = d.exact_sum();
    c.design_ports = d.in.ports;
    c.design_max_elems = d.max_elems;
  } catch (const std::exception& e) {
    bad("PANAMA_DESIGN=" + std::string(e.what()));
  }
}

std::vector<uint32_t> vid_list(const std::string& v) {
  std::vector<uint32_t> out;
  std::stringstream ss(v);
  std::string x;
  while (std::getline(ss, x, ',')) {
    const auto u = host::parse_unsigned(x, 10, 0xFFFFFFFFull);
    if (!u) bad("PANAMA_FIRST_VID='" + v + "': expected VID or V0,V1,... (0..4294967295)");
    out.push_back(static_cast<uint32_t>(*u));
  }
  if (out.empty()) bad("PANAMA_FIRST_VID is empty");
  return out;
}

double window(const std::map<std::string, std::string>& m, const std::string& k) {
  const std::string v = str(m, k);
  if (v.empty()) return 0;
  size_t used = 0;
  double d = 0;
  try {
    d = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || !(d >= 1) || d > 65536) bad(k + "='" + v + "': expected a window of 1..65536 vectors");
  return d;
}

}  // namespace

Config Config::from_env() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string s = *e;
    const auto eq = s.find('=');
    if (s.rfind("PANAMA_", 0) == 0 && eq != std::string::npos) env[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return from_map(env);
}

Config Config::from_map(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> m;
  Config c;
  for (const auto& [k, v] : env)
    if (!known(k) && !other_tools_variable(k)) c.unknown_env.push_back(k);
  if (const auto it = env.find("PANAMA_CONFIG"); it != env.end() && !it->second.empty()) read_file(it->second, m);
  for (const auto& [k, v] : env)
    if (known(k)) m[k] = v;  // the environment wins over the file
  c.design = required(m, "PANAMA_DESIGN");
  read_design(c);
  c.iface = required(m, "PANAMA_IFACE");
  c.backend = str(m, "PANAMA_BACKEND", "udp");
  c.agg_ip = required(m, "PANAMA_AGG_IP");
  check_ipv4("PANAMA_AGG_IP", c.agg_ip, false);
  c.group_ip = required(m, "PANAMA_GROUP_IP");
  check_ipv4("PANAMA_GROUP_IP", c.group_ip, true);
  c.port = num(m, "PANAMA_PORT", 9056, 1, 65535);
  c.agg_mac = str(m, "PANAMA_AGG_MAC");
  c.eal = str(m, "PANAMA_EAL");
  if (c.backend == "udp" && (!c.agg_mac.empty() || !c.eal.empty()))
    bad("PANAMA_AGG_MAC and PANAMA_EAL are for PANAMA_BACKEND=tins|dpdk|xdp, not udp");
  if (!c.eal.empty() && c.backend != "dpdk") bad("PANAMA_EAL is for PANAMA_BACKEND=dpdk");
  c.mtu = num(m, "PANAMA_MTU", 0, 68, 65535);
  required(m, "PANAMA_JOB");
  c.job = num(m, "PANAMA_JOB", -1, 0, 65535);
  c.trees = num(m, "PANAMA_TREES", 1, 1, 256);
  c.first_vids = vid_list(str(m, "PANAMA_FIRST_VID", "0"));
  if (c.first_vids.size() != 1 && static_cast<int>(c.first_vids.size()) != c.trees)
    bad("PANAMA_FIRST_VID: give one VID or one per tree (" + std::to_string(c.trees) + ")");
  c.max_elems = num(m, "PANAMA_MAX_ELEMS", 0, 1, 65535);
  if (c.max_elems > c.design_max_elems)
    bad("PANAMA_MAX_ELEMS=" + std::to_string(c.max_elems) + " exceeds the design's MAX_ELEMS " +
        std::to_string(c.design_max_elems) + " (the accelerator would drop every vector)");
  c.timeout_ms = num(m, "PANAMA_TIMEOUT_MS", 2000, 1, 3600000);
  c.status_wait_ms = num(m, "PANAMA_STATUS_WAIT_MS", 200, 1, 600000);
  c.timeout_set = m.count("PANAMA_TIMEOUT_MS") > 0;
  c.status_wait_set = m.count("PANAMA_STATUS_WAIT_MS") > 0;
  c.repair_rounds = num(m, "PANAMA_REPAIR_ROUNDS", 16, 0, 64);
  c.window_init = window(m, "PANAMA_WINDOW_INIT");
  c.window_max = window(m, "PANAMA_WINDOW_MAX");
  c.buffer_bytes = static_cast<size_t>(num(m, "PANAMA_BUFFER_MB", 256, 1, 1 << 20)) << 20;
  c.chunk_bytes = static_cast<size_t>(num(m, "PANAMA_CHUNK_KB", 4096, 4, 1 << 20)) << 10;
  c.probe = num(m, "PANAMA_PROBE", 1, 0, 1) == 1;
  const std::string fb = str(m, "PANAMA_FALLBACK", "gloo");
  if (fb != "gloo" && fb != "off") bad("PANAMA_FALLBACK='" + fb + "': gloo or off");
  c.fallback = fb == "gloo";
  c.rejoin_every = num(m, "PANAMA_REJOIN_EVERY", 50, 0, 1 << 30);
  c.rejoin_probe_ms = num(m, "PANAMA_REJOIN_PROBE_MS", 2000, 10, 3600000);
  return c;
}

void Config::with_group_timeout(int ms) {
  if (ms < 1) bad("the process group's timeout must be at least 1 ms (got " + std::to_string(ms) + ")");
  group_timeout_ms = ms;
  if (!timeout_set) timeout_ms = ms;
  if (!status_wait_set) status_wait_ms = std::max(1, std::min(status_wait_ms, ms / 40));
}

host::JobParams Config::job_params(int rank, int world) const {
  host::JobParams p;
  if (world < 1 || rank < 0 || rank >= world)
    bad("rank " + std::to_string(rank) + " of world size " + std::to_string(world) + " is out of range");
  p.jid = static_cast<uint16_t>(job);
  p.rank = rank;
  p.world = world;
  p.trees = trees;
  int link_mtu = mtu;
  if (link_mtu == 0) {
    try {
      link_mtu = host::iface_mtu(iface);
    } catch (const std::exception&) {
      bad("PANAMA_IFACE=" + iface + ": no such interface here (cannot read its MTU)");
    }
  }
  try {
    host::set_vector_shape(p, format, link_mtu, max_elems ? max_elems : design_max_elems);
  } catch (const std::exception& e) {
    bad(e.what());
  }
  p.first_vids.assign(static_cast<size_t>(trees), first_vids[0]);
  if (first_vids.size() > 1) p.first_vids = first_vids;
  p.window.max = window_max;
  p.window.init = window_init;
  host::default_window(p);
  if (p.window.init > p.window.max) bad("PANAMA_WINDOW_INIT is above PANAMA_WINDOW_MAX");
  p.timeout_ms = timeout_ms;
  p.status_wait_ms = status_wait_ms;
  p.repair_rounds = repair_rounds;
  if (group_timeout_ms > 0) p.repair_stall_ms = group_timeout_ms;  // no progress for c10d's timeout: fail
  p.agg_port = static_cast<uint16_t>(port);
  try {
    p.validate();
  } catch (const std::exception& e) {
    bad(e.what());
  }
  return p;
}

size_t Config::chunk_elems(const host::JobParams& p) const {
  const size_t data = static_cast<size_t>(p.repair_rounds > 0 ? p.count - 1 : p.count);
  const size_t per = std::max<size_t>(1, chunk_bytes / static_cast<size_t>(elem_bytes(format)) / data);
  return per * data;
}

}  // namespace panama::torchx
