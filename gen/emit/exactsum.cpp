// The exact-sum adder tree's Verilog (--sum exact); the lane's plan is gen/config/exactsum_plan.cpp's.
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
#include <cmath>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

#include "emit.h"
#include "exactsum.h"

namespace panama {
namespace {

std::string n(long v) { return std::to_string(v); }

// Live signals of the pipeline: a register stage registers every live signal.
class Pipe {
 public:
  std::ostringstream v;
  long ffs = 0;
  int stages = 0;

  const std::string& get(const std::string& k) const {
    auto it = live_.find(k);
    if (it == live_.end()) throw std::logic_error("exactlane: no live signal " + k);
    return it->second.name;
  }
  std::string tmp(int w, const std::string& expr, const std::string& hint) {
    const std::string nm = hint + "_" + n(seq_++);
    v << "  wire [" << w - 1 << ":0] " << nm << " = " << expr << ";\n";
    return nm;
  }
  void def(const std::string& k, int w, const std::string& expr) { live_[k] = {tmp(w, expr, k), w}; }
  void drop(const std::string& k) { live_.erase(k); }
  void reg() {
    ++stages;
    v << "  // ---- register stage " << stages << "\n";
    for (auto& kv : live_) {
      const std::string q = kv.first + "_q" + n(stages);
      v << "  reg  [" << kv.second.width - 1 << ":0] " << q << ";\n";
      v << "  always @(posedge clk) " << q << " <= " << kv.second.name << ";\n";
      kv.second.name = q;
      ffs += kv.second.width;
    }
  }

