// The floating-point adder's Verilog (its plan, sizes and steps are gen/config/fpadd_plan.cpp's).
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
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

#include "emit.h"
#include "fpadd.h"

namespace panama {
namespace {

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

// The Verilog of each step of the plan (gen/config/fpadd_plan.cpp): ${x} reads the previous boundary's
// signal x, @{x} is this step's output x (declared by emit_fpadd from the step's outs), %{x} a local.
struct AdderText : AdderSizes {
  using AdderSizes::AdderSizes;
  std::string classify() const;
  std::string swap() const;
  std::string align() const;
  std::string add() const;
  std::string lzc(bool split) const;
  std::string normalize(bool split) const;
  std::string round() const;
  // The body of step i (kAdderLzcStep and the others in adder_steps order).
  std::string body(size_t i, bool split) const;
  static std::string n(int v) { return std::to_string(v); }
};

// 1. Classify both operands, flush subnormal inputs in ftz mode, compare magnitudes.
std::string AdderText::classify() const {
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
  return b.str();
}

// 2. Swap so that x is the larger magnitude; exponent difference.
std::string AdderText::swap() const {
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
  return b.str();
}

// 3. Align the smaller significand; shifted-out bits OR into sticky.
std::string AdderText::align() const {
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
  return b.str();
}

// 4. Add or subtract the significands (x >= y, so the difference is never negative).
std::string AdderText::add() const {
  std::ostringstream b;
  b << "  wire [" << S - 1 << ":0] %{xe} = {1'b0, ${sig_x}, 3'b000};\n";
  b << "  wire [" << S - 1 << ":0] %{ye} = {1'b0, ${y_al}};\n";
  b << "  // One adder: x + (y ^ sub) + sub, the carry-in entering through an extra low bit.\n";
  b << "  /* verilator lint_off UNUSEDSIGNAL */\n";
  b << "  wire [" << S << ":0] %{wide} = {%{xe}, 1'b1} + {%{ye} ^ {" << S << "{${sub}}}, ${sub}};\n";
  b << "  /* verilator lint_on UNUSEDSIGNAL */\n";
  b << "  assign @{sum} = %{wide}[" << S << ":1];\n";
  return b.str();
}

// 5. Leading zeros of the sum, limited so that the exponent stays >= 1.
std::string AdderText::lzc(bool split) const {
  std::ostringstream b;
  const std::string lz_raw = emit_lzc(b, "z", "${sum}", S);
  const int CW = std::max(E, LZW);
  auto ext = [&](const std::string& x, int w) { return w < CW ? "{" + n(CW - w) + "'d0, " + x + "}" : x; };
  b << "  wire [" << LZW - 1 << ":0] %{lz_raw} = " << lz_raw << ";\n";
  b << "  wire %{limit} = " << ext("%{lz_raw}", LZW) << " > " << ext("${ex_eff}", E) << ";\n";
  b << "  assign @{lz} = %{limit} ? ${ex_eff}[" << LZW - 1 << ":0] : %{lz_raw};\n";
  if (!split) {
    return b.str();
  }
  b << "  assign @{hidden} = ~%{limit} & (|${sum});\n";
  b << "  wire %{ovf} = ${sum}[" << S - 1 << "] & (${ex_eff} == " << E << "'d" << (1L << E) - 2 << ");\n";
  b << "  assign @{inf_any} = ${nan} | ${inf};\n";
  b << "  assign @{special} = ${nan} | ${inf} | %{ovf};\n";
  return b.str();
}

// 6. Normalise: shift left by lz, exponent = ex_eff + 1 - lz.
std::string AdderText::normalize(bool split) const {
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
  return b.str();
}

// 7. Round to nearest even: one increment of {exponent, fraction}.
std::string AdderText::round() const {
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
  return b.str();
}

std::string AdderText::body(size_t i, bool split) const {
  switch (i) {
    case 0:
      return classify();
    case 1:
      return swap();
    case 2:
      return align();
    case 3:
      return add();
    case kAdderLzcStep:
      return lzc(split);
    case 5:
      return normalize(split);
    case 6:
      return round();
  }
  throw std::logic_error("fpadd: no step " + std::to_string(i));
}

}  // namespace

std::string emit_fpadd(const Config& c) {
  const AdderText text(c.fmt, c.in.subnormals == Subnormals::ftz);
  const bool split = c.adder.reg_after.at(kAdderLzcStep);
  const auto steps = adder_steps(text, DelayModel{}, split);
  const int W = text.W;
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
    const AdderStep& s = steps[i];
    const std::string pre = "s" + std::to_string(i + 1) + "_";
    v << "  // ---- step " << i + 1 << ": " << s.name << " (" << std::round(s.delay * 100) / 100 << " ns est.)\n";
    for (const auto& o : s.outs) v << "  wire [" << o.second - 1 << ":0] " << pre << o.first << ";\n";
    v << fill_template(text.body(i, split), "$@%", [&](char sigil, const std::string& name) {
      if (sigil != '$') return pre + name;
      auto it = cur.find(name);
      if (it == cur.end()) throw std::logic_error("fpadd step " + s.name + " reads unknown " + name);
      return it->second;
    });
    // The boundary after this step: every output plus the forwarded signals.
    std::map<std::string, std::string> next;
    for (const auto& sg : adder_boundary(steps, i)) {
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

}  // namespace panama
