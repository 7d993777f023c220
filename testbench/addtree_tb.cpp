// Verilator testbench of the generated SIMD adder tree (--module addtree).
//
// A scoreboard: every accepted beat pushes its expected sums (the host CPU's addition in the
// tree order of numerics.md, ref_float.h) to be seen exactly `addtree_latency` cycles later;
// every output cycle is compared, out_valid included, from reset on. Operands are built the
// TestFloat way (exponent x significand patterns, both signs), plus cancellation pairs,
// overflow, near-equal exponents, random bits and random member masks; idle cycles between
// beats carry garbage data that must not show.
//
// In exact-sum mode (config.json "sum": "exact") the expected sums come from the tests' exact
// accumulator (exact_ref.h), and further beat kinds aim at that mode: all -0.0 columns, ties at
// every bit position, massive cancellation across all ports, results near the subnormal range.
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "Vaddtree.h"
#include "exact_ref.h"
#include "ref_float.h"
#include "vl_util.h"
#include "verilated.h"

namespace {

using panama::ref::Fmt;

struct Args {
  std::string config;
  long beats = 10000;
  uint64_t seed = 1;
  int idle = 0;  // percent of cycles without a beat
  int show = 0;  // print the first SHOW sums (the README's demo)
};

Args parse_args(int argc, char** argv) {
  Args a;
  a.config = tb::parse_flags(argc, argv, "addtree_tb",
                             {{"--beats", [&](const std::string& v) { a.beats = tb::to_long(v); }},
                              {"--seed", [&](const std::string& v) { a.seed = tb::to_u64(v); }},
                              {"--idle", [&](const std::string& v) { a.idle = static_cast<int>(tb::to_long(v)); }},
                              {"--show", [&](const std::string& v) { a.show = static_cast<int>(tb::to_long(v)); }}});
  return a;
}

// Operand generator over a format with E exponent and F fraction bits.
class Operands {
 public:
  Operands(int e, int f, std::mt19937_64& rng) : E(e), F(f), W(1 + e + f), rng_(rng) {}

  uint32_t pack(uint32_t s, uint32_t exp, uint32_t frac) const {
    return (s << (W - 1)) | ((exp & emax()) << F) | (frac & fmask());
  }
  uint32_t emax() const { return (1u << E) - 1; }
  uint32_t fmask() const { return (1u << F) - 1; }
  uint32_t bias() const { return (1u << (E - 1)) - 1; }

  // TestFloat-style: an exponent pattern crossed with a significand pattern.
  uint32_t corner() {
    const uint32_t exps[] = {0,
                             1,
                             2,
                             bias() - 1,
                             bias(),
                             bias() + 1,
                             emax() - 2,
                             emax() - 1,
                             emax(),
                             static_cast<uint32_t>(F),
                             static_cast<uint32_t>(F + 1),
                             static_cast<uint32_t>(F + 2),
                             rnd(emax() + 1)};
    uint32_t exp = exps[rnd(sizeof(exps) / sizeof(exps[0]))];
    return pack(rnd(2), exp, significand());
  }
  uint32_t significand() {
    switch (rnd(8)) {
      case 0:
        return 0;
      case 1:
        return 1;
      case 2:
        return fmask();
      case 3:
        return fmask() - 1;
      case 4:
        return 1u << (F - 1);
      case 5: {  // a run of ones
        const uint32_t len = 1 + rnd(F), at = rnd(F);
        return ((1u << len) - 1) << at;
      }
      case 6:
        return fmask() ^ (1u << rnd(F));
      default:
        return rnd(fmask() + 1);
    }
  }
  uint32_t random_bits() { return static_cast<uint32_t>(rng_()) & ((W == 32) ? 0xFFFFFFFFu : ((1u << W) - 1)); }
  uint32_t finite() { return pack(rnd(2), rnd(emax()), rnd(fmask() + 1)); }
  // A value near `x`: same or close exponent, any sign, for alignment and rounding paths.
  uint32_t near(uint32_t x) {
    const uint32_t exp = (x >> F) & emax();
    int32_t ne = static_cast<int32_t>(exp) + static_cast<int32_t>(rnd(2 * F + 7)) - (F + 3);
    if (ne < 0) ne = 0;
    if (ne >= static_cast<int32_t>(emax())) ne = emax() - 1;
    return pack(rnd(2), static_cast<uint32_t>(ne), significand());
  }
  // -x, or -x nudged by a few ulps: (massive) cancellation.
  uint32_t cancel(uint32_t x) {
    uint32_t m = x & ((1u << (W - 1)) - 1);
    const int nudge = static_cast<int>(rnd(5)) - 2;
    if (nudge < 0 && m >= static_cast<uint32_t>(-nudge)) m -= static_cast<uint32_t>(-nudge);
    if (nudge > 0 && m + nudge < (emax() << F)) m += static_cast<uint32_t>(nudge);
    return ((~x) & (1u << (W - 1))) | m;
  }
  uint32_t max_finite(uint32_t s) { return pack(s, emax() - 1, fmask() - rnd(3)); }
  uint32_t rnd(uint32_t n) { return static_cast<uint32_t>(rng_() % n); }

