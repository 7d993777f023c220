// panama-host: the host driver's command line (tools.md, docs/host.md).
//   panama-host worker --iface IF --job J --rank R --world W --trees T --in GRAD.bin --out RESULT.bin ...
//   panama-host switch --rtl DIR --contexts CTX.json --ifaces IF0,IF1,... ...
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>

#include "afpacket.h"
#include "controller.h"
#include "allreduce.h"
#include "switch.h"
#include "rtl_engine.h"
#include "config.h"
#include "dpdk_transport.h"
#include "tins_transport.h"
#include "udp_transport.h"

using namespace panama;
using namespace panama::host;

namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw std::runtime_error("cannot read " + path);
  return b;
}

void write_file(const std::string& path, const uint8_t* p, size_t n) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + path);
    out.write(reinterpret_cast<const char*>(p), static_cast<std::streamsize>(n));
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
}

int iface_mtu(const std::string& iface) {
  std::ifstream in("/sys/class/net/" + iface + "/mtu");
  int mtu = 0;
  if (!(in >> mtu) || mtu < 68) throw std::runtime_error("cannot read the MTU of interface '" + iface + "'");
  return mtu;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, ',')) v.push_back(x);
  return v;
}

// --progress: a CSV line every interval (written when the all-reduce sends or receives): the
// goodput of the results of this job (payload bits of RESULT frames received per second), the
// transmit rate (frame bits sent per second) and each tree's window.
class ProgressTransport : public Transport {
 public:
  ProgressTransport(Transport& t, const std::string& path, double interval, uint16_t jid, int trees)
      : t_(t), interval_(interval), jid_(jid), trees_(trees) {
    f_ = std::fopen(path.c_str(), "w");
    if (!f_) throw std::runtime_error("cannot write " + path);
    std::fprintf(f_, "time_s,interval_s,goodput_mbps,tx_mbps,results,results_ce");
    for (int t = 0; t < trees; ++t) std::fprintf(f_, ",cwnd%d", t);
    std::fprintf(f_, "\n");
    start_ = last_ = Clock::now();
  }
  ~ProgressTransport() override {
    line(Clock::now());
    std::fclose(f_);
  }
  void attach(const AllReduce* ar) { ar_ = ar; }
  void send(const wire::Bytes& frame) override {
    t_.send(frame);
    tx_bytes_ += frame.size();
    tick();
  }
  bool recv(wire::Bytes& frame, Clock::time_point deadline) override {
    const bool r = t_.recv(frame, deadline);
    if (r && frame.size() >= wire::kHeaderBytes) {
      const auto h = wire::parse_header(frame);
      if (h.result() && h.jid == jid_) {
        res_bytes_ += frame.size() - wire::kHeaderBytes;
        ++results_;
        if ((frame[15] & 3) == 3) ++ce_;
      }
    }
    tick();
    return r;
  }

 private:
  void tick() {
    const auto now = Clock::now();
    if (std::chrono::duration<double>(now - last_).count() >= interval_) line(now);
  }
  void line(Clock::time_point now) {
    const double dt = std::chrono::duration<double>(now - last_).count();
    if (dt <= 0) return;
    std::fprintf(f_, "%.3f,%.3f,%.3f,%.3f,%llu,%llu", std::chrono::duration<double>(now - start_).count(), dt,
                 res_bytes_ * 8 / dt / 1e6, tx_bytes_ * 8 / dt / 1e6, static_cast<unsigned long long>(results_),
                 static_cast<unsigned long long>(ce_));
    for (int t = 0; t < trees_; ++t) std::fprintf(f_, ",%.3f", ar_ ? ar_->window(t).cwnd() : 0.0);
    std::fprintf(f_, "\n");
    std::fflush(f_);
    last_ = now;
    res_bytes_ = tx_bytes_ = 0;
    results_ = ce_ = 0;
  }
  Transport& t_;
  double interval_;
  uint16_t jid_;
  int trees_;
  const AllReduce* ar_ = nullptr;
  FILE* f_ = nullptr;
  Clock::time_point start_, last_;
  double res_bytes_ = 0, tx_bytes_ = 0;
  uint64_t results_ = 0, ce_ = 0;
};

struct WorkerOpts {
  std::string iface, in, out, backend = "udp", agg_ip, group_ip, format = "fp32", stats, agg_mac, eal, progress,
                              job_desc;
  bool format_given = false;
  double progress_interval = 0.1;
  int job = -1, rank = -1, world = 0, trees = 1, mtu = 0, max_elems = 0, timeout_ms = 2000, iterations = 1;
  int port = wire::kDefaultAggPort;
  int repair_rounds = 16, repair_slots = 8, status_wait_ms = 200;
  std::string first_vid = "0";
  WindowParams win{0, 1, 0, 1.0 / 16, true};  // init/max 0: derived from --trees
  bool no_cc = false;
};

