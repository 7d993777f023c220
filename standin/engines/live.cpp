#include "live.h"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <stdexcept>

#include "blocks.h"

namespace panama::model {

namespace {

// The receive side of one port with frames arriving while the simulation runs. Admission is
// admit_frame (blocks.cpp), so the live model counts and queues exactly as the one-shot model.
class LiveRx {
 public:
  LiveRx(const Config& cfg, int port, RegFile& regs, PortBuffer& buf) : rx_(cfg, port, regs, buf) {}
  void push(InFrame f) { q_.push_back(std::move(f)); }
  bool done() const { return q_.empty(); }
  void tick(uint64_t now) {
    if (!q_.empty() && rx_.beat(q_.front(), now)) q_.pop_front();
  }

 private:
  RxBeats rx_;
  std::deque<InFrame> q_;
};

class LiveTop : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(LiveTop);
  LiveTop(sc_core::sc_module_name n, const Config& cfg)
      : sc_module(n),
        period(1e6 / cfg.in.mhz, sc_core::SC_PS),
        clk("clk", period),
        dp(cfg, 1, 0, agg_out, port_out,
           [&](int p, RegFile& regs, PortBuffer& buf) { return new LiveRx(cfg, p, regs, buf); }) {
    SC_METHOD(on_clock);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  bool settled_now() const { return dp.agg.idle() && dp.rx_done() && dp.tx_idle(); }

  sc_core::sc_time period;
  sc_core::sc_clock clk;
  uint64_t cycle = 0;
  bool pause_when_settled = false;
  int settle_cycles = 0;  // consecutive cycles with everything drained
  bool settled = false;

 private:
  void on_clock() {
    const uint64_t now = cycle;
    const size_t before = agg_out.size() + out_count();
    dp.tick(now);
    ++cycle;
    const bool drained = settled_now() && agg_out.size() + out_count() == before;
    settle_cycles = drained ? settle_cycles + 1 : 0;
    // Quiescent: nothing can happen without input. A context waiting only for its timeout
    // (or a completion waiting a few cycles for the trees) counts as settled after 32 drained
    // cycles: the trees free up within one frame time, which is less.
    // The scheduler ticks before the receivers, so its verdict counts only from the second
    // drained cycle (a frame admitted in the first is decided in the next).
    settled = drained && settle_cycles >= 2 && (dp.sched->quiescent() || settle_cycles >= 32);
    if (pause_when_settled && settled) sc_core::sc_pause();
  }
  size_t out_count() const {
    size_t n = 0;
    for (auto& v : port_out) n += v.size();
    return n;
  }

 public:
  // Declared before dp, whose transmitters and m_agg write into them.
  std::vector<OutFrame> agg_out;
  std::vector<std::vector<OutFrame>> port_out;
  Datapath<LiveRx> dp;
};

bool g_live_used = false;

}  // namespace

struct LiveModel::Impl {
  Config cfg;
  wire::CtxFile ctx;
  LiveTop* top = nullptr;  // owned by the SystemC kernel for the life of the process
};

LiveModel::LiveModel(const Config& cfg, const wire::CtxFile& ctx) : impl_(new Impl) {
  if (g_live_used) throw std::runtime_error("the live SystemC model can be elaborated once per process");
  if (static_cast<int>(ctx.contexts.size()) > cfg.in.contexts)
    throw std::runtime_error("more contexts configured than the design has");
  g_live_used = true;
  impl_->cfg = cfg;
  impl_->ctx = ctx;
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DO_NOTHING);
  impl_->top = new LiveTop("panama_live", impl_->cfg);
  program_contexts(impl_->top->dp.regs, impl_->ctx);
}

LiveModel::~LiveModel() = default;

int LiveModel::ports() const { return impl_->cfg.in.ports; }
const Config& LiveModel::config() const { return impl_->cfg; }
uint64_t LiveModel::cycle() const { return impl_->top->cycle; }
void LiveModel::reg_write(uint32_t addr, uint32_t data) { impl_->top->dp.regs.write(addr, data); }
uint32_t LiveModel::reg_read(uint32_t addr) { return impl_->top->dp.regs.read(addr); }

void LiveModel::inject(int port, wire::Bytes frame, bool tuser) {
  if (port < 0 || port >= ports()) throw std::runtime_error("inject: no port " + std::to_string(port));
  impl_->top->dp.rx[static_cast<size_t>(port)]->push(InFrame{std::move(frame), tuser});
}

uint64_t LiveModel::run_until_idle(uint64_t max_cycles) {
  LiveTop& t = *impl_->top;
  const uint64_t start = t.cycle;
  t.pause_when_settled = true;
  t.settle_cycles = 0;
  t.settled = false;
  while (t.cycle - start < max_cycles && !t.settled) {
    const uint64_t chunk = std::min<uint64_t>(max_cycles - (t.cycle - start), 1u << 20);
    sc_core::sc_start(t.period * static_cast<double>(chunk));
  }
  t.pause_when_settled = false;
  return t.cycle - start;
}

void LiveModel::advance(uint64_t k) {
  LiveTop& t = *impl_->top;
  t.pause_when_settled = false;
  const uint64_t target = t.cycle + k;
  while (t.cycle < target) sc_core::sc_start(t.period * static_cast<double>(target - t.cycle));
}

std::vector<LiveOut> LiveModel::take_outputs() {
  LiveTop& t = *impl_->top;
  std::vector<LiveOut> out;
  for (size_t p = 0; p < t.port_out.size(); ++p) {
    for (auto& f : t.port_out[p]) out.push_back(LiveOut{static_cast<int>(p), -1, std::move(f.data), f.tuser});
    t.port_out[p].clear();
  }
  for (auto& f : t.agg_out) out.push_back(LiveOut{-1, f.context, std::move(f.data), f.tuser});
  t.agg_out.clear();
  return out;
}

nlohmann::ordered_json LiveModel::counters() {
  Result r;
  read_counters(impl_->top->dp.regs, ports(), static_cast<int>(impl_->ctx.contexts.size()), r);
  return counters_json(r);
}

}  // namespace panama::model
