// `panama-host controller` (tools.md, docs/host.md): programs the accelerator's contexts, live
// through a stand-in's control socket or a board's management over Ethernet (docs/mgmt.md), or
// as a register-write list.
#include <algorithm>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "cli.h"
#include "cli_parse.h"
#include "controller.h"
#include "design.h"
#include "format.h"
#include "mgmt_client.h"
#include "parse_num.h"
#include "wire.h"

namespace panama::host::cli {
namespace {

struct ControllerOpts {
  std::string regmap, contexts, writes, control, target, key, members, mode = "multicast", group_mac, group_ip, src_mac,
                                                                       src_ip, disable, apply, tids, job_out;
  int job = -1, trees = 1, index = 0, upstream_port = -1, agg_port = -1;
  uint32_t timeout_cycles = 0;
  bool no_enable = false, show = false, counters = false, json = false;
  std::vector<std::string> fdb;  // --fdb MAC=P0,P1,...: the standalone switch's forwarding table
  long ecn_k = -1;               // --ecn-k: the standalone switch's ECN threshold
  int mgmt_timeout_ms = 300;     // --target: wait for each response this long (5 tries)
};

// --job: the context entry every tree of the job shares (all but the TID).
wire::CtxEntry job_entry(const ControllerOpts& o) {
  wire::CtxEntry e;
  e.jid = static_cast<uint16_t>(o.job);
  e.members = int_list(o.members, "--members");
  if (e.members.empty()) throw std::runtime_error("--members: at least one member port");
  std::sort(e.members.begin(), e.members.end());
  if (std::adjacent_find(e.members.begin(), e.members.end()) != e.members.end())
    throw std::runtime_error("--members: a port given twice");
  e.timeout_cycles = o.timeout_cycles;
  if (o.mode == "multicast") {
    if (o.group_mac.empty() || o.group_ip.empty())
      throw std::runtime_error("multicast mode needs --group-mac and --group-ip");
    e.group_mac = wire::parse_mac(o.group_mac);
    e.group_ip = wire::parse_ipv4(o.group_ip);
  } else if (o.mode == "upstream") {
    if (o.upstream_port < 0 || o.src_mac.empty() || o.src_ip.empty())
      throw std::runtime_error("upstream mode needs --upstream-port, --src-mac and --src-ip");
    e.multicast = false;
    e.upstream_port = o.upstream_port;
    e.src_mac = wire::parse_mac(o.src_mac);
    e.src_ip = wire::parse_ipv4(o.src_ip);
  } else {
    throw std::runtime_error("--mode must be multicast or upstream");
  }
  return e;
}

// --job: one context slot per tree, from --index on.
void plan_job(const ControllerOpts& o, ProgramPlan& plan) {
  if (o.job > 0xFFFF) throw std::runtime_error("--job must be 0..65535");
  if (o.trees < 1 || o.trees > 256) throw std::runtime_error("--trees must be 1..256");
  std::vector<int> tids;
  if (o.tids.empty())
    for (int t = 0; t < o.trees; ++t) tids.push_back(t);
  else
    tids = int_list(o.tids, "--tids");
  if (static_cast<int>(tids.size()) != o.trees) throw std::runtime_error("--tids: give one TID per tree");
  wire::CtxEntry e = job_entry(o);
  for (int t = 0; t < o.trees; ++t) {
    if (tids[static_cast<size_t>(t)] > 255) throw std::runtime_error("--tids: a TID is 0..255");
    e.tid = static_cast<uint8_t>(tids[static_cast<size_t>(t)]);
    plan.program.emplace_back(o.index + t, e);
  }
}

ProgramPlan make_plan(const ControllerOpts& o, const RegLayout& l) {
  ProgramPlan plan;
  plan.enable = !o.no_enable;
  plan.agg_port = o.agg_port;
  if (!o.contexts.empty()) {
    if (o.job >= 0) throw std::runtime_error("give either --contexts or --job, not both");
    const wire::CtxFile f = wire::load_ctx(o.contexts, l.ports, l.contexts);
    plan.whole_table = true;
    plan.agg_port = f.agg_port;
    for (size_t i = 0; i < f.contexts.size(); ++i) plan.program.emplace_back(static_cast<int>(i), f.contexts[i]);
  } else if (o.job >= 0) {
    plan_job(o, plan);
  }
  plan.disable = int_list(o.disable, "--disable");
  for (int c : plan.disable)
    if (c >= l.contexts) throw std::runtime_error("--disable: context " + std::to_string(c) + " out of range");
  return plan;
}

// The plan's writes and those of --apply, with every option and output path checked before
// anything is written anywhere.
std::vector<RegWrite> writes_to_do(const ControllerOpts& o, const RegLayout& l, const ProgramPlan& plan) {
  std::vector<RegWrite> w = plan_writes(l, plan);
  if (!o.apply.empty()) {
    std::ifstream in(o.apply);
    if (!in) throw std::runtime_error("cannot open " + o.apply);
    std::stringstream ss;
    ss << in.rdbuf();
    for (auto& x : parse_writes(ss.str())) w.push_back(std::move(x));
  }
  if (w.empty() && !o.show && !o.counters && o.job_out.empty() && o.fdb.empty() && o.ecn_k < 0)
    throw std::runtime_error(
        "nothing to do: give --contexts, --job, --disable, --agg-port, --apply, --fdb, --ecn-k, --show or --counters");
  if ((!o.fdb.empty() || o.ecn_k >= 0) && o.target.empty())
    throw std::runtime_error("--fdb and --ecn-k program a standalone board's switch: they need --target");
  if (!o.control.empty() && !o.target.empty()) throw std::runtime_error("give either --control or --target, not both");
  if (!o.target.empty() && o.key.empty()) throw std::runtime_error("--target needs --key FILE (the board's key)");
  if (!o.key.empty() && o.target.empty()) throw std::runtime_error("--key needs --target");
  if (o.control.empty() && o.target.empty()) {
    if (o.writes.empty() && o.job_out.empty())
      throw std::runtime_error("give --writes FILE (offline list) and/or --control PATH or --target IP (live)");
    if (o.show || o.counters) throw std::runtime_error("--show and --counters need --control or --target");
  }
  for (const std::string* f : {&o.writes, &o.job_out}) {
    if (f->empty() || *f == "-") continue;
    if (!can_create_tmp(*f)) throw std::runtime_error("cannot write " + *f);
  }
  return w;
}

// A live register file: the stand-in's control socket or a board's management over Ethernet.
class LiveBus {
 public:
  virtual ~LiveBus() = default;
  virtual uint32_t read(uint32_t a) = 0;
  virtual void write_all(const std::vector<RegWrite>& w) = 0;
  virtual std::string contexts_json(const RegLayout& l) = 0;
  virtual std::string where() const = 0;
  // The management block's own counters (board only), as one JSON object; null otherwise.
  virtual nlohmann::ordered_json mgmt_counters(const std::string&) { return nullptr; }
  // A standalone board's switch (docs/fpga.md "Standalone"): its counters, null without one.
  virtual nlohmann::ordered_json switch_counters(const std::string&, int) { return nullptr; }
  // Writes its forwarding table (entries in order, the rest invalid) and ECN threshold (< 0:
  // unchanged); throws when the board has no switch.
  virtual void program_switch(const std::string&, const std::vector<std::string>&, long) {
    throw std::runtime_error("only a board (--target) has a switch");
  }
};

class ControlBus : public LiveBus {
 public:
  explicit ControlBus(const std::string& path) : cc_(path), path_(path) {}
  uint32_t read(uint32_t a) override { return cc_.read(a); }
  void write_all(const std::vector<RegWrite>& w) override {
    for (const auto& x : w) cc_.write(x.addr, x.value);
  }
  std::string contexts_json(const RegLayout&) override { return cc_.request("contexts"); }
  std::string where() const override { return path_; }

