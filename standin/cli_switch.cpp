// `panama-host switch` (tools.md, docs/host.md): the switch stand-in on real interfaces.
#include <algorithm>
#include <atomic>
#include <climits>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "afpacket.h"
#include "cli.h"
#include "cli_parse.h"
#include "config.h"
#include "design.h"
#include "controller.h"
#include "parse_num.h"
#include "rtl_engine.h"
#include "switch.h"
#include "xdp_fabric.h"

namespace panama::host::cli {
namespace {

struct SwitchOpts {
  std::string rtl, contexts, ifaces, counters, loss_ports, engine = "rtl", control, backend = "afpacket";
  int threads = 1;
  bool prepare = false, shell = false;
  double duration = 0;
  double export_interval = 1;
  StandInParams sp;
  long idle_cycles = -1;
};

// --prepare: verilate the design's harness now (cached), so that a later start is immediate.
int prepare_harness(const SwitchOpts& o) {
  std::printf("%s\n", rtl::harness_executable(o.rtl, load_design(o.rtl).config, o.shell ? "shell" : "").c_str());
  return 0;
}

// Every port a context uses needs an interface, and an interface serves one port.
void check_ifaces(const std::vector<std::string>& names, const wire::CtxFile& ctx, int ports) {
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
}

// The requests of one poll of the control socket, applied between cycles with the design run
// idle first.
class ControlRequests {
 public:
  ControlRequests(Engine& eng, SwitchChip& chip, const RegLayout& layout) : eng_(eng), chip_(chip), layout_(layout) {}
  std::string operator()(const std::string& line);
  // After a write the switch chip re-reads the context table (its multicast groups and
  // passed-down results).
  void finish();

