// The floating-point adder generator.
//
// The adder is a fixed sequence of combinational steps (classify, swap, align, add, count
// leading zeros, normalise, round/pack). Each step reads only the signals the previous step
// produced, so the generator can put a register bank, or nothing, between any two steps. The
// delay model estimates each step from its widths; plan_fpadd packs steps into clock periods.
//
// Datapath (single path, |x| >= |y| after the swap):
//   significands carry a hidden bit, then guard, round and sticky bits (F+4 bits); the aligned
//   smaller operand's shifted-out bits OR into sticky; the sum has one more (carry) bit.
//   Normalisation counts leading zeros of the sum, limited so that the shift stops at
//   exponent 1 (subnormal results); rounding adds the round-up bit to the packed {exponent,
//   fraction}, so a carry into the exponent, the subnormal-to-normal step and overflow to
//   infinity all fall out of one increment.
#include "fpadd.h"
#include "top.h"
#include "exactsum.h"
#include "regs_rtl.h"

#include "emit.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

namespace panama {
namespace {

struct Sig {
  std::string name;
  int width;
};

struct Step {
  std::string name;
  double delay;
  std::vector<Sig> outs;          // produced by the body (declared by the framework)
  std::vector<std::string> pass;  // forwarded unchanged from the previous boundary
  std::string body;               // ${in} previous boundary, @{out} this step's outputs, %{x} locals
};

// A tree leading-zero counter over `src` (width bits, a local or input reference), padded to
// a power of two with a 1 just below it, so the count is defined and equals `width` for zero.
// Emits locals named %{<tag>...}; returns the count's name (clog2(width + 1) bits).
std::string emit_lzc(std::ostream& b, const std::string& tag, const std::string& src, int width) {
  auto n = [](int v) { return std::to_string(v); };
  const int CW = std::max(clog2(width + 1), 1);
  const int P2 = 1 << CW;
  // A group's "any ones" flag is needed by its parent's mux (high half) or its parent's flag.
  std::function<bool(int, int)> needv = [&](int lvl, int g) {
    return lvl < CW && (g % 2 == 1 || needv(lvl + 1, g / 2));
  };
  b << "  // The lowest pad bits only matter through their pair's high bit.\n";
  b << "  /* verilator lint_off UNUSEDSIGNAL */\n";
  b << "  wire [" << P2 - 1 << ":0] %{" << tag << "_pad} = {" << src << ", 1'b1";
  if (P2 - width - 1 > 0) b << ", " << P2 - width - 1 << "'d0";
  b << "};\n";
  b << "  /* verilator lint_on UNUSEDSIGNAL */\n";
  auto node = [&](int lvl, int g) { return "%{" + tag + n(lvl) + "_" + n(g); };
  for (int g = 0; g < P2 / 2; ++g) {
    if (needv(1, g))
      b << "  wire " << node(1, g) << "_v} = |%{" << tag << "_pad}[" << 2 * g + 1 << ":" << 2 * g << "];\n";
    b << "  wire [0:0] " << node(1, g) << "_c} = ~%{" << tag << "_pad}[" << 2 * g + 1 << "];\n";
  }
  for (int lvl = 2; lvl <= CW; ++lvl) {
    for (int g = 0; g < (P2 >> lvl); ++g) {
      const std::string hi = node(lvl - 1, 2 * g + 1), lo = node(lvl - 1, 2 * g), me = node(lvl, g);
      if (needv(lvl, g)) b << "  wire " << me << "_v} = " << hi << "_v} | " << lo << "_v};\n";
      b << "  wire [" << lvl - 1 << ":0] " << me << "_c} = " << hi << "_v} ? {1'b0, " << hi << "_c}} : {1'b1, " << lo
        << "_c}};\n";
    }
  }
  return node(CW, 0) + "_c}";
}

// The sizes of one adder, and one function per pipeline step (docs/rtl.md, "Adder").
struct AdderSizes {
  AdderSizes(const FormatInfo& f, bool flush, const DelayModel& delays)
      : fmt(f),
        ftz(flush),
        dm(delays),
        E(f.exp_bits),
        F(f.frac_bits),
        W(1 + E + F),
        A(F + 4),
        S(F + 5),
        LZW(std::max(clog2(S + 1), 1)),
        K(std::min(clog2(F + 3), E)) {}
  Step step_classify() const;
  Step step_swap() const;
  Step step_align() const;
  Step step_add() const;
  // split: a register stage between lzc and normalize (the plan's), so lzc decides the hidden
  // bit, the overflow and the specials; fused: both in one stage, where normalize takes them
  // from the shifter's output and exponent as it always could (smaller after plain ABC mapping).
  Step step_lzc(bool split) const;
  Step step_normalize(bool split) const;
  Step step_round() const;

