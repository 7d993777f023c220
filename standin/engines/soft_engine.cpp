// `switch --engine soft` (docs/results/host.md "Benchmark"): the accelerator's behaviour rules
// (accelerator.md 1-8) on whole frames in C++, summing with the host CPU's own addition in the
// tree order of numerics.md (numerics/ref_float.h, the tests' reference), so that the stand-in
// is not the bottleneck of a host-side benchmark. Not a model of the RTL: no cycles, no buffer
// accounting beyond a frame cap per queue, no timeouts, no register port (contexts come from
// --contexts), tree-order sums only.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <utility>
#include <stdexcept>

#include "config.h"
#include "lane_sum.h"
#include "ref_float.h"
#include "regmap.h"
#include "switch.h"

namespace panama::host {
namespace {

// accelerator.md rule 10, per port: regmap.h's PortCounter order and counters.json names.
using PortCtr = PortCounter;
using standin::LaneSum;

constexpr size_t kQueueCap = 4096;  // contributions per (port, context): beyond, `overflow`

class SoftEngine : public Engine {
 public:
  SoftEngine(const Config& cfg, const wire::CtxFile& ctx)
      : n_(cfg.in.ports),
        es_(cfg.fmt.elem_bytes),
        max_elems_(cfg.max_elems),
        fmt_(cfg.in.format),
        ftz_(cfg.in.subnormals == Subnormals::ftz),
        ctxf_(ctx),
        ctr_(static_cast<size_t>(n_), std::vector<uint64_t>(kNumPortCounters, 0)) {
    if (cfg.exact_sum()) throw std::runtime_error("--engine soft sums in tree order only (the design has --sum exact)");
    leaves_ = 1;
    while (leaves_ < static_cast<size_t>(n_)) leaves_ *= 2;
    for (const auto& e : ctx.contexts) {
      Ctx c;
      c.e = e;
      c.q.resize(static_cast<size_t>(n_));
      ctx_.push_back(std::move(c));
    }
  }
  int ports() const override { return n_; }

  void inject(int port, wire::Bytes f) override {
    auto& pc = ctr_[static_cast<size_t>(port)];
    ++pc[kRxFrames];
    ++frames_;
    if (f.size() < 14) {
      drop(pc, kRunt, std::move(f));
      return;
    }
    if (wire::classify(f, ctxf_.agg_port) != wire::Class::aggregation) {
      pass(port, std::move(f), kBypassFrames);
      return;
    }
    if (wire::check_wellformed(f, es_, max_elems_) != wire::Validity::ok) {
      drop(pc, kMalformed, std::move(f));
      return;
    }
    const wire::AggHeader h = wire::parse_header(f);
    Ctx* c = find(h.jid, h.tid);
    if (!c) {
      drop(pc, kNoContext, std::move(f));
      return;
    }
    if (h.result()) {
      if (!c->e.multicast && port == c->e.upstream_port)
        pass(port, std::move(f), kResultPassed);
      else
        drop(pc, kNotMember, std::move(f));
      return;
    }
    if (!member(*c, port)) {
      drop(pc, kNotMember, std::move(f));
      return;
    }
    auto& q = c->q[static_cast<size_t>(port)];
    if (q.size() >= kQueueCap) {
      drop(pc, kOverflow, std::move(f));
      return;
    }
    q.push_back(std::move(f));
    c->dirty = true;
    ++pc[kAggAdmitted];
  }

  void run_until_idle() override {
    // Only contexts that took a frame since their last decision can decide anything new.
    for (size_t i = 0; i < ctx_.size(); ++i)
      if (ctx_[i].dirty) {
        ctx_[i].dirty = false;
        decide(i);
      }
  }
  void advance(uint64_t) override {}  // no timeouts
  std::vector<EngineOut> take_outputs() override { return std::exchange(out_, {}); }
  void drain_outputs(std::vector<EngineOut>& out) override { out.swap(out_); }  // both keep their capacity
  void use_pool(FramePool* p) override { pool_ = p; }
  uint64_t cycles() const override { return frames_; }

  nlohmann::ordered_json counters() override {
    nlohmann::ordered_json j;
    j["ports"] = nlohmann::ordered_json::array();
    for (const auto& pc : ctr_) {
      nlohmann::ordered_json o;
      for (int k = 0; k < kNumPortCounters; ++k)
        o[port_counter_names()[static_cast<size_t>(k)]] = pc[static_cast<size_t>(k)];
      j["ports"].push_back(o);
    }
    j["contexts"] = nlohmann::ordered_json::array();
    for (const auto& c : ctx_)
      j["contexts"].push_back({{"jid", c.e.jid},
                               {"tid", c.e.tid},
                               {"vectors_completed", c.completed},
                               {"vectors_dropped", c.dropped},
                               {"expected_vid", c.expected}});
    j["agg_tx_frames"] = agg_tx_;
    return j;
  }

