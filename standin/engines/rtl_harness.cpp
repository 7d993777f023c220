// The RTL engine of panama-sim: drives the Verilated <prefix>_top of one generator output with
// per-port pcaps, programs the contexts over AXI4-Lite, collects mPP and m_agg, reads the
// counters back over AXI4-Lite, and writes a model::Result as JSON (panama-sim turns it into the
// same output files as the model engine).
//
// panama-sim verilates this file together with the design on first use of a design
// (standin/engines/rtl_engine.cpp) and generates ports.h, which lists the design's port numbers:
//   #define PANAMA_PORT_LIST(X) X(00) X(01) ...
// Build variants (separate cache entries): -DPANAMA_TRACE with verilator --trace-fst (--trace
// FILE writes an FST of the whole run), -DPANAMA_COVERAGE with verilator --coverage
// (--coverage FILE writes the run's coverage points for verilator_coverage).
#include <cstdio>
#include <deque>
#include <iostream>
#include <sstream>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "Vtop.h"
#include "config.h"
#include "ctx.h"
#include "ctx_program.h"
#include "live_protocol.h"
#include "model.h"
#include "keep_io.h"
#include "pcap_io.h"
#include "ports.h"
#include "regmap.h"
#include "vl_util.h"
#include "verilated.h"
#ifdef PANAMA_TRACE
#include "verilated_fst_c.h"
#endif
#ifdef PANAMA_COVERAGE
#include "verilated_cov.h"
#endif
#include "wire.h"

using namespace panama;