  static std::string n(int v) { return std::to_string(v); }
  const FormatInfo& fmt;
  const bool ftz;
  const DelayModel& dm;
  const int E, F, W;
  const int A;    // aligned significand: hidden, F fraction bits, guard, round, sticky
  const int S;    // sum: carry + A
  const int LZW;  // leading-zero count bits
  const int K;    // shifter stages that can keep a bit in view
};

// 1. Classify both operands, flush subnormal inputs in ftz mode, compare magnitudes.
Step AdderSizes::step_classify() const {
  Step s{"classify", dm.lut_level + dm.carry(W - 1), {}, {}, ""};
  s.outs = {{"sx", 1},  {"sy", 1},   {"ma", W - 1}, {"mb", W - 1}, {"ge", 1},
            {"any", 1}, {"both", 1}, {"nan", 1},    {"inf", 1},    {"inf_sign", 1}};
  std::ostringstream b;
  for (const char* x : {"a", "b"}) {
    std::string X = x;
    b << "  wire %{" << X << "_expmax} = &${" << X << "}[" << W - 2 << ":" << F << "];\n";
    b << "  wire %{" << X << "_fracnz} = |${" << X << "}[" << F - 1 << ":0];\n";
    b << "  wire %{" << X << "_nan} = ${" << X << "_en} & %{" << X << "_expmax} & %{" << X << "_fracnz};\n";
    b << "  wire %{" << X << "_inf} = ${" << X << "_en} & %{" << X << "_expmax} & ~%{" << X << "_fracnz};\n";
    if (ftz) {
      // DAZ: a subnormal input is a zero of its sign.
      b << "  wire %{" << X << "_expzero} = ~|${" << X << "}[" << W - 2 << ":" << F << "];\n";
      b << "  assign @{m" << X << "} = %{" << X << "_expzero} ? {" << W - 1 << "{1'b0}} : ${" << X << "}[" << W - 2
        << ":0];\n";
    } else {
      b << "  assign @{m" << X << "} = ${" << X << "}[" << W - 2 << ":0];\n";
    }
    b << "  wire %{s" << X << "} = ${" << X << "}[" << W - 1 << "];\n";
  }
  b << "  // An absent operand (en = 0) is -0.0: it never wins the swap, and its magnitude is\n";
  b << "  // zeroed in the swap muxes, where the gating costs no extra logic level.\n";
  b << "  wire %{ge_raw} = @{ma} >= @{mb};\n";
  b << "  assign @{ge} = ${b_en} ? (${a_en} & %{ge_raw}) : 1'b1;\n";
  b << "  assign @{any} = ${a_en} | ${b_en};\n";
  b << "  assign @{both} = ${a_en} & ${b_en};\n";
  b << "  assign @{sx} = @{any} ? (@{ge} ? %{sa} : %{sb}) : 1'b1;\n";
  b << "  assign @{sy} = @{both} ? (@{ge} ? %{sb} : %{sa}) : 1'b1;\n";
  b << "  assign @{nan} = %{a_nan} | %{b_nan} | (%{a_inf} & %{b_inf} & (%{sa} ^ %{sb}));\n";
  b << "  assign @{inf} = %{a_inf} | %{b_inf};\n";
  b << "  assign @{inf_sign} = %{a_inf} ? %{sa} : %{sb};\n";
  s.body = b.str();
  return s;
}

// 2. Swap so that x is the larger magnitude; exponent difference.
Step AdderSizes::step_swap() const {
  Step s{"swap", dm.lut_level + dm.carry(E), {}, {"nan", "inf", "inf_sign", "sx"}, ""};
  s.outs = {{"sub", 1}, {"ex_eff", E}, {"d", E}, {"sig_x", F + 1}, {"sig_y", F + 1}};
  std::ostringstream b;
  b << "  wire [" << W - 2 << ":0] %{mx} = ${any} ? (${ge} ? ${ma} : ${mb}) : " << W - 1 << "'d0;\n";
  b << "  wire [" << W - 2 << ":0] %{my} = ${both} ? (${ge} ? ${mb} : ${ma}) : " << W - 1 << "'d0;\n";
  b << "  wire %{hx} = |%{mx}[" << W - 2 << ":" << F << "];\n";
  b << "  wire %{hy} = |%{my}[" << W - 2 << ":" << F << "];\n";
  b << "  // A subnormal's exponent is 1 with a hidden bit of 0.\n";
  b << "  wire [" << E - 1 << ":0] %{ey_eff} = %{hy} ? %{my}[" << W - 2 << ":" << F << "] : " << E << "'d1;\n";
  b << "  assign @{ex_eff} = %{hx} ? %{mx}[" << W - 2 << ":" << F << "] : " << E << "'d1;\n";
  b << "  assign @{d} = @{ex_eff} - %{ey_eff};\n";
  b << "  assign @{sub} = ${sx} ^ ${sy};\n";
  b << "  assign @{sig_x} = {%{hx}, %{mx}[" << F - 1 << ":0]};\n";
  b << "  assign @{sig_y} = {%{hy}, %{my}[" << F - 1 << ":0]};\n";
  s.body = b.str();
  return s;
}

// 3. Align the smaller significand; shifted-out bits OR into sticky.
Step AdderSizes::step_align() const {
  const int levels = (K + 1) / 2 + 1;  // two shifter stages per LUT6 level, plus sticky
  Step s{"align", dm.lut_level * levels, {}, {"nan", "inf", "inf_sign", "sx", "sub", "ex_eff", "sig_x"}, ""};
  s.outs = {{"y_al", A}};
  std::ostringstream b;
  const int V = F + 3;  // significand + guard + round
  // Largest stage first: Yosys/ABC maps this order into about three LUT6 per bit, the
  // smallest-first order into wide muxes of nearly twice the LUTs.
  b << "  wire [" << V - 1 << ":0] %{v0} = {${sig_y}, 2'b00};\n";
  for (int j = 0; j < K; ++j) {
    const int k = K - 1 - j;
    const int sh = 1 << k;
    std::string prev = "%{v" + n(j) + "}", next = "%{v" + n(j + 1) + "}";
    b << "  wire [" << V - 1 << ":0] " << next << " = ${d}[" << k << "] ? ";
    if (sh >= V)
      b << "{" << V << "{1'b0}}";
    else
      b << "{" << sh << "'b0, " << prev << "[" << V - 1 << ":" << sh << "]}";
    b << " : " << prev << ";\n";
  }
  b << "  // Sticky: some bit of y falls below the round bit, i.e. y's trailing zeros + 3 <= d.\n";
  b << "  // Counting trailing zeros beside the shifter is cheaper than OR-ing each stage's spill.\n";
  b << "  wire [" << F << ":0] %{rev} = {";
  for (int i = 0; i <= F; ++i) b << "${sig_y}[" << i << "]" << (i < F ? ", " : "");
  b << "};\n";
  const std::string tz = emit_lzc(b, "t", "%{rev}", F + 1);
  const int TW = std::max(clog2(F + 2), 1);
  const int DW = std::max(E, TW + 1);
  auto extw = [&](const std::string& x, int w) { return w < DW ? "{" + n(DW - w) + "'d0, " + x + "}" : x; };
  b << "  wire [" << DW - 1 << ":0] %{tz3} = " << extw(tz, TW) << " + " << DW << "'d3;\n";
  b << "  wire %{sticky} = (|${sig_y}) & (" << extw("${d}", E) << " >= %{tz3});\n";
  if (E > K) {
    b << "  // A shift of 2^" << K << " or more leaves nothing but sticky.\n";
    b << "  wire %{far} = |${d}[" << E - 1 << ":" << K << "];\n";
    b << "  assign @{y_al} = {%{far} ? " << V << "'d0 : %{v" << K << "}, %{sticky}};\n";
  } else {
    b << "  assign @{y_al} = {%{v" << K << "}, %{sticky}};\n";
  }
  s.body = b.str();
  return s;
}

// 4. Add or subtract the significands (x >= y, so the difference is never negative).
Step AdderSizes::step_add() const {
  Step s{"add", dm.lut_level + dm.carry(S), {}, {"nan", "inf", "inf_sign", "sx", "sub", "ex_eff"}, ""};
  s.outs = {{"sum", S}};
  std::ostringstream b;
  b << "  wire [" << S - 1 << ":0] %{xe} = {1'b0, ${sig_x}, 3'b000};\n";
  b << "  wire [" << S - 1 << ":0] %{ye} = {1'b0, ${y_al}};\n";
  b << "  // One adder: x + (y ^ sub) + sub, the carry-in entering through an extra low bit.\n";
  b << "  /* verilator lint_off UNUSEDSIGNAL */\n";
  b << "  wire [" << S << ":0] %{wide} = {%{xe}, 1'b1} + {%{ye} ^ {" << S << "{${sub}}}, ${sub}};\n";
  b << "  /* verilator lint_on UNUSEDSIGNAL */\n";
  b << "  assign @{sum} = %{wide}[" << S << ":1];\n";
  s.body = b.str();
  return s;
}

// 5. Leading zeros of the sum, limited so that the exponent stays >= 1.
Step AdderSizes::step_lzc(bool split) const {
  Step s{"lzc", dm.lut_level * ((clog2(S) + 1) / 2 + 2), {}, {"nan", "inf_sign", "sx", "sub", "ex_eff", "sum"}, ""};
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
  s.outs = {{"lz", LZW}};
  if (split)
    s.outs.insert(s.outs.end(), {{"hidden", 1}, {"inf_any", 1}, {"special", 1}});
  else
    s.pass.push_back("inf");
  std::ostringstream b;
  const std::string lz_raw = emit_lzc(b, "z", "${sum}", S);
  const int CW = std::max(E, LZW);
  auto ext = [&](const std::string& x, int w) { return w < CW ? "{" + n(CW - w) + "'d0, " + x + "}" : x; };
  b << "  wire [" << LZW - 1 << ":0] %{lz_raw} = " << lz_raw << ";\n";
  b << "  wire %{limit} = " << ext("%{lz_raw}", LZW) << " > " << ext("${ex_eff}", E) << ";\n";
  b << "  assign @{lz} = %{limit} ? ${ex_eff}[" << LZW - 1 << ":0] : %{lz_raw};\n";
  if (!split) {
    s.body = b.str();
    return s;
  }
  b << "  assign @{hidden} = ~%{limit} & (|${sum});\n";
  b << "  wire %{ovf} = ${sum}[" << S - 1 << "] & (${ex_eff} == " << E << "'d" << (1L << E) - 2 << ");\n";
  b << "  assign @{inf_any} = ${nan} | ${inf};\n";
  b << "  assign @{special} = ${nan} | ${inf} | %{ovf};\n";
  s.body = b.str();
  return s;
}

// 6. Normalise: shift left by lz, exponent = ex_eff + 1 - lz.
Step AdderSizes::step_normalize(bool split) const {
  const int levels = (LZW + 1) / 2;
  Step s{"normalize", std::max(dm.lut_level * levels, dm.carry(E)) + dm.lut_level, {}, {}, ""};
  s.outs = {{"sign_r", 1}, {"packed", E + F}, {"round_up", 1}};
  std::ostringstream b;
  // Logarithmic shifter, one 2:1 stage per bit of lz.
  b << "  wire [" << S - 1 << ":0] %{nf0} = ${sum};\n";
  for (int j = 0; j < LZW; ++j) {
    const int k = LZW - 1 - j;  // largest stage first, as in the alignment shifter
    const int sh = 1 << k;
    b << "  wire [" << S - 1 << ":0] %{nf" << j + 1 << "} = ${lz}[" << k << "] ? ";
    if (sh >= S)
      b << S << "'d0";
    else
      b << "{%{nf" << j << "}[" << S - 1 - sh << ":0], " << sh << "'d0}";
    b << " : %{nf" << j << "};\n";
  }
  if (split) {
    b << "  // nf's top bit is not read: it is ${hidden}, from lzc.\n";
    b << "  /* verilator lint_off UNUSEDSIGNAL */\n";
    b << "  wire [" << S - 1 << ":0] %{nf} = %{nf" << LZW << "};\n";
    b << "  /* verilator lint_on UNUSEDSIGNAL */\n";
  } else {
    b << "  wire [" << S - 1 << ":0] %{nf} = %{nf" << LZW << "};\n";
  }
  b << "  wire [" << E - 1 << ":0] %{lz_e} = ";
  if (LZW < E)
    b << "{" << E - LZW << "'b0, ${lz}};\n";
  else
    b << "${lz}[" << E - 1 << ":0];\n";
  b << "  wire [" << E - 1 << ":0] %{exp_pre} = ${ex_eff} + " << E << "'d1 - %{lz_e};\n";
  // The three decisions lzc makes when a register separates the steps (step_lzc).
  const std::string hidden = split ? "${hidden}" : "%{hidden}";
  // (Fused, `nan` is tested first, so NaN-or-infinity there is `inf` alone.)
  const std::string inf_any = split ? "${inf_any}" : "${inf}";
  const std::string special = split ? "${special}" : "%{special}";
  if (!split) {
    b << "  wire %{hidden} = %{nf}[" << S - 1 << "];\n";
    b << "  wire %{special} = ${nan} | ${inf} | (%{hidden} & (&%{exp_pre}));\n";
  }
  b << "  wire %{lsb} = %{nf}[4];\n";
  b << "  wire %{guard} = %{nf}[3];\n";
  b << "  wire %{sticky} = |%{nf}[2:0];\n";
  b << "  wire %{sum_zero} = ~|${sum};\n";
  b << "  // An exact zero of opposite signs is +0 (roundTiesToEven).\n";
  b << "  wire %{sign} = ${sx} & ~(%{sum_zero} & ${sub});\n";
  b << "  // Specials replace the packed value before rounding, so the select merges into the\n";
  b << "  // incrementer's input logic; a special never rounds.\n";
  b << "  assign @{sign_r} = ${nan} ? 1'b0 : " << inf_any << " ? ${inf_sign} : %{sign};\n";
  b << "  // No hidden bit after a limited shift: a subnormal (exponent field 0).\n";
  b << "  assign @{packed} = ${nan} ? " << E + F << "'h" << std::hex << (fmt.canonical_nan & ((1u << (E + F)) - 1))
    << std::dec << " :\n";
  b << "                     " << special << " ? {{" << E << "{1'b1}}, " << F << "'d0} :\n";
  b << "                     {" << hidden << " ? %{exp_pre} : " << E << "'d0, %{nf}[" << S - 2 << ":4]};\n";
  b << "  assign @{round_up} = ~" << special << " & %{guard} & (%{sticky} | %{lsb});\n";
  s.body = b.str();
  return s;
}

// 7. Round to nearest even: one increment of {exponent, fraction}.
Step AdderSizes::step_round() const {
  Step s{"round", dm.lut_level + dm.carry(E + F), {}, {}, ""};
  s.outs = {{"y", W}};
  std::ostringstream b;
  b << "  wire [" << E + F - 1 << ":0] %{rounded} = ${packed} + {" << E + F - 1 << "'d0, ${round_up}};\n";
  if (ftz) {
    b << "  // FTZ: a result that is subnormal after rounding is a zero of its sign.\n";
    b << "  wire %{tiny} = ~|%{rounded}[" << E + F - 1 << ":" << F << "];\n";
    b << "  wire [" << E + F - 1 << ":0] %{mag} = %{tiny} ? " << E + F << "'d0 : %{rounded};\n";
  } else {
    b << "  wire [" << E + F - 1 << ":0] %{mag} = %{rounded};\n";
  }
  b << "  assign @{y} = {${sign_r}, %{mag}};\n";
  s.body = b.str();
  return s;
}

// `split`: whether a register stage follows lzc (step 5); the plan is made with it set.
std::vector<Step> adder_steps(const FormatInfo& fmt, bool ftz, const DelayModel& dm, bool split = true) {
  const AdderSizes plan(fmt, ftz, dm);
  return {plan.step_classify(), plan.step_swap(),           plan.step_align(), plan.step_add(),
          plan.step_lzc(split), plan.step_normalize(split), plan.step_round()};
}
constexpr size_t kLzcStep = 4;

// Widths of every signal a step can forward.
std::map<std::string, int> all_widths(const std::vector<Step>& steps, int W) {
  std::map<std::string, int> w{{"a", W}, {"b", W}, {"a_en", 1}, {"b_en", 1}};
  for (const auto& s : steps)
    for (const auto& o : s.outs) w[o.name] = o.width;
  return w;
}

std::vector<std::pair<std::string, int>> boundary_sigs(const Step& s, const std::map<std::string, int>& widths) {
  std::vector<std::pair<std::string, int>> v;
  for (const auto& p : s.pass) v.push_back({p, widths.at(p)});
  for (const auto& o : s.outs) v.push_back({o.name, o.width});
  return v;
}

}  // namespace

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
  for (const auto& s : adder_steps(fmt, sub == Subnormals::ftz, dm)) names.push_back(s.name), delays.push_back(s.delay);
  return pack_stages(names, delays, mhz, dm);
}

