// The hardware blocks of the model, one sc_module each, connected in model.cpp the way the RTL
// is: per port RxMac -> Parser -> PortBuffer (bypass FIFO + per-context contribution queues)
// -> TxPort; the Scheduler reads the queue heads of all ports, the ResultBuilder sums and builds,
// AggTx sends on m_agg; the RegFile holds configuration and counters.
//
// Timing discipline: every block has a tick() that models one rising clock edge. The top level
// calls the ticks from one clocked SC_METHOD in a fixed order, consumers before producers
// (transmit, scheduler, receive). A value a producer writes in cycle t is therefore seen by its
// consumer in cycle t+1 at the earliest, exactly as through a register, and the outcome never
// depends on the order in which a SystemC kernel would run sibling processes.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <systemc>

#include "config.h"
#include "ctx.h"
#include "model.h"
#include "regmap.h"
#include "wire.h"

namespace panama::model {

// A frame held in a port buffer.
struct Held {
  wire::Bytes data;
  bool tuser = false;
  uint32_t bytes = 0;       // buffer bytes it occupies (length rounded up to W/8)
  uint64_t admitted = 0;    // cycle of its last beat (admission)
  uint64_t ready_at = 0;    // earliest cycle its first beat may leave (bypass latency)
  uint64_t head_since = 0;  // contribution queues: cycle it became the head
  wire::AggHeader hdr;      // contributions: parsed header
};

// ---------------------------------------------------------------------------------------------
// Register file: the AXI4-Lite slave of regmap.h. Configuration is read by the datapath blocks
// directly (in the RTL these are the register outputs); counters are incremented by the blocks
// and saturate at 2^64 - 1.
class RegFile : public sc_core::sc_module {
 public:
  struct Ctx {
    bool enabled = false;
    uint32_t status = 0;
    uint16_t jid = 0;
    uint8_t tid = 0;
    bool upstream = false;
    uint8_t upstream_port = 0;
    wire::Mac group_mac{}, own_mac{};
    wire::Ipv4 group_ip = 0, own_ip = 0;
    uint32_t timeout = 0;
    uint32_t expected_vid = 0;
    std::vector<uint32_t> members;  // member_words words
    uint64_t completed = 0, dropped = 0;
    bool is_member(int p) const { return (members[p / 32] >> (p % 32)) & 1u; }
  };

  RegFile(sc_core::sc_module_name n, const Config& cfg);

  void write(uint32_t addr, uint32_t data);
  uint32_t read(uint32_t addr);

  // Datapath access.
  const RegMap& map() const { return map_; }
  uint16_t agg_port() const { return agg_port_; }
  Ctx& ctx(int c) { return ctxs_[c]; }
  int contexts() const { return static_cast<int>(ctxs_.size()); }
  int find_context(uint16_t jid, uint8_t tid) const;  // enabled context with (jid, tid), or -1
  void count(int port, PortCounter k) { sat_inc(ports_[port][k]); }
  void count_completed(int c) { sat_inc(ctxs_[c].completed); }
  void count_dropped(int c) { sat_inc(ctxs_[c].dropped); }
  void count_agg_tx() { sat_inc(agg_tx_); }
  uint64_t counter(int port, PortCounter k) const { return ports_[port][k]; }
  // Test hook: preset a counter (to check saturation without 2^64 frames).
  void preset(int port, PortCounter k, uint64_t v) { ports_[port][k] = v; }

 private:
  static void sat_inc(uint64_t& v) {
    if (v != UINT64_MAX) ++v;
  }
  uint32_t read_counter(uint64_t v, bool hi);
  void try_enable(int c);

  const Config& cfg_;
  RegMap map_;
  uint16_t agg_port_ = wire::kDefaultAggPort;
  std::vector<Ctx> ctxs_;
  std::vector<std::array<uint64_t, kNumPortCounters>> ports_;
  uint64_t agg_tx_ = 0;
  uint32_t hi_latch_ = 0;  // shared shadow of the last LO read's high word
};

// ---------------------------------------------------------------------------------------------
// Per-port buffer: byte accounting (rule 9), the bypass FIFO and the per-context contribution
// queues (rule 4). Storage is accounted in bytes rounded up to W/8, like the RTL's memory rows.
class PortBuffer : public sc_core::sc_module {
 public:
  PortBuffer(sc_core::sc_module_name n, const Config& cfg);

  uint32_t occupancy(size_t len) const;  // bytes a frame of len bytes occupies
  bool bypass_fits(uint32_t bytes) const { return bypass_used_ + bytes <= bypass_cap_; }
  bool contrib_fits(int c, uint32_t bytes) const;

