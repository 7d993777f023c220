// panama-sim: replays per-port pcaps through the accelerator (tools.md, "Packet-level simulation").
//
//   panama-sim replay --design DIR --engine rtl|model --contexts CTX.json --in-dir IN --out-dir OUT
//                     [--seed S] [--idle PCT] [--backpressure PCT]
//                     [--trace FILE.fst | --coverage FILE.dat] [--stats]    (rtl engine only)
//
// Errors (bad arguments, an unreadable/corrupt pcap or config, a bad CTX.json) print one line on
// stderr, exit 1 and leave OUT untouched: outputs are written into a temporary directory beside
// OUT and renamed into place only once everything has been written.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli_parse.h"
#include "config.h"
#include "ctx.h"
#include "keep_io.h"
#include "exact_ref.h"
#include "model.h"
#include "ref_float.h"
#include "pcap_io.h"
#include "rtl_engine.h"
#include "traffic.h"

namespace fs = std::filesystem;
using namespace panama;

namespace {

struct Fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ReplayArgs {
  std::string rtl, engine, contexts, in_dir, out_dir;
  uint64_t seed = 1;
  int idle = 0, backpressure = 0;
  rtl::Extras rtl_extras;
};

Config load_config(const std::string& dir) {
  const std::string path = dir + "/config.json";
  std::ifstream in(path);
  if (!in) throw Fatal(path + ": cannot open (is --design a panama-gen output directory?)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Fatal(path + ": not valid JSON");
  }
  try {
    Config c = Config::from_json(j);
    if (c.in.module != "top")
      throw Fatal(path + ": generated with --module " + c.in.module + ", not a full accelerator");
    return c;
  } catch (const ConfigError& e) {
    throw Fatal(path + ": " + e.what());
  }
}

std::string port_file(int p) {
  char b[32];
  std::snprintf(b, sizeof b, "port%02d.pcap", p);
  return b;
}

std::vector<std::vector<model::InFrame>> load_inputs(const std::string& dir, const Config& cfg) {
  const int ports = cfg.in.ports;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Fatal(dir + ": input directory does not exist");
  std::vector<std::vector<model::InFrame>> in(ports);
  for (int p = 0; p < ports; ++p) {
    const std::string path = dir + "/" + port_file(p);
    if (!fs::exists(path, ec)) continue;  // no traffic on this port
    try {
      for (auto& r : wire::read_pcap(path)) in[p].push_back({std::move(r.data), false});
      // Frames given lane by lane (keep_io.h), tkeep holes included.
      auto& v = in[p];
      for (auto& [i, k] : keep_io::read(keep_io::path_for(dir, p), v.size(), cfg.bus_bytes,
                                        [&](size_t i) { return v[i].data.size(); }))
        v[i].keep = std::move(k);
    } catch (const wire::WireError& e) {
      throw Fatal(e.what());
    } catch (const std::runtime_error& e) {
      throw Fatal(e.what());
    }
  }
  // A capture for a port the design does not have is ignored, with a warning.
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    int p = -1;
    char tail[8] = {0};
    if (std::sscanf(n.c_str(), "port%d.%7s", &p, tail) == 2 && std::string(tail) == "pcap" && p >= ports)
      std::cerr << "panama-sim: warning: " << e.path().string() << " ignored (the design has " << ports << " ports)\n";
  }
  return in;
}

std::vector<wire::PcapRecord> records(const std::vector<model::OutFrame>& fs, double mhz) {
  std::vector<wire::PcapRecord> v;
  v.reserve(fs.size());
  for (const auto& f : fs) {
    wire::PcapRecord r;
    r.data = f.data;
    // Output timestamp: the cycle of the first beat divided by f_clk.
    r.ts_ns = static_cast<uint64_t>(std::llround(static_cast<double>(f.cycle) * 1e3 / mhz));
    v.push_back(std::move(r));
  }
  return v;
}

