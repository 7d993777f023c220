#include "regmap.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "wire.h"

namespace panama {

const std::vector<std::string>& port_counter_names() {
  static const std::vector<std::string> names = {"rx_frames",     "tx_frames",  "bypass_frames",  "agg_admitted",
                                                 "result_passed", "runt",       "rx_error",       "malformed",
                                                 "no_context",    "not_member", "overflow",       "bypass_overflow",
                                                 "stale",         "incomplete", "count_mismatch", "timeout"};
  return names;
}

static const char* port_counter_desc(int i) {
  static const char* d[] = {"every frame received, runts included",
                            "frames sent on mPP (bypass_frames + result_passed)",
                            "bypass frames admitted to the bypass buffer",
                            "contributions queued (RESULT frames excluded)",
                            "final sums passed down from the upstream port",
                            "frames shorter than 14 bytes",
                            "frames with tuser set on the last beat",
                            "aggregation frames that are not well-formed",
                            "aggregation frames with no enabled context of their (JID, TID)",
                            "contributions from a non-member port, or RESULT frames not on the upstream port",
                            "aggregation frames dropped for lack of buffer space",
                            "bypass frames dropped for lack of buffer space",
                            "stale head frames dropped",
                            "heads dropped because their vector could not complete",
                            "heads dropped because the COUNTs of a vector differed",
                            "heads dropped by the context timeout"};
  return d[i];
}

RegMap RegMap::from(const Config& c) {
  RegMap m;
  m.ports = c.in.ports;
  m.contexts = c.in.contexts;
  m.member_words = (c.in.ports + 31) / 32;
  // Contexts: fixed 256-byte blocks (members at 0x80, at most 8 words for 256 ports).
  const uint32_t ctx_end = m.ctx_base + static_cast<uint32_t>(m.contexts) * m.ctx_stride;
  m.port_base = (ctx_end + 0xFFFu) & ~0xFFFu;
  const uint32_t end = m.port_base + static_cast<uint32_t>(m.ports) * m.port_stride;
  m.size = 0x1000;
  while (m.size < end) m.size <<= 1;
  return m;
}

std::vector<Register> RegMap::global_registers() const {
  return {
      {"ID", kId, "RO", kIdValue, "identification, ASCII \"PANA\"", {}},
      {"VERSION", kVersion, "RO", kVersionValue, "wire format version (bits 31:16), register map revision (15:0)", {}},
      {"PORTS", kPorts, "RO", static_cast<uint32_t>(ports), "number of ports N", {}},
      {"CONTEXTS", kContexts, "RO", static_cast<uint32_t>(contexts), "number of contexts C", {}},
      {"BUS_BITS", kBusBits, "RO", 0, "data bus width W (reset value: the generated W)", {}},
      {"MAX_ELEMS", kMaxElems, "RO", 0, "largest COUNT accepted (reset value: the generated MAX_ELEMS)", {}},
      {"FORMAT",
       kFormat,
       "RO",
       0,
       "element format",
       {{"FORMAT", 0, 2, "0 fp32, 1 bf16, 2 fp16"},
        {"FTZ", 8, 1, "1 = subnormals flushed"},
        {"EXACT", 9, 1, "1 = exact-sum mode (--sum exact), 0 = fixed tree order"}}},
      {"BUFFER_BYTES", kBufferBytes, "RO", 0, "buffer bytes per port", {}},
      {"AGG_PORT",
       kAggPort,
       "RW",
       wire::kDefaultAggPort,
       "aggregation UDP port; writes are ignored while any context is enabled",
       {{"PORT", 0, 16, "UDP destination port of aggregation frames"}}},
      {"CLEAR_COUNTERS",
       kClearCounters,
       "WO",
       0,
       "write 1 to clear every counter (not expected_vid)",
       {{"CLEAR", 0, 1, "self-clearing"}}},
      {"AGG_TX_FRAMES_LO",
       kAggTxFramesLo,
       "RO",
       0,
       "frames sent on m_agg, bits 31:0 (reading latches the high word)",
       {}},
      {"AGG_TX_FRAMES_HI", kAggTxFramesHi, "RO", 0, "frames sent on m_agg, bits 63:32 (as latched)", {}},
  };
}

std::vector<Register> RegMap::context_registers() const {
  std::vector<Register> r = {
      {"CTX_CTRL",
       kCtxCtrl,
       "RW",
       0,
       "writing ENABLE=1 to a disabled context tries to enable it (expected VID := 0); refused with an "
       "error bit in CTX_STATUS unless the checks pass; ENABLE=0 disables. Any write clears the error bits",
       {{"ENABLE", 0, 1, "1 = enable"}}},
      {"CTX_STATUS",
       kCtxStatus,
       "RO",
       0,
       "state and the reason of the last refusal",
       {{"ENABLED", 0, 1, "context is enabled"},
        {"ERR_NO_MEMBERS", 8, 1, "enable refused: member bitmap empty"},
        {"ERR_UPSTREAM_MEMBER", 9, 1, "enable refused: upstream mode and the upstream port is a member"},
        {"ERR_DUPLICATE", 10, 1, "enable refused: another enabled context has the same (JID, TID)"},
        {"ERR_UPSTREAM_RANGE", 11, 1, "enable refused: upstream port >= N"},
        {"ERR_WRITE_ENABLED", 12, 1, "a field write while enabled was ignored"}}},
      {"CTX_JID", kCtxJid, "RW", 0, "job id", {{"JID", 0, 16, ""}}},
      {"CTX_TID", kCtxTid, "RW", 0, "tree id", {{"TID", 0, 8, ""}}},
      {"CTX_MODE", kCtxMode, "RW", 0, "mode", {{"UPSTREAM", 0, 1, "0 multicast (root), 1 upstream"}}},
      {"CTX_UPSTREAM_PORT", kCtxUpstreamPort, "RW", 0, "upstream port (upstream mode)", {{"PORT", 0, 8, ""}}},
      {"CTX_GROUP_MAC_HI", kCtxGroupMacHi, "RW", 0, "group MAC bytes 0..1 (bits 15:8 = byte 0)", {{"MAC", 0, 16, ""}}},
      {"CTX_GROUP_MAC_LO", kCtxGroupMacLo, "RW", 0, "group MAC bytes 2..5 (bits 31:24 = byte 2)", {}},
      {"CTX_GROUP_IP", kCtxGroupIp, "RW", 0, "group IPv4 address (bits 31:24 = first octet)", {}},
      {"CTX_OWN_MAC_HI", kCtxOwnMacHi, "RW", 0, "own MAC bytes 0..1 (upstream mode source)", {{"MAC", 0, 16, ""}}},
      {"CTX_OWN_MAC_LO", kCtxOwnMacLo, "RW", 0, "own MAC bytes 2..5", {}},
      {"CTX_OWN_IP", kCtxOwnIp, "RW", 0, "own IPv4 address (upstream mode source)", {}},
      {"CTX_TIMEOUT", kCtxTimeout, "RW", 0, "timeout in cycles, 0 = never", {}},
      {"CTX_EXPECTED_VID", kCtxExpectedVid, "RO", 0, "expected VID E (wraps)", {}},
      {"CTX_VECTORS_COMPLETED_LO",
       kCtxCompletedLo,
       "RO",
       0,
       "vectors_completed bits 31:0 (reading latches the high word)",
       {}},
      {"CTX_VECTORS_COMPLETED_HI", kCtxCompletedHi, "RO", 0, "vectors_completed bits 63:32", {}},
      {"CTX_VECTORS_DROPPED_LO",
       kCtxDroppedLo,
       "RO",
       0,
       "vectors_dropped bits 31:0 (reading latches the high word)",
       {}},
      {"CTX_VECTORS_DROPPED_HI", kCtxDroppedHi, "RO", 0, "vectors_dropped bits 63:32", {}},
  };
  for (int k = 0; k < member_words; ++k) {
    const int lo = 32 * k, hi = std::min(ports, 32 * (k + 1)) - 1;
    r.push_back({"CTX_MEMBERS" + std::to_string(k),
                 kCtxMembers + 4u * static_cast<uint32_t>(k),
                 "RW",
                 0,
                 "member bitmap, bit i = port " + std::to_string(lo) + "+i (ports " + std::to_string(lo) + ".." +
                     std::to_string(hi) + "; bits of ports >= N read 0)",
                 {}});
  }
  return r;
}

std::vector<Register> RegMap::port_registers() const {
  std::vector<Register> r;
  const auto& names = port_counter_names();
  for (int i = 0; i < kNumPortCounters; ++i) {
    std::string up = names[i];
    for (auto& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    r.push_back({"PORT_" + up + "_LO",
                 8u * static_cast<uint32_t>(i),
                 "RO",
                 0,
                 std::string(port_counter_desc(i)) + ", bits 31:0 (reading latches the high word)",
                 {}});
    r.push_back({"PORT_" + up + "_HI",
                 8u * static_cast<uint32_t>(i) + 4,
                 "RO",
                 0,
                 std::string(port_counter_desc(i)) + ", bits 63:32",
                 {}});
  }
  return r;
}

// Reset values that depend on the configuration (the tables above leave them 0).
static uint32_t global_reset(const Config& c, const Register& r) {
  switch (r.offset) {
    case RegMap::kBusBits:
      return static_cast<uint32_t>(c.bus_bits);
    case RegMap::kMaxElems:
      return static_cast<uint32_t>(c.max_elems);
    case RegMap::kFormat:
      return rtl_code(c.in.format) | (c.in.subnormals == Subnormals::ftz ? 0x100u : 0u) | (c.exact_sum() ? 0x200u : 0u);
    case RegMap::kBufferBytes:
      return static_cast<uint32_t>(c.buffer_bytes);
    default:
      return r.reset;
  }
}

static std::string hex(uint32_t v, int digits = 4) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%0*X", digits, v);
  return b;
}

static nlohmann::json regs_json(const std::vector<Register>& regs, const Config* c) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& r : regs) {
    nlohmann::json f = nlohmann::json::array();
    for (const auto& x : r.fields)
      f.push_back({{"name", x.name}, {"lsb", x.lsb}, {"width", x.width}, {"desc", x.desc}});
    a.push_back({{"name", r.name},
                 {"offset", r.offset},
                 {"offset_hex", hex(r.offset)},
                 {"access", r.access},
                 {"reset", c ? global_reset(*c, r) : r.reset},
                 {"desc", r.desc},
                 {"fields", f}});
  }
  return a;
}

