// The per-port receive parser of the accelerator (rtl/panama_parser.v): classifies and
// validates frames on the fly.
#pragma once

namespace panama {

// Descriptor classes on desc_class (docs/rtl.md); written into <prefix>_defs.vh.
constexpr int kParserClassRunt = 0;
constexpr int kParserClassBypass = 1;
constexpr int kParserClassAgg = 2;

}  // namespace panama