int run_worker(const WorkerOpts& o) {
  if (o.backend != "udp" && o.backend != "tins" && o.backend != "dpdk")
    throw std::runtime_error("--backend must be udp, tins or dpdk (not '" + o.backend + "')");
  if (o.job < 0 || o.job > 0xFFFF) throw std::runtime_error("--job must be 0..65535");
  if (o.iterations < 1) throw std::runtime_error("--iterations must be >= 1");
  // Every path before any work: the output's directory must take a file.
  {
    std::ofstream probe(o.out + ".tmp", std::ios::binary);
    if (!probe) throw std::runtime_error("--out: cannot write " + o.out);
    probe.close();
    std::remove((o.out + ".tmp").c_str());
    if (!o.stats.empty()) {
      std::ofstream ps(o.stats, std::ios::app);
      if (!ps) throw std::runtime_error("--stats: cannot write " + o.stats);
    }
  }
  int design_max = 0;
  std::string format = o.format;
  if (!o.job_desc.empty()) {
    // The design's MAX_ELEMS and FORMAT (controller --job-out): vectors are sized from them, and
    // a request the design would drop is refused here rather than timing out as a silent peer.
    std::ifstream in(o.job_desc);
    if (!in) throw std::runtime_error("--job-desc: cannot open " + o.job_desc);
    nlohmann::json jd;
    try {
      jd = nlohmann::json::parse(in);
      design_max = jd.at("max_elems").get<int>();
      const std::string f = jd.at("format").get<std::string>();
      if (o.format_given && f != o.format)
        throw std::runtime_error("--format " + o.format + ", but the design's FORMAT is " + f);
      format = f;
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("--job-desc " + o.job_desc + ": " + e.what());
    }
    if (design_max < 1) throw std::runtime_error("--job-desc " + o.job_desc + ": max_elems must be >= 1");
    if (o.max_elems > design_max)
      throw std::runtime_error("--max-elems " + std::to_string(o.max_elems) + " exceeds the design's MAX_ELEMS " +
                               std::to_string(design_max) + " (the accelerator would drop every vector)");
  }
  int es = 0;
  if (format == "fp32")
    es = 4;
  else if (format == "bf16" || format == "fp16")
    es = 2;
  else
    throw std::runtime_error("--format must be fp32, bf16 or fp16");
  const int mtu = o.mtu ? o.mtu : iface_mtu(o.iface);
  const int max_elems = o.max_elems ? o.max_elems : design_max ? design_max : 1450 / es;
  if (o.status_wait_ms < 1) throw std::runtime_error("--status-wait-ms must be >= 1");

  JobParams p;
  p.jid = static_cast<uint16_t>(o.job);
  p.rank = o.rank;
  p.world = o.world;
  p.trees = o.trees;
  p.elem_bytes = es;
  p.format = es == 4 ? ref::Fmt::fp32 : (format == "bf16" ? ref::Fmt::bf16 : ref::Fmt::fp16);
  p.repair_rounds = o.repair_rounds;
  p.repair_slots = o.repair_slots;
  p.status_wait_ms = o.status_wait_ms;
  p.count = JobParams::count_for(mtu, max_elems, es);
  {
    const auto v = split(o.first_vid);
    if (v.size() != 1 && static_cast<int>(v.size()) != o.trees)
      throw std::runtime_error("--first-vid: give one VID or one per tree (" + std::to_string(o.trees) + ")");
    for (const auto& x : v) {
      size_t used = 0;
      unsigned long long u = 0;
      try {
        u = std::stoull(x, &used, 10);
      } catch (const std::exception&) {
        used = 0;
      }
      if (x.empty() || used != x.size() || x[0] == '-' || u > 0xFFFFFFFFull)
        throw std::runtime_error("--first-vid: '" + x + "' is not a VID (0..4294967295)");
      p.first_vids.push_back(static_cast<uint32_t>(u));
    }
    if (p.first_vids.size() == 1) p.first_vids.assign(static_cast<size_t>(std::max(1, o.trees)), p.first_vids[0]);
  }
  p.window = o.win;
  if (p.window.max <= 0) p.window.max = std::max(1, 12 / std::max(1, o.trees));
  if (p.window.init <= 0) p.window.init = std::min(4.0, p.window.max);
  p.window.cc = !o.no_cc;
  p.timeout_ms = o.timeout_ms;
  p.agg_port = static_cast<uint16_t>(o.port);
  p.validate();

  std::vector<uint8_t> grad = read_file(o.in);
  if (grad.size() % static_cast<size_t>(es) != 0)
    throw std::runtime_error(o.in + ": size " + std::to_string(grad.size()) + " is not a multiple of " +
                             std::to_string(es) + " bytes");
  // The backend (docs/host.md "Backends"): udp leaves L2-L4 to the kernel; tins and dpdk send the
  // frames the protocol builds as they are, addressed to the next hop's MAC from this interface.
  std::unique_ptr<Transport> tr;
  const wire::Ipv4 agg_ip = wire::parse_ipv4(o.agg_ip), group_ip = wire::parse_ipv4(o.group_ip);
  if (o.backend == "udp") {
    if (!o.agg_mac.empty() || !o.eal.empty())
      throw std::runtime_error("--agg-mac and --eal are for --backend tins|dpdk");
    UdpParams up;
    up.iface = o.iface;
    up.port = static_cast<uint16_t>(o.port);
    up.agg_ip = agg_ip;
    up.group_ip = group_ip;
    auto* u = new UdpTransport(up);
    tr.reset(u);
    p.ip_src = u->local_ip();
  } else {
    if (!o.eal.empty() && o.backend != "dpdk") throw std::runtime_error("--eal is for --backend dpdk");
    RawParams rp;
    rp.iface = o.iface;
    rp.port = static_cast<uint16_t>(o.port);
    rp.agg_ip = agg_ip;
    rp.group_ip = group_ip;
    rp.agg_mac = o.agg_mac;
    rp.eal = o.eal;
    RawTransport* t = o.backend == "tins" ? static_cast<RawTransport*>(new TinsTransport(rp))
                                          : static_cast<RawTransport*>(new DpdkTransport(rp));
    tr.reset(t);
    p.ip_src = t->local_ip();
    p.eth_src = t->local_mac();
    p.eth_dst = t->agg_mac();
  }
  p.ip_dst = agg_ip;
  std::unique_ptr<ProgressTransport> prog;
  if (!o.progress.empty())
    prog = std::make_unique<ProgressTransport>(*tr, o.progress, o.progress_interval, p.jid, p.trees);
  Transport& link = prog ? static_cast<Transport&>(*prog) : *tr;
  AllReduce ar(link, p);
  if (prog) prog->attach(&ar);
  std::vector<uint8_t> buf;
  for (int it = 0; it < o.iterations; ++it) {
    buf = grad;
    ar.reduce_raw(buf.data(), buf.size() / static_cast<size_t>(es));
  }
  write_file(o.out, buf.data(), buf.size());
  const Stats& s = ar.stats();
  nlohmann::ordered_json j;
  j["rank"] = o.rank;
  j["backend"] = o.backend;
  j["elements"] = grad.size() / static_cast<size_t>(es);
  j["count"] = p.count;
  j["iterations"] = o.iterations;
  j["vectors_sent"] = s.vectors_sent;
  j["results"] = s.results;
  j["results_ce"] = s.results_ce;
  j["ce_vids"] = s.ce_vids;  // [[tree, vid], ...]
  j["unseen_vids"] = s.unseen_vids;
  j["ignored"] = s.ignored;
  j["duplicates"] = s.duplicates;
  j["lost"] = s.lost;
  j["repaired"] = s.repaired;
  j["repair_rounds"] = s.repair_rounds;
  j["seconds"] = s.seconds;
  j["goodput_mbps"] = s.seconds > 0 ? s.bytes_reduced * 8 / s.seconds / 1e6 : 0.0;
  j["trees"] = nlohmann::ordered_json::array();
  for (int t = 0; t < p.trees; ++t)
    j["trees"].push_back(
        {{"tid", t}, {"next_vid", ar.next_vid(t)}, {"cwnd", ar.window(t).cwnd()}, {"alpha", ar.window(t).alpha()}});
  if (!o.stats.empty()) {
    std::ofstream st(o.stats);
    if (!st) throw std::runtime_error("cannot write " + o.stats);
    st << j.dump(2) << "\n";
  }
  std::fprintf(stderr, "panama-host worker %d: %s\n", o.rank, j.dump().c_str());
  return 0;
}