std::string regmap_json(const Config& c) {
  const RegMap m = RegMap::from(c);
  nlohmann::json j;
  j["generator"] = kGeneratorVersion;
  j["prefix"] = c.in.prefix;
  j["bus"] = "axi4-lite";
  j["data_bits"] = 32;
  j["addr_bits"] = 32;
  j["size"] = m.size;
  j["ports"] = m.ports;
  j["contexts"] = m.contexts;
  j["member_words"] = m.member_words;
  j["counter_semantics"] = "64-bit saturating; reading the LO word latches the HI word";
  j["global"] = regs_json(m.global_registers(), &c);
  j["context_block"] = {{"base", m.ctx_base},
                        {"stride", m.ctx_stride},
                        {"count", m.contexts},
                        {"registers", regs_json(m.context_registers(), nullptr)}};
  j["port_block"] = {{"base", m.port_base},
                     {"stride", m.port_stride},
                     {"count", m.ports},
                     {"registers", regs_json(m.port_registers(), nullptr)}};
  return j.dump(1) + "\n";
}

std::string regmap_c_header(const Config& c) {
  const RegMap m = RegMap::from(c);
  std::string P = c.in.prefix;
  for (auto& ch : P) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  std::ostringstream o;
  o << "/* Register map of the " << c.in.prefix << " accelerator. Generated by " << kGeneratorVersion << ": "
    << c.command_line() << " */\n";
  o << "/* 64-bit counters: read LO (latches HI into a shared shadow), then HI of the same counter. */\n";
  o << "#ifndef " << P << "_REGMAP_H\n#define " << P << "_REGMAP_H\n\n";
  auto def = [&](const std::string& n, const std::string& v) { o << "#define " << P << "_" << n << " " << v << "\n"; };
  def("NUM_PORTS", std::to_string(m.ports));
  def("NUM_CONTEXTS", std::to_string(m.contexts));
  def("MEMBER_WORDS", std::to_string(m.member_words));
  def("REGMAP_SIZE", hex(m.size) + "u");
  o << "\n/* Global registers */\n";
  for (const auto& r : m.global_registers()) def(r.name, hex(r.offset) + "u");
  def("ID_VALUE", hex(RegMap::kIdValue, 8) + "u");
  o << "\n/* Context c: " << P << "_CTX_ADDR(c, " << P << "_CTX_xxx) */\n";
  def("CTX_BASE", hex(m.ctx_base) + "u");
  def("CTX_STRIDE", hex(m.ctx_stride) + "u");
  def("CTX_ADDR(c, reg)", "(" + P + "_CTX_BASE + (c) * " + P + "_CTX_STRIDE + (reg))");
  for (const auto& r : m.context_registers())
    if (r.name.rfind("CTX_MEMBERS", 0) != 0) def(r.name, hex(r.offset) + "u");
  def("CTX_MEMBERS(k)", "(" + hex(RegMap::kCtxMembers) + "u + 4u * (k))");
  def("CTX_CTRL_ENABLE", "0x1u");
  def("CTX_MODE_UPSTREAM", "0x1u");
  def("CTX_STATUS_ENABLED", hex(RegMap::kStEnabled) + "u");
  def("CTX_STATUS_ERR_NO_MEMBERS", hex(RegMap::kErrNoMembers) + "u");
  def("CTX_STATUS_ERR_UPSTREAM_MEMBER", hex(RegMap::kErrUpstreamMember) + "u");
  def("CTX_STATUS_ERR_DUPLICATE", hex(RegMap::kErrDuplicate) + "u");
  def("CTX_STATUS_ERR_UPSTREAM_RANGE", hex(RegMap::kErrUpstreamRange) + "u");
  def("CTX_STATUS_ERR_WRITE_ENABLED", hex(RegMap::kErrWriteEnabled) + "u");
  o << "\n/* Port p counters: " << P << "_PORT_ADDR(p, " << P << "_PORT_xxx_LO) */\n";
  def("PORT_BASE", hex(m.port_base) + "u");
  def("PORT_STRIDE", hex(m.port_stride) + "u");
  def("PORT_ADDR(p, reg)", "(" + P + "_PORT_BASE + (p) * " + P + "_PORT_STRIDE + (reg))");
  for (const auto& r : m.port_registers()) def(r.name, hex(r.offset) + "u");
  o << "\n#endif /* " << P << "_REGMAP_H */\n";
  return o.str();
}

