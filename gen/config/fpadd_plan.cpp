// The floating-point adder's plan (the Verilog of its steps is gen/emit/fpadd.cpp's).
//
// The adder is a fixed sequence of combinational steps (classify, swap, align, add, count
// leading zeros, normalise, round/pack). Each step reads only the signals the previous step
// produced, so the generator can put a register bank, or nothing, between any two steps. The
// delay model estimates each step from its widths; plan_fpadd packs steps into clock periods.
#include <algorithm>
#include <map>
#include <stdexcept>

#include "fpadd.h"

namespace panama {

AdderSizes::AdderSizes(const FormatInfo& f, bool flush)
    : fmt(f),
      ftz(flush),
      E(f.exp_bits),
      F(f.frac_bits),
      W(1 + E + F),
      A(F + 4),
      S(F + 5),
      LZW(std::max(clog2(S + 1), 1)),
      K(std::min(clog2(F + 3), E)) {}

namespace {

// 1. Classify both operands, flush subnormal inputs in ftz mode, compare magnitudes.
AdderStep shape_classify(const AdderSizes& z, const DelayModel& dm) {
  AdderStep s{"classify", dm.lut_level + dm.carry(z.W - 1), {}, {}};
  s.outs = {{"sx", 1},  {"sy", 1},   {"ma", z.W - 1}, {"mb", z.W - 1}, {"ge", 1},
            {"any", 1}, {"both", 1}, {"nan", 1},      {"inf", 1},      {"inf_sign", 1}};
  return s;
}

// 2. Swap so that x is the larger magnitude; exponent difference.
AdderStep shape_swap(const AdderSizes& z, const DelayModel& dm) {
  AdderStep s{"swap", dm.lut_level + dm.carry(z.E), {}, {"nan", "inf", "inf_sign", "sx"}};
  s.outs = {{"sub", 1}, {"ex_eff", z.E}, {"d", z.E}, {"sig_x", z.F + 1}, {"sig_y", z.F + 1}};
  return s;
}

// 3. Align the smaller significand; shifted-out bits OR into sticky.
AdderStep shape_align(const AdderSizes& z, const DelayModel& dm) {
  const int levels = (z.K + 1) / 2 + 1;  // two shifter stages per LUT6 level, plus sticky
  AdderStep s{"align", dm.lut_level * levels, {}, {"nan", "inf", "inf_sign", "sx", "sub", "ex_eff", "sig_x"}};
  s.outs = {{"y_al", z.A}};
  return s;
}

// 4. Add or subtract the significands (x >= y, so the difference is never negative).
AdderStep shape_add(const AdderSizes& z, const DelayModel& dm) {
  AdderStep s{"add", dm.lut_level + dm.carry(z.S), {}, {"nan", "inf", "inf_sign", "sx", "sub", "ex_eff"}};
  s.outs = {{"sum", z.S}};
  return s;
}

// 5. Leading zeros of the sum, limited so that the exponent stays >= 1.
AdderStep shape_lzc(const AdderSizes& z, const DelayModel& dm, bool split) {
  AdderStep s{"lzc", dm.lut_level * ((clog2(z.S) + 1) / 2 + 2), {}, {"nan", "inf_sign", "sx", "sub", "ex_eff", "sum"}};
  // With a register stage after this step (split), what normalize needs besides the shift is
  // decided here, from the sum and lz_raw, so that normalize is the shifter and one select
  // (docs/generator.md, "Adder steps"):
  // - hidden: the normalized significand's top bit, (sum << lz)[S-1]: set unless the sum is zero
  //   or the shift is limited (a limited shift stops short of the leading one);
  // - ovf: exponent all ones after normalizing, ex_eff + 1 - lz = 2^E - 1. Unlimited, lz <= ex_eff
  //   and a finite ex_eff is at most 2^E - 2, so that is lz = 0 (the carry bit set) with
  //   ex_eff = 2^E - 2; for NaN and infinity ovf does not matter (they are special anyway);
  // - inf_any (NaN or infinity) and special (or an overflow).
  // inf_any also gives `nan` a second load, so the delay line that carries it from classify ends
  // before this boundary and normalize reads flip-flops, not a shift-register LUT's output
  // (SRL16E clock-to-out is about three LUT delays).
  s.outs = {{"lz", z.LZW}};
  if (split)
    s.outs.insert(s.outs.end(), {{"hidden", 1}, {"inf_any", 1}, {"special", 1}});
  else
    s.pass.push_back("inf");
  return s;
}

// 6. Normalise: shift left by lz, exponent = ex_eff + 1 - lz.
AdderStep shape_normalize(const AdderSizes& z, const DelayModel& dm) {
  const int levels = (z.LZW + 1) / 2;
  AdderStep s{"normalize", std::max(dm.lut_level * levels, dm.carry(z.E)) + dm.lut_level, {}, {}};
  s.outs = {{"sign_r", 1}, {"packed", z.E + z.F}, {"round_up", 1}};
  return s;
}

// 7. Round to nearest even: one increment of {exponent, fraction}.
AdderStep shape_round(const AdderSizes& z, const DelayModel& dm) {
  AdderStep s{"round", dm.lut_level + dm.carry(z.E + z.F), {}, {}};
  s.outs = {{"y", z.W}};
  return s;
}

}  // namespace

std::vector<AdderStep> adder_steps(const AdderSizes& z, const DelayModel& dm, bool split) {
  return {shape_classify(z, dm),   shape_swap(z, dm),      shape_align(z, dm), shape_add(z, dm),
          shape_lzc(z, dm, split), shape_normalize(z, dm), shape_round(z, dm)};
}

std::vector<std::pair<std::string, int>> adder_boundary(const std::vector<AdderStep>& steps, size_t i) {
  // Widths of every signal a step can forward: the inputs and every step's outputs.
  const int W = steps.back().outs.at(0).second;  // y
  std::map<std::string, int> widths{{"a", W}, {"b", W}, {"a_en", 1}, {"b_en", 1}};
  for (const auto& s : steps)
    for (const auto& o : s.outs) widths[o.first] = o.second;
  std::vector<std::pair<std::string, int>> v;
  for (const auto& p : steps.at(i).pass) v.push_back({p, widths.at(p)});
  for (const auto& o : steps.at(i).outs) v.push_back(o);
  return v;
}

AdderPlan pack_stages(const std::vector<std::string>& names, const std::vector<double>& delays, double mhz,
                      const DelayModel& dm) {
  AdderPlan p;
  p.step_names = names;
  p.step_delay_ns = delays;
  p.reg_after.assign(delays.size(), false);
  const double budget = 1000.0 / mhz - dm.ff_overhead;
  double acc = 0;
  for (size_t i = 0; i < delays.size(); ++i) {
    if (i > 0 && acc + delays[i] > budget) {
      p.reg_after[i - 1] = true;
      acc = 0;
    }
    acc += delays[i];
  }
  if (!p.reg_after.empty()) p.reg_after.back() = true;
  p.latency = static_cast<int>(std::count(p.reg_after.begin(), p.reg_after.end(), true));
  return p;
}

AdderPlan plan_fpadd(const FormatInfo& fmt, Subnormals sub, double mhz, const DelayModel& dm) {
  std::vector<std::string> names;
  std::vector<double> delays;
  for (const auto& s : adder_steps(AdderSizes(fmt, sub == Subnormals::ftz), dm))
    names.push_back(s.name), delays.push_back(s.delay);
  return pack_stages(names, delays, mhz, dm);
}

long fpadd_flipflops(const Config& c) {
  const auto steps = adder_steps(AdderSizes(c.fmt, c.in.subnormals == Subnormals::ftz), DelayModel{},
                                 c.adder.reg_after.at(kAdderLzcStep));
  long ffs = 0;
  for (size_t i = 0; i < steps.size(); ++i)
    if (c.adder.reg_after[i])
      for (const auto& sg : adder_boundary(steps, i)) ffs += sg.second;
  return ffs;
}

}  // namespace panama