 private:
  uint32_t reg(uint32_t a) { return eng_.reg_read(a); }
  Engine& eng_;
  SwitchChip& chip_;
  const RegLayout& layout_;
  bool idle_ = false, dirty_ = false;
};

uint32_t request_number(const std::string& x) {
  const auto u = parse_unsigned(x, 0, 0xFFFFFFFFull);
  if (!u) throw std::runtime_error("bad number '" + x + "'");
  return static_cast<uint32_t>(*u);
}

std::string ControlRequests::operator()(const std::string& line) {
  std::istringstream is(line);
  std::string cmd, a, v;
  is >> cmd;
  if (cmd.empty()) return "error empty request";
  if (!idle_ && (cmd == "write" || cmd == "read" || cmd == "contexts")) {
    eng_.run_until_idle();
    idle_ = true;
  }
  auto read = [&](uint32_t x) { return reg(x); };
  if (cmd == "write") {
    if (!(is >> a >> v)) return "error usage: write ADDR VALUE";
    eng_.reg_write(request_number(a), request_number(v));
    dirty_ = true;
    return "ok";
  }
  if (cmd == "read") {
    if (!(is >> a)) return "error usage: read ADDR";
    char b[32];
    std::snprintf(b, sizeof b, "0x%08X", reg(request_number(a)));
    return b;
  }
  if (cmd == "contexts")
    return table_json(read_table(layout_, read), static_cast<int>(reg(layout_.g("AGG_PORT")) & 0xFFFF)).dump();
  if (cmd == "counters") {
    nlohmann::ordered_json j;
    j["accelerator"] = read_counters(layout_, read);
    j["switch_ports"] = chip_.counters_json();
    return j.dump();
  }
  if (cmd == "ping") return "ok";
  return "error unknown request '" + cmd + "' (write, read, contexts, counters, ping)";
}

void ControlRequests::finish() {
  if (!dirty_) return;
  wire::CtxFile f;
  f.agg_port = static_cast<uint16_t>(reg(layout_.g("AGG_PORT")) & 0xFFFF);
  for (auto& s : read_table(layout_, [&](uint32_t x) { return reg(x); })) f.contexts.push_back(std::move(s.second));
  chip_.set_contexts(f);
}

void export_counters(const std::string& path, const nlohmann::ordered_json& j) {
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp);
  out << j.dump(2) << "\n";
  out.close();
  if (!out || std::rename(tmp.c_str(), path.c_str()) != 0)
    std::fprintf(stderr, "panama-host switch: cannot write %s\n", path.c_str());
}

StandInParams standin_params(const SwitchOpts& o, const wire::CtxFile& ctx) {
  StandInParams sp = o.sp;
  for (const auto& x : split(o.loss_ports)) {
    const auto port = parse_unsigned(x, 10, INT_MAX);
    if (!port) throw std::runtime_error("--loss-ports: '" + x + "' is not a port number");
    sp.chip.loss_ports.push_back(static_cast<int>(*port));
  }
  bool timeouts = false;
  for (const auto& c : ctx.contexts) timeouts |= c.timeout_cycles != 0;
  sp.idle_cycles_per_ms = o.idle_cycles >= 0 ? static_cast<uint64_t>(o.idle_cycles) : (timeouts ? 200 : 0);
  return sp;
}

// The register map: the counters are read through it (every context slot, so contexts
// programmed live are counted too), and the control socket needs it. Nothing when the design
// has none and no control socket is asked for.
std::optional<RegLayout> load_layout(const SwitchOpts& o) {
  // No register port: the soft engine's counters come from the engine, the board shell's
  // registers are behind management (panama-host controller --target).
  if (o.engine == "soft" || o.shell) return std::nullopt;
  try {
    return load_regmap(o.rtl);
  } catch (const std::exception&) {
    if (!o.control.empty()) throw;
  }
  return std::nullopt;
}

// The loop's control hook: serves the requests pending on the socket.
std::function<void(Engine&, SwitchChip&)> control_hook(ControlServer& ctl, const RegLayout& layout) {
  return [&ctl, &layout](Engine& eng, SwitchChip& chip) {
    ControlRequests req(eng, chip, layout);
    ctl.poll([&](const std::string& line) { return req(line); });
    req.finish();
  };
}

// One thread's stand-in: its links (its own socket on every interface), its engine (the contexts
// whose TID it is given) and its switch chip.
struct Lane {
  std::unique_ptr<Fabric> fab;
  std::unique_ptr<Engine> eng;
  std::unique_ptr<SwitchChip> chip;
};

// The threads' counters as one: numbers summed (max_queue: the largest), a context's entry from
// the thread that owns it (owner[i] for context i).
void merge_into(nlohmann::ordered_json& a, const nlohmann::ordered_json& b, const std::string& key) {
  if (a.is_number_unsigned() && b.is_number_unsigned()) {
    a = key == "max_queue" ? std::max(a.get<uint64_t>(), b.get<uint64_t>()) : a.get<uint64_t>() + b.get<uint64_t>();
  } else if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it)
      if (b.contains(it.key())) merge_into(it.value(), b[it.key()], it.key());
  } else if (a.is_array() && b.is_array()) {
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) merge_into(a[i], b[i], key);
  }
}

nlohmann::ordered_json merge_lanes(const std::vector<nlohmann::ordered_json>& parts, const std::vector<int>& owner) {
  nlohmann::ordered_json j = parts.front();
  for (size_t t = 1; t < parts.size(); ++t) merge_into(j, parts[t], "");
  auto& ctxs = j["accelerator"]["contexts"];
  for (size_t i = 0; ctxs.is_array() && i < ctxs.size() && i < owner.size(); ++i)
    ctxs[i] = parts[static_cast<size_t>(owner[i])]["accelerator"]["contexts"][i];
  return j;
}

// The stand-in's parts and its loop, run in slices so that counters can be exported and
// --duration honoured; with --threads, one loop per lane, each on its own thread.
struct StandIn {
  const SwitchOpts& o;
  const StandInParams& sp;
  const std::optional<RegLayout>& layout;
  std::vector<Lane>& lanes;
  std::vector<int> owner;           // per context: the lane that sums it
  nlohmann::ordered_json last_acc;  // the accelerator counters last read

  // One lane's loop until p.until or a signal; its error (the engine failed) in *err.
  nlohmann::ordered_json run_lane(Lane& l, const StandInParams& p, std::string* err) {
    try {
      nlohmann::ordered_json j = run_standin(*l.fab, *l.eng, *l.chip, p, stop_requested());
      if (layout) j["accelerator"] = read_counters(*layout, [&](uint32_t x) { return l.eng->reg_read(x); });
      return j;
    } catch (const std::exception& e) {
      *err = e.what();  // the engine failed (the RTL harness died)
      return nlohmann::ordered_json();
    }
  }

