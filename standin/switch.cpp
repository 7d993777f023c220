#include "switch.h"

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <stdexcept>

#include "config.h"
#include "design.h"
#include "live.h"

namespace panama::host {

// ---------------------------------------------------------------------------------------------
// Engine: the SystemC live model

namespace {

class ModelEngine : public Engine {
 public:
  ModelEngine(const Config& cfg, const wire::CtxFile& ctx) : m_(cfg, ctx) {}
  int ports() const override { return m_.ports(); }
  void inject(int port, wire::Bytes frame) override { m_.inject(port, std::move(frame)); }
  void run_until_idle() override { m_.run_until_idle(); }
  void advance(uint64_t cycles) override { m_.advance(cycles); }
  std::vector<EngineOut> take_outputs() override {
    std::vector<EngineOut> v;
    for (auto& o : m_.take_outputs()) v.push_back(EngineOut{o.port, o.context, std::move(o.data)});
    return v;
  }
  nlohmann::ordered_json counters() override { return m_.counters(); }
  uint64_t cycles() const override { return m_.cycle(); }
  void reg_write(uint32_t a, uint32_t v) override { m_.reg_write(a, v); }
  uint32_t reg_read(uint32_t a) override { return m_.reg_read(a); }

 private:
  model::LiveModel m_;
};

}  // namespace

namespace {

bool is_multicast(const uint8_t* mac) { return mac[0] & 1; }

// Marks an ECT IPv4 frame (IHL 5) CE and recomputes its header checksum; false when the frame is
// not ECT IPv4 (left as it is).
bool mark_ce(wire::Bytes& g) {
  if (g.size() < 34 || wire::get16(&g[wire::off::eth_type]) != wire::kEtherTypeIpv4 ||
      g[wire::off::ip] != wire::kIpv4VerIhl)
    return false;
  const uint8_t e = g[wire::off::ip_tos] & 3;
  if (e != 1 && e != 2) return false;
  wire::set_ecn(g, wire::kEcnCe);
  wire::set_ipv4_checksum(g);
  return true;
}

}  // namespace

wire::CtxFile load_contexts(const std::string& rtl_dir, const std::string& ctx_path, int* ports) {
  const Config cfg = load_design(rtl_dir).config;
  if (ports) *ports = cfg.in.ports;
  return wire::load_ctx(ctx_path, cfg.in.ports, cfg.in.contexts);
}

std::unique_ptr<Engine> make_model_engine(const std::string& rtl_dir, const wire::CtxFile& ctx) {
  return make_model_engine(load_design(rtl_dir).config, ctx);
}

std::unique_ptr<Engine> make_model_engine(const Config& cfg, const wire::CtxFile& ctx) {
  return std::unique_ptr<Engine>(new ModelEngine(cfg, ctx));
}

// ---------------------------------------------------------------------------------------------
// SwitchChip

SwitchChip::SwitchChip(int ports, const wire::CtxFile& ctx, const ChipParams& p)
    : ports_(ports),
      ctx_(ctx),
      p_(p),
      q_(static_cast<size_t>(ports)),
      arrived_(static_cast<size_t>(ports)),
      busy_until_(static_cast<size_t>(ports)),
      held_(static_cast<size_t>(ports)),
      held_until_(static_cast<size_t>(ports)),
      ctr_(static_cast<size_t>(ports)),
      cache_(ctx.contexts.size()) {
  if (ports < 1) throw std::runtime_error("the switch needs at least one port");
  if (p.rate_mbps < 0) throw std::runtime_error("drain rate must be >= 0");
  if (p.ecn_threshold < 0) throw std::runtime_error("ECN threshold must be >= 0");
  if (p.queue_limit < 1) throw std::runtime_error("queue limit must be >= 1");
  if (!(p.loss >= 0 && p.loss <= 1)) throw std::runtime_error("loss must be a probability in [0, 1]");
  if (!(p.dup >= 0 && p.dup <= 1)) throw std::runtime_error("duplication must be a probability in [0, 1]");
  if (!(p.reorder >= 0 && p.reorder <= 1)) throw std::runtime_error("reordering must be a probability in [0, 1]");
  for (int q = 0; q < ports; ++q) all_ports_.push_back(q);
  lossy_.assign(static_cast<size_t>(ports), p.loss_ports.empty());
  for (int q : p.loss_ports) {
    if (q < 0 || q >= ports) throw std::runtime_error("loss port " + std::to_string(q) + " does not exist");
    lossy_[static_cast<size_t>(q)] = true;
  }
  rng_.seed(p.loss_seed);
}

bool SwitchChip::inject_loss(int port) {
  if (p_.loss <= 0 || !lossy_[static_cast<size_t>(port)]) return false;
  if (std::uniform_real_distribution<double>(0, 1)(rng_) >= p_.loss) return false;
  ++ctr_[static_cast<size_t>(port)].injected_drops;
  return true;
}

bool SwitchChip::inject_dup(int port) {
  if (p_.dup <= 0 || !lossy_[static_cast<size_t>(port)]) return false;
  if (std::uniform_real_distribution<double>(0, 1)(rng_) >= p_.dup) return false;
  ++ctr_[static_cast<size_t>(port)].injected_dups;
  return true;
}

bool SwitchChip::inject_reorder(int port) {
  if (p_.reorder <= 0 || !lossy_[static_cast<size_t>(port)]) return false;
  if (std::uniform_real_distribution<double>(0, 1)(rng_) >= p_.reorder) return false;
  ++ctr_[static_cast<size_t>(port)].injected_reorders;
  return true;
}

void SwitchChip::set_contexts(const wire::CtxFile& ctx) {
  ctx_ = ctx;
  cache_.assign(ctx_.contexts.size(), Cache{});
}

SwitchChip::Cache& SwitchChip::cache(size_t context) {
  Cache& c = cache_[context];
  if (c.sums.empty()) {
    c.sums.resize(p_.result_cache);
    c.cookies.resize(2 * p_.result_cache * static_cast<size_t>(ports_));
    c.ups.resize(p_.result_cache);
  }
  return c;
}

SwitchChip::Cached* SwitchChip::keep(size_t context, std::vector<Cached> Cache::*slots, const wire::Bytes& f) {
  if (p_.result_cache == 0 || context >= cache_.size() || f.size() < wire::kHeaderBytes) return nullptr;
  const uint32_t vid = wire::parse_header(f).vid;
  // The same VID again (a duplicated frame) takes the same slot: the newer copy.
  Cached& s = (cache(context).*slots)[vid % p_.result_cache];
  s.used = true;
  s.vid = vid;
  s.frame.assign(f.begin(), f.end());
  return &s;
}

void SwitchChip::remember_up(size_t context, const wire::Bytes& f) { keep(context, &Cache::ups, f); }

int SwitchChip::up_port(const wire::Bytes& f, int upstream_port) const {
  wire::Mac dst;
  std::copy(f.begin(), f.begin() + 6, dst.begin());
  const auto it = fdb_.find(dst);
  return it != fdb_.end() ? it->second : upstream_port;
}

wire::Bytes* SwitchChip::remember(size_t context, const wire::Bytes& f, int mark) {
  Cached* s = keep(context, &Cache::sums, f);
  if (!s) return nullptr;
  s->mark = mark;
  return &s->frame;
}

bool SwitchChip::recall(int port, const wire::Bytes& f) {
  if (p_.result_cache == 0 || f.size() < wire::kHeaderBytes) return false;
  if (wire::classify(f, ctx_.agg_port) != wire::Class::aggregation) return false;
  const auto h = wire::parse_header(f);
  if (h.ver != 1 || h.result()) return false;
  for (size_t i = 0; i < ctx_.contexts.size() && i < cache_.size(); ++i) {
    const auto& c = ctx_.contexts[i];
    if (c.jid != h.jid || c.tid != h.tid) continue;
    if (std::find(c.members.begin(), c.members.end(), port) == c.members.end()) return false;
    Cache& cc = cache(i);
    const size_t rc = p_.result_cache;
    Cookie& k = cc.cookies[(h.vid % (2 * rc)) * static_cast<size_t>(ports_) + static_cast<size_t>(port)];
    const Cached& s = cc.sums[h.vid % rc];
    const bool same_frame = k.used && k.vid == h.vid && k.cookie == h.cookie;  // this port's frame again
    if (s.used && s.vid == h.vid) {
      if (!same_frame) return false;
      enqueue(port, copy(s.frame), s.mark);
      ++ctr_[static_cast<size_t>(port)].recalled;
      return true;
    }
    // An upstream-mode context that sent this VID's partial sum up but never passed its final
    // sum down (lost on the way down, or not built above yet): the same partial again, up. The
    // parent answers it from its cache, relays it further, or (its first copy lost on the way
    // up) sums it; a copy it already has is behind the first in its queue and dropped as stale.
    const Cached& u = cc.ups[h.vid % rc];
    if (!c.multicast && same_frame && u.used && u.vid == h.vid) {
      enqueue(up_port(u.frame, c.upstream_port), copy(u.frame));
      ++ctr_[static_cast<size_t>(port)].relayed;
      return true;
    }
    // On its way to the accelerator: remember whose frame it was.
    k.used = true;
    k.vid = h.vid;
    k.cookie = h.cookie;
    return false;
  }
  return false;
}

void SwitchChip::count_rx(int port, size_t bytes) {
  auto& c = ctr_[static_cast<size_t>(port)];
  ++c.rx_frames;
  c.rx_bytes += bytes;
}

bool SwitchChip::congested(int port) const {
  return static_cast<int>(q_[static_cast<size_t>(port)].size()) > p_.ecn_threshold;
}

void SwitchChip::enqueue(int port, wire::Bytes&& f, int mark) {
  if (port < 0 || port >= ports_) {  // a reprogrammed context may name a port without a link
    pool_.put(std::move(f));
    return;
  }
  auto& q = q_[static_cast<size_t>(port)];
  auto& c = ctr_[static_cast<size_t>(port)];
  if (static_cast<int>(q.size()) >= p_.queue_limit) {
    ++c.queue_drops;
    pool_.put(std::move(f));
    return;
  }
  // DCTCP-style marking: an ECT IPv4 frame arriving at a queue longer than K (or, for a
  // replicated final sum, when any of its queues is: mark >= 0 is decided by the caller).
  const bool mark_it = mark >= 0 ? mark == 1 : congested(port);
  if (mark_it && mark_ce(f)) ++c.ce_marked;
  q.push_back(Queued(std::move(f)));
  arrived_[static_cast<size_t>(port)].push_back(stamp_ != Clock::time_point::min() ? stamp_ : Clock::now());
  c.max_queue = std::max<uint64_t>(c.max_queue, q.size());
}

void SwitchChip::enqueue_shared(int port, SharedFrame* s, bool ce) {
  if (port < 0 || port >= ports_) return;
  auto& q = q_[static_cast<size_t>(port)];
  auto& c = ctr_[static_cast<size_t>(port)];
  if (static_cast<int>(q.size()) >= p_.queue_limit) {
    ++c.queue_drops;
    return;
  }
  if (ce) ++c.ce_marked;
  ++s->refs;
  Queued x;
  x.sh = s;
  q.push_back(std::move(x));
  arrived_[static_cast<size_t>(port)].push_back(stamp_ != Clock::time_point::min() ? stamp_ : Clock::now());
  c.max_queue = std::max<uint64_t>(c.max_queue, q.size());
}

SwitchChip::SharedFrame* SwitchChip::shared_frame() {
  if (shared_free_.empty()) {
    shared_all_.push_back(std::make_unique<SharedFrame>());
    return shared_all_.back().get();
  }
  SharedFrame* s = shared_free_.back();
  shared_free_.pop_back();
  return s;
}

void SwitchChip::release(Queued& x) {
  if (x.sh) {
    if (--x.sh->refs == 0) shared_free_.push_back(x.sh);
    x.sh = nullptr;
  } else {
    pool_.put(std::move(x.own));
  }
}

SwitchChip::Queued SwitchChip::clone(Queued& x) {
  if (!x.sh) return Queued(copy(x.own));
  Queued y;
  y.sh = x.sh;
  ++x.sh->refs;
  return y;
}

void SwitchChip::replicate(const std::vector<int>& ports, int except, wire::Bytes&& f, int mark) {
  int last = -1, n = 0;
  for (int p : ports)
    if (p != except) {
      last = p;
      ++n;
    }
  if (last < 0) {
    pool_.put(std::move(f));
    return;
  }
  if (n > 1 && mark >= 0) {  // marked once for all: one frame, a reference in each queue
    SharedFrame* s = shared_frame();
    std::swap(s->data, f);
    pool_.put(std::move(f));
    const bool ce = mark == 1 && mark_ce(s->data);
    for (int p : ports)
      if (p != except) enqueue_shared(p, s, ce);
    if (s->refs == 0) shared_free_.push_back(s);  // every queue full
    return;
  }
  for (int p : ports)
    if (p != except && p != last) enqueue(p, copy(f), mark);  // copies first: enqueue may mark f
  enqueue(last, std::move(f), mark);
}

void SwitchChip::flood(wire::Bytes&& f, int except) {
  if (except >= 0) ++ctr_[static_cast<size_t>(except)].flooded;
  replicate(all_ports_, except, std::move(f), -1);
}

bool SwitchChip::built_by_board(const wire::Bytes& f) const {
  if (f.size() < wire::kHeaderBytes || wire::classify(f, ctx_.agg_port) != wire::Class::aggregation) return false;
  const auto h = wire::parse_header(f);
  for (const auto& c : ctx_.contexts)
    if (c.jid == h.jid && c.tid == h.tid) return c.multicast == h.result();
  return false;
}

void SwitchChip::from_accelerator(EngineOut& o) {
  wire::Bytes& f = o.data;
  // Multicast mode -> the context's members; upstream -> by destination. The context is found by
  // the frame's (JID, TID) (the table may have been reprogrammed).
  if (f.size() >= wire::kHeaderBytes && wire::classify(f, ctx_.agg_port) == wire::Class::aggregation) {
    const auto h = wire::parse_header(f);
    for (size_t i = 0; i < ctx_.contexts.size(); ++i)
      if (ctx_.contexts[i].jid == h.jid && ctx_.contexts[i].tid == h.tid) o.context = static_cast<int>(i);
  }
  if (o.context < 0 || o.context >= static_cast<int>(ctx_.contexts.size())) {
    flood(std::move(f), -1);
    return;
  }
  const auto& c = ctx_.contexts[static_cast<size_t>(o.context)];
  if (c.multicast) {
    // Marked once, before replication: every worker must see the same ECN bits (they keep
    // the same window from them), so the copies are marked when any member queue is long.
    bool mark = false;
    for (int p : c.members) mark |= congested(p);
    wire::Bytes* kept = remember(static_cast<size_t>(o.context), f, 0);  // as the members get it
    if (kept && mark) mark_ce(*kept);
    replicate(c.members, -1, std::move(f), mark ? 1 : 0);
    return;
  }
  remember_up(static_cast<size_t>(o.context), f);
  const int up = up_port(f, c.upstream_port);
  enqueue(up, std::move(f));
}

void SwitchChip::from_engine(EngineOut o, Clock::time_point now) {
  // Every frame this output queues arrived at `now` (one clock read per round, not per frame).
  struct Stamp {
    Clock::time_point& s;
    ~Stamp() { s = Clock::time_point::min(); }
  } stamp{stamp_};
  stamp_ = now;
  wire::Bytes& f = o.data;
  if (f.size() < 14) {  // the accelerator drops runts; nothing to forward
    pool_.put(std::move(f));
    return;
  }
  if (board_ && o.port >= 0) {
    if (board_->standalone) {
      enqueue(o.port, std::move(f), 0);  // the board forwarded, replicated and marked it already
      return;
    }
    if (o.port == board_->agg_port && built_by_board(f)) {
      o.port = -1;  // the board's m_agg, merged into this port's transmit
    } else if (std::equal(f.begin() + 6, f.begin() + 12, board_->mgmt_mac.begin())) {
      // A management response: to its destination, which may be the port it came from.
      wire::Mac dst;
      std::copy(f.begin(), f.begin() + 6, dst.begin());
      const auto it = fdb_.find(dst);
      if (it != fdb_.end())
        enqueue(it->second, std::move(f));
      else
        flood(std::move(f), -1);
      return;
    }
  }
  if (o.port < 0) {
    from_accelerator(o);
    return;
  }
  // A frame from link p (bypass, or a final sum passed down): learn, then forward by eth.dst.
  const int in = o.port;
  wire::Mac src, dst;
  std::copy(f.begin() + 6, f.begin() + 12, src.begin());
  std::copy(f.begin(), f.begin() + 6, dst.begin());
  if (!is_multicast(src.data())) fdb_[src] = in;
  if (is_multicast(dst.data())) {
    // Multicast groups of the contexts: a RESULT passed down by an upstream-mode context goes
    // to that context's members; other multicast and broadcast floods.
    for (size_t ci = 0; ci < ctx_.contexts.size(); ++ci) {
      const auto& c = ctx_.contexts[ci];
      const bool group = c.multicast ? c.group_mac == dst : false;
      bool passed_result = false;
      if (!c.multicast && f.size() >= wire::kHeaderBytes && c.upstream_port == in &&
          wire::classify(f, ctx_.agg_port) == wire::Class::aggregation) {
        const auto h = wire::parse_header(f);
        passed_result = h.result() && h.jid == c.jid && h.tid == c.tid;
      }
      if (group || passed_result) {
        if (passed_result) remember(ci, f, -1);
        replicate(c.members, in, std::move(f), -1);
        return;
      }
    }
    flood(std::move(f), in);
    return;
  }
  auto it = fdb_.find(dst);
  if (it == fdb_.end()) {
    flood(std::move(f), in);
  } else if (it->second == in) {
    ++ctr_[static_cast<size_t>(in)].filtered;
    pool_.put(std::move(f));
  } else {
    enqueue(it->second, std::move(f));
  }
}

bool SwitchChip::pop_due(int port, Clock::time_point now, wire::Bytes& f) {
  bool owned = false;
  wire::Bytes* g = pop_due(port, now, &owned);
  if (!g) return false;
  if (owned)
    std::swap(f, *g);  // f's old buffer goes back to the pool with cur_
  else
    f.assign(g->begin(), g->end());
  return true;
}

wire::Bytes* SwitchChip::pop_due(int port, Clock::time_point now, bool* owned) {
  const size_t pi = static_cast<size_t>(port);
  auto& q = q_[pi];
  auto& arr = arrived_[pi];
  auto& held = held_[pi];
  release(cur_);
  if (held) {
    if (q.empty() && now < held_until_[pi]) return nullptr;
    // A held frame leaves right behind the next frame queued, or alone once its hold is over.
    q.insert_second(std::move(*held));
    arr.insert_second(now);
    held.reset();
  }
  auto& busy = busy_until_[pi];
  Clock::time_point arrival;
  for (bool may_reorder = true;;) {
    if (q.empty() || (p_.rate_mbps > 0 && now < busy)) return nullptr;
    release(cur_);
    cur_ = q.take_front();
    arrival = arr.take_front();
    if (inject_loss(port)) continue;
    if (!may_reorder || !inject_reorder(port)) break;
    may_reorder = false;
    if (q.empty()) {  // nothing to overtake it yet: held until a frame is queued behind it
      held = std::move(cur_);
      held_until_[pi] = now + kReorderHold;
      return nullptr;
    }
    q.insert_second(std::move(cur_));  // the next frame overtakes this one
    arr.insert_second(arrival);
  }
  if (inject_dup(port)) {  // the copy leaves right after the original
    q.push_front(clone(cur_));
    arr.push_front(arrival);
  }
  wire::Bytes& f = cur_.bytes();
  auto& c = ctr_[static_cast<size_t>(port)];
  ++c.tx_frames;
  c.tx_bytes += f.size();
  if (p_.rate_mbps > 0) {
    // Wire time including FCS, preamble and inter-frame gap (24 bytes).
    const double secs = (static_cast<double>(f.size()) + 24) * 8 / (p_.rate_mbps * 1e6);
    // The link's own timeline: a frame starts when the previous one ended or when it arrived,
    // whichever is later, not when this loop got round to it (a loop late by a fraction of a
    // frame time per frame, under load, would otherwise idle the link: at 4 Mbit/s about 20 %
    // of it). A late loop then sends what is due back to back.
    busy = std::max(busy, arrival) + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
  }
  if (owned) *owned = cur_.sh == nullptr;
  return &f;
}

Clock::time_point SwitchChip::next_due() const {
  Clock::time_point t = Clock::time_point::max();
  for (size_t p = 0; p < q_.size(); ++p) {
    if (!q_[p].empty()) t = std::min(t, p_.rate_mbps > 0 ? busy_until_[p] : Clock::time_point::min());
    if (held_[p]) t = std::min(t, held_until_[p]);
  }
  return t;
}

size_t SwitchChip::queued() const {
  size_t n = 0;
  for (size_t p = 0; p < q_.size(); ++p) n += q_[p].size() + (held_[p] ? 1 : 0);
  return n;
}

nlohmann::ordered_json SwitchChip::counters_json() const {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto& c : ctr_)
    a.push_back({{"rx_frames", c.rx_frames},
                 {"rx_bytes", c.rx_bytes},
                 {"tx_frames", c.tx_frames},
                 {"tx_bytes", c.tx_bytes},
                 {"queue_drops", c.queue_drops},
                 {"ce_marked", c.ce_marked},
                 {"max_queue", c.max_queue},
                 {"flooded", c.flooded},
                 {"filtered", c.filtered},
                 {"injected_drops", c.injected_drops},
                 {"injected_dups", c.injected_dups},
                 {"injected_reorders", c.injected_reorders},
                 {"recalled", c.recalled},
                 {"relayed", c.relayed}});
  return a;
}