 private:
  ControlClient cc_;
  std::string path_;
};

class MgmtBus : public LiveBus {
 public:
  MgmtBus(const std::string& target, const std::string& key_file, int timeout_ms)
      : mc_(target, load_mgmt_key(key_file), timeout_ms) {}
  // Reads go kMgmtMaxOps words at a time (a and the words after it, in order, so a counter's LO
  // word is still read before its HI word), kept until the next write: reading the whole table
  // or every counter takes an eighth of the round trips.
  uint32_t read(uint32_t a) override {
    const auto it = cache_.find(a);
    if (it != cache_.end()) return it->second;
    std::vector<MgmtOp> ops;
    for (uint32_t i = 0; i < static_cast<uint32_t>(kMgmtMaxOps); ++i)
      ops.push_back({proto::kMgmtOpRead, a + 4 * i, 0, 0});
    const auto r = mc_.run(ops);
    if (r.empty() || r[0].status != 0) return mc_.read(a);  // the bus error, reported as one read does
    for (size_t i = 0; i < r.size() && r[i].status == 0; ++i) cache_[a + 4 * static_cast<uint32_t>(i)] = r[i].value;
    return r[0].value;
  }
  void write_all(const std::vector<RegWrite>& w) override {
    cache_.clear();
    std::vector<std::pair<uint32_t, uint32_t>> v;
    for (const auto& x : w) v.emplace_back(x.addr, x.value);
    mc_.write_all(v);
  }
  std::string contexts_json(const RegLayout& l) override {
    return table_json(read_table(l, [&](uint32_t a) { return read(a); }),
                      static_cast<int>(read(l.g("AGG_PORT")) & 0xFFFF))
        .dump();
  }
  std::string where() const override { return mc_.target(); }
  // Six read-only registers just above the register file: regmap.json's "size" + 0x00 .. 0x14.
  nlohmann::ordered_json mgmt_counters(const std::string& regmap) override {
    std::string p = regmap;
    if (std::filesystem::is_directory(p)) p += "/regmap.json";
    std::ifstream in(p);
    const uint32_t base = nlohmann::json::parse(in).at("size").get<uint32_t>();
    std::vector<MgmtOp> ops;
    for (uint32_t i = 0; i < 6; ++i) ops.push_back({proto::kMgmtOpRead, base + 4 * i, 0, 0});
    const auto r = mc_.run(ops);
    nlohmann::ordered_json j;
    const char* names[6] = {"accepted", "bad_port", "malformed", "bad_tag", "replay", "rx_busy"};
    for (size_t i = 0; i < 6; ++i) {
      if (r[i].status != 0) return nullptr;  // a board without them
      j[names[i]] = r[i].value;
    }
    return j;
  }
  nlohmann::ordered_json switch_counters(const std::string& regmap, int ports) override {
    const uint32_t b = switch_base(regmap);
    if (!has_switch(b)) return nullptr;
    std::vector<MgmtOp> ops{{proto::kMgmtOpRead, b + 0x0c, 0, 0},
                            {proto::kMgmtOpRead, b + 0x10, 0, 0},
                            {proto::kMgmtOpRead, b + 0x08, 0, 0}};
    const auto g = mc_.run(ops);
    nlohmann::ordered_json j;
    j["flooded"] = g[0].value;
    j["discarded"] = g[1].value;
    j["ecn_k"] = g[2].value;
    j["ports"] = nlohmann::ordered_json::array();
    for (int p = 0; p < ports; ++p) {
      const uint32_t a = b + 0x20 + 16 * static_cast<uint32_t>(p);
      const auto r = mc_.run({{proto::kMgmtOpRead, a, 0, 0},
                              {proto::kMgmtOpRead, a + 4, 0, 0},
                              {proto::kMgmtOpRead, a + 8, 0, 0},
                              {proto::kMgmtOpRead, a + 12, 0, 0}});
      j["ports"].push_back(
          {{"tx_frames", r[0].value}, {"ce_marked", r[1].value}, {"queue_drops", r[2].value}, {"queued", r[3].value}});
    }
    return j;
  }
  void program_switch(const std::string& regmap, const std::vector<std::string>& fdb, long k) override {
    cache_.clear();
    const uint32_t b = switch_base(regmap);
    if (!has_switch(b))
      throw std::runtime_error("the board at " + mc_.target() +
                               " has no switch registers (generated without --standalone); nothing written");
    const uint32_t entries = mc_.read(b + 4) >> 16, ports = mc_.read(b + 4) >> 8 & 0xff;
    if (fdb.size() > entries)
      throw std::runtime_error("--fdb: " + std::to_string(fdb.size()) + " entries, the board's table holds " +
                               std::to_string(entries));
    std::vector<std::pair<uint32_t, uint32_t>> w;
    for (size_t i = 0; i < fdb.size(); ++i) {
      const auto eq = fdb[i].find('=');
      if (eq == std::string::npos) throw std::runtime_error("--fdb: '" + fdb[i] + "' is not MAC=P0,P1,...");
      const wire::Mac m = wire::parse_mac(fdb[i].substr(0, eq));
      uint32_t mask = 0;
      std::stringstream ss(fdb[i].substr(eq + 1));
      for (std::string item; std::getline(ss, item, ',');) {
        const auto p = parse_unsigned(item, 10, ports ? ports - 1 : 0);
        if (!p) throw std::runtime_error("--fdb: '" + item + "' in '" + fdb[i] + "' is not a port of this board");
        mask |= 1u << *p;
      }
      if (!mask) throw std::runtime_error("--fdb: '" + fdb[i] + "' names no port");
      const uint32_t a = b + proto::kL2swFdbBase + proto::kL2swFdbStride * static_cast<uint32_t>(i);
      // The entry stays invalid while its MAC and mask change.
      w.push_back({a + 4, 0});
      w.push_back({a, uint32_t(m[2]) << 24 | uint32_t(m[3]) << 16 | uint32_t(m[4]) << 8 | m[5]});
      w.push_back({a + 8, mask});
      w.push_back({a + 4, 0x80000000u | uint32_t(m[0]) << 8 | m[1]});
    }
    for (uint32_t i = static_cast<uint32_t>(fdb.size()); i < entries && !fdb.empty(); ++i)
      w.push_back({b + proto::kL2swFdbBase + proto::kL2swFdbStride * i + 4, 0});
    if (k >= 0) w.push_back({b + 8, static_cast<uint32_t>(k)});
    mc_.write_all(w);
    // Read back: the last value written to each address.
    std::map<uint32_t, uint32_t> want;
    for (const auto& x : w) want[x.first] = x.second;
    for (const auto& [a, v] : want) {
      const uint32_t got = mc_.read(a);
      if (got != v) {
        char msg[96];
        std::snprintf(msg, sizeof msg, "switch register 0x%X reads back 0x%08X, 0x%08X was written", a, got, v);
        throw std::runtime_error(msg);
      }
    }
  }

