// Fixed blocks (rtl/*.v) and the shared-constants include; see rtl_lib.h.
#include "rtl_lib.h"

#include <regex>
#include <sstream>
#include <stdexcept>

#include "emit.h"
#include "parser.h"
#include "protocol.h"
#include "regmap.h"
#include "wire.h"

namespace panama {

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

}  // namespace

std::string emit_defs(const Config& c) {
  const RegMap m = RegMap::from(c);
  int aw = 0;
  while ((1u << aw) < m.size) ++aw;
  std::ostringstream v;
  v << "// Constants the RTL shares with the register map (regmap.json), the wire format\n"
    << "// (wire-format.md) and the parser's descriptor classes; written by panama-gen from the\n"
    << "// same C++ definitions, never retyped. Include it inside a module body.\n"
    << "// Not every module reads every constant.\n"
    << "/* verilator lint_off UNUSEDPARAM */\n";
  v << "// Wire format: byte offsets in the frame (wire-format.md, \"Frame layout\").\n";
  const std::pair<const char*, size_t> offs[] = {{"ETH_DST", wire::off::eth_dst},
                                                 {"ETH_SRC", wire::off::eth_src},
                                                 {"ETH_TYPE", wire::off::eth_type},
                                                 {"IP", wire::off::ip},
                                                 {"IP_TOS", wire::off::ip_tos},
                                                 {"IP_TOTAL_LEN", wire::off::ip_total_len},
                                                 {"IP_FRAG", wire::off::ip_frag},
                                                 {"IP_PROTO", wire::off::ip_proto},
                                                 {"IP_CSUM", wire::off::ip_csum},
                                                 {"IP_SRC", wire::off::ip_src},
                                                 {"IP_DST", wire::off::ip_dst},
                                                 {"UDP_SPORT", wire::off::udp_sport},
                                                 {"UDP_DPORT", wire::off::udp_dport},
                                                 {"UDP_LEN", wire::off::udp_len},
                                                 {"UDP_CSUM", wire::off::udp_csum},
                                                 {"VER", wire::off::ver},
                                                 {"FLAGS", wire::off::flags},
                                                 {"JID", wire::off::jid},
                                                 {"TID", wire::off::tid},
                                                 {"COUNT", wire::off::count},
                                                 {"VID", wire::off::vid},
                                                 {"RANK", wire::off::rank},
                                                 {"COOKIE", wire::off::cookie},
                                                 {"PAYLOAD", wire::off::payload}};
  for (const auto& o : offs) v << "localparam integer OFF_" << o.first << " = " << o.second << ";\n";
  v << "// Header: bytes before the payload, and the fewest bytes classification reads.\n"
    << "localparam integer HDR_BYTES = " << wire::kHeaderBytes << ";\n"
    << "localparam integer HDR_BITS = " << 8 * wire::kHeaderBytes << ";\n"
    << "localparam integer MIN_CLASSIFY_BYTES = " << wire::kMinClassifyBytes << ";\n"
    << "// Classification and header constants.\n"
    << "localparam [15:0] ETHERTYPE_IPV4 = " << hx(16, wire::kEtherTypeIpv4) << ";\n"
    << "localparam [7:0] IPV4_VER_IHL = " << hx(8, wire::kIpv4VerIhl) << ";\n"
    << "localparam [7:0] IP_PROTO_UDP = 8'd" << int(wire::kIpProtoUdp) << ";\n"
    << "localparam [5:0] AGG_DSCP = 6'd" << int(wire::kAggDscp) << ";\n"
    << "localparam [7:0] AGG_VERSION = 8'd" << int(wire::kVersion) << ";\n"
    << "localparam [7:0] FLAG_FIN = " << hx(8, wire::kFlagFin) << ";\n"
    << "localparam [7:0] FLAG_RESULT = " << hx(8, wire::kFlagResult) << ";\n"
    << "localparam [15:0] RANK_BUILT = " << hx(16, wire::kRankBuilt) << ";\n"
    << "localparam [15:0] DEFAULT_AGG_PORT = 16'd" << wire::kDefaultAggPort << ";\n";
  v << "// Protocol constants (wire/protocol.h): MTU and header budget, management, L2 switch window.\n";
  for (const auto& k : proto::kConstants) {
    v << "localparam ";
    if (k.bits)
      v << "[" << k.bits - 1 << ":0] " << k.name << " = " << hx(k.bits, k.value);
    else
      v << "integer " << k.name << " = " << k.value;
    v << ";\n";
  }
  v << "// Parser descriptor classes (desc_class).\n"
    << "localparam [1:0] CLASS_RUNT = 2'd" << kParserClassRunt << ";\n"
    << "localparam [1:0] CLASS_BYPASS = 2'd" << kParserClassBypass << ";\n"
    << "localparam [1:0] CLASS_AGG = 2'd" << kParserClassAgg << ";\n";
  v << "// Register map (regmap.json): address bits, block bases and strides, byte offsets.\n"
    << "localparam integer RM_AW = " << aw << ";\n"
    << "localparam integer RM_SIZE = " << m.size << ";\n"
    << "localparam integer RM_CTX_BASE = " << m.ctx_base << ";\n"
    << "localparam integer RM_CTX_STRIDE = " << m.ctx_stride << ";\n"
    << "localparam integer RM_PORT_BASE = " << m.port_base << ";\n"
    << "localparam integer RM_PORT_STRIDE = " << m.port_stride << ";\n"
    << "localparam integer RM_MEMBER_WORDS = " << m.member_words << ";\n"
    << "localparam integer RM_PORT_COUNTERS = " << kNumPortCounters << ";\n";
  for (const auto& r : m.global_registers())
    v << "localparam integer RM_A_" << r.name << " = " << r.offset << ";  // " << r.access << "\n";
  for (const auto& r : m.context_registers())
    v << "localparam integer RM_O_" << r.name << " = " << r.offset << ";  // " << r.access << "\n";
  v << "localparam integer RM_ST_ENABLED = " << RegMap::kStEnabled << ";\n"
    << "localparam integer RM_ERR_NO_MEMBERS = " << RegMap::kErrNoMembers << ";\n"
    << "localparam integer RM_ERR_UPSTREAM_MEMBER = " << RegMap::kErrUpstreamMember << ";\n"
    << "localparam integer RM_ERR_DUPLICATE = " << RegMap::kErrDuplicate << ";\n"
    << "localparam integer RM_ERR_UPSTREAM_RANGE = " << RegMap::kErrUpstreamRange << ";\n"
    << "localparam integer RM_ERR_WRITE_ENABLED = " << RegMap::kErrWriteEnabled << ";\n";
  v << "// Register map: the constant ID and VERSION words, AGG_PORT's reset value.\n"
    << "localparam [31:0] RM_ID_VALUE = " << hx(32, RegMap::kIdValue) << ";\n"
    << "localparam [31:0] RM_VERSION_VALUE = " << hx(32, RegMap::kVersionValue) << ";\n";
  for (const auto& r : m.global_registers())
    if (r.offset == RegMap::kAggPort) v << "localparam [15:0] RM_AGG_PORT_RESET = " << hx(16, r.reset) << ";\n";
  v << "/* verilator lint_on UNUSEDPARAM */\n";
  return v.str();
}