 private:
  struct Sig {
    std::string name;
    int width;
  };
  std::map<std::string, Sig> live_;
  int seq_ = 0;
};

// A tree priority encoder: position of the leading one of src[width-1:0] (0 if none) and
// whether any bit is set. Returns {valid, pos} names; pos has clog2(width) bits (width >= 2).
std::pair<std::string, std::string> emit_lead(Pipe& p, const std::string& src, int width) {
  const int PW = clog2(width);
  std::function<std::pair<std::string, std::string>(int, int)> node = [&](int lo, int lvl) {
    if (lvl == 1) {
      const std::string b0 = lo < width ? src + "[" + n(lo) + "]" : "1'b0";
      const std::string b1 = lo + 1 < width ? src + "[" + n(lo + 1) + "]" : "1'b0";
      return std::make_pair(p.tmp(1, b1 + " | " + b0, "lv"), p.tmp(1, b1, "lp"));
    }
    const int half = 1 << (lvl - 1);
    if (lo + half >= width) {  // the high half is padding: only the low half counts
      auto l = node(lo, lvl - 1);
      return std::make_pair(l.first, p.tmp(lvl, "{1'b0, " + l.second + "}", "lp"));
    }
    auto h = node(lo + half, lvl - 1), l = node(lo, lvl - 1);
    return std::make_pair(p.tmp(1, h.first + " | " + l.first, "lv"),
                          p.tmp(lvl, h.first + " ? {1'b1, " + h.second + "} : {1'b0, " + l.second + "}", "lp"));
  };
  return node(0, PW);
}

// The body of each pipeline step of the plan (gen/config/exactsum_plan.cpp), on the sizes of one lane.
struct ExactLane : ExactSizes {
  using ExactSizes::ExactSizes;
  void decode(Pipe& p) const;
  void csa(Pipe& p, int in_ops, int lv) const;
  void cpa(Pipe& p, int w, int lo, int lv, bool first, bool last) const;
  void negate(Pipe& p, int w, int lo, bool first, bool last) const;
  void lzc(Pipe& p) const;
  void shift(Pipe& p) const;
  void round(Pipe& p) const;
  void step(Pipe& p, const ExactStep& s) const;
};

// Leaves to A-bit two's-complement operands (plus one operand counting the negative leaves, the
// +1s of their negation), and the NaN, infinity and negative-zero flags.
void ExactLane::decode(Pipe& p) const {
  std::string nan_any, pinf, ninf, allnz, nneg;
  for (int i = 0; i < N; ++i) {
    const std::string L = "data[" + n(i * W + W - 1) + ":" + n(i * W) + "]";
    const std::string en = "mask[" + n(i) + "]";
    const std::string lf = p.tmp(W, L, "leaf");
    const std::string ex = lf + "[" + n(W - 2) + ":" + n(F) + "]", fr = lf + "[" + n(F - 1) + ":0]";
    const std::string s = lf + "[" + n(W - 1) + "]";
    const std::string emax = p.tmp(1, "&" + ex, "emax"), ez = p.tmp(1, "~|" + ex, "ez");
    const std::string fz = p.tmp(1, "~|" + fr, "fz");
    const std::string isnan = p.tmp(1, en + " & " + emax + " & ~" + fz, "isnan");
    const std::string isinf = p.tmp(1, en + " & " + emax + " & " + fz, "isinf");
    // fin: contributes its value (a subnormal is a zero of its sign in ftz mode).
    const std::string fin = p.tmp(1, en + " & ~" + emax + (ftz ? " & ~" + ez : std::string()), "fin");
    const std::string zero = ftz ? ez : p.tmp(1, ez + " & " + fz, "zero");
    const std::string nz = p.tmp(1, "~" + en + " | (" + s + " & " + zero + ")", "nz");
    const std::string sig = p.tmp(
        F + 1, "{" + (ftz ? std::string("1'b1") : "~" + ez) + ", " + fr + "} & {" + n(F + 1) + "{" + fin + "}}", "sig");
    const std::string sh = p.tmp(E, ez + " ? " + n(E) + "'d0 : " + ex + " - " + n(E) + "'d1", "sh");
    const std::string mag = p.tmp(M, "{" + n(M - F - 1) + "'d0, " + sig + "} << " + sh, "mag");
    const std::string neg = p.tmp(1, fin + " & " + s, "neg");
    // -x = ~x + 1: the +1s are added as one operand, the count of negative leaves.
    p.def("o0_" + n(i), A, "{" + n(A - M) + "'d0, " + mag + "} ^ {" + n(A) + "{" + neg + "}}");
    auto join = [](std::string& acc, const std::string& op, const std::string& t) {
      acc = acc.empty() ? t : acc + " " + op + " " + t;
    };
    join(nan_any, "|", isnan);
    join(pinf, "|", "(" + isinf + " & ~" + s + ")");
    join(ninf, "|", "(" + isinf + " & " + s + ")");
    join(allnz, "&", nz);
    join(nneg, "+", "{" + n(CW - 1) + "'d0, " + neg + "}");
  }
  const std::string pi = p.tmp(1, pinf, "pinf"), ni = p.tmp(1, ninf, "ninf");
  p.def("f_nan", 1, nan_any + " | (" + pi + " & " + ni + ")");
  p.def("f_inf", 1, pi + " | " + ni);
  p.def("f_infs", 1, ni);
  p.def("f_nz", 1, allnz);
  const std::string cnt = p.tmp(CW, nneg, "nneg");
  p.def("o0_" + n(N), A, "{" + n(A - CW) + "'d0, " + cnt + "}");
}

// Carry-save level lv: groups of three become a sum and a shifted carry (mod 2^A).
void ExactLane::csa(Pipe& p, int in_ops, int lv) const {
  int o = 0;
  for (int g = 0; g + 3 <= in_ops; g += 3) {
    const std::string a = p.get("o" + n(lv) + "_" + n(g)), b = p.get("o" + n(lv) + "_" + n(g + 1)),
                      c = p.get("o" + n(lv) + "_" + n(g + 2));
    p.def("o" + n(lv + 1) + "_" + n(o++), A, a + " ^ " + b + " ^ " + c);
    const std::string maj =
        p.tmp(A - 1,
              "(" + a + "[" + n(A - 2) + ":0] & " + b + "[" + n(A - 2) + ":0]) | (" + a + "[" + n(A - 2) + ":0] & " +
                  c + "[" + n(A - 2) + ":0]) | (" + b + "[" + n(A - 2) + ":0] & " + c + "[" + n(A - 2) + ":0])",
              "maj");
    p.def("o" + n(lv + 1) + "_" + n(o++), A, "{" + maj + ", 1'b0}");
  }
  for (int g = (in_ops / 3) * 3; g < in_ops; ++g)
    p.def("o" + n(lv + 1) + "_" + n(o++), A, p.get("o" + n(lv) + "_" + n(g)));
  for (int g = 0; g < in_ops; ++g) p.drop("o" + n(lv) + "_" + n(g));
}

// One segment of the carry-propagate addition of the last two operands.
void ExactLane::cpa(Pipe& p, int w, int lo, int lv, bool first, bool last) const {
  const std::string X = first ? p.get("o" + n(lv) + "_0") : p.get("cx");
  const std::string Y = first ? p.get("o" + n(lv) + "_1") : p.get("cy");
  const int rest = A - lo;  // bits of X and Y still to add
  const std::string cin = first ? std::string("1'b0") : p.get("cc");
  const std::string t = p.tmp(
      w + 1,
      "{1'b0, " + X + "[" + n(w - 1) + ":0]} + {1'b0, " + Y + "[" + n(w - 1) + ":0]} + {" + n(w) + "'d0, " + cin + "}",
      "cpa");
  const std::string low = first ? t + "[" + n(w - 1) + ":0]" : "{" + t + "[" + n(w - 1) + ":0], " + p.get("cs") + "}";
  p.def("cs", lo + w, low);
  if (!last) {
    p.def("cx", rest - w, X + "[" + n(rest - 1) + ":" + n(w) + "]");
    p.def("cy", rest - w, Y + "[" + n(rest - 1) + ":" + n(w) + "]");
    p.def("cc", 1, t + "[" + n(w) + "]");
  } else {
    p.drop("cx");
    p.drop("cy");
    p.drop("cc");
  }
  if (first) {
    p.drop("o" + n(lv) + "_0");
    p.drop("o" + n(lv) + "_1");
  }
}

// One segment of |S| = (S ^ sign) + sign over A - 1 bits.
void ExactLane::negate(Pipe& p, int w, int lo, bool first, bool last) const {
  if (first) {
    const std::string S = p.get("cs");
    p.def("sgn", 1, S + "[" + n(A - 1) + "]");
    p.def("nx", A - 1, S + "[" + n(A - 2) + ":0]");
    p.drop("cs");
  }
  const std::string X = p.get("nx"), sg = p.get("sgn");
  const int rest = A - 1 - lo;
  const std::string cin = first ? sg : p.get("nc");
  const std::string t = p.tmp(
      w + 1, "{1'b0, " + X + "[" + n(w - 1) + ":0] ^ {" + n(w) + "{" + sg + "}}} + {" + n(w) + "'d0, " + cin + "}",
      "neg");
  const std::string low = first ? t + "[" + n(w - 1) + ":0]" : "{" + t + "[" + n(w - 1) + ":0], " + p.get("mag") + "}";
  p.def("mag", lo + w, low);
  if (!last) {
    p.def("nx", rest - w, X + "[" + n(rest - 1) + ":" + n(w) + "]");
    p.def("nc", 1, t + "[" + n(w) + "]");
  } else {
    p.drop("nx");
    p.drop("nc");
  }
}

void ExactLane::lzc(Pipe& p) const {
  auto r = emit_lead(p, p.get("mag"), A - 1);
  p.def("nonzero", 1, r.first);
  p.def("pos", PW, r.second);
}

void ExactLane::shift(Pipe& p) const {
  const std::string pos = p.get("pos"), mag = p.get("mag");
  p.def("sh", PW,
        "(" + pos + " >= " + n(PW) + "'d" + n(F) + ") ? " + pos + " - " + n(PW) + "'d" + n(F) + " : " + n(PW) + "'d0");
  const std::string sh = p.get("sh");
  const std::string ext = p.tmp(A, "{" + mag + ", 1'b0}", "ext");
  const std::string shd = p.tmp(A, ext + " >> " + sh, "shd");
  p.def("sig", F + 1, shd + "[" + n(F + 1) + ":1]");
  p.def("guard", 1, shd + "[0]");
  p.def("sticky", 1, "|(" + ext + " & ~({" + n(A) + "{1'b1}} << " + sh + "))");
  p.drop("pos");
  p.drop("mag");
}

void ExactLane::round(Pipe& p) const {
  const std::string sig = p.get("sig"), sh = p.get("sh");
  // The hidden bit at F adds one to the exponent field; a subnormal (sh = 0) has none.
  const std::string packed =
      p.tmp(PK, "{" + n(PK - F - PW) + "'d0, " + sh + ", " + n(F) + "'d0} + {" + n(PK - F - 1) + "'d0, " + sig + "}",
            "packed");
  const std::string ru = p.tmp(1, p.get("guard") + " & (" + p.get("sticky") + " | " + sig + "[0])", "ru");
  const std::string rd = p.tmp(PK, packed + " + {" + n(PK - 1) + "'d0, " + ru + "}", "rounded");
  const std::string inf_at = n(PK) + "'d" + n(((1L << E) - 1) << F);
  const std::string ovf = p.tmp(1, rd + " >= " + inf_at, "ovf");
  const std::string s = p.get("sgn");
  const std::string INF = "{" + n(E) + "'h" + [&] {
    std::ostringstream o;
    o << std::hex << ((1 << E) - 1);
    return o.str();
  }() + ", " + n(F) + "'d0}";
  std::ostringstream nan;
  nan << W << "'h" << std::hex << canonical_nan;
  std::string fin = "{" + s + ", " + rd + "[" + n(E + F - 1) + ":0]}";
  if (ftz)  // a result below the smallest normal (exponent field 0 after rounding) is a zero
    fin = "(" + rd + " < " + n(PK) + "'d" + n(1L << F) + ") ? {" + s + ", " + n(E + F) + "'d0} : " + fin;
  p.def("y", W,
        p.get("f_nan") + " ? " + nan.str() + " : " + p.get("f_inf") + " ? {" + p.get("f_infs") + ", " + INF + "} : ~" +
            p.get("nonzero") + " ? {" + p.get("f_nz") + ", " + n(E + F) + "'d0} : " + ovf + " ? {" + s + ", " + INF +
            "} : " + fin);
  for (const char* k : {"sig", "sh", "guard", "sticky", "sgn", "nonzero", "f_nan", "f_inf", "f_infs", "f_nz"})
    p.drop(k);
}

void ExactLane::step(Pipe& p, const ExactStep& s) const {
  using K = ExactStep::Kind;
  switch (s.kind) {
    case K::decode:
      return decode(p);
    case K::csa:
      return csa(p, s.ops, s.level);
    case K::cpa:
      return cpa(p, s.w, s.lo, s.level, s.first, s.last);
    case K::neg:
      return negate(p, s.w, s.lo, s.first, s.last);
    case K::lzc:
      return lzc(p);
    case K::shift:
      return shift(p);
    case K::round:
      return round(p);
  }
}

// The lane module's body and its flip-flop count.
std::pair<std::string, long> lane_body(const Config& c) {
  const ExactLane x(c.fmt, c.in.subnormals == Subnormals::ftz, c.in.ports);
  const auto steps = exact_steps(x, c.in.mhz, DelayModel{});
  Pipe p;
  for (size_t i = 0; i < steps.size(); ++i) {
    p.v << "  // ---- step " << steps[i].name << " (" << std::round(steps[i].delay * 100) / 100 << " ns est.)\n";
    x.step(p, steps[i]);
    if (c.exact.reg_after.at(i)) p.reg();
  }
  p.v << "  assign y = " << p.get("y") << ";\n";
  return {p.v.str(), p.ffs};
}

}  // namespace

std::string emit_exactlane(const Config& c) {
  const int N = c.in.ports, W = c.elem_bits;
  const ExactWidths xw = exact_widths(c.fmt, N);
  std::ostringstream v;
  v << "// Accumulator: " << xw.acc_bits << " bits (" << xw.mag_bits
    << "-bit leaf magnitudes in units of the smallest\n"
    << "// subnormal, " << clog2(N) << " bits of growth, sign); latency " << c.exact.latency << ".\n";
  v << "module " << c.module_name("exactlane") << " (\n"
    << "  input  wire clk,\n"
    << "  // 1 = port p is a member; an absent port's leaf is -0.0.\n"
    << "  input  wire [" << N - 1 << ":0] mask,\n"
    << "  // Port p's element at [p*WIDTH +: WIDTH].\n"
    << "  input  wire [" << N * W - 1 << ":0] data,\n"
    << "  output wire [" << W - 1 << ":0] y\n"
    << ");\n\n";
  const auto [body, ffs] = lane_body(c);
  // The area estimate counts the plan's live bits (exactlane_flipflops): they must be these.
  if (ffs != exactlane_flipflops(c))
    throw std::logic_error("exactlane: the plan counts " + std::to_string(exactlane_flipflops(c)) +
                           " flip-flops, the Verilog has " + std::to_string(ffs));
  v << "  /* verilator lint_off UNUSEDSIGNAL */\n";
  v << body;
  v << "  /* verilator lint_on UNUSEDSIGNAL */\n";
  v << "\nendmodule\n";
  return v.str();
}

std::string emit_exact_addtree(const Config& c) {
  const int N = c.in.ports, WD = c.elem_bits, L = c.addtree_latency;
  std::ostringstream v;
  v << addtree_header(c);
  v << "  // Cycles from a beat in to its sum out (one exact accumulation per lane).\n  localparam LATENCY = " << L
    << ";\n\n";
  v << addtree_valid_and_lanes(L);
  v << "      wire [" << N * WD - 1 << ":0] leaves = {";
  for (int p = N - 1; p >= 0; --p) v << "in_data[(" << p << "*LANES + lane)*WIDTH +: WIDTH]" << (p ? ", " : "");
  v << "};\n";
  v << "      " << c.module_name("exactlane")
    << " u_lane (.clk(clk), .mask(in_mask), .data(leaves), .y(out_data[lane*WIDTH +: WIDTH]));\n";
  v << "    end\n";
  v << "  endgenerate\n\n";
  v << "endmodule\n";
  return v.str();
}

}  // namespace panama