// Writes every output into a fresh directory beside OUT, then moves it into place.
void write_outputs(const std::string& out_dir, const model::Result& res, const Config& cfg) {
  fs::path out = fs::absolute(out_dir);
  if (out.filename().empty()) out = out.parent_path();
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec)) throw Fatal(out_dir + ": exists and is not a directory");
  const fs::path parent = out.parent_path();
  if (!fs::is_directory(parent, ec)) throw Fatal(parent.string() + ": directory does not exist");
  std::string tmpl = (parent / (".panama-sim-" + out.filename().string() + ".XXXXXX")).string();
  if (!mkdtemp(tmpl.data())) throw Fatal(parent.string() + ": cannot create a temporary directory");
  const fs::path tmp = tmpl;
  std::vector<std::string> names;
  try {
    for (int p = 0; p < cfg.in.ports; ++p) {
      wire::write_pcap((tmp / port_file(p)).string(), records(res.ports[p], cfg.in.mhz));
      names.push_back(port_file(p));
    }
    wire::write_pcap((tmp / "agg.pcap").string(), records(res.agg, cfg.in.mhz));
    names.push_back("agg.pcap");
    std::ofstream c(tmp / "counters.json");
    c << model::counters_json(res).dump(1) << "\n";
    c.close();
    if (!c) throw Fatal((tmp / "counters.json").string() + ": write failed");
    names.push_back("counters.json");
    if (!fs::exists(out, ec)) {
      fs::rename(tmp, out);
      return;
    }
    for (const auto& n : names) fs::rename(tmp / n, out / n);
    fs::remove_all(tmp, ec);
  } catch (const wire::WireError& e) {
    fs::remove_all(tmp, ec);
    throw Fatal(e.what());
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(tmp, ec);
    throw Fatal(std::string("cannot write outputs: ") + e.what());
  } catch (...) {
    fs::remove_all(tmp, ec);
    throw;
  }
}

model::Result run_engine(const std::string& engine, const ReplayArgs& a, const Config& cfg, const wire::CtxFile& ctx,
                         const std::vector<std::vector<model::InFrame>>& in) {
  model::Options opt;
  opt.seed = a.seed;
  opt.idle_pct = a.idle;
  opt.backpressure_pct = a.backpressure;
  if (engine == "rtl") {
    try {
      return rtl::run(a.rtl, cfg, a.contexts, a.in_dir, opt, a.rtl_extras);
    } catch (const rtl::EngineError& e) {
      throw Fatal(e.what());
    }
  }
  return model::run(cfg, ctx, in, opt);
}

wire::CtxFile load_contexts(const ReplayArgs& a, const Config& cfg) {
  try {
    return wire::load_ctx(a.contexts, cfg.in.ports, cfg.in.contexts);
  } catch (const wire::CtxError& e) {
    throw Fatal(e.what());
  }
}

int replay(const ReplayArgs& a) {
  if (a.engine != "rtl" && (!a.rtl_extras.trace.empty() || !a.rtl_extras.coverage.empty() || a.rtl_extras.stats))
    throw Fatal("--trace, --coverage and --stats need --engine rtl");
  const Config cfg = load_config(a.rtl);
  const wire::CtxFile ctx = load_contexts(a, cfg);
  const auto in = load_inputs(a.in_dir, cfg);
  write_outputs(a.out_dir, run_engine(a.engine, a, cfg, ctx, in), cfg);
  return 0;
}

// Whether an input frame's bytes are `out` (a frame given lane by lane: its kept lanes).
bool same_bytes(const model::InFrame& in, const wire::Bytes& out) {
  if (in.keep.empty()) return in.data == out;
  size_t kept = 0;
  for (uint8_t k : in.keep) kept += k != 0;
  return kept == out.size() && std::equal(out.begin(), out.end(), in.data.begin());
}

