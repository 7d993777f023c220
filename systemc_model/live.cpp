#include "live.h"

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <stdexcept>

#include "blocks.h"
#include "ctx_program.h"

namespace panama::model {

namespace {

uint32_t beats(size_t len, int bus_bytes) {
  const size_t b = (len + static_cast<size_t>(bus_bytes) - 1) / static_cast<size_t>(bus_bytes);
  return static_cast<uint32_t>(b == 0 ? 1 : b);
}

// The receive side of one port with frames arriving while the simulation runs. Admission is
// admit_frame (blocks.cpp), so the live model counts and queues exactly as the one-shot model.
class LiveRx {
 public:
  LiveRx(const Config& cfg, int port, RegFile& regs, PortBuffer& buf)
      : cfg_(cfg), port_(port), regs_(regs), buf_(buf) {}
  void push(InFrame f) { q_.push_back(std::move(f)); }
  bool done() const { return q_.empty(); }
  void tick(uint64_t now) {
    if (q_.empty()) return;
    if (++beats_done_ < beats(q_.front().data.size(), cfg_.bus_bytes)) return;
    admit_frame(cfg_, regs_, buf_, port_, q_.front(), now);
    q_.pop_front();
    beats_done_ = 0;
  }

 private:
  const Config& cfg_;
  int port_;
  RegFile& regs_;
  PortBuffer& buf_;
  std::deque<InFrame> q_;
  uint32_t beats_done_ = 0;
};

class LiveTop : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(LiveTop);
  LiveTop(sc_core::sc_module_name n, const Config& cfg)
      : sc_module(n),
        period(1e6 / cfg.in.mhz, sc_core::SC_PS),
        clk("clk", period),
        cfg_(cfg),
        regs("regs", cfg),
        agg("agg_tx", cfg, regs, 1, 0, agg_out),
        builder("builder", cfg, agg) {
    const int nports = cfg.in.ports;
    port_out.resize(static_cast<size_t>(nports));
    std::vector<PortBuffer*> raw;
    for (int p = 0; p < nports; ++p) {
      const std::string s = std::to_string(p);
      bufs.emplace_back(new PortBuffer(("buf" + s).c_str(), cfg));
      raw.push_back(bufs.back().get());
      rx.emplace_back(new LiveRx(cfg, p, regs, *bufs.back()));
      tx.emplace_back(new TxPort(("tx" + s).c_str(), cfg, p, regs, *bufs.back(), 1, 0, port_out[p]));
    }
    sched.reset(new Scheduler("sched", cfg, regs, raw, builder));
    SC_METHOD(on_clock);
    sensitive << clk.posedge_event();
    dont_initialize();
  }

  bool settled_now() const {
    bool idle = agg.idle();
    for (auto& r : rx) idle &= r->done();
    for (auto& t : tx) idle &= t->idle();
    return idle;
  }

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
    agg.tick(now);
    for (auto& t : tx) t->tick(now);
    sched->tick(now);
    for (auto& r : rx) r->tick(now);
    ++cycle;
    const bool drained = settled_now() && agg_out.size() + out_count() == before;
    settle_cycles = drained ? settle_cycles + 1 : 0;
    // Quiescent: nothing can happen without input. A context waiting only for its timeout
    // (or a completion waiting a few cycles for the trees) counts as settled after 32 drained
    // cycles: the trees free up within one frame time, which is less.
    // The scheduler ticks before the receivers, so its verdict counts only from the second
    // drained cycle (a frame admitted in the first is decided in the next).
    settled = drained && settle_cycles >= 2 && (sched->quiescent() || settle_cycles >= 32);
    if (pause_when_settled && settled) sc_core::sc_pause();
  }
  size_t out_count() const {
    size_t n = 0;
    for (auto& v : port_out) n += v.size();
    return n;
  }

  const Config& cfg_;

 public:
  RegFile regs;
  std::vector<OutFrame> agg_out;
  std::vector<std::vector<OutFrame>> port_out;
  AggTx agg;
  ResultBuilder builder;
  std::vector<std::unique_ptr<PortBuffer>> bufs;
  std::vector<std::unique_ptr<LiveRx>> rx;
  std::vector<std::unique_ptr<TxPort>> tx;
  std::unique_ptr<Scheduler> sched;
};

// Programs CTX.json through the register interface, as model.cpp's configure() does.
void program(RegFile& regs, const wire::CtxFile& ctx) {
  program_ctx_file(
      regs.map(), ctx, [&](uint32_t a, uint32_t v) { regs.write(a, v); }, [&](uint32_t a) { return regs.read(a); });
}

uint64_t read64(RegFile& regs, uint32_t lo) {
  const uint64_t l = regs.read(lo);
  return l | (uint64_t{regs.read(lo + 4)} << 32);
}

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
  program(impl_->top->regs, impl_->ctx);
}

LiveModel::~LiveModel() = default;

int LiveModel::ports() const { return impl_->cfg.in.ports; }
const Config& LiveModel::config() const { return impl_->cfg; }
uint64_t LiveModel::cycle() const { return impl_->top->cycle; }
void LiveModel::reg_write(uint32_t addr, uint32_t data) { impl_->top->regs.write(addr, data); }
uint32_t LiveModel::reg_read(uint32_t addr) { return impl_->top->regs.read(addr); }

void LiveModel::inject(int port, wire::Bytes frame, bool tuser) {
  if (port < 0 || port >= ports()) throw std::runtime_error("inject: no port " + std::to_string(port));
  impl_->top->rx[static_cast<size_t>(port)]->push(InFrame{std::move(frame), tuser});
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
  RegFile& regs = impl_->top->regs;
  const RegMap& m = regs.map();
  Result r;
  for (int p = 0; p < ports(); ++p) {
    std::array<uint64_t, kNumPortCounters> v{};
    for (int k = 0; k < kNumPortCounters; ++k) v[static_cast<size_t>(k)] = read64(regs, m.port_counter_lo(p, k));
    r.port_counters.push_back(v);
  }
  for (size_t i = 0; i < impl_->ctx.contexts.size(); ++i) {
    const int c = static_cast<int>(i);
    ContextCounters cc;
    cc.jid = static_cast<int>(regs.read(m.ctx(c, RegMap::kCtxJid)));
    cc.tid = static_cast<int>(regs.read(m.ctx(c, RegMap::kCtxTid)));
    cc.vectors_completed = read64(regs, m.ctx(c, RegMap::kCtxCompletedLo));
    cc.vectors_dropped = read64(regs, m.ctx(c, RegMap::kCtxDroppedLo));
    cc.expected_vid = regs.read(m.ctx(c, RegMap::kCtxExpectedVid));
    r.contexts.push_back(cc);
  }
  r.agg_tx_frames = read64(regs, RegMap::kAggTxFramesLo);
  return counters_json(r);
}

}  // namespace panama::model