namespace {

using TData = std::remove_reference_t<decltype(std::declval<Vtop>().s00_axis_tdata)>;
using TKeep = std::remove_reference_t<decltype(std::declval<Vtop>().s00_axis_tkeep)>;

// Pointers to one port's signals, so that ports can be indexed at run time.
struct PortSignals {
  TData* s_tdata;
  TKeep* s_tkeep;
  CData *s_tvalid, *s_tlast, *s_tuser, *s_tready;
  TData* m_tdata;
  TKeep* m_tkeep;
  CData *m_tvalid, *m_tlast, *m_tuser, *m_tready;
};

std::vector<PortSignals> port_signals(Vtop* t) {
  std::vector<PortSignals> v;
#define PANAMA_PORT(NN)                                                                                         \
  v.push_back({&t->s##NN##_axis_tdata, &t->s##NN##_axis_tkeep, &t->s##NN##_axis_tvalid, &t->s##NN##_axis_tlast, \
               &t->s##NN##_axis_tuser, &t->s##NN##_axis_tready, &t->m##NN##_axis_tdata, &t->m##NN##_axis_tkeep, \
               &t->m##NN##_axis_tvalid, &t->m##NN##_axis_tlast, &t->m##NN##_axis_tuser, &t->m##NN##_axis_tready});
  PANAMA_PORT_LIST(PANAMA_PORT)
#undef PANAMA_PORT
  return v;
}

struct Args {
  std::string config, contexts, in_dir, result, trace, coverage;
  uint64_t seed = 1;
  int idle = 0, backpressure = 0;
  bool live = false, stats = false;
};

class Harness {
 public:
  Harness(const Config& cfg, const Args& a) : cfg_(cfg), map_(RegMap::from(cfg)), rng_(a.seed), args_(a) {
    ctx_ = std::make_unique<VerilatedContext>();
    top_ = std::make_unique<Vtop>(ctx_.get());
    ports_ = port_signals(top_.get());
    if (static_cast<int>(ports_.size()) != cfg.in.ports) throw std::runtime_error("ports.h does not match the design");
    const size_t N = ports_.size();
    beat_n_.assign(N, 0);
    sent_.assign(N, false);
    held_.assign(N, false);
    rx_ready_.assign(N, false);
    rx_first_.assign(N, kNever);
    rx_last_.assign(N, 0);
    rx_port_acc_.assign(N, 0);
    if (!a.trace.empty()) {
#ifdef PANAMA_TRACE
      ctx_->traceEverOn(true);
      fst_ = std::make_unique<VerilatedFstC>();
      top_->trace(fst_.get(), 99);
      fst_->open(a.trace.c_str());
      if (!fst_->isOpen()) throw std::runtime_error(a.trace + ": cannot open the trace");
#else
      throw std::runtime_error("--trace needs the harness built with PANAMA_TRACE");
#endif
    }
#ifndef PANAMA_COVERAGE
    if (!a.coverage.empty()) throw std::runtime_error("--coverage needs the harness built with PANAMA_COVERAGE");
#endif
  }

  // Closes the trace and writes the coverage points: the end of every run.
  void finish() {
    top_->final();
#ifdef PANAMA_TRACE
    if (fst_) fst_->close();
#endif
#ifdef PANAMA_COVERAGE
    if (!args_.coverage.empty()) ctx_->coveragep()->write(args_.coverage.c_str());
#endif
  }

  // One clock edge: clk set, evaluated, dumped into the trace when there is one.
  void edge(int clk) {
    top_->clk = clk;
    top_->eval();
#ifdef PANAMA_TRACE
    if (fst_) fst_->dump(2 * cycle_ + static_cast<uint64_t>(clk));
#endif
  }

  // One clock cycle: inputs were set by the caller; outputs are sampled before the edge.
  void tick() {
    edge(0);
    sample_outputs();
    edge(1);
    ++cycle_;
  }

  void reset() {
    top_->rst = 1;
    for (auto& p : ports_) *p.m_tready = 1;
    top_->m_agg_axis_tready = 1;
    for (int i = 0; i < 8; ++i) tick();
    top_->rst = 0;
    tick();
  }

  void axil_write(uint32_t addr, uint32_t data) {
    top_->s_axil_awaddr = addr;
    top_->s_axil_awprot = 0;
    top_->s_axil_awvalid = 1;
    top_->s_axil_wdata = data;
    top_->s_axil_wstrb = 0xF;
    top_->s_axil_wvalid = 1;
    top_->s_axil_bready = 1;
    bool aw = false, w = false;
    for (int i = 0; i < 100 && !(aw && w); ++i) {
      edge(0);
      const bool awr = top_->s_axil_awvalid && top_->s_axil_awready;
      const bool wr = top_->s_axil_wvalid && top_->s_axil_wready;
      edge(1);
      ++cycle_;
      if (awr) aw = true, top_->s_axil_awvalid = 0;
      if (wr) w = true, top_->s_axil_wvalid = 0;
    }
    for (int i = 0; i < 100; ++i) {
      edge(0);
      const bool b = top_->s_axil_bvalid;
      edge(1);
      ++cycle_;
      if (b) {
        top_->s_axil_bready = 0;
        return;
      }
    }
    throw std::runtime_error("AXI4-Lite write to 0x" + hex(addr) + " got no response");
  }

  uint32_t axil_read(uint32_t addr) {
    top_->s_axil_araddr = addr;
    top_->s_axil_arprot = 0;
    top_->s_axil_arvalid = 1;
    top_->s_axil_rready = 1;
    // A counter's LO word waits for the counter's turn in the register file's flush (one
    // counter per cycle, 16 N + 2 C + 1 of them): a hang guard well above that.
    for (int i = 0; i < 1000000; ++i) {
      edge(0);
      const bool ar = top_->s_axil_arvalid && top_->s_axil_arready;
      const bool r = top_->s_axil_rvalid;
      const uint32_t d = top_->s_axil_rdata;
      edge(1);
      ++cycle_;
      if (ar) top_->s_axil_arvalid = 0;
      if (r) {
        top_->s_axil_rready = 0;
        return d;
      }
    }
    throw std::runtime_error("AXI4-Lite read of 0x" + hex(addr) + " got no response");
  }

  void program(const wire::CtxFile& f) {
    program_ctx_file(
        map_, f, [&](uint32_t a, uint32_t v) { axil_write(a, v); }, [&](uint32_t a) { return axil_read(a); });
  }

  uint64_t read64(uint32_t lo) {
    const uint64_t l = axil_read(lo);
    const uint64_t h = axil_read(lo + 4);
    return (h << 32) | l;
  }

  // Resets the design, programs the contexts and opens the output lists.
  void begin(const wire::CtxFile& f) {
    ctx_file_ = f;
    reset();
    program(f);
    res_.ports.assign(cfg_.in.ports, {});
    off_.assign(cfg_.in.ports, 0);
  }

  // Drives the queued frames (consumed from the front) until every one is in and nothing has
  // moved for quiet_needed cycles, or for at most max_cycles cycles (0: no limit).
  void drive(std::vector<std::deque<model::InFrame>>& in, uint64_t quiet_needed, uint64_t max_cycles = 0) {
    const int N = cfg_.in.ports, BB = cfg_.bus_bytes;
    uint64_t last_activity = cycle_;
    const uint64_t start = cycle_;
    // PANAMA_HARNESS_DEBUG: the cycle of the first traffic beat, for latency measurements.
    if (std::getenv("PANAMA_HARNESS_DEBUG"))
      std::fprintf(stderr, "traffic starts at cycle %llu\n", static_cast<unsigned long long>(cycle_));
    std::uniform_int_distribution<int> pct(0, 99);
    while (true) {
      bool inputs_left = false;
      for (int p = 0; p < N; ++p) {
        auto& s = ports_[p];
        const bool have = !in[p].empty();
        inputs_left |= have;
        // A beat offered and not accepted stays offered, unchanged (no idle cycle inserted).
        const bool send = have && (held_[p] || !(args_.idle > 0 && pct(rng_) < args_.idle));
        *s.s_tvalid = send;
        sent_[p] = send;
        if (!send) continue;
        // A frame given lane by lane (InFrame::keep) has its tkeep as given, holes included.
        const model::InFrame& fr = in[p].front();
        const size_t size = lanes(fr), n = std::min<size_t>(BB, size - off_[p]);
        for (int b = 0; b < BB; ++b)
          tb::set_bits(*s.s_tdata, 8 * b, 8, b < static_cast<int>(n) ? fr.data[off_[p] + b] : 0);
        for (int b = 0; b < BB; ++b)
          tb::set_bits(*s.s_tkeep, b, 1, b < static_cast<int>(n) && (fr.keep.empty() || fr.keep[off_[p] + b]));
        *s.s_tlast = off_[p] + n >= size;
        *s.s_tuser = *s.s_tlast && fr.tuser;
        beat_n_[p] = n;
      }
      for (auto& s : ports_) *s.m_tready = !(args_.backpressure > 0 && pct(rng_) < args_.backpressure);
      top_->m_agg_axis_tready = !(args_.backpressure > 0 && pct(rng_) < args_.backpressure);
      activity_ = false;
      tick();
      // Receive beats: offered (tvalid) and accepted (tvalid and tready before the edge).
      for (int p = 0; p < N; ++p) {
        if (!sent_[p]) continue;
        ++rx_offered_;
        if (rx_first_[p] == kNever) rx_first_[p] = cycle_ - 1;
        rx_last_[p] = cycle_ - 1;
        held_[p] = !rx_ready_[p];
        if (held_[p]) continue;
        ++rx_accepted_;
        if (off_[p] + beat_n_[p] >= lanes(in[p].front())) {
          in[p].pop_front();
          off_[p] = 0;
        } else {
          off_[p] += beat_n_[p];
        }
      }
      if (inputs_left || activity_) last_activity = cycle_;
      if (max_cycles && cycle_ - start >= max_cycles) break;
      if (!max_cycles && !inputs_left && cycle_ - last_activity > quiet_needed) break;
      if (cycle_ > 4000000000ull) throw std::runtime_error("the design never went idle");
    }
    for (auto& s : ports_) *s.s_tvalid = 0;
    sent_.assign(N, false);
  }

  // Byte lanes a frame takes on the bus: its bytes, or its lanes when given lane by lane.
  static size_t lanes(const model::InFrame& f) { return f.keep.empty() ? f.data.size() : f.keep.size(); }

  // Cycles without activity after which no decision can be pending, timeouts aside.
  uint64_t settle_cycles() const {
    return 4ull * (cfg_.max_frame_bytes / cfg_.bus_bytes + 1) + 4ull * cfg_.addtree_latency + 512;
  }

  // Counters over AXI4-Lite, and which context built each m_agg frame (from its JID and TID).
  void read_counters() {
    const auto& f = ctx_file_;
    const int N = cfg_.in.ports;
    res_.cycles = cycle_;
    res_.port_counters.assign(N, {});
    for (int p = 0; p < N; ++p)
      for (int k = 0; k < kNumPortCounters; ++k) res_.port_counters[p][k] = read64(map_.port_counter_lo(p, k));
    res_.contexts.clear();
    for (size_t i = 0; i < f.contexts.size(); ++i) {
      const int c = static_cast<int>(i);
      model::ContextCounters cc;
      cc.jid = f.contexts[i].jid;
      cc.tid = f.contexts[i].tid;
      cc.vectors_completed = read64(map_.ctx(c, RegMap::kCtxCompletedLo));
      cc.vectors_dropped = read64(map_.ctx(c, RegMap::kCtxDroppedLo));
      cc.expected_vid = axil_read(map_.ctx(c, RegMap::kCtxExpectedVid));
      res_.contexts.push_back(cc);
    }
    res_.agg_tx_frames = read64(RegMap::kAggTxFramesLo);
  }

  int context_of(const wire::Bytes& fr) const {
    if (fr.size() < 64) return -1;
    const uint16_t jid = static_cast<uint16_t>(fr[44] << 8 | fr[45]);
    for (size_t i = 0; i < ctx_file_.contexts.size(); ++i)
      if (ctx_file_.contexts[i].jid == jid && ctx_file_.contexts[i].tid == fr[46]) return static_cast<int>(i);
    return -1;
  }

  model::Result run(const wire::CtxFile& f, const std::vector<std::vector<model::InFrame>>& in) {
    begin(f);
    std::vector<std::deque<model::InFrame>> q;
    for (const auto& v : in) q.emplace_back(v.begin(), v.end());
    uint64_t max_timeout = 0;
    for (const auto& e : f.contexts) max_timeout = std::max<uint64_t>(max_timeout, e.timeout_cycles);
    drive(q, settle_cycles() + (max_timeout ? max_timeout + 64 : 0));
    read_counters();
    for (auto& fr : res_.agg) fr.context = context_of(fr.data);
    if (args_.stats) print_stats();
    finish();
    return res_;
  }

  // --live: the line protocol of standin/engines/live_protocol.h, for the switch stand-in.
  void live() {
    std::vector<std::deque<model::InFrame>> q(cfg_.in.ports);
    live::Handlers h;
    h.ports = cfg_.in.ports;
    h.inject = [&](int p, wire::Bytes f) { q[static_cast<size_t>(p)].push_back({std::move(f), false}); };
    h.run = [&] { drive(q, settle_cycles()); };
    h.advance = [&](uint64_t n) { drive(q, 0, n); };
    h.outputs = [&] {
      for (int p = 0; p < cfg_.in.ports; ++p) {
        for (const auto& f : res_.ports[p]) live::put_frame(p, -1, f.data);
        res_.ports[p].clear();
      }
      for (const auto& f : res_.agg) live::put_frame(-1, context_of(f.data), f.data);
      res_.agg.clear();
    };
    h.counters = [&] {
      read_counters();
      return model::counters_json(res_).dump();
    };
    h.cycles = [&] { return cycle_; };
    h.write = [&](uint32_t a, uint32_t v) { axil_write(a, v); };
    h.read = [&](uint32_t a) { return axil_read(a); };
    live::serve(h);
    finish();
  }

  // --stats: the performance contract measured (accelerator.md): receive beats offered and
  // accepted, each port's accepted beats per cycle from its first to its last receive beat,
  // m_agg beats per cycle from the first to the last built beat, and every drop counted.
  void print_stats() const {
    const int N = cfg_.in.ports;
    double worst = 1e9;
    for (int p = 0; p < N; ++p) {
      if (rx_first_[p] == kNever) continue;
      const uint64_t beats = rx_port_acc_[p];
      worst = std::min(worst, static_cast<double>(beats) / static_cast<double>(rx_last_[p] - rx_first_[p] + 1));
    }
    uint64_t drops = 0;
    for (const auto& c : res_.port_counters)
      for (int k = kRunt; k < kNumPortCounters; ++k) drops += c[k];
    uint64_t vec_dropped = 0;
    for (const auto& c : res_.contexts) vec_dropped += c.vectors_dropped;
    const uint64_t span = agg_beats_ ? agg_last_ - agg_first_ + 1 : 0;
    std::printf(
        "rate: rx beats offered %llu accepted %llu; rx accepted beats/cycle per port (min) %.4f; "
        "m_agg beats %llu in %llu cycles, %.4f beats/cycle; drops %llu, vectors dropped %llu\n",
        static_cast<unsigned long long>(rx_offered_), static_cast<unsigned long long>(rx_accepted_),
        worst == 1e9 ? 0.0 : worst, static_cast<unsigned long long>(agg_beats_), static_cast<unsigned long long>(span),
        span ? static_cast<double>(agg_beats_) / span : 0.0, static_cast<unsigned long long>(drops),
        static_cast<unsigned long long>(vec_dropped));
    std::fflush(stdout);
  }

 private:
  static std::string hex(uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "%x", v);
    return b;
  }

  struct Collect {
    wire::Bytes data;
    uint64_t first = 0;
    bool busy = false;
    // The stream rules of accelerator.md, checked every cycle: valid held until accepted with
    // everything stable meanwhile, no gap inside a frame, tkeep all ones but on a last beat and
    // contiguous from bit 0 there.
    bool prev_valid = false, prev_ready = false;
    std::vector<uint8_t> prev_beat;
  };

  template <typename D, typename K>
  void check_stream(Collect& c, const char* name, size_t index, bool valid, bool ready, const D& data, const K& keep,
                    bool last, bool user) {
    std::vector<uint8_t> beat;
    if (valid) {
      for (int b = 0; b < cfg_.bus_bytes; ++b) beat.push_back(static_cast<uint8_t>(tb::get_bits(data, 8 * b, 8)));
      for (int b = 0; b < cfg_.bus_bytes; ++b) beat.push_back(static_cast<uint8_t>(tb::get_bits(keep, b, 1)));
      beat.push_back(last);
      beat.push_back(user);
    }
    auto fail = [&](const std::string& what) {
      throw std::runtime_error(std::string("stream rule broken on ") + name +
                               (index < 1000 ? std::to_string(index) : "") + " at cycle " + std::to_string(cycle_) +
                               ": " + what);
    };
    if (c.prev_valid && !c.prev_ready) {
      if (!valid) fail("tvalid dropped before the beat was accepted");
      if (beat != c.prev_beat) fail("the beat changed while stalled");
    }
    if (c.busy && !valid) fail("gap inside a frame (underrun)");
    if (valid) {
      bool seen_zero = false;
      for (int b = 0; b < cfg_.bus_bytes; ++b) {
        const bool k = tb::get_bits(keep, b, 1) != 0;
        if (k && seen_zero) fail("tkeep not contiguous from bit 0");
        if (!k) seen_zero = true;
        if (!k && !last) fail("tkeep not all ones on a beat that is not last");
      }
    }
    c.prev_valid = valid;
    c.prev_ready = ready;
    c.prev_beat = std::move(beat);
  }

  template <typename D, typename K>
  void take_beat(Collect& c, const D& data, const K& keep, bool last, std::vector<model::OutFrame>& out, bool user) {
    if (!c.busy) {
      c.busy = true;
      c.first = cycle_;
      c.data.clear();
    }
    for (int b = 0; b < cfg_.bus_bytes; ++b)
      if (tb::get_bits(keep, b, 1)) c.data.push_back(static_cast<uint8_t>(tb::get_bits(data, 8 * b, 8)));
    if (last) {
      model::OutFrame f;
      f.data = std::move(c.data);
      f.cycle = c.first;
      f.tuser = user;
      out.push_back(std::move(f));
      c.busy = false;
    }
    activity_ = true;
  }

  void sample_outputs() {
    coll_.resize(ports_.size() + 1);
    for (size_t p = 0; p < ports_.size(); ++p) {
      auto& s = ports_[p];
      check_stream(coll_[p], "m", p, *s.m_tvalid, *s.m_tready, *s.m_tdata, *s.m_tkeep, *s.m_tlast, *s.m_tuser);
      if (*s.m_tvalid && *s.m_tready)
        take_beat(coll_[p], *s.m_tdata, *s.m_tkeep, *s.m_tlast, res_.ports[p], *s.m_tuser);
    }
    check_stream(coll_.back(), "m_agg", 1000, top_->m_agg_axis_tvalid, top_->m_agg_axis_tready, top_->m_agg_axis_tdata,
                 top_->m_agg_axis_tkeep, top_->m_agg_axis_tlast, false);
    for (size_t p = 0; p < ports_.size(); ++p) {
      rx_ready_[p] = *ports_[p].s_tready != 0;
      if (sent_[p] && rx_ready_[p]) ++rx_port_acc_[p];
    }
    if (top_->m_agg_axis_tvalid && top_->m_agg_axis_tready) {
      if (!agg_beats_) agg_first_ = cycle_;
      agg_last_ = cycle_;
      ++agg_beats_;
    }
    if (top_->m_agg_axis_tvalid && top_->m_agg_axis_tready)
      take_beat(coll_.back(), top_->m_agg_axis_tdata, top_->m_agg_axis_tkeep, top_->m_agg_axis_tlast, res_.agg, false);
    for (auto& s : ports_) activity_ |= *s.m_tvalid != 0;
    activity_ |= top_->m_agg_axis_tvalid != 0;
  }

  const Config& cfg_;
  RegMap map_;
  std::mt19937_64 rng_;
  Args args_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Vtop> top_;
  std::vector<PortSignals> ports_;
  std::vector<Collect> coll_;
  model::Result res_;
  wire::CtxFile ctx_file_;
  std::vector<size_t> off_;
  uint64_t cycle_ = 0;
  bool activity_ = false;
#ifdef PANAMA_TRACE
  std::unique_ptr<VerilatedFstC> fst_;
#endif
  // Receive-side bookkeeping: the beat on each port this cycle, whether it was offered, is held
  // (offered and refused), tready before the edge; the rate measurement of --stats.
  static constexpr uint64_t kNever = ~uint64_t{0};
  std::vector<size_t> beat_n_;
  std::vector<bool> sent_, held_, rx_ready_;
  std::vector<uint64_t> rx_first_, rx_last_;
  std::vector<uint64_t> rx_port_acc_;
  uint64_t rx_offered_ = 0, rx_accepted_ = 0, agg_beats_ = 0, agg_first_ = 0, agg_last_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == live::kFlag)
      a.live = true;
    else if (std::string(argv[i]) == "--stats")
      a.stats = true;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == live::kFlag || k == "--stats") {
      --i;
      continue;
    }
    if (k == "--config")
      a.config = v;
    else if (k == "--contexts")
      a.contexts = v;
    else if (k == "--in-dir")
      a.in_dir = v;
    else if (k == "--result")
      a.result = v;
    else if (k == "--seed")
      a.seed = std::stoull(v);
    else if (k == "--idle")
      a.idle = std::stoi(v);
    else if (k == "--backpressure")
      a.backpressure = std::stoi(v);
    else if (k == "--trace")
      a.trace = v;
    else if (k == "--coverage")
      a.coverage = v;
  }
  try {
    std::ifstream cf(a.config);
    const Config cfg = Config::from_json(nlohmann::json::parse(cf));
    const wire::CtxFile ctx = wire::load_ctx(a.contexts, cfg.in.ports, cfg.in.contexts);
    std::vector<std::vector<model::InFrame>> in(cfg.in.ports);
    for (int p = 0; p < cfg.in.ports && !a.live; ++p) {
      char name[32];
      std::snprintf(name, sizeof name, "/port%02d.pcap", p);
      std::ifstream probe(a.in_dir + name);
      if (!probe) continue;
      auto& v = in[p];
      for (auto& r : wire::read_pcap(a.in_dir + name)) v.push_back({std::move(r.data), false});
      for (auto& [i, k] : keep_io::read(keep_io::path_for(a.in_dir, p), v.size(), cfg.bus_bytes,
                                        [&](size_t i) { return v[i].data.size(); }))
        v[i].keep = std::move(k);
    }
    Harness h(cfg, a);
    if (a.live) {
      h.begin(ctx);
      h.live();
      return 0;
    }
    const model::Result r = h.run(ctx, in);
    std::ofstream out(a.result);
    out << model::result_to_json(r).dump();
    if (!out) throw std::runtime_error(a.result + ": write failed");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "panama-sim (rtl engine): %s\n", e.what());
    return 1;
  }
  return 0;
}