// ---------------------------------------------------------------------------------------------
// The stand-in's loop

namespace {

// The stand-in's receive side: fault injection, the result cache, then the engine. A frame
// picked for reordering waits for the next frame of its port (or kReorderHold) before it goes on.
class Receiver {
 public:
  Receiver(Engine& eng, SwitchChip& chip, int ports) : eng_(eng), chip_(chip), held_(static_cast<size_t>(ports)) {}

  // A frame from link `port`; true when it reached the engine.
  bool take(int port, wire::Bytes&& f, Clock::time_point now) {
    chip_.count_rx(port, f.size());
    if (chip_.inject_loss(port)) {
      chip_.pool().put(std::move(f));
      return false;
    }
    Held& h = held_[static_cast<size_t>(port)];
    if (!h.frame && chip_.inject_reorder(port)) {
      h.frame = std::move(f);
      h.until = now + kReorderHold;
      return false;
    }
    bool in = pass(port, std::move(f));
    if (h.frame) in |= release(port);  // the held frame goes on right behind the one that overtook it
    return in;
  }
  // Held frames whose hold is over go on alone; true when one reached the engine.
  bool release_due(Clock::time_point now) {
    bool in = false;
    for (size_t port = 0; port < held_.size(); ++port)
      if (held_[port].frame && now >= held_[port].until) in |= release(static_cast<int>(port));
    return in;
  }

