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
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "Vaddtree.h"
#include "exact_ref.h"
#include "ref_float.h"
#include "tb_util.h"
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

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  nlohmann::json cfg;
  {
    std::ifstream f(args.config);
    if (!f) {
      std::fprintf(stderr, "addtree_tb: cannot read %s\n", args.config.c_str());
      return 2;
    }
    f >> cfg;
  }
  const int N = cfg.at("ports"), LANES = cfg.at("lanes"), L = cfg.at("addtree_latency");
  const int E = cfg.at("exp_bits"), F = cfg.at("frac_bits");
  const int WD = 1 + E + F;
  const std::string fmt_s = cfg.at("format");
  const Fmt fmt = fmt_s == "fp32" ? Fmt::fp32 : fmt_s == "bf16" ? Fmt::bf16 : Fmt::fp16;
  const bool ftz = cfg.at("subnormals") == "ftz";
  const bool exact = cfg.value("sum", std::string("tree")) == "exact";
  const panama::xref::Fmt xfmt = fmt == Fmt::fp32   ? panama::xref::fp32()
                                 : fmt == Fmt::bf16 ? panama::xref::bf16()
                                                    : panama::xref::fp16();

  auto ctx = std::make_unique<VerilatedContext>();
  ctx->commandArgs(argc, argv);
  auto top = std::make_unique<Vaddtree>(ctx.get());
  if (tb::port_bits(top->in_data) < N * LANES * WD || tb::port_bits(top->in_mask) < N) {
    std::fprintf(stderr, "addtree_tb: the Verilated ports do not match %s\n", args.config.c_str());
    return 2;
  }

  std::mt19937_64 rng(args.seed);
  Operands ops(E, F, rng);

  struct Expect {
    long due;  // cycle after whose rising edge the sum must be on the outputs
    std::vector<uint32_t> lanes;
    std::vector<uint32_t> inputs;  // for the failure report
    uint64_t mask;
  };
  std::deque<Expect> pending;
  long cycle = 0, checked = 0, additions = 0, mismatches = 0, beats = 0;
  const int adders_per_lane = N - 1;

  auto tick = [&]() {
    top->clk = 0;
    top->eval();
    ctx->timeInc(1);
    top->clk = 1;
    top->eval();
    ctx->timeInc(1);
    ++cycle;
  };
  auto check_outputs = [&]() {
    const bool want = !pending.empty() && pending.front().due == cycle;
    if (top->out_valid != want) {
      if (++mismatches <= 10)
        std::fprintf(stderr, "cycle %ld: out_valid = %d, expected %d\n", cycle, top->out_valid, want);
      if (want) pending.pop_front();
      return;
    }
    if (!want) return;
    const Expect& ex = pending.front();
    for (int l = 0; l < LANES; ++l) {
      const uint32_t got = static_cast<uint32_t>(tb::get_bits(top->out_data, l * WD, WD));
      if (got != ex.lanes[l]) {
        if (++mismatches <= 10) {
          std::fprintf(stderr, "cycle %ld lane %d: got 0x%0*x expected 0x%0*x; mask 0x%llx; inputs", cycle, l, WD / 4,
                       got, WD / 4, ex.lanes[l], static_cast<unsigned long long>(ex.mask));
          for (int p = 0; p < N; ++p) std::fprintf(stderr, " 0x%0*x", WD / 4, ex.inputs[p * LANES + l]);
          std::fprintf(stderr, "\n");
        }
      }
    }
    if (checked < args.show) {
      std::printf("cycle %5ld  lane 0  mask 0x%llx ", cycle, static_cast<unsigned long long>(ex.mask));
      for (int p = 0; p < N && p < 8; ++p) std::printf(" %0*x", WD / 4, ex.inputs[p * LANES]);
      std::printf("  -> RTL %0*x  CPU %0*x\n", WD / 4, static_cast<unsigned>(tb::get_bits(top->out_data, 0, WD)),
                  WD / 4, ex.lanes[0]);
    }
    ++checked;
    pending.pop_front();
  };

  // Reset: out_valid must stay low through it and after it until a beat has come through.
  top->rst = 1;
  top->in_valid = 1;  // ignored while in reset
  for (int i = 0; i < 4; ++i) {
    tick();
    if (top->out_valid) {
      std::fprintf(stderr, "cycle %ld: out_valid high during reset\n", cycle);
      ++mismatches;
    }
  }
  top->rst = 0;
  top->in_valid = 0;
  for (int i = 0; i < L + 2; ++i) {
    tick();
    if (top->out_valid) {
      std::fprintf(stderr, "cycle %ld: out_valid high after reset without a beat\n", cycle);
      ++mismatches;
    }
  }

  std::vector<uint32_t> vals(N * LANES);
  std::vector<uint32_t> col(N);
  std::vector<bool> member(N);
  while (beats < args.beats || !pending.empty()) {
    const bool send = beats < args.beats && static_cast<int>(ops.rnd(100)) >= args.idle;
    // Inputs for the coming edge; idle cycles carry garbage that must not surface.
    uint64_t mask = 0;
    const int kind = static_cast<int>(ops.rnd(exact ? 13 : 8));
    const uint32_t S = 1u << (WD - 1);
    for (int l = 0; l < LANES; ++l) {
      // Exact-mode columns: a tie between x and half its ulp (shifted by k), a big x cancelled
      // by -x with small leaves left over, and values around the smallest normal.
      const uint32_t x0 = ops.finite();
      const int xe = static_cast<int>((x0 >> F) & ops.emax());
      const int k = static_cast<int>(ops.rnd(F + 4));
      for (int p = 0; p < N; ++p) {
        uint32_t v;
        switch (kind) {
          case 8:
            v = S;
            break;  // all -0.0 (a +0.0 now and then)
          case 9:
            v = p == 0   ? x0
                : p == 1 ? (xe - F - 1 >= 1 ? ops.pack(ops.rnd(2), static_cast<uint32_t>(xe - F - 1), 0) : S)
                         : (xe - F - 1 - k >= 1 && ops.rnd(2)
                                ? ops.pack(ops.rnd(2), static_cast<uint32_t>(xe - F - 1 - k), 0)
                                : S);
            break;
          case 10:
            v = p == 0 ? x0 : p == 1 ? x0 ^ S : ops.pack(ops.rnd(2), ops.rnd(F + 3), ops.significand());
            if (p >= 2 && p % 2 == 1 && ops.rnd(2)) v = vals[(p - 1) * LANES + l] ^ S;
            break;
          case 11:
            v = ops.pack(ops.rnd(2), ops.rnd(3), ops.significand());
            break;
          case 12:
            v = ops.rnd(8) ? S : 0;
            break;
          case 0:
            v = ops.random_bits();
            break;
          case 1:
          case 2:
            v = ops.corner();
            break;
          case 3:
            v = p % 2 ? ops.cancel(vals[(p - 1) * LANES + l]) : ops.finite();
            break;
          case 4:
            v = ops.rnd(4) ? ops.max_finite(ops.rnd(2) ? 0 : 1) : ops.corner();
            break;
          case 5:
            v = p ? ops.near(vals[l]) : ops.finite();
            break;
          case 6:
            v = p % 2 ? ops.cancel(vals[(p - 1) * LANES + l]) : ops.corner();
            break;
          default:
            v = ops.finite();
            break;
        }
        vals[p * LANES + l] = v;
        tb::set_bits(top->in_data, (p * LANES + l) * WD, WD, v);
      }
    }
    const int mkind = static_cast<int>(ops.rnd(4));
    for (int p = 0; p < N; ++p) {
      const bool m = mkind == 0 ? ops.rnd(2) : (mkind == 1 ? ops.rnd(8) != 0 : true);
      if (m) mask |= uint64_t{1} << (p % 64);
      tb::set_bits(top->in_mask, p, 1, m ? 1 : 0);
      member[p] = m;
    }
    top->in_valid = send;
    if (send) {
      Expect ex;
      ex.due = cycle + L;
      ex.mask = mask;
      ex.inputs = vals;
      for (int l = 0; l < LANES; ++l) {
        for (int p = 0; p < N; ++p) col[p] = vals[p * LANES + l];
        ex.lanes.push_back(exact ? panama::xref::exact_sum(xfmt, ftz, col, member)
                                 : panama::ref::tree_sum(fmt, ftz, col, member));
      }
      pending.push_back(std::move(ex));
      ++beats;
      additions += static_cast<long>(adders_per_lane) * LANES;
    }
    tick();
    check_outputs();
    if (mismatches > 50) break;
  }
  top->final();
  std::printf(
      "addtree %s: %d ports x %d lanes of %s/%s%s, latency %d: %ld beats, %ld additions, %ld checked, %ld mismatches\n",
      args.config.c_str(), N, LANES, fmt_s.c_str(), ftz ? "ftz" : "ieee", exact ? " exact" : "", L, beats, additions,
      checked, mismatches);
  return mismatches == 0 ? 0 : 1;
}
