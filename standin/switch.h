// The switch stand-in of `panama-host switch` (tools.md, docs/host.md): an accelerator engine
// (its ports face the links) plus the switch chip it hands frames to: L2 forwarding with MAC
// learning and flooding, multicast groups from the contexts, and per egress port a queue with a
// drain rate and DCTCP-style ECN marking. Transport-agnostic: a Fabric moves frames between the
// ports and the outside world (AF_PACKET sockets, or in-process queues in tests).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>
#include <memory>
#include <optional>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frame_pool.h"
#include "transport.h"
#include "ctx.h"
#include "wire.h"

namespace panama {
struct Config;
}

namespace panama::host {

struct EngineOut {
  int port = -1;     // mPP port, or -1 for m_agg
  int context = -1;  // m_agg: building context
  wire::Bytes data;
};

// The accelerator as the stand-in drives it. The SystemC live model implements it today; the
// Verilated RTL top will implement the same interface.
class Engine {
 public:
  virtual ~Engine() = default;
  virtual int ports() const = 0;
  virtual void inject(int port, wire::Bytes frame) = 0;
  virtual void run_until_idle() = 0;          // process everything injected so far
  virtual void advance(uint64_t cycles) = 0;  // let time pass (context timeouts)
  virtual std::vector<EngineOut> take_outputs() = 0;
  // The same into `out` (empty on entry), for the stand-in's loop: an engine that keeps its own
  // output vector swaps it with `out`, so neither is allocated again (the soft engine).
  virtual void drain_outputs(std::vector<EngineOut>& out) {
    for (auto& o : take_outputs()) out.push_back(std::move(o));
  }
  // Where the engine takes the buffers of the frames it builds and gives back the frames it has
  // consumed (the stand-in's loop sets the switch chip's pool); null: it allocates its own.
  virtual void use_pool(FramePool*) {}
  virtual nlohmann::ordered_json counters() = 0;
  virtual uint64_t cycles() const = 0;
  // The AXI4-Lite register port, between cycles (the controller's live mode).
  virtual void reg_write(uint32_t, uint32_t) { throw std::runtime_error("this engine has no register port"); }
  virtual uint32_t reg_read(uint32_t) { throw std::runtime_error("this engine has no register port"); }
};

// The SystemC model as the engine (one per process: SystemC elaborates once). Reads
// RTL_DIR/config.json for the design parameters.
std::unique_ptr<Engine> make_model_engine(const std::string& rtl_dir, const wire::CtxFile& ctx);
std::unique_ptr<Engine> make_model_engine(const Config& cfg, const wire::CtxFile& ctx);
// The accelerator's behaviour rules on whole frames in C++, tree-order sums with the host CPU's
// addition (standin/engines/soft_engine.cpp): a stand-in that is not the bottleneck of a benchmark.
std::unique_ptr<Engine> make_soft_engine(const Config& cfg, const wire::CtxFile& ctx);
// The Verilated RTL of RTL_DIR as the engine: its harness, verilated on first use, runs as a child
// process (standin/engines/rtl_engine_client.cpp).
std::unique_ptr<Engine> make_rtl_engine(const std::string& rtl_dir, const std::string& ctx_path, int ports);
// The Verilated board shell of a `panama-gen --board` output (standin/engines/shell_harness.cpp): its
// ports are the board's MACs; the frames the core builds leave on the board's AGG_PORT among that
// port's own; it has no register port (its registers are behind management over Ethernet).
std::unique_ptr<Engine> make_shell_engine(const std::string& rtl_dir, int ports);
// Reads RTL_DIR/config.json and CTX.json (validated against the design); throws std::runtime_error.
wire::CtxFile load_contexts(const std::string& rtl_dir, const std::string& ctx_path, int* ports);

struct ChipParams {
  double rate_mbps = 0;    // drain rate of every egress queue; 0 = as fast as the fabric takes
  int ecn_threshold = 85;  // CE on ECT frames arriving at a queue holding more than this many
  int queue_limit = 1000;  // tail drop above this many frames
  // Fault injection: each frame received from or sent to a port in loss_ports (empty: every
  // port) is dropped with probability loss (seeded, counted `injected_drops`).
  double loss = 0;
  std::vector<int> loss_ports;
  uint64_t loss_seed = 1;
  // Each frame received from or sent to a port in loss_ports is duplicated with probability dup
  // (the copy follows the original at once; counted `injected_dups`); same seed.
  double dup = 0;
  // Each frame received from or sent to a port in loss_ports is, with probability reorder,
  // overtaken by the next frame of that port and direction, or held for kReorderHold when none
  // follows (counted `injected_reorders`); same seed.
  double reorder = 0;
  // The result cache (SwitchML's shadow copies, docs/host.md "Recall"): the last result_cache
  // final sums this chip sent to each context's members, by VID. A contribution that arrives
  // for a VID whose sum is cached (a worker re-sending after its copy of the result was lost)
  // is answered from the cache to that port alone and not given to the accelerator (which
  // would drop it as stale: the VID is behind its Expected_VID). 0: off.
  size_t result_cache = 1024;
};

struct PortCounters {
  uint64_t rx_frames = 0, rx_bytes = 0, tx_frames = 0, tx_bytes = 0, queue_drops = 0, ce_marked = 0, max_queue = 0,
           flooded = 0, filtered = 0, injected_drops = 0, injected_dups = 0, injected_reorders = 0,
           recalled = 0,  // contributions answered from the result cache
      relayed = 0;        // contributions whose partial sum this chip sent up again (an upstream-mode context)
};

// The switch chip beside a board shell (panama-host switch --shell): the board's frames all come
// from its ports, so the chip tells the kinds apart by content, as a real switch next to the board
// would by its forwarding rules. On agg_port, an aggregation frame of a context that is that
// context's built frame (a multicast context's RESULT, an upstream context's partial sum) goes
// where m_agg frames go; a frame from the board's management MAC (a response) goes to its
// destination even on the port it came from.
// standalone: the board does the switching itself (panama-gen --standalone); the chip is then a
// wire from each board port to its link.
struct BoardSide {
  int agg_port = -1;
  wire::Mac mgmt_mac{};
  bool standalone = false;
};

class SwitchChip {
 public:
  SwitchChip(int ports, const wire::CtxFile& ctx, const ChipParams& p);
  // Forward + enqueue (o.data's buffer kept or given back to pool()); `now`: the frames' arrival
  // time in their queues (the drain rate's timeline).
  void from_engine(EngineOut o, Clock::time_point now);
  void count_rx(int port, size_t bytes);
  // Fault injection on a frame received from / sent to `port`: true = drop it.
  bool inject_loss(int port);
  // Fault injection: true = send this frame twice.
  bool inject_dup(int port);
  // Fault injection: true = let the next frame of this port and direction overtake this one.
  bool inject_reorder(int port);
  // The contexts the chip forwards by (multicast groups, passed-down results), e.g. after a
  // live reprogramming. m_agg frames are matched to contexts by their (JID, TID).
  // Reprogramming empties the result cache (a context's VIDs may start again).
  void set_contexts(const wire::CtxFile& ctx);
  // A frame received from link `port`, before the accelerator: true when it is a contribution
  // whose result is in the cache and whose COOKIE is that of the contribution this port sent
  // for the VID before (a re-send); the cached result is then queued to `port` (counted
  // `recalled`) and the frame must not go to the accelerator. In an upstream-mode context whose
  // result for the VID never came down, a re-send of a VID whose partial sum this chip sent up
  // sends that partial up again instead (counted `relayed` at `port`): the parent's chip answers
  // it from its own cache, or relays it further up, so a final sum lost on the way down to this
  // switch can be asked for by the workers below it. false otherwise.
  bool recall(int port, const wire::Bytes& f);
  const wire::CtxFile& contexts() const { return ctx_; }
  void set_board(const BoardSide& b) { board_ = b; }
  // Next frame port p may transmit now (drain rate), nullptr if none. The frame stays valid until
  // the next pop_due() on any port. *owned: its buffer is this queue's alone (the caller may take
  // it: Fabric::send_swap), else it is a replicated frame other queues still share (send a copy).
  wire::Bytes* pop_due(int port, Clock::time_point now, bool* owned);
  // The same into f (f's old buffer goes back to pool()); false if none.
  bool pop_due(int port, Clock::time_point now, wire::Bytes& f);
  // The frame buffers the chip, the stand-in's loop and the soft engine share (one per thread).
  FramePool& pool() { return pool_; }
  // A reused buffer with f's bytes (a replicated frame's copies).
  wire::Bytes copy(const wire::Bytes& f) { return pool_.copy(f); }
  // Earliest time a queued frame becomes due (Clock::time_point::max() when all queues are empty).
  Clock::time_point next_due() const;
  size_t queued() const;
  size_t queue_len(int port) const { return q_[static_cast<size_t>(port)].size(); }
  const std::vector<PortCounters>& counters() const { return ctr_; }
  nlohmann::ordered_json counters_json() const;