  // One slice: runs until the export interval or a signal; the counters, with the engine's
  // error if it failed (then with the last accelerator counters read, marked incomplete).
  nlohmann::ordered_json slice() {
    StandInParams p = sp;
    p.until =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.export_interval));
    std::vector<nlohmann::ordered_json> parts(lanes.size());
    std::vector<std::string> errs(lanes.size());
    std::vector<std::thread> th;
    for (size_t t = 1; t < lanes.size(); ++t) th.emplace_back([&, t] { parts[t] = run_lane(lanes[t], p, &errs[t]); });
    parts[0] = run_lane(lanes[0], p, &errs[0]);
    for (auto& x : th) x.join();
    std::string err;
    for (const auto& e : errs)
      if (err.empty()) err = e;
    nlohmann::ordered_json j;
    uint64_t send_errors = 0;
    for (const Lane& l : lanes) send_errors += l.fab->send_errors();
    if (err.empty()) {
      j = merge_lanes(parts, owner);
      last_acc = j["accelerator"];
    } else {
      j["accelerator"] = last_acc;
      j["cycles"] = nullptr;
      std::vector<nlohmann::ordered_json> chips;
      for (const Lane& l : lanes) chips.push_back({{"switch_ports", l.chip->counters_json()}});
      j["switch_ports"] = merge_lanes(chips, {})["switch_ports"];
    }
    j["send_errors"] = send_errors;
    j["complete"] = err.empty();
    if (!err.empty()) j["error"] = err;
    return j;
  }

  int run() {
    const auto start = Clock::now();
    nlohmann::ordered_json j;
    for (;;) {
      j = slice();
      if (!o.counters.empty()) export_counters(o.counters, j);
      if (!j["complete"].get<bool>()) {
        std::printf("%s\n", j.dump(2).c_str());
        std::fflush(stdout);
        throw std::runtime_error(j["error"].get<std::string>());
      }
      const double el = std::chrono::duration<double>(Clock::now() - start).count();
      if (stop_requested().load() || (o.duration > 0 && el >= o.duration)) break;
    }
    std::printf("%s\n", j.dump(2).c_str());
    std::fflush(stdout);
    if (stop_signal() != 0)
      std::fprintf(stderr, "panama-host switch: stopped by %s; final counters written\n", stop_signal_name().c_str());
    return 0;
  }
};

// --shell: where the board's built frames and management responses leave (config.json "board").
BoardSide board_side(const std::string& rtl_dir) {
  const std::string path = rtl_dir + "/config.json";
  const nlohmann::json j = load_design(rtl_dir).json;
  if (!j.contains("board") || !j["board"].contains("shell") || !j["board"].contains("mgmt"))
    throw std::runtime_error("--shell: " + rtl_dir + " is not a board output (panama-gen --board NAME --out DIR)");
  BoardSide b;
  b.agg_port = j["board"]["shell"].value("agg_port", -1);
  b.standalone = j["board"]["shell"].value("standalone", false);
  try {
    b.mgmt_mac = wire::parse_mac(j["board"]["mgmt"].value("mac", ""));
  } catch (const std::exception&) {
    b.agg_port = -1;
  }
  if (b.agg_port < 0) throw std::runtime_error("--shell: " + path + " has a malformed \"board\" entry");
  return b;
}

