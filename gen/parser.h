// The per-port receive parser of the accelerator: classifies and validates frames on the fly.
#pragma once

#include <string>

#include "config.h"

namespace panama {

// Descriptor classes on desc_class (docs/rtl.md).
constexpr int kParserClassRunt = 0;
constexpr int kParserClassBypass = 1;
constexpr int kParserClassAgg = 2;

// Verilog-2005 text of module <prefix>_parser for the configured bus width, element size and
// MAX_ELEMS (the body only; build_output() adds the banner).
std::string emit_parser(const Config& c);

}  // namespace panama