// Invariants every engine keeps, whatever the timing (tools.md, compare): frames of each port
// in input order, built frames of each context in VID order, the counter identities of rule 10.
void check_invariants(const std::string& name, const model::Result& r, const Config& cfg,
                      const std::vector<std::vector<model::InFrame>>& in, std::vector<std::string>& diffs) {
  for (int p = 0; p < cfg.in.ports; ++p) {
    size_t k = 0;
    for (const auto& f : r.ports[p]) {
      while (k < in[p].size() && !same_bytes(in[p][k], f.data)) ++k;
      if (k == in[p].size()) {
        diffs.push_back(name + ": port " + std::to_string(p) + " sent a frame out of input order or altered");
        break;
      }
      ++k;
    }
    const auto& c = r.port_counters[p];
    const uint64_t in_sum = c[kBypassFrames] + c[kResultPassed] + c[kAggAdmitted] + c[kRunt] + c[kRxError] +
                            c[kMalformed] + c[kNoContext] + c[kNotMember] + c[kOverflow] + c[kBypassOverflow];
    if (c[kRxFrames] != in_sum || c[kRxFrames] != in[p].size())
      diffs.push_back(name + ": port " + std::to_string(p) + " rx_frames does not account for every frame");
    if (c[kTxFrames] != c[kBypassFrames] + c[kResultPassed] || c[kTxFrames] != r.ports[p].size())
      diffs.push_back(name + ": port " + std::to_string(p) + " tx_frames != bypass_frames + result_passed");
  }
  std::map<int, uint32_t> last_vid;
  for (const auto& f : r.agg) {
    if (f.data.size() < 64) continue;
    const uint32_t vid = wire::get32(&f.data[wire::off::vid]);
    auto it = last_vid.find(f.context);
    if (it != last_vid.end() && (vid - it->second == 0 || vid - it->second >= 0x80000000u))
      diffs.push_back(name + ": context " + std::to_string(f.context) + " built VID " + std::to_string(vid) +
                      " after " + std::to_string(it->second));
    last_vid[f.context] = vid;
  }
  if (r.agg_tx_frames != r.agg.size()) diffs.push_back(name + ": agg_tx_frames != frames on m_agg");
}

// Every built frame's payload against its contributions, whatever the timing (so also in the runs
// that are compared by invariants only): the (JID, TID, VID) contributions each member port was
// given, summed as numerics.md says (the CPU's tree order, ref::tree_sum, or the exact sum,
// xref::exact_sum: neither shares code with the model or the RTL). A built frame needs one from
// every member; a port given two different payloads for one VID (a fault scenario) leaves that
// frame unchecked (counted). Returns {checked, ambiguous}.
std::pair<size_t, size_t> check_sums(const std::string& name, const model::Result& r, const Config& cfg,
                                     const wire::CtxFile& ctx, const std::vector<std::vector<model::InFrame>>& in,
                                     std::vector<std::string>& diffs) {
  const int es = cfg.fmt.elem_bytes;
  // (jid, tid, vid) -> port -> the distinct payloads given (count included).
  std::map<std::tuple<uint16_t, uint8_t, uint32_t>, std::map<int, std::set<wire::Bytes>>> given;
  for (int p = 0; p < cfg.in.ports; ++p)
    for (const auto& f : in[p]) {
      if (!f.keep.empty() || !wire::is_aggregation(f.data, ctx.agg_port) ||
          wire::check_wellformed(f.data, es, cfg.max_elems) != wire::Validity::ok)
        continue;
      const wire::AggHeader h = wire::parse_header(f.data);
      if (h.result()) continue;
      const auto b = f.data.begin() + static_cast<long>(wire::off::payload);
      given[{h.jid, h.tid, h.vid}][p].insert(wire::Bytes(b, b + static_cast<long>(es) * h.count));
    }
  const bool ftz = cfg.in.subnormals == Subnormals::ftz;
  const panama::xref::Fmt xf = panama::xref::fmt_named(to_string(cfg.in.format));
  auto elem = [es](const uint8_t* p) {  // one little-endian element
    uint32_t v = 0;
    for (int k = es - 1; k >= 0; --k) v = (v << 8) | p[static_cast<size_t>(k)];
    return v;
  };
  size_t checked = 0, ambiguous = 0;
  for (const auto& f : r.agg) {
    if (f.data.size() < wire::off::payload || f.context < 0 || f.context >= static_cast<int>(ctx.contexts.size()))
      continue;
    const wire::CtxEntry& e = ctx.contexts[static_cast<size_t>(f.context)];
    const wire::AggHeader h = wire::parse_header(f.data);
    const std::string what = name + ": context " + std::to_string(f.context) + " VID " + std::to_string(h.vid);
    static const std::map<int, std::set<wire::Bytes>> none;
    const auto it = given.find({e.jid, e.tid, h.vid});
    const auto& by_port = it == given.end() ? none : it->second;
    std::vector<const wire::Bytes*> leaf(static_cast<size_t>(cfg.in.ports), nullptr);
    bool whole = true, one_each = true;
    for (int m : e.members) {
      const auto pit = by_port.find(m);
      if (pit == by_port.end()) {
        whole = false;
        break;
      }
      one_each &= pit->second.size() == 1;
      leaf[static_cast<size_t>(m)] = &*pit->second.begin();
    }
    if (!whole) {
      diffs.push_back(what + ": built without a contribution from every member port");
      continue;
    }
    if (!one_each) {
      ++ambiguous;
      continue;
    }
    const size_t n = leaf[static_cast<size_t>(e.members.front())]->size() / static_cast<size_t>(es);
    bool same_count = true;
    for (int m : e.members) same_count &= leaf[static_cast<size_t>(m)]->size() == n * static_cast<size_t>(es);
    if (!same_count || h.count != n || f.data.size() < wire::off::payload + n * static_cast<size_t>(es)) {
      diffs.push_back(what + ": COUNT " + std::to_string(h.count) + ", the contributions' " +
                      (same_count ? std::to_string(n) : std::string("differ")));
      continue;
    }
    std::vector<uint32_t> vals(static_cast<size_t>(cfg.in.ports), 0);
    std::vector<bool> member(static_cast<size_t>(cfg.in.ports), false);
    for (int m : e.members) member[static_cast<size_t>(m)] = true;
    for (size_t i = 0; i < n; ++i) {
      for (int m : e.members) vals[static_cast<size_t>(m)] = elem(leaf[static_cast<size_t>(m)]->data() + i * es);
      const uint32_t want = cfg.exact_sum() ? panama::xref::exact_sum(xf, ftz, vals, member)
                                            : panama::ref::tree_sum(cfg.in.format, ftz, vals, member);
      const uint32_t got = elem(f.data.data() + wire::off::payload + i * es);
      if (got != want) {
        char b[96];
        std::snprintf(b, sizeof b, ": element %zu is 0x%x, the sum of its contributions 0x%x", i, got, want);
        diffs.push_back(what + b);
        break;
      }
    }
    ++checked;
  }
  return {checked, ambiguous};
}

