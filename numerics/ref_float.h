// The arithmetic reference of numerics.md: the host CPU's own addition.
//
// fp32: an SSE `addss` (ordinary C++ float addition on x86-64) with MXCSR set for the mode
// (ieee: FTZ = DAZ = 0; ftz: FTZ = DAZ = 1), NaN results canonicalised.
// bf16/fp16: the exact sum in double, rounded once to the format (roundTiesToEven), with
// subnormals kept (ieee) or flushed on input and output (ftz).
//
// Header-only so that tests, the SystemC model and the host driver use the same reference;
// the RTL's arithmetic comes from the generator and shares nothing with this file.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
#include <xmmintrin.h>

#include "format.h"

namespace panama::ref {

// The format type is panama::Format (format.h); these names are the reference's own spelling.
using Fmt = panama::Format;
using FmtBits = panama::FormatBits;

inline FmtBits fmt_bits(Fmt f) { return panama::format_bits(f); }

// Sets MXCSR for the duration of a scope (FTZ bit 15, DAZ bit 6), restoring it afterwards.
class MxcsrScope {
 public:
  explicit MxcsrScope(bool ftz) : saved_(_mm_getcsr()) {
    unsigned v = saved_ & ~(0x8000u | 0x0040u);
    if (ftz) v |= 0x8000u | 0x0040u;
    _mm_setcsr(v);
  }
  ~MxcsrScope() { _mm_setcsr(saved_); }
  MxcsrScope(const MxcsrScope&) = delete;
  MxcsrScope& operator=(const MxcsrScope&) = delete;

 private:
  unsigned saved_;
};

inline float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// fp32 add on the host's SSE unit; the caller holds an MxcsrScope for the mode.
inline uint32_t add_fp32_sse(uint32_t a, uint32_t b) {
  volatile float fa = bits_to_float(a), fb = bits_to_float(b);  // keep it a run-time addss
  float r = fa + fb;
  if (std::isnan(r)) return 0x7FC00000u;
  return float_to_bits(r);
}

// Value of a 16-bit format's bit pattern as a double (exact); ftz flushes subnormals to +-0.
inline double half_to_double(uint32_t h, const FmtBits& f, bool ftz) {
  const uint32_t sign = (h >> (f.width - 1)) & 1u;
  const uint32_t e = (h >> f.frac_bits) & ((1u << f.exp_bits) - 1);
  const uint32_t m = h & ((1u << f.frac_bits) - 1);
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  double v;
  if (e == (1u << f.exp_bits) - 1) {
    v = m ? NAN : INFINITY;
  } else if (e == 0) {
    v = ftz ? 0.0 : std::ldexp(static_cast<double>(m), 1 - bias - f.frac_bits);
  } else {
    v = std::ldexp(static_cast<double>(m | (1u << f.frac_bits)), static_cast<int>(e) - bias - f.frac_bits);
  }
  return sign ? -v : v;
}

// Rounds a double to a 16-bit format once, roundTiesToEven, overflow to infinity;
// ftz: a result that is subnormal after rounding becomes zero of its sign.
inline uint32_t double_to_half(double v, const FmtBits& f, bool ftz) {
  const uint32_t sign = std::signbit(v) ? 1u : 0u;
  const uint32_t sbit = sign << (f.width - 1);
  if (std::isnan(v)) return f.qnan;
  const uint32_t emax_field = (1u << f.exp_bits) - 1;
  if (std::isinf(v)) return sbit | (emax_field << f.frac_bits);
  double a = std::fabs(v);
  if (a == 0.0) return sbit;
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const int emin = 1 - bias;
  int e;
  (void)std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1): unbiased exponent e - 1
  int exp_unb = e - 1;
  if (exp_unb < emin) exp_unb = emin;  // subnormal range: fixed quantum
  // Quantum (ulp) at this exponent; scale so the ulp is 1, then round to an integer (RNE).
  const double scaled = std::ldexp(a, f.frac_bits - exp_unb);
  double r = std::nearbyint(scaled);  // default rounding mode: ties to even
  uint64_t sig = static_cast<uint64_t>(r);
  // sig may have reached 2^(frac_bits+1) (carry into the next binade), or be below 2^frac_bits (subnormal).
  if (sig >= (uint64_t{1} << (f.frac_bits + 1))) {
    sig >>= 1;
    exp_unb += 1;
  }
  uint32_t efield;
  if (sig < (uint64_t{1} << f.frac_bits)) {
    if (ftz) return sbit;
    efield = 0;  // subnormal (or zero)
  } else {
    efield = static_cast<uint32_t>(exp_unb + bias);
  }
  if (efield >= emax_field) return sbit | (emax_field << f.frac_bits);
  return sbit | (efield << f.frac_bits) | static_cast<uint32_t>(sig & ((uint64_t{1} << f.frac_bits) - 1));
}

// add(a, b) of numerics.md for any format. For fp32 the caller holds an MxcsrScope(ftz).
inline uint32_t add(Fmt fmt, bool ftz, uint32_t a, uint32_t b) {
  if (fmt == Fmt::fp32) return add_fp32_sse(a, b);
  const FmtBits f = fmt_bits(fmt);
  const double x = half_to_double(a, f, ftz), y = half_to_double(b, f, ftz);
  return double_to_half(x + y, f, ftz);  // exact for fp16; innocuous double rounding for bf16
}

inline uint32_t neg_zero(Fmt fmt) { return fmt == Fmt::fp32 ? 0x80000000u : 0x8000u; }

// The tree order of numerics.md: leaves over port indices padded to a power of two with -0.0.
// vals[i] is port i's element; member[i] says whether port i contributes.
inline uint32_t tree_sum(Fmt fmt, bool ftz, const std::vector<uint32_t>& vals, const std::vector<bool>& member) {
  MxcsrScope mx(ftz);
  size_t p = 1;
  while (p < vals.size()) p *= 2;
  std::vector<uint32_t> node(p, neg_zero(fmt));
  for (size_t i = 0; i < vals.size(); ++i)
    if (member[i]) node[i] = vals[i];
  while (node.size() > 1) {
    std::vector<uint32_t> up(node.size() / 2);
    for (size_t k = 0; k < up.size(); ++k) up[k] = add(fmt, ftz, node[2 * k], node[2 * k + 1]);
    node.swap(up);
  }
  return node[0];
}

}  // namespace panama::ref