static void md_table(std::ostringstream& o, const std::vector<Register>& regs, const Config* c) {
  o << "| offset | name | access | reset | description |\n|---|---|---|---|---|\n";
  for (const auto& r : regs) {
    o << "| " << hex(r.offset) << " | " << r.name << " | " << r.access << " | "
      << hex(c ? global_reset(*c, r) : r.reset, 1) << " | " << r.desc;
    for (const auto& f : r.fields)
      o << "; `" << f.name << "` [" << (f.lsb + f.width - 1) << ":" << f.lsb << "]"
        << (f.desc.empty() ? "" : " " + f.desc);
    o << " |\n";
  }
}

std::string regmap_markdown(const Config& c) {
  const RegMap m = RegMap::from(c);
  std::ostringstream o;
  o << "# Register map of `" << c.top_name() << "`\n\n";
  o << "Generated by " << kGeneratorVersion << ": `" << c.command_line() << "`.\n\n";
  o << "AXI4-Lite slave, 32-bit data, byte addresses, " << hex(m.size) << " bytes of address space. " << m.ports
    << " ports, " << m.contexts << " contexts. Counters are 64 bits and saturate; reading a "
    << "counter's LO word copies its HI word into one shadow register shared by all counters, which "
    << "any HI read returns: read LO, then HI of the same counter. Context fields are writable only while "
    << "the context is disabled (a write while enabled is ignored and sets ERR_WRITE_ENABLED).\n\n";
  o << "## Global registers\n\n";
  md_table(o, m.global_registers(), &c);
  o << "\n## Context table\n\nContext c at " << hex(m.ctx_base) << " + c x " << hex(m.ctx_stride) << ", c = 0.."
    << m.contexts - 1 << ". Offsets below are relative to the context's block.\n\n";
  md_table(o, m.context_registers(), nullptr);
  o << "\n## Port counters\n\nPort p at " << hex(m.port_base) << " + p x " << hex(m.port_stride) << ", p = 0.."
    << m.ports - 1 << ". Offsets below are relative to the port's block.\n\n";
  md_table(o, m.port_registers(), nullptr);
  return o.str();
}

std::vector<std::pair<std::string, std::string>> regmap_files(const Config& c) {
  return {{"regmap.json", regmap_json(c)}, {"regmap.h", regmap_c_header(c)}, {"regmap.md", regmap_markdown(c)}};
}

void write_regmap(const Config& c, const std::string& dir) {
  for (const auto& f : regmap_files(c)) {
    const std::string path = dir + "/" + f.first;
    std::ofstream out(path, std::ios::binary);
    out << f.second;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path);
  }
}

}  // namespace panama
