// The exact-sum lane's plan (--sum exact); its Verilog is gen/emit/exactsum.cpp's.
//
// Per lane, every finite leaf is converted to a two's-complement integer in units of the
// format's smallest subnormal 2^(1 - bias - F): a finite value is sig * 2^(e_eff - 1) units with
// sig = {hidden, fraction} and e_eff = max(e, 1), so the largest needs M = F + 2^E - 2 bits and N
// of them fit in A = M + clog2(N) + 1 bits with the sign. Every leaf is representable exactly,
// so the integer sum is the exact real sum; it is rounded once at the end. That is why the result
// does not depend on the order of the leaves.
//
// Datapath, as a sequence of combinational steps that the delay model packs into clock periods
// (the plan is like the floating-point adder's, gen/emit/fpadd.cpp):
//   decode     classify, flush (ftz), shift the significand to its place; a negative leaf is
//              entered as its ones' complement and the count of negative leaves is one more
//              operand, so no per-leaf carry chain is needed (-x = ~x + 1);
//   csa k      one level of 3:2 carry-save compressors (one LUT level each), until two remain;
//   cpa k      the carry-propagate addition of the last two, in segments whose carry chains
//              meet the clock, the carry registered between segments;
//   neg k      the magnitude |S| = (S ^ sign) + sign, segmented the same way;
//   lzc        the position p of the leading one of |S|;
//   shift      right shift by sh = max(p - F, 0): F + 1 significand bits, guard and sticky;
//   round      packed = (sh << F) + significand (the hidden bit carries the exponent up by one,
//              a subnormal has sh = 0 and no hidden bit), + roundTiesToEven increment, then the
//              specials: NaN, infinities, exact zero (-0 only if every leaf is -0), overflow to
//              infinity, ftz flush of a result below the smallest normal.
// A subnormal result (p < F) is exact: the integer's unit is the subnormal grid.
#include <algorithm>
#include <string>

#include "exactsum.h"

namespace panama {
namespace {

std::string n(long v) { return std::to_string(v); }

// Equal segments of at most `max_w` bits covering `total` bits, lowest first.
std::vector<int> segments(int total, int max_w) {
  const int k = (total + max_w - 1) / max_w;
  std::vector<int> s;
  int left = total;
  for (int i = 0; i < k; ++i) {
    const int w = (left + (k - i) - 1) / (k - i);
    s.push_back(w);
    left -= w;
  }
  return s;
}

}  // namespace

ExactWidths exact_widths(const FormatInfo& fmt, int ports) {
  ExactWidths w;
  w.mag_bits = fmt.frac_bits + (1 << fmt.exp_bits) - 2;
  w.acc_bits = w.mag_bits + clog2(ports) + 1;
  return w;
}

ExactSizes::ExactSizes(const FormatInfo& fmt, bool flush, int ports)
    : ftz(flush),
      N(ports),
      E(fmt.exp_bits),
      F(fmt.frac_bits),
      W(1 + E + F),
      canonical_nan(fmt.canonical_nan),
      M(exact_widths(fmt, ports).mag_bits),
      A(exact_widths(fmt, ports).acc_bits),
      CW(clog2(N + 1)),
      PW(clog2(A - 1)),
      PK(std::max(PW, E) + F + 1) {}

// live_bits follows the emitter's signals (gen/emit/exactsum.cpp): the four special-value flags
// (f_nan, f_inf, f_infs, f_nz) live from decode to round, beside each step's own.
std::vector<ExactStep> exact_steps(const ExactSizes& x, double mhz, const DelayModel& dm) {
  using K = ExactStep::Kind;
  const double budget = 1000.0 / mhz - dm.ff_overhead;
  // Widest carry chain (plus the LUT in front of it) that fits a period; at least 8 bits.
  const int seg_w = std::max(8, static_cast<int>((budget - dm.lut_level - dm.carry_base) / dm.carry_per_bit));
  const long flags = 4;
  std::vector<ExactStep> st;
  ExactStep decode{K::decode, "decode", dm.lut_level * (2 + (clog2(x.M) + 1) / 2)};
  decode.live_bits = static_cast<long>(x.N + 1) * x.A + flags;  // the operands: N leaves and the count
  st.push_back(decode);
  int ops = x.N + 1, level = 0;
  while (ops > 2) {
    ExactStep s{K::csa, "csa" + n(level + 1), dm.lut_level};
    s.ops = ops;
    s.level = level;
    ops = (ops / 3) * 2 + ops % 3;
    s.live_bits = static_cast<long>(ops) * x.A + flags;
    st.push_back(s);
    ++level;
  }
  // Carry-propagate addition, then the magnitude, segment by segment.
  int done = 0;
  const auto segs = segments(x.A, seg_w);
  for (size_t k = 0; k < segs.size(); ++k) {
    ExactStep s{K::cpa, "cpa" + n(static_cast<long>(k) + 1), dm.lut_level + dm.carry(segs[k])};
    s.w = segs[k], s.lo = done, s.level = level, s.first = k == 0, s.last = k + 1 == segs.size();
    done += s.w;
    // The sum's low bits, and unless last the operands' rest and the carry.
    s.live_bits = flags + done + (s.last ? 0 : 2L * (x.A - done) + 1);
    st.push_back(s);
  }
  done = 0;
  const auto nsegs = segments(x.A - 1, seg_w);
  for (size_t k = 0; k < nsegs.size(); ++k) {
    ExactStep s{K::neg, "neg" + n(static_cast<long>(k) + 1), dm.lut_level + dm.carry(nsegs[k])};
    s.w = nsegs[k], s.lo = done, s.first = k == 0, s.last = k + 1 == nsegs.size();
    done += s.w;
    // The sign, the magnitude's low bits, and unless last the rest and the carry.
    s.live_bits = flags + 1 + done + (s.last ? 0 : (x.A - 1L - done) + 1);
    st.push_back(s);
  }
  ExactStep lzc{K::lzc, "lzc", dm.lut_level * ((x.PW + 1) / 2 + 1)};
  lzc.live_bits = flags + 1 + (x.A - 1) + 1 + x.PW;  // sign, magnitude, nonzero, position
  st.push_back(lzc);
  ExactStep shift{K::shift, "shift", dm.lut_level * ((x.PW + 1) / 2 + 2)};
  shift.live_bits = flags + 1 + 1 + x.PW + (x.F + 1) + 2;  // sign, nonzero, shift, significand, guard, sticky
  st.push_back(shift);
  ExactStep round{K::round, "round", dm.lut_level * 2 + dm.carry(x.PK)};
  round.live_bits = x.W;
  st.push_back(round);
  return st;
}

AdderPlan plan_exact(const FormatInfo& fmt, Subnormals sub, int ports, double mhz, const DelayModel& dm) {
  std::vector<std::string> names;
  std::vector<double> delays;
  for (const auto& s : exact_steps(ExactSizes(fmt, sub == Subnormals::ftz, ports), mhz, dm))
    names.push_back(s.name), delays.push_back(s.delay);
  return pack_stages(names, delays, mhz, dm);
}

long exactlane_flipflops(const Config& c) {
  const auto steps =
      exact_steps(ExactSizes(c.fmt, c.in.subnormals == Subnormals::ftz, c.in.ports), c.in.mhz, DelayModel{});
  long ffs = 0;
  for (size_t i = 0; i < steps.size(); ++i)
    if (c.exact.reg_after.at(i)) ffs += steps[i].live_bits;
  return ffs;
}

}  // namespace panama
