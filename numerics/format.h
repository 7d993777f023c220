// The element formats a design sums (numerics.md): the one format type of the project. The
// generator, the model, the host, the stand-in and the PyTorch backend all name a format with it,
// read it from text with parse_format (an unknown name is an error everywhere) and write it with
// to_string; config.json, the job description and the command lines carry the names.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace panama {

// The value of each is the code the generator writes into the FORMAT register's bits [1:0].
enum class Format { fp32 = 0, bf16 = 1, fp16 = 2 };

// An unknown format name or code; what() is one line naming it and the valid ones.
struct FormatError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The bit layout of a format: width, exponent and stored fraction bits (without the hidden one),
// and the canonical quiet NaN the accelerator returns.
struct FormatBits {
  int width, exp_bits, frac_bits;
  uint32_t qnan;
};

inline constexpr Format kFormats[] = {Format::fp32, Format::bf16, Format::fp16};
inline constexpr const char* kFormatNames = "fp32, bf16 or fp16";

inline FormatBits format_bits(Format f) {
  switch (f) {
    case Format::fp32:
      return {32, 8, 23, 0x7FC00000u};
    case Format::bf16:
      return {16, 8, 7, 0x7FC0u};
    case Format::fp16:
      return {16, 5, 10, 0x7E00u};
  }
  throw FormatError("unknown format code " + std::to_string(static_cast<int>(f)));
}

inline std::string to_string(Format f) {
  switch (f) {
    case Format::fp32:
      return "fp32";
    case Format::bf16:
      return "bf16";
    case Format::fp16:
      return "fp16";
  }
  throw FormatError("unknown format code " + std::to_string(static_cast<int>(f)));
}

// "fp32", "bf16" or "fp16"; anything else throws FormatError.
inline Format parse_format(const std::string& s) {
  for (const Format f : kFormats)
    if (s == to_string(f)) return f;
  throw FormatError("unknown format '" + s + "' (expected " + kFormatNames + ")");
}

inline int elem_bits(Format f) { return format_bits(f).width; }
inline int elem_bytes(Format f) { return format_bits(f).width / 8; }  // ES
inline int exp_bits(Format f) { return format_bits(f).exp_bits; }
inline int frac_bits(Format f) { return format_bits(f).frac_bits; }

// The FORMAT register's code (bits [1:0]) and back; an unknown code throws FormatError.
inline uint32_t rtl_code(Format f) { return static_cast<uint32_t>(f); }
inline Format format_from_code(uint32_t code) {
  for (const Format f : kFormats)
    if (code == rtl_code(f)) return f;
  throw FormatError("unknown format code " + std::to_string(code) + " (expected 0 fp32, 1 bf16 or 2 fp16)");
}

}  // namespace panama
