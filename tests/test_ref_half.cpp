// numerics/ref_float.h's 16-bit add (the tests' reference for bf16 and fp16 sums) against code that
// shares nothing with it: fp16 through the compiler's _Float16 (float arithmetic, rounded to half
// by the compiler's runtime), bf16 through float addition and a round-to-nearest-even on the bits.
// Both are the correctly rounded 16-bit sum: float has 24 >= 2p + 2 bits for p = 11 and 8, so
// rounding the float sum again is innocuous. numerics.md: canonical NaN 0x7E00 / 0x7FC0; ftz:
// subnormal inputs count as zero of their sign, a subnormal result becomes zero of its sign.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "ref_float.h"

namespace {

uint16_t flush_in(uint16_t v, uint16_t exp_mask) { return (v & exp_mask) == 0 ? (v & 0x8000) : v; }

uint16_t flush_out(uint16_t v, uint16_t exp_mask, bool ftz) {
  return ftz && (v & exp_mask) == 0 ? static_cast<uint16_t>(v & 0x8000) : v;
}

uint16_t fp16_add(uint16_t a, uint16_t b, bool ftz) {
  if (ftz) a = flush_in(a, 0x7C00), b = flush_in(b, 0x7C00);
  _Float16 x, y;
  std::memcpy(&x, &a, 2);
  std::memcpy(&y, &b, 2);
  const _Float16 s = static_cast<_Float16>(static_cast<float>(x) + static_cast<float>(y));
  if (s != s) return 0x7E00;
  uint16_t r;
  std::memcpy(&r, &s, 2);
  return flush_out(r, 0x7C00, ftz);
}

uint16_t bf16_add(uint16_t a, uint16_t b, bool ftz) {
  if (ftz) a = flush_in(a, 0x7F80), b = flush_in(b, 0x7F80);
  const uint32_t ua = static_cast<uint32_t>(a) << 16, ub = static_cast<uint32_t>(b) << 16;
  float x, y;
  std::memcpy(&x, &ua, 4);
  std::memcpy(&y, &ub, 4);
  const float s = x + y;
  if (std::isnan(s)) return 0x7FC0;
  uint32_t u;
  std::memcpy(&u, &s, 4);
  const uint16_t r = static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);  // ties to even
  return flush_out(r, 0x7F80, ftz);
}

// b values every a meets: zeros, the smallest and largest subnormals and normals, ones, infinities,
// NaNs, values one ulp apart, and some random ones.
std::vector<uint16_t> partners(bool bf16) {
  std::vector<uint16_t> v =
      bf16 ? std::vector<uint16_t>{0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x0081, 0x3F80, 0xBF80, 0x3F81,
                                   0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7FC0, 0x7F81, 0x4B00, 0xCB00, 0x3300, 0x0100}
           : std::vector<uint16_t>{0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x0401, 0x3C00, 0xBC00, 0x3C01,
                                   0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0x6400, 0xE400, 0x1400, 0x0800};
  std::mt19937 g(7);
  for (int i = 0; i < 44; ++i) v.push_back(static_cast<uint16_t>(g()));
  return v;
}

void check(panama::Format fmt, bool ftz) {
  const bool bf16 = fmt == panama::Format::bf16;
  auto indep = [&](uint16_t a, uint16_t b) { return bf16 ? bf16_add(a, b, ftz) : fp16_add(a, b, ftz); };
  uint64_t n = 0, bad = 0;
  auto one = [&](uint16_t a, uint16_t b) {
    const uint32_t want = indep(a, b), got = panama::ref::add(fmt, ftz, a, b);
    ++n;
    if (got != want && ++bad <= 5)
      ADD_FAILURE() << std::hex << "a 0x" << a << " + b 0x" << b << ": ref::add 0x" << got << ", independent 0x"
                    << want;
  };
  for (uint32_t a = 0; a < 0x10000; ++a)  // every value against every partner
    for (uint16_t b : partners(bf16)) one(static_cast<uint16_t>(a), b);
  std::mt19937_64 g(bf16 * 2 + ftz + 1);
  for (int i = 0; i < 2'000'000; ++i) {  // random pairs, half of them of nearby magnitude (cancellation)
    const uint16_t a = static_cast<uint16_t>(g());
    uint16_t b = static_cast<uint16_t>(g());
    if (i & 1) b = static_cast<uint16_t>((a ^ 0x8000) + static_cast<int>(g() % 64) - 32);
    one(a, b);
  }
  EXPECT_EQ(bad, 0u) << "of " << n << " sums";
  EXPECT_GT(n, 6'000'000u);
}

TEST(RefHalfAdd, Fp16IeeeMatchesTheCompilersFloat16) { check(panama::Format::fp16, false); }
TEST(RefHalfAdd, Fp16FtzMatchesTheCompilersFloat16) { check(panama::Format::fp16, true); }
TEST(RefHalfAdd, Bf16IeeeMatchesFloatAdditionRoundedToNearestEven) { check(panama::Format::bf16, false); }
TEST(RefHalfAdd, Bf16FtzMatchesFloatAdditionRoundedToNearestEven) { check(panama::Format::bf16, true); }

// The independent side itself, on cases worked by hand: a tie rounds to even, overflow to infinity.
TEST(RefHalfAdd, TheIndependentSideOnHandWorkedCases) {
  EXPECT_EQ(fp16_add(0x3C00, 0x1000, false), 0x3C00);  // 1 + 2^-11: a tie, stays at the even 1.0
  EXPECT_EQ(fp16_add(0x3C01, 0x1000, false), 0x3C02);  // (1 + 2^-10) + 2^-11: a tie, up to even
  EXPECT_EQ(fp16_add(0x7BFF, 0x7BFF, false), 0x7C00);  // 65504 + 65504: +inf
  EXPECT_EQ(fp16_add(0x0001, 0x0001, false), 0x0002);  // subnormals add exactly
  EXPECT_EQ(fp16_add(0x0001, 0x0001, true), 0x0000);   // ftz: inputs are zeros
  EXPECT_EQ(fp16_add(0x7C00, 0xFC00, false), 0x7E00);  // inf - inf: the canonical NaN
  EXPECT_EQ(bf16_add(0x3F80, 0x3B80, false), 0x3F80);  // 1 + 2^-8: a tie, stays at 1.0
  EXPECT_EQ(bf16_add(0x3F81, 0x3B80, false), 0x3F82);  // (1 + 2^-7) + 2^-8: up to even
  EXPECT_EQ(bf16_add(0x8000, 0x8000, false), 0x8000);  // -0 + -0 = -0
  EXPECT_EQ(bf16_add(0x0000, 0x8000, false), 0x0000);  // +0 + -0 = +0
  EXPECT_EQ(bf16_add(0x7F7F, 0x7F7F, false), 0x7F80);  // the largest twice: +inf
}

}  // namespace
