// The fixed blocks: hand-written, parameterised Verilog in rtl/*.v, compiled into panama-gen as
// text (gen/emit/embed_rtl.cmake), and the shared-constants include <prefix>_defs.vh written from the
// same C++ definitions as the register map and the wire library (docs/generator.md, "Fixed blocks").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config.h"

namespace panama {

struct RtlSource {
  const char* name;  // file name in rtl/, e.g. "panama_parser.v"
  const char* text;  // its text, unchanged
};

// Every rtl/*.v, sorted by name (generated source rtl_embedded.cpp).
const std::vector<RtlSource>& rtl_sources();

// The text of rtl/<file> (e.g. "panama_parser.v") as panama-gen writes it: its `timescale and
// `default_nettype lines dropped (the banner and trailer of emit.cpp write them), its includes
// inlined (rtl_inline_includes), then every "panama_" replaced by c.in.prefix + "_".
// Throws std::logic_error when the file is not embedded or lacks a parameter of `params`.
// Each (name, value) of `params` replaces the default of `parameter NAME = ...` in the header, so
// the emitted module defaults to this configuration (a block verilated alone, or instantiated
// by the user without #(...), gets it); the generated top still sets every one with #(...).
std::string rtl_fixed_body(const Config& c, const std::string& file,
                           const std::vector<std::pair<std::string, long>>& params = {});

// The one parameter-default setter: the default of the first `parameter [RANGE] NAME = DEFAULT`
// in `text` replaced by `value` (DEFAULT ends at a comma, a line end, a comment or the list's
// closing parenthesis). Used for the fixed blocks' defaults and the board tops' options.
// Throws std::logic_error when `text` declares no parameter NAME.
std::string set_parameter_default(std::string text, const std::string& name, const std::string& value);

// The one prefix replacer: every "panama_" in `text` (module, file and include names of the fixed
// blocks, the board shells and the top's template) replaced by prefix + "_".
std::string with_prefix(std::string text, const std::string& prefix);

// `text` with each `include "NAME" replaced by NAME's text: panama_defs.vh by emit_defs(c),
// panama_proto.vh by emit_proto_macros(), any other by the embedded rtl/NAME (its SPDX line
// dropped), so that every emitted file reads standalone, without include paths. Throws std::logic_error for a file not
// embedded.
std::string rtl_inline_includes(const Config& c, std::string text);

// protocol.md: the protocol constants (wire/protocol.h) and the wire constants the board layer
// reads, as a Markdown table (docs/rtl.md, "Protocol constants").
std::string protocol_markdown();

// <prefix>_defs.vh: localparams shared by the RTL with the register map (gen/config/regmap.h), the wire
// header (wire/wire.h) and the parser classes (gen/emit/parser.h). Meant for `include inside a module.
std::string emit_defs(const Config& c);

// <prefix>_proto.vh: the protocol constants of wire/protocol.h as `define PANAMA_<NAME> macros
// (guarded), for the fixed blocks' parameter defaults, e.g. `PANAMA_MGMT_UDP_PORT_DEFAULT. Meant for
// `include before a module.
std::string emit_proto_macros();

}  // namespace panama