 private:
  int E, F, W;
  std::mt19937_64& rng_;
};

// The design's parameters, from its config.json.
struct Design {
  int N, LANES, L, E, F, WD;
  std::string fmt_s;
  Fmt fmt;
  bool ftz, exact;
  panama::xref::Fmt xfmt;

  explicit Design(const nlohmann::json& cfg)
      : N(cfg.at("ports").get<int>()),
        LANES(cfg.at("lanes").get<int>()),
        L(cfg.at("addtree_latency").get<int>()),
        E(cfg.at("exp_bits").get<int>()),
        F(cfg.at("frac_bits").get<int>()),
        WD(1 + E + F),
        fmt_s(cfg.at("format").get<std::string>()),
        fmt(panama::parse_format(fmt_s)),
        ftz(cfg.at("subnormals") == "ftz"),
        exact(cfg.value("sum", std::string("tree")) == "exact"),
        xfmt(panama::xref::fmt_named(fmt_s)) {}
};

// The adder tree under test with its scoreboard of sums still in the pipeline.
class Bench {
 public:
  Bench(const Args& args, const Design& d, int argc, char** argv)
      : args_(args), d_(d), rng_(args.seed), ops_(d.E, d.F, rng_) {
    ctx_->commandArgs(argc, argv);
    top_ = std::make_unique<Vaddtree>(ctx_.get());
    vals_.resize(d.N * d.LANES);
    col_.resize(d.N);
    member_.resize(d.N);
  }

  bool ports_match() const {
    return tb::port_bits(top_->in_data) >= d_.N * d_.LANES * d_.WD && tb::port_bits(top_->in_mask) >= d_.N;
  }

  // Reset: out_valid must stay low through it and after it until a beat has come through.
  void reset() {
    top_->rst = 1;
    top_->in_valid = 1;  // ignored while in reset
    for (int i = 0; i < 4; ++i) {
      tick();
      if (top_->out_valid) {
        std::fprintf(stderr, "cycle %ld: out_valid high during reset\n", cycle_);
        ++mismatches_;
      }
    }
    top_->rst = 0;
    top_->in_valid = 0;
    for (int i = 0; i < d_.L + 2; ++i) {
      tick();
      if (top_->out_valid) {
        std::fprintf(stderr, "cycle %ld: out_valid high after reset without a beat\n", cycle_);
        ++mismatches_;
      }
    }
  }

  // Beats (and idle cycles) until args.beats sums have been sent and checked.
  void run() {
    while (beats_ < args_.beats || !pending_.empty()) {
      const bool send = beats_ < args_.beats && static_cast<int>(ops_.rnd(100)) >= args_.idle;
      // Inputs for the coming edge; idle cycles carry garbage that must not surface.
      drive_data();
      const uint64_t mask = drive_mask();
      top_->in_valid = send;
      if (send) expect(mask);
      tick();
      check_outputs();
      if (mismatches_ > 50) break;
    }
  }