// Whether a run dropped frames for reasons that depend on timing: buffer overflow, timeouts, and
// bypass_overflow beyond the frames longer than the whole bypass half (rule 9: those are dropped
// whatever the timing). Calling a run exact when it is not can only make a comparison fail.
bool drops_by_timing(const model::Result& r, const Config& cfg, const std::vector<std::vector<model::InFrame>>& in) {
  for (size_t p = 0; p < r.port_counters.size(); ++p) {
    const auto& c = r.port_counters[p];
    uint64_t oversized = 0;
    // (A frame given lane by lane may break the tkeep contract: rx_error whatever its length.)
    for (const auto& f : in[p]) oversized += f.keep.empty() && f.data.size() > static_cast<size_t>(cfg.bypass_bytes);
    if (c[kOverflow] || c[kTimeout] || c[kBypassOverflow] != oversized) return true;
  }
  return false;
}

int compare(const ReplayArgs& a) {
  const Config cfg = load_config(a.rtl);
  const wire::CtxFile ctx = load_contexts(a, cfg);
  const auto in = load_inputs(a.in_dir, cfg);
  const model::Result m = run_engine("model", a, cfg, ctx, in);
  const model::Result r = run_engine("rtl", a, cfg, ctx, in);
  std::error_code ec;
  fs::create_directories(a.out_dir, ec);
  if (ec) throw Fatal(a.out_dir + ": cannot create: " + ec.message());
  write_outputs((fs::path(a.out_dir) / "model").string(), m, cfg);
  write_outputs((fs::path(a.out_dir) / "rtl").string(), r, cfg);
  std::vector<std::string> diffs;
  check_invariants("model", m, cfg, in, diffs);
  check_invariants("rtl", r, cfg, in, diffs);
  const auto sums_m = check_sums("model", m, cfg, ctx, in, diffs);
  const auto sums_r = check_sums("rtl", r, cfg, ctx, in, diffs);
  const bool exact = a.backpressure == 0 && !drops_by_timing(m, cfg, in) && !drops_by_timing(r, cfg, in);
  if (exact) {
    for (int p = 0; p < cfg.in.ports; ++p) {
      const auto &x = m.ports[p], &y = r.ports[p];
      size_t i = 0;
      while (i < x.size() && i < y.size() && x[i].data == y[i].data) ++i;
      if (i < x.size() || i < y.size())
        diffs.push_back(port_file(p) + ": first difference at frame " + std::to_string(i) + " (model " +
                        std::to_string(x.size()) + " frames, rtl " + std::to_string(y.size()) + ")");
    }
    std::map<int, std::vector<const wire::Bytes*>> mc, rc;
    for (const auto& f : m.agg) mc[f.context].push_back(&f.data);
    for (const auto& f : r.agg) rc[f.context].push_back(&f.data);
    std::set<int> all;
    for (auto& kv : mc) all.insert(kv.first);
    for (auto& kv : rc) all.insert(kv.first);
    for (int c : all) {
      const auto &x = mc[c], &y = rc[c];
      size_t i = 0;
      while (i < x.size() && i < y.size() && *x[i] == *y[i]) ++i;
      if (i < x.size() || i < y.size())
        diffs.push_back("agg.pcap context " + std::to_string(c) + ": first difference at its frame " +
                        std::to_string(i) + " (model " + std::to_string(x.size()) + ", rtl " +
                        std::to_string(y.size()) + ")");
    }
    if (model::counters_json(m) != model::counters_json(r)) {
      const auto jm = model::counters_json(m), jr = model::counters_json(r);
      for (size_t p = 0; p < jm["ports"].size(); ++p)
        for (auto it = jm["ports"][p].begin(); it != jm["ports"][p].end(); ++it)
          if (jr["ports"][p][it.key()] != it.value())
            diffs.push_back("counters: port " + std::to_string(p) + " " + it.key() + ": model " + it.value().dump() +
                            ", rtl " + jr["ports"][p][it.key()].dump());
      if (jm["contexts"] != jr["contexts"]) diffs.push_back("counters: contexts differ");
      if (jm["agg_tx_frames"] != jr["agg_tx_frames"]) diffs.push_back("counters: agg_tx_frames differ");
    }
  }
  std::printf(
      "compare: %s; %zu port frames, %zu built frames (model), %llu/%llu cycles (model/rtl)\n",
      exact ? "exact comparison" : "invariants only (back-pressure, overflow or timeout)",
      [&] {
        size_t n = 0;
        for (auto& v : m.ports) n += v.size();
        return n;
      }(),
      m.agg.size(), static_cast<unsigned long long>(m.cycles), static_cast<unsigned long long>(r.cycles));
  std::printf(
      "compare: sums of built frames against their contributions: model %zu checked (%zu ambiguous), rtl %zu "
      "checked (%zu ambiguous)\n",
      sums_m.first, sums_m.second, sums_r.first, sums_r.second);
  for (const auto& d : diffs) std::printf("  DIFF %s\n", d.c_str());
  std::printf("compare: %s\n", diffs.empty() ? "equal" : "DIFFERENT");
  return diffs.empty() ? 0 : 1;
}