struct SwitchOpts {
  std::string rtl, contexts, ifaces, counters, loss_ports, engine = "rtl", control;
  bool prepare = false;
  double duration = 0;
  double export_interval = 1;
  StandInParams sp;
  long idle_cycles = -1;
};

int run_switch(const SwitchOpts& o) {
  if (o.prepare) {
    // Verilate the design's harness now (cached), so that a later start is immediate.
    std::ifstream in(o.rtl + "/config.json");
    if (!in) throw std::runtime_error("cannot open " + o.rtl + "/config.json");
    std::printf("%s\n", rtl::harness_executable(o.rtl, Config::from_json(nlohmann::json::parse(in))).c_str());
    return 0;
  }
  const auto names = split(o.ifaces);
  if (names.empty()) throw std::runtime_error("--ifaces: no interface given");
  if (!o.counters.empty()) {
    // Fail now, not after the run: the counters file must be writable.
    std::ofstream probe(o.counters + ".tmp");
    if (!probe) throw std::runtime_error("--counters: cannot write " + o.counters + ".tmp");
    probe.close();
    std::remove((o.counters + ".tmp").c_str());
  }
  int ports = 0;
  const wire::CtxFile ctx = load_contexts(o.rtl, o.contexts, &ports);
  if (static_cast<int>(names.size()) > ports)
    throw std::runtime_error(std::to_string(names.size()) + " interfaces for a design with " + std::to_string(ports) +
                             " ports");
  for (size_t i = 0; i < ctx.contexts.size(); ++i) {
    const auto& c = ctx.contexts[i];
    for (int p : c.members)
      if (p >= static_cast<int>(names.size()))
        throw std::runtime_error("context " + std::to_string(i) + ": member port " + std::to_string(p) +
                                 " has no interface in --ifaces");
    if (!c.multicast && c.upstream_port >= static_cast<int>(names.size()))
      throw std::runtime_error("context " + std::to_string(i) + ": upstream port has no interface in --ifaces");
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) throw std::runtime_error("--ifaces: an empty interface name");
    for (size_t k = 0; k < i; ++k)
      if (names[k] == names[i])
        throw std::runtime_error("--ifaces: interface '" + names[i] + "' given twice (ports " + std::to_string(k) +
                                 " and " + std::to_string(i) + ")");
  }
  StandInParams sp = o.sp;
  for (const auto& x : split(o.loss_ports)) {
    try {
      size_t used = 0;
      sp.chip.loss_ports.push_back(std::stoi(x, &used));
      if (used != x.size()) throw std::invalid_argument(x);
    } catch (const std::exception&) {
      throw std::runtime_error("--loss-ports: '" + x + "' is not a port number");
    }
  }
  bool timeouts = false;
  for (const auto& c : ctx.contexts) timeouts |= c.timeout_cycles != 0;
  sp.idle_cycles_per_ms = o.idle_cycles >= 0 ? static_cast<uint64_t>(o.idle_cycles) : (timeouts ? 200 : 0);
  std::unique_ptr<ControlServer> ctl;
  // The register map: the counters are read through it (every context slot, so contexts
  // programmed live are counted too), and the control socket needs it.
  RegLayout layout;
  bool have_layout = false;
  try {
    layout = load_regmap(o.rtl);
    have_layout = true;
  } catch (const std::exception&) {
    if (!o.control.empty()) throw;
  }
  if (!o.control.empty()) {
    ctl = std::make_unique<ControlServer>(o.control);
    // Requests are applied between cycles, with the design run idle first; after a write the
    // switch chip re-reads the context table (its multicast groups and passed-down results).
    sp.control = [&](Engine& eng, SwitchChip& chip) {
      bool idle = false, dirty = false;
      ctl->poll([&](const std::string& line) -> std::string {
        std::istringstream is(line);
        std::string cmd, a, v;
        is >> cmd;
        if (cmd.empty()) return "error empty request";
        if (!idle && (cmd == "write" || cmd == "read" || cmd == "contexts")) {
          eng.run_until_idle();
          idle = true;
        }
        auto num = [&](const std::string& x) {
          size_t used = 0;
          const unsigned long long u = std::stoull(x, &used, 0);
          if (used != x.size() || u > 0xFFFFFFFFull) throw std::runtime_error("bad number '" + x + "'");
          return static_cast<uint32_t>(u);
        };
        if (cmd == "write") {
          if (!(is >> a >> v)) return "error usage: write ADDR VALUE";
          eng.reg_write(num(a), num(v));
          dirty = true;
          return "ok";
        }
        if (cmd == "read") {
          if (!(is >> a)) return "error usage: read ADDR";
          char b[32];
          std::snprintf(b, sizeof b, "0x%08X", eng.reg_read(num(a)));
          return b;
        }
        if (cmd == "contexts") {
          const auto t = read_table(layout, [&](uint32_t x) { return eng.reg_read(x); });
          return table_json(t, static_cast<int>(eng.reg_read(layout.g("AGG_PORT")) & 0xFFFF)).dump();
        }
        if (cmd == "counters") {
          nlohmann::ordered_json j;
          j["accelerator"] = read_counters(layout, [&](uint32_t x) { return eng.reg_read(x); });
          j["switch_ports"] = chip.counters_json();
          return j.dump();
        }
        if (cmd == "ping") return "ok";
        return "error unknown request '" + cmd + "' (write, read, contexts, counters, ping)";
      });
      if (dirty) {
        wire::CtxFile f;
        f.agg_port = static_cast<uint16_t>(eng.reg_read(layout.g("AGG_PORT")) & 0xFFFF);
        for (auto& s : read_table(layout, [&](uint32_t x) { return eng.reg_read(x); }))
          f.contexts.push_back(std::move(s.second));
        chip.set_contexts(f);
      }
    };
  }
  AfPacketFabric fab(names);
  auto eng = o.engine == "model" ? make_model_engine(o.rtl, ctx)
                                 : make_rtl_engine(o.rtl, o.contexts, static_cast<int>(names.size()));
  SwitchChip chip(static_cast<int>(names.size()), ctx, sp.chip);

  // SA_RESTART: a stop request must not break a system call in flight (a half-read reply of the
  // RTL harness); the loop notices g_stop between rounds. Every catchable stopping signal.
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);
  std::fprintf(stderr, "panama-host switch: %zu ports, %zu contexts, engine: %s\n", names.size(), ctx.contexts.size(),
               o.engine == "model" ? "SystemC model" : "Verilated RTL");
  // The loop runs in slices so that counters can be exported and --duration honoured.
  const auto start = Clock::now();
  nlohmann::ordered_json j, last_acc;
  std::atomic<bool> slice_stop{false};
  for (;;) {
    // One slice: run until the export interval or a signal.
    const auto slice_end =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.export_interval));
    struct SliceFabric : Fabric {
      Fabric& f;
      Clock::time_point end;
      std::atomic<bool>& stop;
      SliceFabric(Fabric& f_, Clock::time_point e, std::atomic<bool>& s) : f(f_), end(e), stop(s) {}
      int ports() const override { return f.ports(); }
      bool try_recv(int p, wire::Bytes& b) override { return f.try_recv(p, b); }
      void send(int p, const wire::Bytes& b) override { f.send(p, b); }
      void wait(Clock::time_point until) override {
        f.wait(std::min(until, end));
        if (Clock::now() >= end || g_stop.load()) stop.store(true);
      }
    } slice(fab, slice_end, slice_stop);
    slice_stop.store(false);
    std::string err;
    try {
      j = run_standin(slice, *eng, chip, sp, slice_stop);
      if (have_layout) j["accelerator"] = read_counters(layout, [&](uint32_t x) { return eng->reg_read(x); });
      last_acc = j["accelerator"];
    } catch (const std::exception& e) {
      // The engine failed (the RTL harness died): the counters still go out, marked incomplete,
      // with the last accelerator counters read.
      err = e.what();
      j = nlohmann::ordered_json();
      j["accelerator"] = last_acc;
      j["cycles"] = nullptr;
      j["switch_ports"] = chip.counters_json();
    }
    j["send_errors"] = fab.send_errors();
    j["complete"] = err.empty();
    if (!err.empty()) j["error"] = err;
    if (!o.counters.empty()) {
      const std::string tmp = o.counters + ".tmp";
      std::ofstream out(tmp);
      out << j.dump(2) << "\n";
      out.close();
      if (!out || std::rename(tmp.c_str(), o.counters.c_str()) != 0)
        std::fprintf(stderr, "panama-host switch: cannot write %s\n", o.counters.c_str());
    }
    if (!err.empty()) {
      std::printf("%s\n", j.dump(2).c_str());
      std::fflush(stdout);
      throw std::runtime_error(err);
    }
    const double el = std::chrono::duration<double>(Clock::now() - start).count();
    if (g_stop.load() || (o.duration > 0 && el >= o.duration)) break;
  }
  std::printf("%s\n", j.dump(2).c_str());
  std::fflush(stdout);
  return 0;
}

