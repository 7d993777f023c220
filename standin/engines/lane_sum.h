// The soft engine's fp32 lane kernels: the additions of one adder-tree level over whole vectors,
// in SIMD registers (SSE2 on every x86-64; AVX2 chosen at run time where the CPU has it). Each
// lane is one IEEE addition under the caller's MXCSR (ref::MxcsrScope for the design's mode), so
// the bits are those of ref::add in the tree order of numerics.md; NaN is made canonical only
// when the sum is stored (a NaN below stays a NaN up the tree, as in ref::add).
#pragma once

#include <cstddef>
#include <cstdint>

namespace panama::standin {

enum class SimdLevel { scalar, sse2, avx2 };

// The widest level this CPU runs (avx2 or sse2).
SimdLevel best_simd_level();
const char* to_string(SimdLevel l);

class LaneSum {
 public:
  explicit LaneSum(SimdLevel level = best_simd_level());
  SimdLevel level() const { return level_; }

  // d[i] = x[i] + y[i] over two leaves' payloads (little-endian fp32 bytes, any alignment). A
  // missing leaf (nullptr) is the operand -0.0, added as such (under DAZ a subnormal + -0.0 is
  // not the subnormal); both missing: d[i] = -0.0.
  void leaves(float* d, const uint8_t* x, const uint8_t* y, size_t n) const;
  // d[i] = x[i] + y[i]; d may be x.
  void add(float* d, const float* x, const float* y, size_t n) const;
  // out (little-endian fp32 bytes) = a, every NaN as the canonical 0x7FC00000.
  void store(uint8_t* out, const float* a, size_t n) const;

 private:
  SimdLevel level_;
};

}  // namespace panama::standin