 private:
  struct Ctx {
    wire::CtxEntry e;
    uint32_t expected = 0;
    std::vector<Ring<wire::Bytes>> q;  // per port
    uint64_t completed = 0, dropped = 0;
    bool dirty = false;  // a frame queued since the last decide()
  };

  Ctx* find(uint16_t jid, uint8_t tid) {
    for (auto& c : ctx_)
      if (c.e.jid == jid && c.e.tid == tid) return &c;
    return nullptr;
  }
  static bool member(const Ctx& c, int port) {
    for (int m : c.e.members)
      if (m == port) return true;
    return false;
  }
  void pass(int port, wire::Bytes f, PortCtr what) {
    auto& pc = ctr_[static_cast<size_t>(port)];
    ++pc[what];
    ++pc[kTxFrames];
    out_.push_back(EngineOut{port, -1, std::move(f)});
  }

  // Rules 5 and 6 until the context can decide nothing more.
  void decide(size_t ci) {
    Ctx& c = ctx_[ci];
    for (;;) {
      bool all_heads = true;
      for (int p : c.e.members) {
        auto& q = c.q[static_cast<size_t>(p)];
        while (!q.empty() && wire::vid_stale(wire::parse_header(q.front()).vid, c.expected)) {
          give(q.take_front());
          ++ctr_[static_cast<size_t>(p)][kStale];
        }
        all_heads &= !q.empty();
      }
      if (!all_heads) return;
      size_t at_e = 0;
      uint32_t min_ahead = UINT32_MAX;
      bool counts_equal = true;
      int count0 = -1;
      for (int p : c.e.members) {
        const auto h = wire::parse_header(c.q[static_cast<size_t>(p)].front());
        if (h.vid == c.expected) {
          ++at_e;
          if (count0 < 0) count0 = h.count;
          counts_equal &= h.count == count0;
        } else {
          min_ahead = std::min(min_ahead, wire::vid_distance(h.vid, c.expected));
        }
      }
      if (at_e == 0) {  // every head ahead: jump to the smallest
        c.expected += min_ahead;
        continue;
      }
      if (at_e == c.e.members.size() && counts_equal) {
        build(ci);
      } else {
        const PortCtr why = at_e == c.e.members.size() ? kCountMismatch : kIncomplete;
        for (int p : c.e.members) {
          auto& q = c.q[static_cast<size_t>(p)];
          if (wire::parse_header(q.front()).vid != c.expected) continue;
          give(q.take_front());
          ++ctr_[static_cast<size_t>(p)][why];
        }
        ++c.dropped;
      }
      ++c.expected;
    }
  }

  void give(wire::Bytes&& f) {  // a consumed frame's buffer back to the pool
    if (pool_) pool_->put(std::move(f));
  }
  // A frame dropped and counted: its buffer goes back to the pool like a consumed one.
  template <typename Counters>
  void drop(Counters& pc, size_t counter, wire::Bytes&& f) {
    ++pc[counter];
    give(std::move(f));
  }

  // Every member's head has VID = expected and the same COUNT: sum, build, consume. The result is
  // built in a reused buffer: the base frame's headers, then the sum written in place.
  void build(size_t ci) {
    Ctx& c = ctx_[ci];
    const wire::Bytes& base = c.q[static_cast<size_t>(c.e.members.front())].front();
    const size_t count = wire::parse_header(base).count;
    const uint32_t neg0 = ref::neg_zero(fmt_);
    pay_.assign(static_cast<size_t>(n_), nullptr);
    bool fin = false, ce = false;
    for (int p : c.e.members) {
      const wire::Bytes& f = c.q[static_cast<size_t>(p)].front();
      pay_[static_cast<size_t>(p)] = f.data() + wire::kHeaderBytes;
      fin |= wire::parse_header(f).fin();
      ce |= wire::ecn(f) == wire::kEcnCe;
    }
    wire::Bytes r = pool_ ? pool_->get() : wire::Bytes();
    r.resize(wire::kHeaderBytes + count * static_cast<size_t>(es_));
    std::memcpy(r.data(), base.data(), wire::kHeaderBytes);
    if (fmt_ == ref::Fmt::fp32) {
      sum_fp32(count, r.data() + wire::kHeaderBytes);
    } else {
      sum_generic(count, neg0, r.data() + wire::kHeaderBytes);
    }
    wire::BuildMode m;
    m.multicast = c.e.multicast;
    m.group_mac = c.e.group_mac;
    m.group_ip = c.e.group_ip;
    m.own_mac = c.e.src_mac;
    m.own_ip = c.e.src_ip;
    wire::finish_result(r, fin, ce, m);
    out_.push_back(EngineOut{-1, static_cast<int>(ci), std::move(r)});
    for (int p : c.e.members) give(c.q[static_cast<size_t>(p)].take_front());
    ++c.completed;
    ++agg_tx_;
  }