 private:
  struct Held {
    std::optional<wire::Bytes> frame;
    Clock::time_point until;
  };
  bool release(int port) {
    wire::Bytes f = std::move(*held_[static_cast<size_t>(port)].frame);
    held_[static_cast<size_t>(port)].frame.reset();
    return pass(port, std::move(f));
  }
  bool pass(int port, wire::Bytes&& f) {
    const bool dup = chip_.inject_dup(port);
    // A re-sent contribution whose sum the chip still holds: answered here (the switch chip
    // sees the frame before the accelerator beside it).
    if (chip_.recall(port, f)) {
      if (dup) chip_.recall(port, f);
      chip_.pool().put(std::move(f));
      return false;
    }
    if (dup) eng_.inject(port, chip_.copy(f));
    eng_.inject(port, std::move(f));
    return true;
  }
  Engine& eng_;
  SwitchChip& chip_;
  std::vector<Held> held_;
};

// Frames taken per port and round: halved while the engine's work in a round exceeds the
// budget, doubled while it stays under a quarter of it (StandInParams::round_budget_s).
class RoundBudget {
 public:
  explicit RoundBudget(const StandInParams& p) : budget_(p.round_budget_s), max_(std::max(1, p.max_batch)) {
    per_port_ = std::min(max_, 16);
  }
  int per_port() const { return per_port_; }
  void update(double engine_s, bool filled) {
    if (budget_ <= 0) {
      per_port_ = max_;
    } else if (engine_s > budget_) {
      per_port_ = std::max(1, per_port_ / 2);
    } else if (filled && engine_s < budget_ / 4) {
      per_port_ = std::min(max_, per_port_ * 2);
    }
  }