struct ControllerOpts {
  std::string regmap, contexts, writes, control, members, mode = "multicast", group_mac, group_ip, src_mac, src_ip,
                                                          disable, apply, tids, job_out;
  int job = -1, trees = 1, index = 0, upstream_port = -1, agg_port = -1;
  uint32_t timeout_cycles = 0;
  bool no_enable = false, show = false, counters = false, json = false;
};

std::vector<int> int_list(const std::string& s, const char* what) {
  std::vector<int> v;
  for (const auto& x : split(s)) {
    size_t used = 0;
    int n = -1;
    try {
      n = std::stoi(x, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (x.empty() || used != x.size() || n < 0)
      throw std::runtime_error(std::string(what) + ": '" + x + "' is not a number");
    v.push_back(n);
  }
  return v;
}

int run_controller(const ControllerOpts& o) {
  const RegLayout l = load_regmap(o.regmap);
  ProgramPlan plan;
  plan.enable = !o.no_enable;
  if (!o.contexts.empty()) {
    if (o.job >= 0) throw std::runtime_error("give either --contexts or --job, not both");
    const wire::CtxFile f = wire::load_ctx(o.contexts, l.ports, l.contexts);
    plan.whole_table = true;
    plan.agg_port = f.agg_port;
    for (size_t i = 0; i < f.contexts.size(); ++i) plan.program.emplace_back(static_cast<int>(i), f.contexts[i]);
  } else if (o.job >= 0) {
    if (o.job > 0xFFFF) throw std::runtime_error("--job must be 0..65535");
    if (o.trees < 1 || o.trees > 256) throw std::runtime_error("--trees must be 1..256");
    std::vector<int> tids;
    if (o.tids.empty())
      for (int t = 0; t < o.trees; ++t) tids.push_back(t);
    else
      tids = int_list(o.tids, "--tids");
    if (static_cast<int>(tids.size()) != o.trees) throw std::runtime_error("--tids: give one TID per tree");
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
    for (int t = 0; t < o.trees; ++t) {
      if (tids[static_cast<size_t>(t)] > 255) throw std::runtime_error("--tids: a TID is 0..255");
      e.tid = static_cast<uint8_t>(tids[static_cast<size_t>(t)]);
      plan.program.emplace_back(o.index + t, e);
    }
    plan.agg_port = o.agg_port;
  } else {
    plan.agg_port = o.agg_port;
  }
  plan.disable = int_list(o.disable, "--disable");
  for (int c : plan.disable)
    if (c >= l.contexts) throw std::runtime_error("--disable: context " + std::to_string(c) + " out of range");
  std::vector<RegWrite> w = plan_writes(l, plan);
  if (!o.apply.empty()) {
    std::ifstream in(o.apply);
    if (!in) throw std::runtime_error("cannot open " + o.apply);
    std::stringstream ss;
    ss << in.rdbuf();
    for (auto& x : parse_writes(ss.str())) w.push_back(std::move(x));
  }
  if (w.empty() && !o.show && !o.counters && o.job_out.empty())
    throw std::runtime_error(
        "nothing to do: give --contexts, --job, --disable, --agg-port, --apply, --show or --counters");
  if (o.control.empty()) {
    if (o.writes.empty() && o.job_out.empty())
      throw std::runtime_error("give --writes FILE (offline list) and/or --control PATH (live)");
    if (o.show || o.counters) throw std::runtime_error("--show and --counters need --control");
  }
  // Every output path is checked before anything is written anywhere.
  for (const std::string* f : {&o.writes, &o.job_out}) {
    if (f->empty() || *f == "-") continue;
    std::ofstream probe(*f, std::ios::app);
    if (!probe) throw std::runtime_error("cannot write " + *f);
  }
  std::unique_ptr<ControlClient> cc;
  if (!o.control.empty()) {
    cc = std::make_unique<ControlClient>(o.control);
    // Identity before any write: a register map of another design (other PORTS, CONTEXTS, ...)
    // would put fields at the wrong addresses.
    const std::string diff = check_identity(l, [&](uint32_t a) { return cc->read(a); });
    if (!diff.empty())
      throw std::runtime_error("the design behind " + o.control + " does not match " + o.regmap + ": " + diff +
                               "; nothing written");
  }
  if (!o.writes.empty()) {
    const std::string text = format_writes(w);
    if (o.writes == "-") {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      std::ofstream out(o.writes);
      out << text;
      if (!out) throw std::runtime_error("cannot write " + o.writes);
    }
  }
  if (!o.job_out.empty()) {
    // The job description a worker reads (--job-desc): what the design accepts.
    auto ident = [&](const std::string& n) -> uint32_t {
      for (const auto& [k, v] : l.identity)
        if (k == n) return v;
      throw std::runtime_error("regmap.json has no " + n + " register");
    };
    const uint32_t fmt = ident("FORMAT") & 3u;
    nlohmann::ordered_json jd;
    jd["ports"] = l.ports;
    jd["max_elems"] = ident("MAX_ELEMS");
    jd["format"] = fmt == 0 ? "fp32" : fmt == 1 ? "bf16" : fmt == 2 ? "fp16" : "unknown";
    jd["ftz"] = (ident("FORMAT") >> 8 & 1u) != 0;
    if (o.job >= 0) {
      jd["job"] = o.job;
      jd["trees"] = o.trees;
    }
    std::ofstream out(o.job_out);
    out << jd.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + o.job_out);
  }
  if (!cc) return 0;
  for (const auto& x : w) cc->write(x.addr, x.value);
  // Read back: every slot to be enabled must be, with the fields written; disabled ones off.
  int bad = 0;
  if (!plan.program.empty() || !plan.disable.empty()) {
    std::vector<uint32_t> status;
    const auto table = read_table(
        l, [&](uint32_t a) { return cc->read(a); }, &status);
    for (const auto& s : plan.program) {
      const uint32_t st = status[static_cast<size_t>(s.first)];
      if (!plan.enable) continue;
      if (!(st & 1u)) {
        std::fprintf(stderr, "panama-host: context %d: the accelerator refused to enable it (CTX_STATUS 0x%X)\n",
                     s.first, st);
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
  }
  if (o.show) std::printf("%s\n", cc->request("contexts").c_str());
  if (o.counters) {
    const auto j = read_counters(l, [&](uint32_t a) { return cc->read(a); });
    if (o.json)
      std::printf("%s\n", j.dump().c_str());
    else
      std::printf("%s", counters_table(j).c_str());
  }
  if (!w.empty())
    std::fprintf(stderr, "panama-host controller: %zu register writes applied through %s\n", w.size(),
                 o.control.c_str());
  return bad ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"panama-host: host driver and switch stand-in for the PANAMA-style accelerator"};
  app.require_subcommand(1);

  WorkerOpts w;
  auto* wk = app.add_subcommand("worker", "all-reduce GRAD.bin with the job's other workers");
  wk->add_option("--iface", w.iface, "network interface towards the accelerator")->required();
  wk->add_option("--job", w.job, "job id (JID) 0..65535")->required();
  wk->add_option("--rank", w.rank, "this worker's rank 0..world-1")->required();
  wk->add_option("--world", w.world, "number of workers")->required();
  wk->add_option("--trees", w.trees, "aggregation trees (TIDs 0..T-1)")->default_val(1);
  wk->add_option("--in", w.in, "input: little-endian elements")->required();
  wk->add_option("--out", w.out, "output: the sum, same layout")->required();
  wk->add_option("--backend", w.backend,
                 "udp (kernel sockets), tins (raw frames through libtins) or dpdk (raw frames through DPDK)")
      ->default_val("udp");
  wk->add_option("--agg-mac", w.agg_mac,
                 "tins/dpdk: eth.dst of contributions (default: the kernel's neighbour entry for the aggregator "
                 "or its gateway, else ARP)");
  wk->add_option("--eal", w.eal,
                 "dpdk: EAL arguments as one value (--eal=\"...\"), blank-separated, replacing the default (--no-huge "
                 "-m 64 --no-pci "
                 "--no-shconf --vdev=net_af_packet0,iface=IF ...; docs/host.md)");
  wk->add_option("--agg-ip", w.agg_ip, "aggregator (tree root) IPv4 address")->required();
  wk->add_option("--group-ip", w.group_ip, "the job's multicast group address")->required();
  wk->add_option("--port", w.port, "aggregation UDP port")->default_val(9056)->check(CLI::Range(1, 65535));
  wk->add_option("--format", w.format, "element format fp32|bf16|fp16 (default: the job description's, else fp32)");
  wk->add_option("--job-desc", w.job_desc,
                 "job description from `controller --job-out`: the design's MAX_ELEMS and FORMAT");
  wk->add_option("--mtu", w.mtu, "MTU (default: the interface's)")->check(CLI::Range(68, 65535));
  wk->add_option("--max-elems", w.max_elems, "accelerator MAX_ELEMS (default floor(1450/ES))")
      ->check(CLI::Range(1, 65535));
  wk->add_option("--first-vid", w.first_vid,
                 "VID of the first vector: one for every tree or V0,V1,... per tree (a restarted worker "
                 "continues where the job's contexts are: the previous run's stats next_vid)")
      ->default_val("0");
  wk->add_option("--window-init", w.win.init, "initial window, vectors per tree (default min(4, max))");
  wk->add_option("--window-min", w.win.min, "window floor")->default_val(1);
  wk->add_option("--window-max", w.win.max, "window ceiling per tree (default max(1, floor(12 / T)))");
  wk->add_option("--ecn-gain", w.win.gain, "DCTCP gain g")->default_val(1.0 / 16);
  wk->add_flag("--no-cc", w.no_cc, "fixed window (--window-init), ECN ignored");
  wk->add_option("--timeout-ms", w.timeout_ms, "error after this long without a new result")->default_val(2000);
  wk->add_option("--repair-rounds", w.repair_rounds, "loss repair rounds reserved per call and tree (0: off)")
      ->default_val(16)
      ->check(CLI::Range(0, 64));
  wk->add_option("--repair-slots", w.repair_slots, "ignored (every vector has a repair slot in every round)")
      ->default_val(8)
      ->check(CLI::Range(1, 4096));
  wk->add_option("--status-wait-ms", w.status_wait_ms, "wait for a repair round's status before going on")
      ->default_val(200);
  wk->add_option("--iterations", w.iterations, "all-reduce the input this many times (benchmark)")->default_val(1);
  wk->add_option("--stats", w.stats, "write statistics as JSON here");
  wk->add_option("--progress", w.progress, "write a CSV line every --progress-interval: goodput, tx rate, windows");
  wk->add_option("--progress-interval", w.progress_interval, "seconds")
      ->default_val(0.1)
      ->check(CLI::Range(0.001, 60.0));

  SwitchOpts s;
  auto* sw = app.add_subcommand("switch", "switch stand-in: accelerator engine + switch chip on interfaces");
  sw->add_option("--rtl", s.rtl, "generator output directory (config.json)")->required();
  sw->add_option("--contexts", s.contexts, "CTX.json")->required();
  sw->add_option("--ifaces", s.ifaces, "IF0,IF1,...: the interface of each port")->required();
  sw->add_option("--engine", s.engine, "rtl (the Verilated design, default) or model (the SystemC model)")
      ->check(CLI::IsMember({"rtl", "model"}));
  sw->add_flag("--prepare", s.prepare, "only verilate the design for the rtl engine (cached), then exit");
  sw->add_option("--rate-mbps", s.sp.chip.rate_mbps, "egress drain rate per port, Mbit/s (0 = unlimited)")
      ->default_val(0);
  sw->add_option("--ecn-threshold", s.sp.chip.ecn_threshold, "mark CE above this queue length, packets")
      ->default_val(85);
  sw->add_option("--queue-limit", s.sp.chip.queue_limit, "egress queue limit, packets")->default_val(1000);
  sw->add_option("--loss", s.sp.chip.loss, "fault injection: drop probability per frame in and out")
      ->default_val(0)
      ->check(CLI::Range(0.0, 1.0));
  sw->add_option("--dup", s.sp.chip.dup, "fault injection: duplicate probability per frame in and out")
      ->default_val(0)
      ->check(CLI::Range(0.0, 1.0));
  sw->add_option("--loss-ports", s.loss_ports, "ports the loss and duplication apply to, P0,P1,... (default: all)");
  sw->add_option("--control", s.control,
                 "serve a control socket (Unix stream socket at this path) for panama-host controller");
  sw->add_option("--loss-seed", s.sp.chip.loss_seed, "seed of the loss")->default_val(1);
  sw->add_option("--counters", s.counters, "export counters JSON here (every --export-interval and at exit)");
  sw->add_option("--export-interval", s.export_interval, "seconds")->default_val(1)->check(CLI::Range(0.01, 3600.0));
  sw->add_option("--duration", s.duration, "stop after this many seconds (0: at SIGINT/SIGTERM)")->default_val(0);
  sw->add_option("--idle-cycles-per-ms", s.idle_cycles,
                 "simulated cycles per quiet ms (default 200 when a context has a timeout, else 0)");

  ControllerOpts c;
  auto* ct = app.add_subcommand("controller", "program the accelerator's contexts (live or as a register-write list)");
  ct->add_option("--regmap", c.regmap, "regmap.json, or the generator output directory holding it")->required();
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
  ct->add_flag("--show", c.show, "live: print the context table read back from the registers (JSON)");
  ct->add_flag("--counters", c.counters, "live: print the counters read from the registers (a table; --json)");
  ct->add_flag("--json", c.json, "--counters as one line of JSON");
  ct->add_option("--job-out", c.job_out, "write the job description for the workers (MAX_ELEMS, FORMAT) here");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    w.format_given = wk->count("--format") > 0;
    if (wk->parsed()) return run_worker(w);
    if (ct->parsed()) return run_controller(c);
    return run_switch(s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "panama-host: %s\n", e.what());
    return 1;
  }
}
