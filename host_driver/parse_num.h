// Strict parsing of unsigned numbers (command-line lists, control requests, register lists).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace panama::host {

// The whole of s as an unsigned number in `base` (0: C prefixes, 0x.. hex, 0.. octal), at most
// max (std::stoull's syntax otherwise). Nothing when s is empty, negative, has anything after
// the number or is out of range.
inline std::optional<uint64_t> parse_unsigned(const std::string& s, int base, uint64_t max) {
  if (s.empty() || s[0] == '-') return std::nullopt;
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &used, base);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != s.size() || v > max) return std::nullopt;
  return v;
}

}  // namespace panama::host