 private:
  double budget_;
  int max_, per_port_;
};

// --queue-log: one CSV line per port every interval.
class QueueLog {
 public:
  QueueLog(const StandInParams& p, int ports) : ports_(ports) {
    if (p.queue_log.empty()) return;
    // Appended: the stand-in runs its loop in slices (counter exports); the header goes into an
    // empty file only.
    f_.open(p.queue_log, std::ios::app);
    if (!f_) throw std::runtime_error("cannot write the queue log " + p.queue_log);
    if (f_.tellp() == 0) f_ << "unix_s,port,queue_frames,ce_marked\n";
    every_ = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p.queue_log_interval));
    next_ = Clock::now();
  }
  void sample(const SwitchChip& chip) {
    if (!f_.is_open() || Clock::now() < next_) return;
    const double unix_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (int port = 0; port < ports_; ++port)
      f_ << std::fixed << std::setprecision(3) << unix_s << ',' << port << ',' << chip.queue_len(port) << ','
         << chip.counters()[static_cast<size_t>(port)].ce_marked << '\n';
    f_.flush();
    next_ += every_;
    if (next_ < Clock::now()) next_ = Clock::now() + every_;
  }

 private:
  int ports_;
  std::ofstream f_;
  Clock::duration every_{};
  Clock::time_point next_;
};

}  // namespace

