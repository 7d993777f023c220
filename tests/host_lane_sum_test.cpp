// The soft engine's SIMD lane kernels (standin/engines/lane_sum.*) against the arithmetic
// reference of numerics.md (numerics/ref_float.h: the CPU's scalar addss, NaN canonical), lane by
// lane, at every SIMD level this CPU runs, in both subnormal modes, on random operands weighted
// towards the cases that differ between paths: subnormals, signed zeros, infinities, NaNs (quiet
// and signalling, any payload), overflow, and every tail length.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "lane_sum.h"
#include "ref_float.h"

namespace {

using panama::standin::LaneSum;
using panama::standin::SimdLevel;
namespace ref = panama::ref;

uint32_t draw(std::mt19937_64& rng) {
  const uint32_t sign = static_cast<uint32_t>(rng() & 1) << 31;
  switch (rng() % 10) {
    case 0:
      return sign | static_cast<uint32_t>(rng() % 0x800000u);  // subnormal (or zero)
    case 1:
      return sign;  // signed zero
    case 2:
      return sign | 0x7F800000u;  // infinity
    case 3:
      return sign | 0x7F800000u | static_cast<uint32_t>(1 + rng() % 0x7FFFFFu);  // NaN, any payload
    case 4:
      return sign | 0x7F000000u | static_cast<uint32_t>(rng() % 0x800000u);  // near the top: overflow
    case 5:
      return sign | 0x00800000u | static_cast<uint32_t>(rng() % 0x800000u);  // smallest normals
    default:
      return static_cast<uint32_t>(rng());  // anything
  }
}

std::vector<uint8_t> bytes_of(const std::vector<uint32_t>& v) {
  std::vector<uint8_t> b(4 * v.size());
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<uint32_t> stored(const LaneSum& ls, const std::vector<float>& a) {
  std::vector<uint8_t> out(4 * a.size());
  ls.store(out.data(), a.data(), a.size());
  std::vector<uint32_t> r(a.size());
  if (!r.empty()) std::memcpy(r.data(), out.data(), out.size());
  return r;
}

std::vector<SimdLevel> levels() {
  std::vector<SimdLevel> l{SimdLevel::scalar, SimdLevel::sse2};
  if (panama::standin::best_simd_level() == SimdLevel::avx2) l.push_back(SimdLevel::avx2);
  return l;
}

constexpr uint32_t kNegZero = 0x80000000u;

TEST(HostLaneSum, EveryLevelGivesTheReferenceBitsOnLeavesAndLevels) {
  std::mt19937_64 rng(20261129);
  size_t checked = 0;
  for (const bool ftz : {false, true}) {
    for (const SimdLevel level : levels()) {
      const LaneSum ls(level);
      ASSERT_EQ(ls.level(), level);
      ref::MxcsrScope mx(ftz);
      for (size_t n : {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 362, 1000}) {
        for (int rep = 0; rep < 8; ++rep) {
          std::vector<uint32_t> x(n), y(n), z(n);
          for (size_t i = 0; i < n; ++i) x[i] = draw(rng), y[i] = draw(rng), z[i] = draw(rng);
          const auto bx = bytes_of(x), by = bytes_of(y);
          // Two leaves, one (either side), none.
          for (int present = 0; present < 4; ++present) {
            const bool hx = present & 1, hy = present & 2;
            std::vector<float> d(n);
            ls.leaves(d.data(), hx ? bx.data() : nullptr, hy ? by.data() : nullptr, n);
            const auto got = stored(ls, d);
            for (size_t i = 0; i < n; ++i) {
              const uint32_t want = ref::add(ref::Fmt::fp32, ftz, hx ? x[i] : kNegZero, hy ? y[i] : kNegZero);
              ASSERT_EQ(got[i], want) << "level " << to_string(level) << " ftz " << ftz << " n " << n << " lane " << i
                                      << " present " << present << std::hex << " x " << x[i] << " y " << y[i];
              ++checked;
            }
          }
          // One more level of the tree, in place as the engine does it: d = (x + y) + z.
          std::vector<float> d(n), zf(n);
          ls.leaves(d.data(), bx.data(), by.data(), n);
          if (n) std::memcpy(zf.data(), z.data(), 4 * n);
          ls.add(d.data(), d.data(), zf.data(), n);
          const auto got = stored(ls, d);
          for (size_t i = 0; i < n; ++i) {
            const uint32_t want = ref::add(ref::Fmt::fp32, ftz, ref::add(ref::Fmt::fp32, ftz, x[i], y[i]), z[i]);
            ASSERT_EQ(got[i], want) << "level " << to_string(level) << " ftz " << ftz << " n " << n << " lane " << i;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 100000u);
}

// The subnormal modes differ on these lanes: a path that ignored MXCSR (or folded x + -0.0 to x)
// would pass the ieee half and fail here.
TEST(HostLaneSum, FtzFlushesSubnormalsOnEveryLevel) {
  const uint32_t sub = 0x00000123u;  // a positive subnormal
  std::vector<uint32_t> x(19, sub);
  const auto bx = bytes_of(x);
  for (const SimdLevel level : levels()) {
    const LaneSum ls(level);
    for (const bool ftz : {false, true}) {
      ref::MxcsrScope mx(ftz);
      std::vector<float> d(x.size());
      ls.leaves(d.data(), bx.data(), nullptr, x.size());
      for (uint32_t v : stored(ls, d)) EXPECT_EQ(v, ftz ? 0u : sub) << to_string(level) << " ftz " << ftz;
    }
  }
}

}  // namespace