  int finish() {
    top_->final();
    std::printf(
        "addtree %s: %d ports x %d lanes of %s/%s%s, latency %d: %ld beats, %ld additions, %ld checked, %ld "
        "mismatches\n",
        args_.config.c_str(), d_.N, d_.LANES, d_.fmt_s.c_str(), d_.ftz ? "ftz" : "ieee", d_.exact ? " exact" : "", d_.L,
        beats_, additions_, checked_, mismatches_);
    return mismatches_ == 0 ? 0 : 1;
  }

 private:
  struct Expect {
    long due;  // cycle after whose rising edge the sum must be on the outputs
    std::vector<uint32_t> lanes;
    std::vector<uint32_t> inputs;  // for the failure report
    uint64_t mask;
  };

  void tick() {
    top_->clk = 0;
    top_->eval();
    ctx_->timeInc(1);
    top_->clk = 1;
    top_->eval();
    ctx_->timeInc(1);
    ++cycle_;
  }

  // One random beat kind for all lanes, each lane with its own operands.
  void drive_data() {
    const int kind = static_cast<int>(ops_.rnd(d_.exact ? 13 : 8));
    for (int l = 0; l < d_.LANES; ++l) {
      // Exact-mode columns: a tie between x and half its ulp (shifted by k), a big x cancelled
      // by -x with small leaves left over, and values around the smallest normal.
      const uint32_t x0 = ops_.finite();
      const int xe = static_cast<int>((x0 >> d_.F) & ops_.emax());
      const int k = static_cast<int>(ops_.rnd(d_.F + 4));
      for (int p = 0; p < d_.N; ++p) {
        const uint32_t v = operand(kind, p, l, x0, xe, k);
        vals_[p * d_.LANES + l] = v;
        tb::set_bits(top_->in_data, (p * d_.LANES + l) * d_.WD, d_.WD, v);
      }
    }
  }

  // Port p's operand in lane l for a beat of `kind` (vals_ holds the lower ports' operands).
  uint32_t operand(int kind, int p, int l, uint32_t x0, int xe, int k) {
    const int F = d_.F, LANES = d_.LANES;
    const uint32_t S = 1u << (d_.WD - 1);
    switch (kind) {
      case 8:
        return S;  // all -0.0 (a +0.0 now and then)
      case 9:
        return p == 0   ? x0
               : p == 1 ? (xe - F - 1 >= 1 ? ops_.pack(ops_.rnd(2), static_cast<uint32_t>(xe - F - 1), 0) : S)
                        : (xe - F - 1 - k >= 1 && ops_.rnd(2)
                               ? ops_.pack(ops_.rnd(2), static_cast<uint32_t>(xe - F - 1 - k), 0)
                               : S);
      case 10: {
        uint32_t v = p == 0 ? x0 : p == 1 ? x0 ^ S : ops_.pack(ops_.rnd(2), ops_.rnd(F + 3), ops_.significand());
        if (p >= 2 && p % 2 == 1 && ops_.rnd(2)) v = vals_[(p - 1) * LANES + l] ^ S;
        return v;
      }
      case 11:
        return ops_.pack(ops_.rnd(2), ops_.rnd(3), ops_.significand());
      case 12:
        return ops_.rnd(8) ? S : 0;
      case 0:
        return ops_.random_bits();
      case 1:
      case 2:
        return ops_.corner();
      case 3:
        return p % 2 ? ops_.cancel(vals_[(p - 1) * LANES + l]) : ops_.finite();
      case 4:
        return ops_.rnd(4) ? ops_.max_finite(ops_.rnd(2) ? 0 : 1) : ops_.corner();
      case 5:
        return p ? ops_.near(vals_[l]) : ops_.finite();
      case 6:
        return p % 2 ? ops_.cancel(vals_[(p - 1) * LANES + l]) : ops_.corner();
      default:
        return ops_.finite();
    }
  }