nlohmann::ordered_json run_standin(Fabric& fab, Engine& eng, SwitchChip& chip, const StandInParams& p,
                                   const std::atomic<bool>& stop) {
  const int n = std::min(fab.ports(), eng.ports());
  auto last_traffic = Clock::now();
  // The frames' buffers come from the chip's pool and go back to it (no allocation per frame).
  struct PoolScope {
    Engine& e;
    ~PoolScope() { e.use_pool(nullptr); }
  } pool_scope{eng};
  eng.use_pool(&chip.pool());
  wire::Bytes f = chip.pool().get();
  std::vector<EngineOut> outs;
  QueueLog qlog(p, n);
  Receiver rx(eng, chip, n);
  RoundBudget budget(p);
  while (!stop.load(std::memory_order_relaxed) && Clock::now() < p.until) {
    if (p.control) p.control(eng, chip);
    qlog.sample(chip);
    const auto t0 = Clock::now();
    bool got = rx.release_due(t0), filled = false;
    for (int port = 0; port < n; ++port) {
      int k = 0;
      for (; k < budget.per_port() && fab.try_recv(port, f); ++k) {
        got |= rx.take(port, std::move(f), t0);
        f = chip.pool().get();
      }
      filled |= k == budget.per_port();
    }
    auto now = Clock::now();
    if (got) {
      eng.run_until_idle();
      last_traffic = now;
    } else if (p.idle_cycles_per_ms > 0 && now - last_traffic >= std::chrono::milliseconds(1)) {
      // Let simulated time pass while the links are quiet, so context timeouts can fire.
      eng.advance(p.idle_cycles_per_ms);
      last_traffic = now;
    }
    eng.drain_outputs(outs);
    now = Clock::now();  // the outputs' arrival in their queues: after the engine's work
    for (auto& o : outs) chip.from_engine(std::move(o), now);
    outs.clear();
    budget.update(std::chrono::duration<double>(now - t0).count(), filled);
    for (int port = 0; port < n; ++port)
      for (bool owned = false; wire::Bytes* g = chip.pop_due(port, now, &owned);) {
        if (owned)
          fab.send_swap(port, *g);  // the buffer itself goes to the link
        else
          fab.send(port, *g);  // a replicated frame other queues still hold: the link copies it
      }
    fab.flush();
    if (filled) continue;  // keep draining the links before sleeping
    const auto due = chip.next_due();
    fab.wait(std::min({due, p.until, Clock::now() + std::chrono::milliseconds(1)}));
  }
  nlohmann::ordered_json j;
  j["accelerator"] = eng.counters();
  j["cycles"] = eng.cycles();
  j["switch_ports"] = chip.counters_json();
  return j;
}

}  // namespace panama::host