// Model speed: full-rate contributions of one context on every port (plus some bypass traffic),
// reported in simulated cycles and frames per wall-clock second.
int bench(const std::string& rtl, int vectors, int elems) {
  const Config cfg = load_config(rtl);
  if (elems <= 0 || elems > cfg.max_elems) elems = cfg.max_elems;
  wire::CtxFile ctx;
  wire::CtxEntry e;
  e.jid = 1;
  for (int p = 0; p < cfg.in.ports; ++p) e.members.push_back(p);
  e.group_mac = wire::parse_mac("01:00:5e:00:00:01");
  e.group_ip = wire::parse_ipv4("239.0.0.1");
  ctx.contexts.push_back(e);
  std::vector<std::vector<model::InFrame>> in(cfg.in.ports);
  uint64_t frames = 0;
  for (int p = 0; p < cfg.in.ports; ++p)
    for (int v = 0; v < vectors; ++v) {
      wire::FrameSpec s;
      s.elem_bytes = cfg.fmt.elem_bytes;
      s.hdr.jid = 1;
      s.hdr.vid = static_cast<uint32_t>(v);
      s.payload.assign(static_cast<size_t>(elems) * cfg.fmt.elem_bytes, static_cast<uint8_t>(p + v));
      in[p].push_back({wire::build_frame(s), false});
      ++frames;
      if (v % 4 == 3) {
        wire::Bytes b(200, 0x11);
        b[12] = 0x08;
        in[p].push_back({b, false});
        ++frames;
      }
    }
  const auto t0 = std::chrono::steady_clock::now();
  const model::Result r = model::run(cfg, ctx, in, model::Options{});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "%d ports x %g Gbit/s @ %g MHz (W=%d): %llu frames in, %zu sums, %llu cycles, %.3f s: "
      "%.0f cycles/s, %.0f frames/s\n",
      cfg.in.ports, cfg.in.gbps, cfg.in.mhz, cfg.bus_bits, static_cast<unsigned long long>(frames), r.agg.size(),
      static_cast<unsigned long long>(r.cycles), s, r.cycles / s, frames / s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"panama-sim: packet-level simulation of a generated PANAMA accelerator"};
  app.require_subcommand(1);
  ReplayArgs a;
  auto add_common = [&](CLI::App* s, bool engine) {
    s->add_option("--design,--rtl", a.rtl, kDesignHelp)->envname("PANAMA_DESIGN")->required();
    if (engine) s->add_option("--engine", a.engine, "rtl or model")->required()->check(CLI::IsMember({"rtl", "model"}));
    s->add_option("--contexts", a.contexts, "CTX.json")->required();
    s->add_option("--in-dir", a.in_dir, "directory of portNN.pcap inputs")->required();
    s->add_option("--out-dir", a.out_dir, "directory for portNN.pcap, agg.pcap, counters.json")->required();
    s->add_option("--seed", a.seed, "random seed for --idle and --backpressure");
    s->add_option("--idle", a.idle, "percent of random idle receive cycles (0-99)")->check(CLI::Range(0, 99));
    s->add_option("--backpressure", a.backpressure, "percent of random transmit stalls (0-99)")
        ->check(CLI::Range(0, 99));
    auto* tr = s->add_option("--trace", a.rtl_extras.trace,
                             "rtl engine: write an FST waveform of the run (a separate --trace-fst build)");
    s->add_option("--coverage", a.rtl_extras.coverage,
                  "rtl engine: write verilator coverage points (a separate --coverage build)")
        ->excludes(tr);
    s->add_flag("--stats", a.rtl_extras.stats,
                "rtl engine: print the measured receive and m_agg beats per cycle and the drops");
  };
  CLI::App* rep = app.add_subcommand("replay", "replay per-port pcaps through one engine");
  add_common(rep, true);
  CLI::App* cmp = app.add_subcommand("compare", "run both engines and compare");
  add_common(cmp, false);
  std::string tg_rtl, tg_scenario, tg_out;
  uint64_t tg_seed = 1;
  int tg_vectors = 20;
  CLI::App* tg = app.add_subcommand("gen-traffic", "write a regression scenario's pcaps and CTX.json");
  tg->add_option("--design,--rtl", tg_rtl, kDesignHelp)->envname("PANAMA_DESIGN")->required();
  tg->add_option("--scenario", tg_scenario,
                 "line-rate, mixed, faults, timeout, fill, refill, skips, late, abuse or abuse-exact")
      ->required();
  tg->add_option("--seed", tg_seed, "random seed");
  tg->add_option("--vectors", tg_vectors, "vectors per job")->check(CLI::Range(1, 100000));
  tg->add_option("--out-dir", tg_out, "writes OUT/ctx.json and OUT/in/portNN.pcap")->required();
  std::string bench_rtl;
  int bench_vectors = 2000, bench_elems = 0;
  CLI::App* bn = app.add_subcommand("bench", "measure the model's speed on synthetic full-rate traffic");
  bn->add_option("--design,--rtl", bench_rtl, kDesignHelp)->envname("PANAMA_DESIGN")->required();
  bn->add_option("--vectors", bench_vectors, "vectors per port")->check(CLI::Range(1, 10000000));
  bn->add_option("--elems", bench_elems, "elements per frame (default MAX_ELEMS)");
  if (const auto code = panama::parse_command_line(app, argc, argv, "panama-sim")) return *code;
  try {
    if (bn->parsed()) return bench(bench_rtl, bench_vectors, bench_elems);
    if (tg->parsed()) {
      traffic::generate(load_config(tg_rtl), tg_scenario, tg_seed, tg_vectors, tg_out);
      return 0;
    }
    if (cmp->parsed()) return compare(a);
    return replay(a);
  } catch (const std::exception& e) {
    std::cerr << "panama-sim: " << e.what() << "\n";
    return 1;
  }
}