long fpadd_flipflops(const Config& c) {
  const int W = 1 + c.fmt.exp_bits + c.fmt.frac_bits;
  const auto steps =
      adder_steps(c.fmt, c.in.subnormals == Subnormals::ftz, DelayModel{}, c.adder.reg_after.at(kLzcStep));
  const auto widths = all_widths(steps, W);
  long ffs = 0;
  for (size_t i = 0; i < steps.size(); ++i)
    if (c.adder.reg_after[i])
      for (const auto& sg : boundary_sigs(steps[i], widths)) ffs += sg.second;
  return ffs;
}

std::string emit_fpadd(const Config& c) {
  const FormatInfo& fmt = c.fmt;
  const int W = 1 + fmt.exp_bits + fmt.frac_bits;
  const auto steps = adder_steps(fmt, c.in.subnormals == Subnormals::ftz, DelayModel{}, c.adder.reg_after.at(kLzcStep));
  const auto widths = all_widths(steps, W);
  const AdderPlan& plan = c.adder;
  std::ostringstream v;
  const std::string mod = c.module_name("fpadd");
  v << "module " << mod << " (\n"
    << "  input  wire             clk,\n"
    << "  input  wire [" << W - 1 << ":0]  a,\n"
    << "  // 0: operand a is absent and counts as -0.0 (the tree's member mask)\n"
    << "  input  wire              a_en,\n"
    << "  input  wire [" << W - 1 << ":0]  b,\n"
    << "  input  wire              b_en,\n"
    << "  output wire [" << W - 1 << ":0]  y\n"
    << ");\n\n";
  // Names of the previous boundary's signals as seen by step i.
  std::map<std::string, std::string> cur{{"a", "a"}, {"b", "b"}, {"a_en", "a_en"}, {"b_en", "b_en"}};
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const std::string pre = "s" + std::to_string(i + 1) + "_";
    v << "  // ---- step " << i + 1 << ": " << s.name << " (" << std::round(s.delay * 100) / 100 << " ns est.)\n";
    for (const auto& o : s.outs) v << "  wire [" << o.width - 1 << ":0] " << pre << o.name << ";\n";
    std::string body = s.body;
    // Substitute placeholders.
    std::string out;
    for (size_t k = 0; k < body.size(); ++k) {
      if ((body[k] == '$' || body[k] == '@' || body[k] == '%') && k + 1 < body.size() && body[k + 1] == '{') {
        const size_t e = body.find('}', k);
        const std::string name = body.substr(k + 2, e - k - 2);
        if (body[k] == '$') {
          auto it = cur.find(name);
          if (it == cur.end()) throw std::logic_error("fpadd step " + s.name + " reads unknown " + name);
          out += it->second;
        } else {
          out += pre + name;
        }
        k = e;
      } else {
        out += body[k];
      }
    }
    v << out;
    // The boundary after this step: every output plus the forwarded signals.
    std::map<std::string, std::string> next;
    for (const auto& sg : boundary_sigs(s, widths)) {
      const std::string& nm = sg.first;
      const bool forwarded = std::find(s.pass.begin(), s.pass.end(), nm) != s.pass.end();
      const std::string src = forwarded ? cur.at(nm) : pre + nm;
      if (plan.reg_after[i]) {
        const std::string q = pre + nm + "_q";
        v << "  reg  [" << sg.second - 1 << ":0] " << q << ";\n";
        v << "  always @(posedge clk) " << q << " <= " << src << ";\n";
        next[nm] = q;
      } else {
        next[nm] = src;
      }
    }
    if (plan.reg_after[i]) v << "  // ---- register stage\n";
    v << "\n";
    cur = next;
  }
  v << "  assign y = " << cur.at("y") << ";\n\n";
  v << "endmodule\n";
  return v.str();
}