std::string emit_proto_macros() {
  std::ostringstream v;
  v << "// Protocol constants (wire/protocol.h) as macros, for parameter defaults: a module's header\n"
    << "// is read before its body can include the localparams of <prefix>_defs.vh. Written by\n"
    << "// panama-gen from the same table, never retyped.\n"
    << "`ifndef PANAMA_PROTO_VH\n"
    << "`define PANAMA_PROTO_VH\n";
  for (const auto& k : proto::kConstants) {
    v << "`define PANAMA_" << k.name << " ";
    if (k.bits == 0)
      v << k.value;
    else if (k.hex)
      v << hx(k.bits, k.value);
    else
      v << k.bits << "'d" << k.value;
    v << "\n";
  }
  v << "`endif\n";
  return v.str();
}

std::string with_prefix(std::string text, const std::string& prefix) {
  return prefix == "panama" ? text : replace_all(std::move(text), "panama_", prefix + "_");
}

std::string protocol_markdown() {
  std::ostringstream o;
  o << "# Protocol constants\n\n"
    << "Written by panama-gen from wire/protocol.h and wire/wire.h (the same values as <prefix>_defs.vh).\n\n"
    << "| name | value | meaning |\n|---|---|---|\n";
  auto row = [&](const std::string& name, uint64_t value, bool hex, const std::string& what) {
    std::ostringstream v;
    if (hex)
      v << "0x" << std::hex << value;
    else
      v << value;
    o << "| `" << name << "` | " << v.str() << " | " << what << " |\n";
  };
  for (const auto& k : proto::kConstants) row(k.name, k.value, k.hex, k.what);
  row("ETHERTYPE_IPV4", wire::kEtherTypeIpv4, true, "EtherType of every classified frame");
  row("IPV4_VER_IHL", wire::kIpv4VerIhl, true, "IPv4 version and IHL (no options)");
  row("IP_PROTO_UDP", wire::kIpProtoUdp, false, "IPv4 protocol of UDP");
  row("AGG_DSCP", wire::kAggDscp, false, "DSCP of aggregation frames");
  row("DEFAULT_AGG_PORT", wire::kDefaultAggPort, false, "default aggregation UDP port");
  row("OFF_ETH_TYPE", wire::off::eth_type, false, "byte offset: EtherType");
  row("OFF_IP", wire::off::ip, false, "byte offset: IPv4 header (version/IHL)");
  row("OFF_IP_TOS", wire::off::ip_tos, false, "byte offset: IPv4 TOS (DSCP, ECN)");
  row("OFF_IP_FRAG", wire::off::ip_frag, false, "byte offset: IPv4 flags and fragment offset");
  row("OFF_IP_PROTO", wire::off::ip_proto, false, "byte offset: IPv4 protocol");
  row("OFF_IP_DST", wire::off::ip_dst, false, "byte offset: IPv4 destination");
  row("OFF_UDP_DPORT", wire::off::udp_dport, false, "byte offset: UDP destination port");
  row("OFF_JID", wire::off::jid, false, "byte offset: aggregation JID");
  row("OFF_TID", wire::off::tid, false, "byte offset: aggregation TID");
  row("OFF_PAYLOAD", wire::off::payload, false, "byte offset: first element");
  return o.str();
}

