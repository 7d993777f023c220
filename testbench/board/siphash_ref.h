// SipHash-2-4 in C++, written from the paper's description (Aumasson and Bernstein, "SipHash: a
// fast short-input PRF", 2012): the reference the RTL (rtl/panama_siphash.v) and the management
// protocol's tests are checked against. Key and message as bytes; the result as the paper's
// 64-bit integer (its little-endian bytes are the MAC on the wire).
#pragma once

#include <cstddef>
#include <cstdint>

namespace sip {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline uint64_t load_le(const uint8_t* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

inline void round(uint64_t& v0, uint64_t& v1, uint64_t& v2, uint64_t& v3) {
  v0 += v1;
  v1 = rotl(v1, 13);
  v1 ^= v0;
  v0 = rotl(v0, 32);
  v2 += v3;
  v3 = rotl(v3, 16);
  v3 ^= v2;
  v0 += v3;
  v3 = rotl(v3, 21);
  v3 ^= v0;
  v2 += v1;
  v1 = rotl(v1, 17);
  v1 ^= v2;
  v2 = rotl(v2, 32);
}

inline uint64_t siphash24(const uint8_t key[16], const uint8_t* msg, size_t len) {
  const uint64_t k0 = load_le(key, 8), k1 = load_le(key + 8, 8);
  uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
  uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
  auto compress = [&](uint64_t m) {
    v3 ^= m;
    round(v0, v1, v2, v3);
    round(v0, v1, v2, v3);
    v0 ^= m;
  };
  size_t i = 0;
  for (; i + 8 <= len; i += 8) compress(load_le(msg + i, 8));
  compress(load_le(msg + i, len - i) | (uint64_t(len & 0xff) << 56));
  v2 ^= 0xff;
  for (int r = 0; r < 4; ++r) round(v0, v1, v2, v3);
  return v0 ^ v1 ^ v2 ^ v3;
}

}  // namespace sip