// The generator's own resource estimate: UltraScale+ cells after Yosys 0.23 `synth_xilinx -family
// xcup -abc9 -flatten` (the flow of scripts/timing), per module with what it instantiates, and
// the top's totals. Each term is fitted to scripts/timing's per-module syntheses of 4 x 10G @ 200
// (W 64) and 8 x 100G @ 250 (W 512), both with 8 contexts and 64 KiB per port (docs/rtl.md,
// "Resource estimate"), and follows the structure that sets it: adders per tree node, the
// contribution memory's depth T for the port's distributed RAM and its read multiplexers, the
// bus width for the builder and the output FIFO, the counter count for the register file.
namespace {

// Block RAM36 (RAMB18 count as halves) of a memory of depth x width bits with one write and one
// synchronous read port, the way Yosys 0.23 maps it for UltraScale+: the largest power of two
// not above the depth in one aspect ratio of one primitive for every word (the cheaper of
// RAMB18 and RAMB36), the rest of the depth again the same way.
double bram36_for(long depth, long width) {
  if (depth <= 0 || width <= 0) return 0;
  long main = 512;
  while (main * 2 <= depth) main *= 2;
  if (depth < 512) main = depth;
  // (depth, width) of each aspect ratio, RAMB18 then RAMB36 (72 bits: simple dual port).
  static const long r18[][2] = {{16384, 1}, {8192, 2}, {4096, 4}, {2048, 9}, {1024, 18}, {512, 36}};
  static const long r36[][2] = {{32768, 1}, {16384, 2}, {8192, 4}, {4096, 9}, {2048, 18}, {1024, 36}, {512, 72}};
  double best = 1e18;
  for (const auto& m : r18)
    best = std::min(best, 0.5 * static_cast<double>(((main + m[0] - 1) / m[0]) * ((width + m[1] - 1) / m[1])));
  for (const auto& m : r36)
    best = std::min(best, static_cast<double>(((main + m[0] - 1) / m[0]) * ((width + m[1] - 1) / m[1])));
  return best + (depth > main ? bram36_for(depth - main, width) : 0.0);
}

// The parser and the port (the parser included) of configuration c.
std::pair<ModuleEstimate, ModuleEstimate> parser_port_estimates(const Config& c, const BufferPlan& plan) {
  const long W = c.bus_bits, BB = W / 8, N = c.in.ports, C = c.in.contexts;
  // Parser (inside each port): 307 LUTs / 352 FFs at W 64, 364 / 347 at W 512 (the descriptor's
  // header fields are the kept header bytes; 489 / 552 and 540 / 547 when they were copied).
  // With two descriptor stages: the registered length, port, last-beat and error flags, and the copy
  // of the header bytes of beat 0 that the descriptor reads (eth.dst at W 64; every field read
  // from W 512 on, where the whole header is in beat 0).
  const long parser_ff2 = c.desc_stages > 1 ? 35 + (BB >= 64 ? 250 : 48) : 0;
  // Its LUTs: 179 at W 64 with two stages (the checks start from registers, not the live view).
  const ModuleEstimate parser{"parser", N, (c.desc_stages > 1 ? 171 : 299) + (W * 127) / 1000, 0, 350 + parser_ff2,
                              0,        0};
  // Port (parser included): T = the contribution memory's beats (the contribution half), D =
  // frame descriptors. The contribution memory (split where its width is not a whole number of
  // block RAM widths at depth T, as rtl/panama_port.v does), its links, the free segments, the
  // bypass FIFO and the descriptors (head fields, read for the scheduler's look at one context,
  // and header fields) are block RAM read synchronously; what stays in distributed RAM is the
  // descriptors' next pointers (read when a queue pops), D deep, 64 words per LUT group, mPP's
  // four-beat FIFO and the heads' ages (two C-word RAMs of 32 bits). Each context costs about
  // 113 LUTs and 49 FFs (its queue's head, tail and flags, `used` and `over(used)` loaded from
  // one accounting datapath, its match with the port's roles and its timeout mark): 2045 LUTs / 1326 FFs at 4 x 10G
  // (C = 8), 1331 / 1028 with C = 2; 1954 / 2152 and 1310 / 1890 at 8 x 100G.
  const long T = plan.mem_beats, D = plan.descs;
  const long BW = clog2(T), SBW = clog2(plan.frame_beats + 1), DW = clog2(D), HIW = BW + SBW + 50;
  const long XW = W + clog2(BB) + 3;  // a bypass FIFO word: tdata, byte count, tlast, tuser
  const long port_lutram =
      ((D + 63) / 64) * 8 * ((DW + 6) / 7) + 8 * ((XW + 13) / 14) + 2 * 8 * ((32 + 13) / 14) * ((C + 31) / 32);
  // Two descriptor stages: the beat registered once more (tdata, byte count, valid, last, user).
  const long rx2_ffs = c.desc_stages > 1 ? W + clog2(BB) + 4 : 0;
  ModuleEstimate port{"port",
                      N,
                      1037 + 113 * C + (T * 254) / 10000,
                      port_lutram,
                      844 + 49 * C + (W * 1844) / 1000 + rx2_ffs + parser_ff2,
                      0,
                      0};
  // Block RAM, memory by memory as Yosys maps them (bram36_for): 21.5 at W 64, 19 at W 512.
  const long b36w = T <= 512     ? 72
                    : T <= 1024  ? 36
                    : T <= 2048  ? 18
                    : T <= 4096  ? 9
                    : T <= 8192  ? 4
                    : T <= 16384 ? 2
                                 : 1;
  const long whole = (W + BW) / b36w * b36w;  // the widest whole number of RAMB36 widths
  const long blo = whole == 0 ? W + BW : whole;
  port.bram36 = bram36_for(plan.byp_beats, XW) + bram36_for(T, blo) + bram36_for(T, W + BW - blo) + bram36_for(T, BW) +
                bram36_for(plan.segs, BW + SBW) + bram36_for(D, 104) + bram36_for(D, HIW) + bram36_for(D, DW);
  return {parser, port};
}

}  // namespace

