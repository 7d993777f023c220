#include "lane_sum.h"

#include <immintrin.h>

#include <cstring>

namespace panama::standin {
namespace {

// -0.0 as a value the compiler cannot see: x + -0.0 folds to x in IEEE arithmetic, but not under
// DAZ/FTZ, which the caller's MXCSR may set.
volatile float g_neg_zero = -0.0f;

constexpr uint32_t kQNaN = 0x7FC00000u;

// ---- scalar: one lane at a time (the reference the tests hold the vector paths to) ----------

float load1(const uint8_t* p, size_t i) {
  float v;
  std::memcpy(&v, p + 4 * i, 4);
  return v;
}

void leaves_scalar(float* d, const uint8_t* x, const uint8_t* y, size_t n, float m) {
  for (size_t i = 0; i < n; ++i) d[i] = (x ? load1(x, i) : m) + (y ? load1(y, i) : m);
}
void add_scalar(float* d, const float* x, const float* y, size_t n) {
  for (size_t i = 0; i < n; ++i) d[i] = x[i] + y[i];
}
void store_scalar(uint8_t* out, const float* a, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t v;
    std::memcpy(&v, a + i, 4);
    if (a[i] != a[i]) v = kQNaN;
    std::memcpy(out + 4 * i, &v, 4);
  }
}

// ---- SSE2: four lanes --------------------------------------------------------------------

__m128 load4(const uint8_t* p, size_t i, __m128 m) {
  return p ? _mm_loadu_ps(reinterpret_cast<const float*>(p + 4 * i)) : m;
}

void leaves_sse2(float* d, const uint8_t* x, const uint8_t* y, size_t n, float m) {
  const __m128 mv = _mm_set1_ps(m);
  size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(d + i, _mm_add_ps(load4(x, i, mv), load4(y, i, mv)));
  for (; i < n; ++i) d[i] = (x ? load1(x, i) : m) + (y ? load1(y, i) : m);
}
void add_sse2(float* d, const float* x, const float* y, size_t n) {
  size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(d + i, _mm_add_ps(_mm_loadu_ps(x + i), _mm_loadu_ps(y + i)));
  for (; i < n; ++i) d[i] = x[i] + y[i];
}
void store_sse2(uint8_t* out, const float* a, size_t n) {
  const __m128 q = _mm_castsi128_ps(_mm_set1_epi32(static_cast<int>(kQNaN)));
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128 v = _mm_loadu_ps(a + i);
    const __m128 nan = _mm_cmpunord_ps(v, v);
    _mm_storeu_ps(reinterpret_cast<float*>(out + 4 * i), _mm_or_ps(_mm_and_ps(nan, q), _mm_andnot_ps(nan, v)));
  }
  store_scalar(out + 4 * i, a + i, n - i);
}

// ---- AVX2: eight lanes (VEX additions follow MXCSR as SSE's do). The tails stay inside these
// functions: a jump into SSE code with the upper halves of the ymm registers dirty costs a
// state transition on every call (measured: AVX2 slower than SSE2 that way).

__attribute__((target("avx2"))) __m256 load8(const uint8_t* p, size_t i, __m256 m) {
  return p ? _mm256_loadu_ps(reinterpret_cast<const float*>(p + 4 * i)) : m;
}

__attribute__((target("avx2"))) void leaves_avx2(float* d, const uint8_t* x, const uint8_t* y, size_t n, float m) {
  const __m256 mv = _mm256_set1_ps(m);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_add_ps(load8(x, i, mv), load8(y, i, mv)));
  for (; i < n; ++i) d[i] = (x ? load1(x, i) : m) + (y ? load1(y, i) : m);
}
__attribute__((target("avx2"))) void add_avx2(float* d, const float* x, const float* y, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_add_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) d[i] = x[i] + y[i];
}
__attribute__((target("avx2"))) void store_avx2(uint8_t* out, const float* a, size_t n) {
  const __m256 q = _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(kQNaN)));
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(a + i);
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    _mm256_storeu_ps(reinterpret_cast<float*>(out + 4 * i), _mm256_blendv_ps(v, q, nan));
  }
  for (; i < n; ++i) {
    uint32_t v;
    std::memcpy(&v, a + i, 4);
    if (a[i] != a[i]) v = kQNaN;
    std::memcpy(out + 4 * i, &v, 4);
  }
}

}  // namespace

SimdLevel best_simd_level() { return __builtin_cpu_supports("avx2") ? SimdLevel::avx2 : SimdLevel::sse2; }

const char* to_string(SimdLevel l) {
  switch (l) {
    case SimdLevel::scalar:
      return "scalar";
    case SimdLevel::sse2:
      return "sse2";
    case SimdLevel::avx2:
      return "avx2";
  }
  return "?";
}

LaneSum::LaneSum(SimdLevel level) : level_(level) {
  if (level_ == SimdLevel::avx2 && !__builtin_cpu_supports("avx2")) level_ = SimdLevel::sse2;
}

void LaneSum::leaves(float* d, const uint8_t* x, const uint8_t* y, size_t n) const {
  const float m = g_neg_zero;
  switch (level_) {
    case SimdLevel::avx2:
      return leaves_avx2(d, x, y, n, m);
    case SimdLevel::sse2:
      return leaves_sse2(d, x, y, n, m);
    case SimdLevel::scalar:
      return leaves_scalar(d, x, y, n, m);
  }
}

void LaneSum::add(float* d, const float* x, const float* y, size_t n) const {
  switch (level_) {
    case SimdLevel::avx2:
      return add_avx2(d, x, y, n);
    case SimdLevel::sse2:
      return add_sse2(d, x, y, n);
    case SimdLevel::scalar:
      return add_scalar(d, x, y, n);
  }
}

void LaneSum::store(uint8_t* out, const float* a, size_t n) const {
  switch (level_) {
    case SimdLevel::avx2:
      return store_avx2(out, a, n);
    case SimdLevel::sse2:
      return store_sse2(out, a, n);
    case SimdLevel::scalar:
      return store_scalar(out, a, n);
  }
}

}  // namespace panama::standin