 private:
  // The switch's window: the register map's size + proto::kL2swWindow (docs/fpga.md).
  static uint32_t switch_base(const std::string& regmap) {
    std::string p = regmap;
    if (std::filesystem::is_directory(p)) p += "/regmap.json";
    std::ifstream in(p);
    return nlohmann::json::parse(in).at("size").get<uint32_t>() + proto::kL2swWindow;
  }
  bool has_switch(uint32_t b) {
    const auto r = mc_.run({{proto::kMgmtOpRead, b, 0, 0}});
    return r[0].status == 0 && r[0].value == proto::kL2swId;
  }
  MgmtClient mc_;
  std::map<uint32_t, uint32_t> cache_;
};

// Identity before any write: a register map of another design (other PORTS, CONTEXTS, ...)
// would put fields at the wrong addresses.
std::unique_ptr<LiveBus> connect(const ControllerOpts& o, const RegLayout& l) {
  std::unique_ptr<LiveBus> cc;
  if (!o.target.empty())
    cc = std::make_unique<MgmtBus>(o.target, o.key, o.mgmt_timeout_ms);
  else
    cc = std::make_unique<ControlBus>(o.control);
  const std::string diff = check_identity(l, [&](uint32_t a) { return cc->read(a); });
  if (!diff.empty())
    throw std::runtime_error("the design behind " + cc->where() + " does not match " + o.regmap + ": " + diff +
                             "; nothing written");
  return cc;
}

void write_list(const std::string& path, const std::vector<RegWrite>& w) {
  const std::string text = format_writes(w);
  if (path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  write_file_atomic(path, text.data(), text.size());
}

// What a worker needs of the design (--job-desc): from the design's folder when --regmap names
// one (load_design), else from the register map's identity registers.
struct JobDesc {
  int ports = 0;
  uint32_t max_elems = 0;
  Format format = Format::fp32;
  bool ftz = false;
};

JobDesc job_desc_of(const ControllerOpts& o, const RegLayout& l) {
  if (std::filesystem::is_directory(o.regmap)) {
    const Config c = load_design(o.regmap).config;
    return {c.in.ports, static_cast<uint32_t>(c.max_elems), c.in.format, c.in.subnormals == Subnormals::ftz};
  }
  auto ident = [&](const std::string& n) -> uint32_t {
    for (const auto& [k, v] : l.identity)
      if (k == n) return v;
    throw std::runtime_error("regmap.json has no " + n + " register");
  };
  JobDesc d;
  d.ports = l.ports;
  d.max_elems = ident("MAX_ELEMS");
  try {
    d.format = format_from_code(ident("FORMAT") & 3u);
  } catch (const FormatError& e) {
    throw std::runtime_error(o.regmap + ": FORMAT: " + e.what());
  }
  d.ftz = (ident("FORMAT") >> 8 & 1u) != 0;
  return d;
}

// The job description a worker reads (--job-desc): what the design accepts.
void write_job_desc(const ControllerOpts& o, const RegLayout& l) {
  const JobDesc d = job_desc_of(o, l);
  nlohmann::ordered_json jd;
  jd["ports"] = d.ports;
  jd["max_elems"] = d.max_elems;
  jd["format"] = to_string(d.format);
  jd["ftz"] = d.ftz;
  if (o.job >= 0) {
    jd["job"] = o.job;
    jd["trees"] = o.trees;
  }
  const std::string text = jd.dump(2) + "\n";
  write_file_atomic(o.job_out, text.data(), text.size());
}

// Read back: every slot to be enabled must be, with the fields written; disabled ones off.
// Returns how many slots are not as planned (each named on stderr).
int verify(LiveBus& cc, const RegLayout& l, const ProgramPlan& plan) {
  if (plan.program.empty() && plan.disable.empty()) return 0;
  int bad = 0;
  std::vector<uint32_t> status;
  const auto table = read_table(
      l, [&](uint32_t a) { return cc.read(a); }, &status);
  for (const auto& s : plan.program) {
    const uint32_t st = status[static_cast<size_t>(s.first)];
    if (!plan.enable) continue;
    if (!(st & 1u)) {
      std::fprintf(stderr, "panama-host: context %d: the accelerator refused to enable it (CTX_STATUS 0x%X)\n", s.first,
                   st);
      ++bad;
      continue;
    }
    for (const auto& t : table)
      if (t.first == s.first) {
        const auto want = table_json({s}, 0)["contexts"][0], got = table_json({t}, 0)["contexts"][0];
        if (want != got) {
          std::fprintf(stderr, "panama-host: context %d reads back %s, written %s\n", s.first, got.dump().c_str(),
                       want.dump().c_str());
          ++bad;
        }
      }
  }
  for (int c : plan.disable)
    if (status[static_cast<size_t>(c)] & 1u) {
      std::fprintf(stderr, "panama-host: context %d is still enabled\n", c);
      ++bad;
    }
  return bad;
}

int run_controller(const ControllerOpts& o) {
  catch_stop_signals(StopMode::immediate, "controller");
  const RegLayout l = load_regmap(o.regmap);
  const ProgramPlan plan = make_plan(o, l);
  const std::vector<RegWrite> w = writes_to_do(o, l, plan);
  std::unique_ptr<LiveBus> cc;
  if (!o.control.empty() || !o.target.empty()) cc = connect(o, l);
  if (!o.writes.empty()) write_list(o.writes, w);
  if (!o.job_out.empty()) write_job_desc(o, l);
  if (!cc) return 0;
  cc->write_all(w);
  if (!o.fdb.empty() || o.ecn_k >= 0) cc->program_switch(o.regmap, o.fdb, o.ecn_k);
  const int bad = verify(*cc, l, plan);
  if (o.show) std::printf("%s\n", cc->contexts_json(l).c_str());
  if (o.counters) {
    auto j = read_counters(l, [&](uint32_t a) { return cc->read(a); });
    const auto m = cc->mgmt_counters(o.regmap);
    const auto sw = cc->switch_counters(o.regmap, l.ports);
    if (o.json) {
      if (!m.is_null()) j["management"] = m;
      if (!sw.is_null()) j["switch"] = sw;
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("%s", counters_table(j).c_str());
      if (!m.is_null()) {
        std::printf("management:");
        for (const auto& [k, v] : m.items()) std::printf(" %s %u", k.c_str(), v.get<unsigned>());
        std::printf("\n");
      }
      if (!sw.is_null()) {
        std::printf("switch: flooded %u discarded %u ecn_k %u\n", sw["flooded"].get<unsigned>(),
                    sw["discarded"].get<unsigned>(), sw["ecn_k"].get<unsigned>());
        for (size_t p = 0; p < sw["ports"].size(); ++p) {
          const auto& q = sw["ports"][p];
          std::printf("switch port %zu: tx_frames %u ce_marked %u queue_drops %u queued %u\n", p,
                      q["tx_frames"].get<unsigned>(), q["ce_marked"].get<unsigned>(), q["queue_drops"].get<unsigned>(),
                      q["queued"].get<unsigned>());
        }
      }
    }
  }
  if (!w.empty())
    std::fprintf(stderr, "panama-host controller: %zu register writes applied through %s\n", w.size(),
                 cc->where().c_str());
  return bad ? 1 : 0;
}

void add_controller_options(CLI::App* ct, ControllerOpts& c) {
  ct->add_option("--design,--regmap", c.regmap,
                 "the generated design's folder (holds regmap.json), or a regmap.json; also PANAMA_DESIGN. Old "
                 "name, still accepted: --regmap")
      ->envname("PANAMA_DESIGN")
      ->required();
  ct->add_option("--contexts", c.contexts, "CTX.json: the whole context table (entry i = context i; others disabled)");
  ct->add_option("--job", c.job, "job id: program one context per tree from the flags below");
  ct->add_option("--trees", c.trees, "trees of the job (contexts index..index+T-1, TIDs 0..T-1)")->default_val(1);
  ct->add_option("--tids", c.tids, "TIDs of the trees T0,T1,... (default 0..T-1)");
  ct->add_option("--index", c.index, "first context slot")->default_val(0);
  ct->add_option("--members", c.members, "member ports P0,P1,...");
  ct->add_option("--mode", c.mode, "multicast (root) or upstream (leaf)")->default_val("multicast");
  ct->add_option("--group-mac", c.group_mac, "multicast mode: group MAC");
  ct->add_option("--group-ip", c.group_ip, "multicast mode: group IPv4 address");
  ct->add_option("--upstream-port", c.upstream_port, "upstream mode: port towards the parent");
  ct->add_option("--src-mac", c.src_mac, "upstream mode: this accelerator's MAC");
  ct->add_option("--src-ip", c.src_ip, "upstream mode: this accelerator's IPv4 address");
  ct->add_option("--timeout-cycles", c.timeout_cycles, "context timeout, cycles (0 = never)")->default_val(0);
  ct->add_option("--agg-port", c.agg_port, "write AGG_PORT (effective only while every context is disabled)")
      ->check(CLI::Range(1, 65535));
  ct->add_option("--disable", c.disable, "disable these context slots C0,C1,...");
  ct->add_flag("--no-enable", c.no_enable, "program the fields but leave the contexts disabled");
  ct->add_option("--apply", c.apply, "also apply this register-write list (ADDR VALUE [# comment] lines)");
  ct->add_option("--writes", c.writes, "offline: write the register-write list here ('-': stdout)");
  ct->add_option("--control", c.control, "live: the control socket of a running `panama-host switch --control`");
  ct->add_option(
      "--target", c.target,
      "live: a board's management address IPv4[:PORT] (UDP, default port " + std::to_string(proto::kMgmtUdpPort) + ")");
  ct->add_option("--key", c.key, "--target: file with the board's 128-bit management key (32 hex digits)");
  ct->add_option("--mgmt-timeout-ms", c.mgmt_timeout_ms,
                 "--target: how long to wait for each response before asking again (5 tries in all)")
      ->default_val(300)
      ->check(CLI::Range(10, 60000));
  ct->add_flag("--show", c.show, "live: print the context table read back from the registers (JSON)");
  ct->add_flag("--counters", c.counters, "live: print the counters read from the registers (a table; --json)");
  ct->add_flag("--json", c.json, "--counters as one line of JSON");
  ct->add_option("--fdb", c.fdb,
                 "--target, standalone board: a forwarding-table entry MAC=P0,P1,... (repeat; entries in order, the "
                 "rest cleared)");
  ct->add_option("--ecn-k", c.ecn_k, "--target, standalone board: mark CE above this many frames in a port's queue")
      ->check(CLI::Range(0L, 0xFFFFL));
  ct->add_option("--job-out", c.job_out, "write the job description for the workers (MAX_ELEMS, FORMAT) here");
}

}  // namespace

Runner controller_subcommand(CLI::App& cmd) { return with_options(cmd, add_controller_options, run_controller); }

}  // namespace panama::host::cli