int run_switch(const SwitchOpts& o) {
  if (o.shell && o.engine != "rtl")
    throw std::runtime_error("--shell runs the Verilated board shell: --engine rtl only");
  if (o.shell && !o.control.empty())
    throw std::runtime_error(
        "--shell: the board's registers are reached over management (panama-host controller --target), not --control");
  if (o.prepare) return prepare_harness(o);
  if (o.threads > 1 && (o.engine != "soft" || o.shell))
    throw std::runtime_error(
        "--threads " + std::to_string(o.threads) +
        ": only --engine soft runs in several threads (the model and the RTL are one design each)");
  if (o.threads > 1 && o.backend != "xdp")
    throw std::runtime_error("--threads " + std::to_string(o.threads) +
                             ": needs --backend xdp (a socket per thread and interface, the frames steered by TID)");
  // A loop's chip has its own egress queues: a drain rate or a queue log would be per loop, not
  // per port (the queue limit and the ECN threshold are per loop, docs/host-standin.md "Threads").
  if (o.threads > 1 && (o.sp.chip.rate_mbps > 0 || !o.sp.queue_log.empty()))
    throw std::runtime_error("--threads " + std::to_string(o.threads) +
                             ": --rate-mbps and --queue-log model one egress queue per port, which needs --threads 1");
  const auto names = split(o.ifaces);
  if (names.empty()) throw std::runtime_error("--ifaces: no interface given");
  // Fail now, not after the run: the counters file must be writable.
  if (!o.counters.empty() && !can_create_tmp(o.counters))
    throw std::runtime_error("--counters: cannot write " + o.counters + ".tmp");
  if (!o.sp.queue_log.empty() && !std::ofstream(o.sp.queue_log, std::ios::trunc))
    throw std::runtime_error("--queue-log: cannot write " + o.sp.queue_log);
  int ports = 0;
  const wire::CtxFile ctx = load_contexts(o.rtl, o.contexts, &ports);
  check_ifaces(names, ctx, ports);
  StandInParams sp = standin_params(o, ctx);
  const std::optional<RegLayout> layout = load_layout(o);
  std::unique_ptr<ControlServer> ctl;
  if (!o.control.empty()) {
    ctl = std::make_unique<ControlServer>(o.control);
    sp.control = control_hook(*ctl, *layout);
  }
  if (o.engine == "soft" && !o.control.empty())
    throw std::runtime_error("--engine soft has no register port: give the contexts with --contexts, not --control");
  std::optional<BoardSide> board;
  if (o.shell) board = board_side(o.rtl);
  // Context i is summed by lane (its TID mod --threads); the XDP program steers by TID the same.
  std::vector<int> owner, tid_thread(256);
  for (size_t t = 0; t < tid_thread.size(); ++t) tid_thread[t] = static_cast<int>(t) % o.threads;
  for (const auto& c : ctx.contexts) owner.push_back(tid_thread[c.tid]);
  std::unique_ptr<XdpPorts> xdp;
  if (o.backend == "xdp") xdp = std::make_unique<XdpPorts>(names, o.threads, ctx.agg_port, tid_thread);
  std::vector<Lane> lanes;
  for (int t = 0; t < o.threads; ++t) {
    Lane l;
    if (xdp)
      l.fab = xdp->fabric(t);
    else
      l.fab = std::make_unique<AfPacketFabric>(names, ctx.agg_port);
    l.eng = o.shell               ? make_shell_engine(o.rtl, static_cast<int>(names.size()))
            : o.engine == "model" ? make_model_engine(o.rtl, ctx)
            : o.engine == "soft"  ? make_soft_engine(load_design(o.rtl).config, ctx)
                                  : make_rtl_engine(o.rtl, o.contexts, static_cast<int>(names.size()));
    ChipParams cp = sp.chip;
    cp.loss_seed += static_cast<uint64_t>(t);  // each lane its own fault sequence
    l.chip = std::make_unique<SwitchChip>(static_cast<int>(names.size()), ctx, cp);
    if (board) l.chip->set_board(*board);
    lanes.push_back(std::move(l));
  }
  catch_stop_signals(StopMode::graceful, "switch");
  std::fprintf(stderr, "panama-host switch: %zu ports, %zu contexts, links: %s, %d thread%s, engine: %s\n",
               names.size(), ctx.contexts.size(), xdp ? xdp->mode().c_str() : "AF_PACKET", o.threads,
               o.threads > 1 ? "s" : "",
               o.shell && board->standalone
                   ? "Verilated standalone board shell (program it with panama-host controller --target; it "
                     "switches by itself: --contexts is not used)"
               : o.shell             ? "Verilated board shell (program it with panama-host controller --target; "
                                       "--contexts sets only this switch's multicast groups)"
               : o.engine == "model" ? "SystemC model"
               : o.engine == "soft"  ? "soft (C++ rules, CPU tree-order sums)"
                                     : "Verilated RTL");
  return StandIn{o, sp, layout, lanes, owner, {}}.run();
}