std::string rtl_inline_includes(const Config& c, std::string text) {
  const std::string key = "`include \"";
  for (size_t p = text.find(key); p != std::string::npos; p = text.find(key, p)) {
    const size_t q = text.find('"', p + key.size());
    if (q == std::string::npos) throw std::logic_error("unterminated `include in rtl/");
    const std::string name = text.substr(p + key.size(), q - p - key.size());
    std::string body;
    if (name == "panama_defs.vh") {
      body = emit_defs(c);
    } else if (name == "panama_proto.vh") {
      body = emit_proto_macros();
    } else {
      bool found = false;
      for (const auto& s : rtl_sources())
        if (name == s.name) body = s.text, found = true;
      if (!found) throw std::logic_error("rtl/ includes " + name + ", which is not embedded in this panama-gen");
      // The include's own licence line: the including file carries one.
      if (body.rfind("// SPDX-License-Identifier:", 0) == 0) body.erase(0, body.find('\n') + 1);
    }
    if (!body.empty() && body.back() == '\n') body.pop_back();
    text.replace(p, q + 1 - p, body);
    p += body.size();
  }
  return text;
}

std::string set_parameter_default(std::string text, const std::string& name, const std::string& value) {
  const std::regex decl("\\bparameter\\s+(\\[[^\\]]*\\]\\s*)?" + name + "\\s*=\\s*");
  std::smatch m;
  if (!std::regex_search(text, m, decl)) throw std::logic_error("no parameter " + name);
  const size_t from = static_cast<size_t>(m.position(0) + m.length(0));
  // The default ends at a comma, a line end, a comment or the list's ')' outside brackets.
  size_t to = from;
  for (int depth = 0; to < text.size(); ++to) {
    const char ch = text[to];
    if (depth == 0 && (ch == ',' || ch == '\n' || ch == ')' || text.compare(to, 2, "//") == 0)) break;
    if (ch == '(' || ch == '{' || ch == '[') ++depth;
    if (ch == ')' || ch == '}' || ch == ']') --depth;
  }
  while (to > from && (text[to - 1] == ' ' || text[to - 1] == '\t')) --to;
  text.replace(from, to - from, value);
  return text;
}

std::string rtl_fixed_body(const Config& c, const std::string& file,
                           const std::vector<std::pair<std::string, long>>& params) {
  for (const auto& s : rtl_sources()) {
    if (file != s.name) continue;
    std::string text = s.text;
    // The banner (emit.cpp) opens every emitted file with `timescale and `default_nettype none,
    // and the trailer restores the nettype: drop the source's own lines that say the same.
    const std::pair<const char*, bool> frame[] = {
        {"`timescale 1ns / 1ps\n", false}, {"`default_nettype none\n", true}, {"`default_nettype wire\n", false}};
    for (const auto& [line, blank_after] : frame) {
      const size_t p = text.find(line);
      if (p == std::string::npos || (p > 0 && text[p - 1] != '\n')) continue;
      const size_t n = std::string(line).size();
      text.erase(p, n + (blank_after && text.compare(p + n, 1, "\n") == 0 ? 1 : 0));
    }
    while (!text.empty() && text.back() == '\n') text.pop_back();
    text += '\n';
    text = rtl_inline_includes(c, text);
    for (const auto& [name, value] : params) {
      try {
        text = set_parameter_default(std::move(text), name, std::to_string(value));
      } catch (const std::logic_error&) {
        throw std::logic_error("rtl/" + file + " has no parameter " + name);
      }
    }
    return with_prefix(text, c.in.prefix);
  }
  throw std::logic_error("no fixed block rtl/" + file + " in this panama-gen");
}

}  // namespace panama
