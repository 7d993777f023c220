// The model's own arithmetic of exact-sum mode (numerics.md "Exact-sum mode"). Independent of the
// RTL (gen/emit/exactsum.cpp) and of the tests' reference (testbench/exact_ref.h): a superaccumulator
// of signed 64-bit digits in radix 2^32 (no carries while adding), normalised once, then the top
// 64 bits as a window plus a sticky bit are rounded to the format.
#pragma once

#include <cstdint>
#include <vector>

namespace panama::model_exact {

class Sum {
 public:
  // E exponent bits, F fraction bits, canonical NaN; ftz flushes subnormal leaves and results.
  Sum(int e, int f, uint32_t qnan, bool ftz)
      : E_(e), F_(f), qnan_(qnan), ftz_(ftz), d_(static_cast<size_t>(((1 << e) + f + 40) / 32 + 2), 0) {}

  // One member's leaf (absent members are simply not added: they are -0.0).
  void add(uint32_t x) {
    const int W = 1 + E_ + F_;
    const bool neg = (x >> (W - 1)) & 1u;
    const uint32_t ef = (x >> F_) & ((1u << E_) - 1), fr = x & ((1u << F_) - 1);
    if (ef == (1u << E_) - 1) {
      if (fr)
        nan_ = true;
      else
        (neg ? ninf_ : pinf_) = true;
      only_neg_zero_ = false;
      return;
    }
    if (ef == 0 && (fr == 0 || ftz_)) {
      only_neg_zero_ = only_neg_zero_ && neg;
      return;
    }
    only_neg_zero_ = false;
    const int64_t sig = ef ? static_cast<int64_t>(fr | (1u << F_)) : fr;
    const int pos = ef ? static_cast<int>(ef) - 1 : 0;  // in units of the smallest subnormal
    const int64_t v = sig << (pos % 32);                // < 2^56
    const size_t k = static_cast<size_t>(pos / 32);
    const int64_t lo = v & 0xFFFFFFFF, hi = v >> 32;
    d_[k] += neg ? -lo : lo;
    d_[k + 1] += neg ? -hi : hi;
  }

  uint32_t result() {
    const int W = 1 + E_ + F_;
    const uint32_t sbit = 1u << (W - 1), inf = ((1u << E_) - 1) << F_;
    if (nan_ || (pinf_ && ninf_)) return qnan_;
    if (pinf_ || ninf_) return (ninf_ ? sbit : 0) | inf;
    // Normalise: every digit but the last into [0, 2^32); the last keeps the sign.
    for (size_t i = 0; i + 1 < d_.size(); ++i) {
      const int64_t c = d_[i] >> 32;  // arithmetic shift: floor division
      d_[i] -= c * (int64_t{1} << 32);
      d_[i + 1] += c;
    }
    bool negative = d_.back() < 0;
    if (negative) {  // magnitude: negate all digits and normalise again
      for (auto& x : d_) x = -x;
      for (size_t i = 0; i + 1 < d_.size(); ++i) {
        const int64_t c = d_[i] >> 32;
        d_[i] -= c * (int64_t{1} << 32);
        d_[i + 1] += c;
      }
    }
    int top = -1;
    for (size_t i = d_.size(); i-- > 0 && top < 0;)
      if (d_[i]) top = static_cast<int>(i) * 32 + 63 - __builtin_clzll(static_cast<uint64_t>(d_[i]));
    if (top < 0) return only_neg_zero_ ? sbit : 0;
    const uint32_t sg = negative ? sbit : 0;
    // Window: bits [top-63, top] (or [0, top]) as an integer, sticky for anything below it.
    const int low = top >= 63 ? top - 63 : 0;
    uint64_t win = 0;
    bool sticky = false;
    for (int b = top; b >= low; --b) win = (win << 1) | bit(b);
    for (int b = 0; b < low && !sticky; ++b) sticky = bit(b);
    // The result's grid: F + 1 bits below the leading one, never finer than the subnormal grid.
    const int grid = top - F_ > 0 ? top - F_ : 0;                      // bit index of the result's unit
    if (top < F_) return ftz_ ? sg : sg | static_cast<uint32_t>(win);  // subnormal: exact
    const int drop = grid - low;                                       // window bits below the unit
    uint64_t q = drop > 0 ? win >> drop : win;
    if (drop > 0) {
      const uint64_t rem = win & ((uint64_t{1} << drop) - 1), half = uint64_t{1} << (drop - 1);
      if (rem > half || (rem == half && (sticky || (q & 1)))) ++q;  // ties to even
    }
    int expo = grid + 1;  // biased exponent field of a significand with its hidden bit at F
    if (q >> (F_ + 1)) {
      q >>= 1;
      ++expo;
    }
    if (expo >= (1 << E_) - 1) return sg | inf;
    return sg | (static_cast<uint32_t>(expo) << F_) | (static_cast<uint32_t>(q) & ((1u << F_) - 1));
  }

 private:
  uint32_t bit(int b) const { return static_cast<uint32_t>((d_[static_cast<size_t>(b / 32)] >> (b % 32)) & 1); }
  int E_, F_;
  uint32_t qnan_;
  bool ftz_;
  std::vector<int64_t> d_;
  bool nan_ = false, pinf_ = false, ninf_ = false, only_neg_zero_ = true;
};

}  // namespace panama::model_exact