 private:
  // Queues f (its buffer taken) to `port`; mark: -1 by this queue, 0/1 forced.
  void enqueue(int port, wire::Bytes&& f, int mark = -1);
  bool congested(int port) const;
  void flood(wire::Bytes&& f, int except);
  // f to every port of `ports` but `except` (with a forced mark, one shared frame; else copies,
  // the last one gets f itself).
  void replicate(const std::vector<int>& ports, int except, wire::Bytes&& f, int mark);
  void from_accelerator(EngineOut& o);  // a frame the accelerator built (m_agg)
  // A final sum sent to the members, kept; the kept copy (nullptr when the cache is off).
  wire::Bytes* remember(size_t context, const wire::Bytes& f, int mark);
  // A partial sum sent up by an upstream-mode context, kept (recall() may send it up again).
  void remember_up(size_t context, const wire::Bytes& f);
  // Where an upstream-mode context's partial sums go: the port of their destination MAC, else
  // the context's upstream port.
  int up_port(const wire::Bytes& f, int upstream_port) const;
  bool built_by_board(const wire::Bytes& f) const;
  int ports_;
  std::vector<int> all_ports_;  // 0 .. ports_ - 1
  std::optional<BoardSide> board_;
  wire::CtxFile ctx_;
  ChipParams p_;
  std::map<wire::Mac, int> fdb_;  // learned MAC -> port
  FramePool pool_;
  Clock::time_point stamp_ = Clock::time_point::min();  // from_engine's `now` while it runs
  // A frame the accelerator replicated to several queues (a multicast sum, marked once for all)
  // is queued once: each queue holds a reference (no copy per member); the last one to send it
  // frees it for reuse.
  struct SharedFrame {
    wire::Bytes data;
    int refs = 0;
  };
  struct Queued {  // a queued frame: its own buffer, or a shared one
    wire::Bytes own;
    SharedFrame* sh = nullptr;
    Queued() = default;
    explicit Queued(wire::Bytes&& b) : own(std::move(b)) {}
    Queued(Queued&& o) noexcept : own(std::move(o.own)), sh(o.sh) { o.sh = nullptr; }
    Queued& operator=(Queued&& o) noexcept {
      own = std::move(o.own);
      sh = o.sh;
      o.sh = nullptr;
      return *this;
    }
    wire::Bytes& bytes() { return sh ? sh->data : own; }
  };
  void release(Queued& x);                                 // its buffer back to the pool, or one reference less
  Queued clone(Queued& x);                                 // a duplicate (a copy, or one reference more)
  SharedFrame* shared_frame();                             // a free shared frame (allocated only when none is free)
  void enqueue_shared(int port, SharedFrame* s, bool ce);  // ce: the frame was marked CE
  std::vector<std::unique_ptr<SharedFrame>> shared_all_;
  std::vector<SharedFrame*> shared_free_;
  Queued cur_;  // the frame pop_due() handed out last
  std::vector<Ring<Queued>> q_;
  std::vector<Ring<Clock::time_point>> arrived_;  // per queued frame, when it was enqueued
  std::vector<Clock::time_point> busy_until_;
  // Per egress port, a frame held back by inject_reorder() while its queue was empty: it goes
  // out right behind the next frame queued there, or alone once held_until_ passes.
  std::vector<std::optional<Queued>> held_;
  std::vector<Clock::time_point> held_until_;
  std::vector<PortCounters> ctr_;
  std::vector<bool> lossy_;
  std::mt19937_64 rng_;
  // The result cache of a context, direct-mapped (no allocation once its slots are used): the sum
  // of VID v in slot v mod result_cache; the COOKIE each member port sent for VID v in slot
  // (v mod 2 result_cache, port), so that only the same frame again is answered: another process
  // reusing old VIDs (a restarted worker, a wrong --first-vid) goes to the accelerator, which
  // drops it as stale.
  struct Cached {
    bool used = false;
    uint32_t vid = 0;
    wire::Bytes frame;
    int mark = 0;  // as enqueue(): 0 = as cached (a multicast sum, marked once for all), -1 = by the queue
  };
  struct Cookie {
    bool used = false;
    uint32_t vid = 0;
    uint64_t cookie = 0;
  };
  struct Cache {
    std::vector<Cached> sums;
    std::vector<Cookie> cookies;
    std::vector<Cached> ups;  // upstream mode: the partial sum of VID v sent up, in slot v mod result_cache
  };
  Cache& cache(size_t context);  // sized on first use
  std::vector<Cache> cache_;     // per context index
  // f into its VID's slot of a context's sums or ups (nullptr when the cache is off or f is short).
  Cached* keep(size_t context, std::vector<Cached> Cache::*slots, const wire::Bytes& f);
};

// Moves frames between the stand-in's ports and the outside.
class Fabric {
 public:
  virtual ~Fabric() = default;
  virtual int ports() const = 0;
  virtual bool try_recv(int port, wire::Bytes& f) = 0;
  virtual void send(int port, const wire::Bytes& f) = 0;
  virtual void wait(Clock::time_point until) = 0;  // until a frame may be ready or `until`
  // Hands frames given to send() to the links now (a fabric may batch them; the loop calls this
  // after every round of sends).
  virtual void flush() {}
  // Like send(), but the fabric may keep f's buffer and leave another (with some capacity) in
  // f: the stand-in's loop sends this way, so that a frame is not copied to be queued.
  virtual void send_swap(int port, wire::Bytes& f) { send(port, f); }
  // Frames the links could not send (counted, dropped).
  virtual uint64_t send_errors() const { return 0; }
};

// How long a frame picked for reordering waits for another frame to overtake it.
constexpr std::chrono::milliseconds kReorderHold{1};

struct StandInParams {
  ChipParams chip;
  uint64_t idle_cycles_per_ms = 0;  // simulated cycles per quiet ms (lets context timeouts fire)
  int max_batch = 256;              // frames received per port per round, at most
  // The engine's share of one round, in seconds: the frames taken from the links per round
  // shrink (down to one per port) while a round's engine work takes longer than this and grow
  // back (up to max_batch) while it takes much less, so that a slow engine (the Verilated RTL,
  // a board shell) under a continuous flood still ends a round, and sees a stop request or the
  // end of `until`, within about this time. Frames not taken wait in the links' buffers.
  double round_budget_s = 0.05;
  // The loop also ends at this time (the CLI runs it in slices, exporting counters in between).
  Clock::time_point until = Clock::time_point::max();
  // Every queue_log_interval seconds, one CSV line per port: unix time, port, frames queued,
  // frames CE-marked so far (the fairness experiment's queue plot). Empty: off.
  std::string queue_log;
  double queue_log_interval = 0.1;
  // Called once per loop round from the loop's thread (the control socket).
  std::function<void(Engine&, SwitchChip&)> control;
};

// Runs until `stop` becomes true or p.until passes; both are checked every round, under load
// too. Returns the combined counters (engine + chip).
nlohmann::ordered_json run_standin(Fabric& fab, Engine& eng, SwitchChip& chip, const StandInParams& p,
                                   const std::atomic<bool>& stop);

}  // namespace panama::host