Resources estimate_resources(const Config& c) {
  Resources r;
  const long W = c.bus_bits, BB = W / 8, N = c.in.ports, C = c.in.contexts;
  // Adders: the tree nodes that need one (not constants, not pass-throughs), per lane.
  long adders = 0;
  for (const auto& level : resolve_tree(c.in.ports))
    for (NodeKind k : level) adders += k == NodeKind::adder;
  ModuleEstimate tree{"addtree", 1, 0, 0, 0, 0, 0};
  if (c.exact_sum()) {
    // Exact mode: per lane the leaf shifters, N - 1 rows of 3:2 compressors (one LUT6_2 per
    // bit), the addition and negation carry chains, the leading-one search and the final shift.
    const ExactWidths xw = exact_widths(c.fmt, c.in.ports);
    const long M = xw.mag_bits, A = xw.acc_bits, PW = clog2(A - 1);
    const long lane = N * (M * ((c.fmt.exp_bits + 1) / 2) + c.elem_bits) + (N - 1) * A + 2 * A + A + A * (PW + 1) / 2 +
                      3 * (c.fmt.exp_bits + c.fmt.frac_bits);
    r.modules.push_back(ModuleEstimate{"exactlane", c.lanes, lane, 0, exactlane_flipflops(c), 0, 0});
    tree.luts = lane * c.lanes;
    tree.ffs = exactlane_flipflops(c) * c.lanes + c.addtree_latency;
  } else {
    r.fpadd_instances = adders * c.lanes;
    // One adder (abc9): fp32 433 LUTs at 200 MHz, 417 at 250 MHz; bf16 and fp16 scaled by their
    // adder areas against fp32's (207 and 212 against 551 in the first fit). The tree's member
    // gating costs next to nothing: the tree is its adders (2600 = 6 x 433, 46178 = 112 x 412).
    const long fp_luts = c.elem_bits == 32 ? 425 : (c.fmt.exp_bits == 8 ? 160 : 164);
    // SRLs: stages of the fp32 adder that delay operands by more than one cycle (4 at 250 MHz).
    const long fp_srl = c.elem_bits == 32 && c.addtree_latency / std::max<long>(1, clog2(N)) >= 4 ? 4 : 0;
    r.modules.push_back(ModuleEstimate{"fpadd", r.fpadd_instances, fp_luts, fp_srl, fpadd_flipflops(c), 0, 0});
    tree.luts = r.fpadd_instances * fp_luts;
    tree.lutram = r.fpadd_instances * fp_srl;
    tree.ffs = r.fpadd_instances * fpadd_flipflops(c) + c.addtree_latency;
  }
  r.modules.push_back(tree);
  r.luts = tree.luts;
  r.lutram = tree.lutram;
  r.ffs = tree.ffs;
  if (c.in.module != "top") return r;
  const BufferPlan plan = buffer_plan(c);
  const auto [parser, port] = parser_port_estimates(c, plan);
  r.modules.push_back(parser);
  r.modules.push_back(port);
  // Register file: the NCNT = 16 N + 2 C + 1 counters in one block RAM (NCNT x 64 bits, 512 words
  // per RAMB36), each with a PW-bit pending count, a valid bit and a place in the flush's one-hot
  // ring in flip-flops, flushed by a plain round robin that LO reads wait for, plus the context
  // registers (70 + N bits each, read through one multiplexer by context index) and the
  // addressed context's fields for the enable checks; the header fields (six words, 160 bits per
  // context) in distributed RAM with two read ports: RAM32M16 groups of 14 bits, 2 x 16 of them
  // per 32 contexts. 1904 LUTs + 263 LUTRAM sites, 1740 FFs, 1 BRAM36 at 4 x 10G (C = 8,
  // NCNT = 81); about 10 LUTs per counter and 122 per context (C = 2 and 8 x 100G, NCNT = 145);
  // 3271 LUTs at 4 x 10G when reads took the flush's slot for their counter.
  const long ncnt = regs_counter_count(c);
  ModuleEstimate regs{"regs",
                      1,
                      100 + 10 * ncnt + 122 * C,
                      2 * 8 * 16 * ((C + 31) / 32),
                      440 + 2 * N + ncnt * (regs_pending_bits(c) + 2) + (70 + N) * C,
                      0,
                      static_cast<double>((ncnt + 511) / 512)};
  r.modules.push_back(regs);
  // Scheduler, result builder and m_agg FIFO, with the adder tree. It looks at one context per
  // cycle, so its decision logic is per port (A1's checks, the minimum tree) and per context
  // (E, the pick); the builder selects one word from every member port (N x W) and reads the
  // context's addresses from the register file's RAM. Without the tree: 1980 LUTs at 4 x 10G
  // (2155 with an adder for E per context, 2873 when it selected the addresses of B's context from every context's
  // registers, 5633 when every (port, context) pair was evaluated every cycle). Flip-flops: E and its time per context,
  // a per-port pipeline of the heads' first beats and beats (A2, B, the issue stage), the minimum tree, the output
  // register. The header word travels beside the tree in SRLs (W + W/8 bits); the m_agg FIFO (W + W/8 + 1 bits, FD
  // beats) is block RAM when deeper than 64 beats (3 RAMB18E2 at W 64), else distributed RAM.
  ModuleEstimate sched{"sched", 1, 0, 0, 0, 0, 0};
  const long NB = clog2(plan.frame_beats + 1), BW = clog2(plan.mem_beats);
  sched.luts = tree.luts + 1882 + 26 * C + (N * W * 434) / 1000;
  sched.ffs = tree.ffs + 600 + 66 * C + 2 * N * C + N * (3 * (BW + NB) + 38) + W / 2;
  sched.lutram = tree.lutram + (W + BB) * std::max<long>(1, (c.addtree_latency + 15) / 32);
  {
    const long fw = W + BB + 1, fd = plan.agg_fifo;
    if (fd > 64) {
      sched.bram36 = static_cast<double>(((fw + 35) / 36) * ((fd + 511) / 512)) / 2;
    } else {
      sched.lutram += fd <= 32 ? 8 * ((fw + 13) / 14) : 8 * ((fw + 6) / 7);
    }
  }
  r.modules.push_back(sched);
  // The top: every port, the scheduler (tree included) and the register file.
  r.luts = N * port.luts + sched.luts + regs.luts;
  r.lutram = N * port.lutram + sched.lutram + regs.lutram;
  r.ffs = N * port.ffs + sched.ffs + regs.ffs;
  r.bram36 = static_cast<long>(std::ceil(N * port.bram36 + sched.bram36 + regs.bram36));
  r.dsps = N * port.dsps + sched.dsps;
  return r;
}

}  // namespace panama