void add_switch_options(CLI::App* sw, SwitchOpts& s) {
  sw->add_option("--design,--rtl", s.rtl, panama::kDesignHelp)->envname("PANAMA_DESIGN")->required();
  sw->add_option("--contexts", s.contexts, "CTX.json")->required();
  sw->add_option("--ifaces", s.ifaces, "IF0,IF1,...: the interface of each port")->required();
  sw->add_option("--engine", s.engine,
                 "rtl (the Verilated design, default), model (the SystemC model) or soft (C++ rules, CPU sums: "
                 "for benchmarks)")
      ->check(CLI::IsMember({"rtl", "model", "soft"}));
  sw->add_flag("--shell", s.shell,
               "run the whole board shell of a --board output (MAC-side crossings, management over Ethernet, the "
               "core on its own clock) instead of the bare core; its registers are programmed over management, "
               "--contexts gives only this switch's multicast groups");
  sw->add_option("--backend", s.backend,
                 "the links: afpacket (AF_PACKET sockets, default) or xdp (AF_XDP sockets: an XDP program takes "
                 "every frame of the interfaces, docs/host.md \"Benchmark\")")
      ->check(CLI::IsMember({"afpacket", "xdp"}));
  sw->add_option("--threads", s.threads,
                 "loops, each with its own socket on every interface and the contexts whose TID mod THREADS is "
                 "its index (--engine soft --backend xdp for more than 1)")
      ->default_val(1)
      ->check(CLI::Range(1, 16));  // 16 sockets x a 64-frame tx cache: half an interface's 2048 tx frames
  sw->add_flag("--prepare", s.prepare, "only verilate the design for the rtl engine (cached), then exit");
  sw->add_option("--rate-mbps", s.sp.chip.rate_mbps, "egress drain rate per port, Mbit/s (0 = unlimited)")
      ->default_val(0);
  sw->add_option("--ecn-threshold", s.sp.chip.ecn_threshold, "mark CE above this queue length, packets")
      ->default_val(85);
  sw->add_option("--queue-limit", s.sp.chip.queue_limit, "egress queue limit, packets")->default_val(1000);
  sw->add_option("--queue-log", s.sp.queue_log, "CSV of every egress queue's length every --queue-log-interval");
  sw->add_option("--queue-log-interval", s.sp.queue_log_interval, "seconds")
      ->default_val(0.1)
      ->check(CLI::PositiveNumber);
  sw->add_option("--loss", s.sp.chip.loss, "fault injection: drop probability per frame in and out")
      ->default_val(0)
      ->check(CLI::Range(0.0, 1.0));
  sw->add_option("--dup", s.sp.chip.dup, "fault injection: duplicate probability per frame in and out")
      ->default_val(0)
      ->check(CLI::Range(0.0, 1.0));
  sw->add_option("--reorder", s.sp.chip.reorder,
                 "fault injection: probability per frame in and out that the next frame of its port overtakes it")
      ->default_val(0)
      ->check(CLI::Range(0.0, 1.0));
  sw->add_option("--result-cache", s.sp.chip.result_cache,
                 "final sums kept per context to answer re-sent contributions (0: off)")
      ->default_val(1024)
      ->check(CLI::Range(0, 1 << 20));
  sw->add_option("--loss-ports", s.loss_ports,
                 "ports the loss, duplication and reordering apply to, P0,P1,... (default: all)");
  sw->add_option("--control", s.control,
                 "serve a control socket (Unix stream socket at this path) for panama-host controller");
  sw->add_option("--loss-seed", s.sp.chip.loss_seed, "seed of the loss")->default_val(1);
  sw->add_option("--counters", s.counters, "export counters JSON here (every --export-interval and at exit)");
  sw->add_option("--export-interval", s.export_interval, "seconds")->default_val(1)->check(CLI::Range(0.01, 3600.0));
  sw->add_option("--duration", s.duration, "stop after this many seconds (0: at SIGINT/SIGTERM)")->default_val(0);
  sw->add_option("--idle-cycles-per-ms", s.idle_cycles,
                 "simulated cycles per quiet ms (default 200 when a context has a timeout, else 0)");
}

}  // namespace

Runner switch_subcommand(CLI::App& cmd) { return with_options(cmd, add_switch_options, run_switch); }

}  // namespace panama::host::cli