  void push_bypass(Held h);
  void push_contrib(int c, Held h, uint64_t now);
  std::deque<Held>& bypass() { return bypass_; }
  std::deque<Held>& queue(int c) { return queues_[c]; }
  void pop_bypass();                      // frees the head's bytes
  void pop_contrib(int c, uint64_t now);  // frees the head's bytes, next head starts waiting
  uint64_t queued_contribs() const;

 private:
  uint64_t shared_used() const;
  uint64_t bypass_cap_, contrib_cap_, reserve_;
  uint32_t row_;
  uint64_t bypass_used_ = 0;
  std::vector<uint64_t> ctx_used_;
  std::deque<Held> bypass_;
  std::vector<std::deque<Held>> queues_;
};

// ---------------------------------------------------------------------------------------------
// Rule 2 of accelerator.md for one received frame on `port`, decided at its last beat (cycle
// `now`): classification, the drop checks in order (each failure exactly one counter), then the
// bypass half, the final-sum pass-through or the context's queue. Shared by RxPort and the live
// model of the switch stand-in.
void admit_frame(const Config& cfg, RegFile& regs, PortBuffer& buf, int port, const InFrame& f, uint64_t now);

// The receive timing shared by RxPort and the live model: counts the beats of the frame arriving
// on `port` and admits it (admit_frame) at its last beat.
class RxBeats {
 public:
  RxBeats(const Config& cfg, int port, RegFile& regs, PortBuffer& buf)
      : cfg_(cfg), port_(port), regs_(regs), buf_(buf) {}
  // One beat of f arrived in cycle `now`; true when it was f's last (f has been admitted).
  bool beat(const InFrame& f, uint64_t now);

 private:
  const Config& cfg_;
  int port_;
  RegFile& regs_;
  PortBuffer& buf_;
  uint32_t beats_done_ = 0;  // beats of the current frame received so far
};

// CTX.json programmed through the register interface, as a driver would.
void program_contexts(RegFile& regs, const wire::CtxFile& ctx);
// The counters of Result (port_counters, contexts, agg_tx_frames) read over the register
// interface, 64-bit counters LO first as a driver reads them.
void read_counters(RegFile& regs, int ports, int contexts, Result& r);

// ---------------------------------------------------------------------------------------------
// Receive side of one port: the link delivers beats of W bits (with random idle cycles when
// asked); the parser sees a frame when its last beat arrives (store-and-forward) and applies
// rule 2's admission checks in order.
class RxPort : public sc_core::sc_module {
 public:
  RxPort(sc_core::sc_module_name n, const Config& cfg, int port, RegFile& regs, PortBuffer& buf,
         std::vector<InFrame> frames, uint64_t seed, int idle_pct);
  void tick(uint64_t now);
  bool done() const { return next_ >= frames_.size(); }

 private:
  RxBeats rx_;
  std::vector<InFrame> frames_;
  size_t next_ = 0;
  std::mt19937_64 rng_;
  int idle_pct_;
};

// ---------------------------------------------------------------------------------------------
// Transmit side of one port (mPP): bypass frames and passed-down final sums in arrival order,
// one beat per cycle while tready is high; a started frame is never interrupted by us (tvalid
// stays high), only stalled by the switch chip's tready.
class TxPort : public sc_core::sc_module {
 public:
  TxPort(sc_core::sc_module_name n, const Config& cfg, int port, RegFile& regs, PortBuffer& buf, uint64_t seed,
         int bp_pct, std::vector<OutFrame>& out);
  void tick(uint64_t now);
  bool idle() const { return beats_left_ == 0 && buf_.bypass().empty(); }

 private:
  const Config& cfg_;
  int port_;
  RegFile& regs_;
  PortBuffer& buf_;
  std::mt19937_64 rng_;
  int bp_pct_;
  std::vector<OutFrame>& out_;
  uint32_t beats_left_ = 0;  // of the frame being sent
  uint64_t first_beat_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Built frames waiting for and leaving through m_agg. Capacity is bounded so that a stalled
// m_agg stalls aggregation (rule 8) instead of dropping.
class AggTx : public sc_core::sc_module {
 public:
  AggTx(sc_core::sc_module_name n, const Config& cfg, RegFile& regs, uint64_t seed, int bp_pct,
        std::vector<OutFrame>& out);
  void tick(uint64_t now);
  bool can_accept() const { return fifo_.size() < capacity_; }
  void push(OutFrame f, uint64_t ready_at);
  bool idle() const { return fifo_.empty(); }

