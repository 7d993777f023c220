// `switch --engine soft` (docs/host.md "Benchmark"): the accelerator's behaviour rules
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
#include <deque>
#include <utility>
#include <stdexcept>

#include "config.h"
#include "ref_float.h"
#include "regmap.h"
#include "switch.h"

namespace panama::host {
namespace {

// accelerator.md rule 10, per port: regmap.h's PortCounter order and counters.json names.
using PortCtr = PortCounter;

constexpr size_t kQueueCap = 4096;  // contributions per (port, context): beyond, `overflow`

class SoftEngine : public Engine {
 public:
  SoftEngine(const Config& cfg, const wire::CtxFile& ctx)
      : n_(cfg.in.ports),
        es_(cfg.fmt.elem_bytes),
        max_elems_(cfg.max_elems),
        fmt_(cfg.in.format == Format::fp32   ? ref::Fmt::fp32
             : cfg.in.format == Format::bf16 ? ref::Fmt::bf16
                                             : ref::Fmt::fp16),
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
      ++pc[kRunt];
      return;
    }
    if (wire::classify(f, ctxf_.agg_port) != wire::Class::aggregation) {
      pass(port, std::move(f), kBypassFrames);
      return;
    }
    if (wire::check_wellformed(f, es_, max_elems_) != wire::Validity::ok) {
      ++pc[kMalformed];
      return;
    }
    const wire::AggHeader h = wire::parse_header(f);
    Ctx* c = find(h.jid, h.tid);
    if (!c) {
      ++pc[kNoContext];
      return;
    }
    if (h.result()) {
      if (!c->e.multicast && port == c->e.upstream_port)
        pass(port, std::move(f), kResultPassed);
      else
        ++pc[kNotMember];
      return;
    }
    if (!member(*c, port)) {
      ++pc[kNotMember];
      return;
    }
    auto& q = c->q[static_cast<size_t>(port)];
    if (q.size() >= kQueueCap) {
      ++pc[kOverflow];
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
    std::vector<std::deque<wire::Bytes>> q;  // per port
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
          q.pop_front();
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
          q.pop_front();
          ++ctr_[static_cast<size_t>(p)][why];
        }
        ++c.dropped;
      }
      ++c.expected;
    }
  }

  // Every member's head has VID = expected and the same COUNT: sum, build, consume.
  void build(size_t ci) {
    Ctx& c = ctx_[ci];
    const wire::Bytes& base = c.q[static_cast<size_t>(c.e.members.front())].front();
    const size_t count = wire::parse_header(base).count;
    const uint32_t neg0 = ref::neg_zero(fmt_);
    std::vector<const uint8_t*> pay(static_cast<size_t>(n_), nullptr);
    bool fin = false, ce = false;
    for (int p : c.e.members) {
      const wire::Bytes& f = c.q[static_cast<size_t>(p)].front();
      pay[static_cast<size_t>(p)] = f.data() + wire::kHeaderBytes;
      fin |= wire::parse_header(f).fin();
      ce |= wire::ecn(f) == wire::kEcnCe;
    }
    wire::Bytes sum(count * static_cast<size_t>(es_));
    if (fmt_ == ref::Fmt::fp32) {
      sum_fp32(pay, count, sum.data());
    } else {
      sum_generic(pay, count, neg0, sum.data());
    }
    wire::BuildMode m;
    m.multicast = c.e.multicast;
    m.group_mac = c.e.group_mac;
    m.group_ip = c.e.group_ip;
    m.own_mac = c.e.src_mac;
    m.own_ip = c.e.src_ip;
    out_.push_back(EngineOut{-1, static_cast<int>(ci), wire::build_result(base, sum, fin, ce, m)});
    for (int p : c.e.members) c.q[static_cast<size_t>(p)].pop_front();
    ++c.completed;
    ++agg_tx_;
  }

  // Any format, element by element through ref::add.
  void sum_generic(const std::vector<const uint8_t*>& pay, size_t count, uint32_t neg0, uint8_t* out) {
    ref::MxcsrScope mx(ftz_);
    std::vector<uint32_t> node(leaves_);
    for (size_t i = 0; i < count; ++i) {
      for (size_t p = 0; p < leaves_; ++p) node[p] = p < pay.size() && pay[p] ? load(pay[p], i) : neg0;
      for (size_t w = leaves_; w > 1; w /= 2)
        for (size_t k = 0; k < w / 2; ++k) node[k] = ref::add(fmt_, ftz_, node[2 * k], node[2 * k + 1]);
      store(out, i, node[0]);
    }
  }
  // fp32: the same tree, level by level over whole vectors (the compiler vectorises the adds;
  // lane-wise IEEE additions under the design's MXCSR mode give the bits of ref::add), NaN made
  // canonical at the end (a NaN anywhere below stays a NaN up the tree, as in ref::add).
  void sum_fp32(const std::vector<const uint8_t*>& pay, size_t count, uint8_t* out) {
    ref::MxcsrScope mx(ftz_);
    if (acc_.size() < leaves_ * count) acc_.resize(leaves_ * count);
    float* a = acc_.data();
    for (size_t p = 0; p < leaves_; ++p) {
      float* d = a + p * count;
      if (p < pay.size() && pay[p])
        std::memcpy(d, pay[p], count * 4);
      else
        std::fill(d, d + count, -0.0f);
    }
    for (size_t w = leaves_; w > 1; w /= 2)
      for (size_t k = 0; k < w / 2; ++k) add_into(a + k * count, a + 2 * k * count, a + (2 * k + 1) * count, count);
    for (size_t i = 0; i < count; ++i) {
      uint32_t v;
      std::memcpy(&v, a + i, 4);
      if (std::isnan(a[i])) v = 0x7FC00000u;
      std::memcpy(out + 4 * i, &v, 4);
    }
  }
  static void add_into(float* d, const float* x, const float* y, size_t n) {  // d may be x (in place)
    for (size_t i = 0; i < n; ++i) d[i] = x[i] + y[i];
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
  std::vector<float> acc_;  // sum_fp32's levels, kept across frames
  uint64_t frames_ = 0, agg_tx_ = 0;
};

}  // namespace

std::unique_ptr<Engine> make_soft_engine(const Config& cfg, const wire::CtxFile& ctx) {
  return std::unique_ptr<Engine>(new SoftEngine(cfg, ctx));
}

}  // namespace panama::host