  // A random member mask (half, most or all ports); returns it as bits (port p in bit p % 64).
  uint64_t drive_mask() {
    uint64_t mask = 0;
    const int mkind = static_cast<int>(ops_.rnd(4));
    for (int p = 0; p < d_.N; ++p) {
      const bool m = mkind == 0 ? ops_.rnd(2) : (mkind == 1 ? ops_.rnd(8) != 0 : true);
      if (m) mask |= uint64_t{1} << (p % 64);
      tb::set_bits(top_->in_mask, p, 1, m ? 1 : 0);
      member_[p] = m;
    }
    return mask;
  }

  // The beat on the inputs is sent: its sums are due `addtree_latency` cycles after this edge.
  void expect(uint64_t mask) {
    Expect ex;
    ex.due = cycle_ + d_.L;
    ex.mask = mask;
    ex.inputs = vals_;
    for (int l = 0; l < d_.LANES; ++l) {
      for (int p = 0; p < d_.N; ++p) col_[p] = vals_[p * d_.LANES + l];
      ex.lanes.push_back(d_.exact ? panama::xref::exact_sum(d_.xfmt, d_.ftz, col_, member_)
                                  : panama::ref::tree_sum(d_.fmt, d_.ftz, col_, member_));
    }
    pending_.push_back(std::move(ex));
    ++beats_;
    additions_ += static_cast<long>(d_.N - 1) * d_.LANES;
  }

  void check_outputs() {
    const bool want = !pending_.empty() && pending_.front().due == cycle_;
    if (top_->out_valid != want) {
      if (++mismatches_ <= 10)
        std::fprintf(stderr, "cycle %ld: out_valid = %d, expected %d\n", cycle_, top_->out_valid, want);
      if (want) pending_.pop_front();
      return;
    }
    if (!want) return;
    const Expect& ex = pending_.front();
    for (int l = 0; l < d_.LANES; ++l) compare_lane(ex, l);
    if (checked_ < args_.show) show(ex);
    ++checked_;
    pending_.pop_front();
  }

  void compare_lane(const Expect& ex, int l) {
    const int WD = d_.WD;
    const uint32_t got = static_cast<uint32_t>(tb::get_bits(top_->out_data, l * WD, WD));
    if (got == ex.lanes[l] || ++mismatches_ > 10) return;
    std::fprintf(stderr, "cycle %ld lane %d: got 0x%0*x expected 0x%0*x; mask 0x%llx; inputs", cycle_, l, WD / 4, got,
                 WD / 4, ex.lanes[l], static_cast<unsigned long long>(ex.mask));
    for (int p = 0; p < d_.N; ++p) std::fprintf(stderr, " 0x%0*x", WD / 4, ex.inputs[p * d_.LANES + l]);
    std::fprintf(stderr, "\n");
  }

  // One line of the --show demo: lane 0's operands, the RTL's sum and the CPU's.
  void show(const Expect& ex) {
    const int WD = d_.WD;
    std::printf("cycle %5ld  lane 0  mask 0x%llx ", cycle_, static_cast<unsigned long long>(ex.mask));
    for (int p = 0; p < d_.N && p < 8; ++p) std::printf(" %0*x", WD / 4, ex.inputs[p * d_.LANES]);
    std::printf("  -> RTL %0*x  CPU %0*x\n", WD / 4, static_cast<unsigned>(tb::get_bits(top_->out_data, 0, WD)), WD / 4,
                ex.lanes[0]);
  }

  const Args& args_;
  const Design& d_;
  std::unique_ptr<VerilatedContext> ctx_ = std::make_unique<VerilatedContext>();
  std::unique_ptr<Vaddtree> top_;
  std::mt19937_64 rng_;
  Operands ops_;
  std::deque<Expect> pending_;
  long cycle_ = 0, checked_ = 0, additions_ = 0, mismatches_ = 0, beats_ = 0;
  std::vector<uint32_t> vals_, col_;
  std::vector<bool> member_;
};

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  const Design d(nlohmann::json::parse(tb::read_file(args.config, "addtree_tb")));
  Bench bench(args, d, argc, argv);
  return tb::run_bench(bench, "addtree_tb", args.config);
}