  // Any format, element by element through ref::add.
  void sum_generic(size_t count, uint32_t neg0, uint8_t* out) {
    ref::MxcsrScope mx(ftz_);
    node_.resize(leaves_);
    uint32_t* node = node_.data();
    for (size_t i = 0; i < count; ++i) {
      for (size_t p = 0; p < leaves_; ++p) node[p] = p < pay_.size() && pay_[p] ? load(pay_[p], i) : neg0;
      for (size_t w = leaves_; w > 1; w /= 2)
        for (size_t k = 0; k < w / 2; ++k) node[k] = ref::add(fmt_, ftz_, node[2 * k], node[2 * k + 1]);
      store(out, i, node[0]);
    }
  }
  // fp32: the same tree, level by level over whole vectors in SIMD registers (lane_sum.h: each
  // lane one IEEE addition under the design's MXCSR mode, the bits of ref::add), NaN made
  // canonical when stored (a NaN anywhere below stays a NaN up the tree, as in ref::add). The
  // first level reads the payloads where they are (a missing leaf is -0.0, added as such).
  void sum_fp32(size_t count, uint8_t* out) {
    ref::MxcsrScope mx(ftz_);
    const size_t need = std::max<size_t>(1, leaves_ / 2) * count;
    if (acc_.size() < need) acc_.resize(need);
    float* a = acc_.data();
    if (leaves_ == 1) {
      // A tree of one adds nothing: the leaf is copied (-0.0 when the port is not a member).
      const uint8_t* x = pay_.empty() ? nullptr : pay_[0];
      if (x)
        std::memcpy(a, x, 4 * count);
      else
        std::fill(a, a + count, -0.0f);
    } else {
      for (size_t k = 0; k < leaves_ / 2; ++k)
        lanes_.leaves(a + k * count, 2 * k < pay_.size() ? pay_[2 * k] : nullptr,
                      2 * k + 1 < pay_.size() ? pay_[2 * k + 1] : nullptr, count);
    }
    for (size_t w = leaves_ / 2; w > 1; w /= 2)
      for (size_t k = 0; k < w / 2; ++k) lanes_.add(a + k * count, a + 2 * k * count, a + (2 * k + 1) * count, count);
    lanes_.store(out, a, count);
  }

  uint32_t load(const uint8_t* p, size_t i) const {
    const uint8_t* q = p + static_cast<size_t>(es_) * i;
    uint32_t v = 0;
    for (int b = es_ - 1; b >= 0; --b) v = v << 8 | q[b];
    return v;
  }
  void store(uint8_t* p, size_t i, uint32_t v) const {
    for (int b = 0; b < es_; ++b)
      p[static_cast<size_t>(es_) * i + static_cast<size_t>(b)] = static_cast<uint8_t>(v >> (8 * b));
  }

  int n_, es_, max_elems_;
  ref::Fmt fmt_;
  bool ftz_;
  wire::CtxFile ctxf_;
  size_t leaves_ = 1;
  std::vector<Ctx> ctx_;
  std::vector<std::vector<uint64_t>> ctr_;
  std::vector<EngineOut> out_;
  FramePool* pool_ = nullptr;
  std::vector<const uint8_t*> pay_;  // build(): each port's payload (nullptr: not a member)
  std::vector<uint32_t> node_;       // sum_generic's tree
  std::vector<float> acc_;           // sum_fp32's levels, kept across frames
  LaneSum lanes_;                    // sum_fp32's kernels, the widest SIMD level of this CPU
  uint64_t frames_ = 0, agg_tx_ = 0;
};

}  // namespace

std::unique_ptr<Engine> make_soft_engine(const Config& cfg, const wire::CtxFile& ctx) {
  return std::unique_ptr<Engine>(new SoftEngine(cfg, ctx));
}

}  // namespace panama::host
