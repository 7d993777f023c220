// Helpers shared by the Verilator testbenches: bit access on Verilated ports of any width.
#pragma once

#include <cstdint>
#include <type_traits>

#include "verilated.h"

namespace tb {

// Ports up to 64 bits are plain integers in Verilator; wider ones are VlWide<words>.
template <typename T>
inline void set_bits(T& sig, int lsb, int width, uint64_t v) {
  static_assert(std::is_integral<T>::value, "integral port");
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  uint64_t cur = static_cast<uint64_t>(sig);
  cur = (cur & ~(mask << lsb)) | ((v & mask) << lsb);
  sig = static_cast<T>(cur);
}

template <std::size_t N>
inline void set_bits(VlWide<N>& sig, int lsb, int width, uint64_t v) {
  for (int i = 0; i < width; ++i) {
    const int bit = lsb + i;
    EData& w = sig[bit / 32];
    const EData m = EData{1} << (bit % 32);
    if ((v >> i) & 1) w |= m; else w &= ~m;
  }
}

template <typename T>
inline uint64_t get_bits(const T& sig, int lsb, int width) {
  static_assert(std::is_integral<T>::value, "integral port");
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
  return (static_cast<uint64_t>(sig) >> lsb) & mask;
}

template <std::size_t N>
inline uint64_t get_bits(const VlWide<N>& sig, int lsb, int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) {
    const int bit = lsb + i;
    if ((sig[bit / 32] >> (bit % 32)) & 1) v |= uint64_t{1} << i;
  }
  return v;
}

template <typename T> constexpr int port_bits(const T&) { return static_cast<int>(sizeof(T) * 8); }

}  // namespace tb