 private:
  const Config& cfg_;
  RegFile& regs_;
  std::mt19937_64 rng_;
  int bp_pct_;
  std::vector<OutFrame>& out_;
  struct Pending {
    OutFrame f;
    uint64_t ready_at;
  };
  std::deque<Pending> fifo_;
  size_t capacity_;
  uint32_t beats_left_ = 0;
  uint64_t first_beat_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The result builder: the SIMD adder trees (shared by all contexts, one summed beat per cycle)
// and the header rewrite of wire-format.md. The sums come from numerics/ref_float.h in the
// tree order of numerics.md.
class ResultBuilder : public sc_core::sc_module {
 public:
  ResultBuilder(sc_core::sc_module_name n, const Config& cfg, AggTx& agg);
  // Whether a vector can enter the trees this cycle (trees free and room downstream).
  bool ready(uint64_t now) const { return now >= tree_free_at_ && agg_.can_accept(); }
  // heads[p] = the head of member port p's queue (nullptr for non-members).
  void build(int ctx, const RegFile::Ctx& c, const std::vector<const Held*>& heads, uint64_t now);

 private:
  const Config& cfg_;
  AggTx& agg_;
  uint64_t tree_free_at_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The aggregation scheduler: per context, the VID and port-bitmap logic of rules 5-7.
class Scheduler : public sc_core::sc_module {
 public:
  Scheduler(sc_core::sc_module_name n, const Config& cfg, RegFile& regs, std::vector<PortBuffer*> bufs,
            ResultBuilder& builder);
  void tick(uint64_t now);
  // True when no decision is possible now or later without new input (rule 10's "idle").
  bool quiescent() const { return quiescent_; }
  const std::vector<uint64_t>& consumed() const { return consumed_; }

 private:
  // One decision for context c; returns whether it changed anything; sets *waiting when the
  // context could still act later (a blocked completion or a running timeout).
  bool step(int c, uint64_t now, bool* waiting);
  void drop_head(int p, int c, PortCounter why, uint64_t now);
  void set_expected(int c, uint32_t e, uint64_t now);

  const Config& cfg_;
  RegFile& regs_;
  std::vector<PortBuffer*> bufs_;
  ResultBuilder& builder_;
  std::vector<uint64_t> e_changed_at_;
  std::vector<uint64_t> consumed_;
  bool quiescent_ = false;
};

// ---------------------------------------------------------------------------------------------
// The blocks of one accelerator wired together: the register file, m_agg, the result builder,
// per port a buffer, a receiver and a transmitter, and the scheduler. Rx is the receive side
// (RxPort, or the live model's); make_rx(port, regs, buf) builds one. The clock is the owner's.
template <typename Rx>
struct Datapath {
  template <typename MakeRx>
  Datapath(const Config& cfg, uint64_t seed, int bp_pct, std::vector<OutFrame>& agg_out,
           std::vector<std::vector<OutFrame>>& port_out, MakeRx make_rx)
      : regs("regs", cfg), agg("agg_tx", cfg, regs, seed, bp_pct, agg_out), builder("builder", cfg, agg) {
    port_out.assign(static_cast<size_t>(cfg.in.ports), {});
    std::vector<PortBuffer*> raw;
    for (int p = 0; p < cfg.in.ports; ++p) {
      const std::string s = std::to_string(p);
      bufs.emplace_back(new PortBuffer(("buf" + s).c_str(), cfg));
      raw.push_back(bufs.back().get());
      rx.emplace_back(make_rx(p, regs, *bufs.back()));
      tx.emplace_back(new TxPort(("tx" + s).c_str(), cfg, p, regs, *bufs.back(), seed, bp_pct, port_out[p]));
    }
    sched.reset(new Scheduler("sched", cfg, regs, raw, builder));
  }

  // One rising edge. Consumers tick before producers: a frame admitted in cycle t is visible to
  // the scheduler and the transmitters from cycle t+1.
  void tick(uint64_t now) {
    agg.tick(now);
    for (auto& t : tx) t->tick(now);
    sched->tick(now);
    for (auto& r : rx) r->tick(now);
  }
  bool rx_done() const {
    bool done = true;
    for (auto& r : rx) done &= r->done();
    return done;
  }
  bool tx_idle() const {
    bool idle = true;
    for (auto& t : tx) idle &= t->idle();
    return idle;
  }

  RegFile regs;
  AggTx agg;
  ResultBuilder builder;
  std::vector<std::unique_ptr<PortBuffer>> bufs;
  std::vector<std::unique_ptr<Rx>> rx;
  std::vector<std::unique_ptr<TxPort>> tx;
  std::unique_ptr<Scheduler> sched;
};

}  // namespace panama::model
