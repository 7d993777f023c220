#include "model.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "blocks.h"
#include "ctx_program.h"

namespace panama::model {

namespace {

// The accelerator top level: the blocks of blocks.h wired per port, plus the clock.
class Top : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Top);
  Top(sc_core::sc_module_name n, const Config& cfg, const std::vector<std::vector<InFrame>>& in, const Options& opt,
      Result& res)
      : sc_module(n),
        clk("clk", sc_core::sc_time(1e6 / cfg.in.mhz, sc_core::SC_PS)),
        opt_(opt),
        dp(cfg, opt.seed, opt.backpressure_pct, res.agg, res.ports, [&](int p, RegFile& regs, PortBuffer& buf) {
          return new RxPort(("rx" + std::to_string(p)).c_str(), cfg, p, regs, buf,
                            p < static_cast<int>(in.size()) ? in[p] : std::vector<InFrame>{}, opt.seed, opt.idle_pct);
        }) {
    SC_METHOD(on_clock);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  sc_core::sc_clock clk;
  uint64_t cycle = 0;

 private:
  void on_clock() {
    const bool rx_done = dp.rx_done();
    dp.tick(cycle);
    ++cycle;
    const bool idle = rx_done && dp.agg.idle() && dp.sched->quiescent() && dp.tx_idle();
    if (idle || (opt_.max_cycles && cycle >= opt_.max_cycles)) sc_core::sc_stop();
  }

  const Options& opt_;

 public:
  Datapath<RxPort> dp;
};

uint64_t read64(RegFile& regs, uint32_t lo) {
  const uint64_t l = regs.read(lo);  // latches the high word
  return l | (uint64_t{regs.read(lo + 4)} << 32);
}

}  // namespace

void program_contexts(RegFile& regs, const wire::CtxFile& ctx) {
  program_ctx_file(
      regs.map(), ctx, [&](uint32_t a, uint32_t v) { regs.write(a, v); }, [&](uint32_t a) { return regs.read(a); });
}

void read_counters(RegFile& regs, int ports, int contexts, Result& r) {
  const RegMap& m = regs.map();
  for (int p = 0; p < ports; ++p) {
    std::array<uint64_t, kNumPortCounters> v{};
    for (int k = 0; k < kNumPortCounters; ++k) v[static_cast<size_t>(k)] = read64(regs, m.port_counter_lo(p, k));
    r.port_counters.push_back(v);
  }
  for (int c = 0; c < contexts; ++c) {
    ContextCounters cc;
    cc.jid = static_cast<int>(regs.read(m.ctx(c, RegMap::kCtxJid)));
    cc.tid = static_cast<int>(regs.read(m.ctx(c, RegMap::kCtxTid)));
    cc.vectors_completed = read64(regs, m.ctx(c, RegMap::kCtxCompletedLo));
    cc.vectors_dropped = read64(regs, m.ctx(c, RegMap::kCtxDroppedLo));
    cc.expected_vid = regs.read(m.ctx(c, RegMap::kCtxExpectedVid));
    r.contexts.push_back(cc);
  }
  r.agg_tx_frames = read64(regs, RegMap::kAggTxFramesLo);
}

Result run(const Config& cfg, const wire::CtxFile& ctx, const std::vector<std::vector<InFrame>>& in,
           const Options& opt) {
  static bool used = false;
  if (used) throw std::runtime_error("the SystemC model runs once per process (use run_isolated)");
  used = true;
  if (static_cast<int>(ctx.contexts.size()) > cfg.in.contexts)
    throw std::runtime_error("more contexts configured than the design has");
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);

  Result res;
  // Modules must outlive the simulation; the process ends soon after, so it is not deleted.
  Top* top = new Top("panama", cfg, in, opt, res);
  program_contexts(top->dp.regs, ctx);
  sc_core::sc_start();

  res.cycles = top->cycle;
  for (int p = 0; p < cfg.in.ports; ++p) {
    const uint64_t q = top->dp.bufs[p]->queued_contribs();
    res.still_queued_per_port.push_back(q);
    res.still_queued += q;
  }
  res.consumed_per_port = top->dp.sched->consumed();
  read_counters(top->dp.regs, cfg.in.ports, static_cast<int>(ctx.contexts.size()), res);
  return res;
}

