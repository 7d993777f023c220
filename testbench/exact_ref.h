// The tests' reference of exact-sum mode (numerics.md "Exact-sum mode"): the exact sum of the
// leaves in a wide integer, rounded once. Written for the tests only: it shares nothing with the
// RTL emitter (gen/emit/exactsum.cpp) nor the SystemC model, and is itself checked against rational
// arithmetic by tests/exact_ref_check.py.
//
// Method: positive and negative leaves go to two unsigned accumulators (base 2^32 limbs) in
// units of the smallest subnormal; the magnitude is the larger minus the smaller; rounding keeps
// F + 1 bits below the leading one (or the subnormal grid) with half and sticky bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace panama::xref {

struct Fmt {
  int E, F;
  uint32_t qnan;
};
inline Fmt fp32() { return {8, 23, 0x7FC00000u}; }
inline Fmt bf16() { return {8, 7, 0x7FC0u}; }
inline Fmt fp16() { return {5, 10, 0x7E00u}; }
// By the format's name in the spec ("fp32", "bf16", "fp16"); another name throws.
inline Fmt fmt_named(const std::string& name) {
  if (name == "fp32") return fp32();
  if (name == "bf16") return bf16();
  if (name == "fp16") return fp16();
  throw std::invalid_argument("unknown format '" + name + "'");
}

class Big {
 public:
  explicit Big(int bits) : l_((bits + 31) / 32 + 2, 0) {}
  void add_shifted(uint64_t v, int shift) {  // v < 2^32
    size_t i = static_cast<size_t>(shift / 32);
    uint64_t carry = v << (shift % 32);
    while (carry) {
      const uint64_t t = static_cast<uint64_t>(l_.at(i)) + (carry & 0xFFFFFFFFu);
      l_[i] = static_cast<uint32_t>(t);
      carry = (carry >> 32) + (t >> 32);
      ++i;
    }
  }
  int cmp(const Big& o) const {
    for (size_t i = l_.size(); i-- > 0;)
      if (l_[i] != o.l_[i]) return l_[i] < o.l_[i] ? -1 : 1;
    return 0;
  }
  void sub(const Big& o) {  // *this -= o, *this >= o
    int64_t borrow = 0;
    for (size_t i = 0; i < l_.size(); ++i) {
      int64_t t = static_cast<int64_t>(l_[i]) - o.l_[i] - borrow;
      borrow = t < 0;
      l_[i] = static_cast<uint32_t>(t + (borrow << 32));
    }
  }
  bool bit(int k) const { return k >= 0 && (l_[static_cast<size_t>(k / 32)] >> (k % 32)) & 1u; }
  bool any_below(int k) const {  // some bit at index < k
    for (int i = 0; i < k; ++i)
      if (bit(i)) return true;
    return false;
  }
  int top() const {  // index of the leading one, -1 for zero
    for (size_t i = l_.size(); i-- > 0;)
      if (l_[i])
        for (int b = 31; b >= 0; --b)
          if ((l_[i] >> b) & 1u) return static_cast<int>(i * 32) + b;
    return -1;
  }

 private:
  std::vector<uint32_t> l_;
};

// The exact sum of the members' leaves (non-members are -0.0), rounded once to the format.
inline uint32_t exact_sum(const Fmt& f, bool ftz, const std::vector<uint32_t>& leaves,
                          const std::vector<bool>& member) {
  const int W = 1 + f.E + f.F;
  const uint32_t emask = (1u << f.E) - 1, fmask = (1u << f.F) - 1;
  const int bits = f.F + (1 << f.E) + 16;
  Big pos(bits), neg(bits);
  bool nan = false, pinf = false, ninf = false, all_neg_zero = true;
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!member[i]) continue;  // -0.0: changes neither the sum nor the sign rule
    const uint32_t x = leaves[i];
    const bool s = (x >> (W - 1)) & 1u;
    const uint32_t e = (x >> f.F) & emask, m = x & fmask;
    if (e == emask) {
      if (m)
        nan = true;
      else
        (s ? ninf : pinf) = true;
      all_neg_zero = false;
      continue;
    }
    if (e == 0 && (m == 0 || ftz)) {  // a zero, or a subnormal that counts as one
      if (!s) all_neg_zero = false;
      continue;
    }
    all_neg_zero = false;
    // value = sig * 2^(max(e,1) - 1) smallest subnormals
    const uint64_t sig = e ? (m | (1u << f.F)) : m;
    (s ? neg : pos).add_shifted(sig, e ? static_cast<int>(e) - 1 : 0);
  }
  const uint32_t sign_bit = 1u << (W - 1);
  const uint32_t inf = emask << f.F;
  if (nan || (pinf && ninf)) return f.qnan;
  if (pinf) return inf;
  if (ninf) return sign_bit | inf;
  const int c = pos.cmp(neg);
  if (c == 0) return all_neg_zero ? sign_bit : 0;
  const uint32_t sg = c < 0 ? sign_bit : 0;
  Big mag = c < 0 ? neg : pos;
  mag.sub(c < 0 ? pos : neg);
  const int t = mag.top();
  if (t < f.F) {  // below the smallest normal: exact on the subnormal grid
    if (ftz) return sg;
    uint32_t v = 0;
    for (int k = 0; k < f.F; ++k) v |= static_cast<uint32_t>(mag.bit(k)) << k;
    return sg | v;
  }
  int shift = t - f.F;
  uint64_t keep = 0;
  for (int k = 0; k <= f.F; ++k) keep |= static_cast<uint64_t>(mag.bit(shift + k)) << k;
  const bool half = mag.bit(shift - 1), rest = mag.any_below(shift - 1);
  if (half && (rest || (keep & 1))) ++keep;
  if (keep >> (f.F + 1)) {
    keep >>= 1;
    ++shift;
  }
  const long biased = shift + 1;
  if (biased >= static_cast<long>(emask)) return sg | inf;
  return sg | (static_cast<uint32_t>(biased) << f.F) | (static_cast<uint32_t>(keep) & fmask);
}

}  // namespace panama::xref