nlohmann::ordered_json counters_json(const Result& r) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["ports"] = ordered_json::array();
  for (const auto& p : r.port_counters) {
    ordered_json o;
    for (int k = 0; k < kNumPortCounters; ++k) o[port_counter_names()[k]] = p[k];
    j["ports"].push_back(o);
  }
  j["contexts"] = ordered_json::array();
  for (const auto& c : r.contexts)
    j["contexts"].push_back({{"jid", c.jid},
                             {"tid", c.tid},
                             {"vectors_completed", c.vectors_completed},
                             {"vectors_dropped", c.vectors_dropped},
                             {"expected_vid", c.expected_vid}});
  j["agg_tx_frames"] = r.agg_tx_frames;
  return j;
}

static std::string to_hex(const wire::Bytes& b) {
  static const char* d = "0123456789abcdef";
  std::string s(2 * b.size(), '0');
  for (size_t i = 0; i < b.size(); ++i) {
    s[2 * i] = d[b[i] >> 4];
    s[2 * i + 1] = d[b[i] & 15];
  }
  return s;
}

static wire::Bytes from_hex(const std::string& s) {
  wire::Bytes b(s.size() / 2);
  auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(v(s[2 * i]) * 16 + v(s[2 * i + 1]));
  return b;
}

static nlohmann::json frames_json(const std::vector<OutFrame>& fs) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& f : fs) a.push_back({to_hex(f.data), f.cycle, f.tuser, f.context});
  return a;
}

static std::vector<OutFrame> frames_from(const nlohmann::json& a) {
  std::vector<OutFrame> v;
  for (const auto& x : a) {
    OutFrame f;
    f.data = from_hex(x[0].get<std::string>());
    f.cycle = x[1].get<uint64_t>();
    f.tuser = x[2].get<bool>();
    f.context = x[3].get<int>();
    v.push_back(std::move(f));
  }
  return v;
}

nlohmann::json result_to_json(const Result& r) {
  nlohmann::json j = nlohmann::json::parse(counters_json(r).dump());
  j["port_frames"] = nlohmann::json::array();
  for (const auto& p : r.ports) j["port_frames"].push_back(frames_json(p));
  j["agg_frames"] = frames_json(r.agg);
  j["cycles"] = r.cycles;
  j["still_queued"] = r.still_queued;
  j["still_queued_per_port"] = r.still_queued_per_port;
  j["consumed_per_port"] = r.consumed_per_port;
  return j;
}

Result result_from_json(const nlohmann::json& j) {
  Result r;
  for (const auto& p : j["port_frames"]) r.ports.push_back(frames_from(p));
  r.agg = frames_from(j["agg_frames"]);
  for (const auto& p : j["ports"]) {
    std::array<uint64_t, kNumPortCounters> v{};
    for (int k = 0; k < kNumPortCounters; ++k) v[k] = p[port_counter_names()[k]].get<uint64_t>();
    r.port_counters.push_back(v);
  }
  for (const auto& c : j["contexts"]) {
    ContextCounters cc;
    cc.jid = c["jid"];
    cc.tid = c["tid"];
    cc.vectors_completed = c["vectors_completed"];
    cc.vectors_dropped = c["vectors_dropped"];
    cc.expected_vid = c["expected_vid"];
    r.contexts.push_back(cc);
  }
  r.agg_tx_frames = j["agg_tx_frames"];
  r.cycles = j["cycles"];
  r.still_queued = j["still_queued"];
  r.still_queued_per_port = j["still_queued_per_port"].get<std::vector<uint64_t>>();
  r.consumed_per_port = j["consumed_per_port"].get<std::vector<uint64_t>>();
  return r;
}

Result run_isolated(const Config& cfg, const wire::CtxFile& ctx, const std::vector<std::vector<InFrame>>& in,
                    const Options& opt) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // nothing buffered may be written twice
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    std::string msg;
    int rc = 0;
    try {
      msg = "OK" + result_to_json(run(cfg, ctx, in, opt)).dump();
    } catch (const std::exception& e) {
      msg = std::string("ER") + e.what();
      rc = 1;
    }
    size_t off = 0;
    while (off < msg.size()) {
      const ssize_t w = write(fds[1], msg.data() + off, msg.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    close(fds[1]);
    _exit(rc);  // no static destructors of SystemC in the child
  }
  close(fds[1]);
  std::string buf;
  char chunk[65536];
  for (;;) {
    const ssize_t r = read(fds[0], chunk, sizeof chunk);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    buf.append(chunk, static_cast<size_t>(r));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (buf.size() < 2) throw std::runtime_error("model child process died (status " + std::to_string(status) + ")");
  if (buf.compare(0, 2, "OK") != 0) throw std::runtime_error(buf.substr(2));
  return result_from_json(nlohmann::json::parse(buf.substr(2)));
}

}  // namespace panama::model
