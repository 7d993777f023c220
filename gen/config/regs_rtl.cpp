// The register file of the accelerator is the fixed block rtl/panama_regs.v: an AXI4-Lite slave
// implementing RegMap (gen/config/regmap.h) exactly as the SystemC model's RegFile does, the
// per-context configuration outputs the datapath reads, and every 64-bit saturating counter of
// accelerator.md rule 10 (docs/rtl.md, "Register file"). Its addresses come from the shared
// constants (emit_defs); what stays here is the configuration's parameters and the check that
// the map holds exactly the registers the block decodes, so that a register added to RegMap
// makes panama-gen throw rather than emit a silently incomplete decoder.
#include "regs_rtl.h"

#include <iterator>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "regmap.h"

namespace panama {

int regs_counter_index_completed(const Config& c, int ctx) { return kNumPortCounters * c.in.ports + ctx; }
int regs_counter_index_dropped(const Config& c, int ctx) { return kNumPortCounters * c.in.ports + c.in.contexts + ctx; }
int regs_counter_index_agg_tx(const Config& c) { return kNumPortCounters * c.in.ports + 2 * c.in.contexts; }
int regs_counter_count(const Config& c) { return regs_counter_index_agg_tx(c) + 1; }
// A counter is flushed every NCNT cycles, so its pending count reaches at most NCNT.
int regs_pending_bits(const Config& c) { return clog2(static_cast<long>(regs_counter_count(c)) + 1); }

namespace {

[[noreturn]] void changed(const std::string& what) {
  throw std::logic_error("rtl/panama_regs.v does not implement this register map: " + what);
}

// The block splits addresses at the block strides (context: offset in bits 7:0, port: sixteen
// counters in bits 6:0) and keeps CTX_STATUS's error bits 12..8 as err[4:0].
void check_layout(const RegMap& m) {
  if (m.ctx_stride != 0x100 || m.port_stride != 0x80 || (m.ctx_base % m.ctx_stride) != 0 ||
      (m.port_base % m.port_stride) != 0 || (1u << clog2(m.size)) != m.size || kNumPortCounters != 16)
    changed("strides, bases, size or port counters");
  if (RegMap::kErrNoMembers != 1u << 8 || RegMap::kErrUpstreamMember != 1u << 9 || RegMap::kErrDuplicate != 1u << 10 ||
      RegMap::kErrUpstreamRange != 1u << 11 || RegMap::kErrWriteEnabled != 1u << 12 || RegMap::kStEnabled != 1)
    changed("CTX_STATUS bits");
}

// The global registers (name, access) the block decodes, in map order.
void check_globals(const RegMap& m) {
  static const char* const kGlobals[][2] = {{"ID", "RO"},
                                            {"VERSION", "RO"},
                                            {"PORTS", "RO"},
                                            {"CONTEXTS", "RO"},
                                            {"BUS_BITS", "RO"},
                                            {"MAX_ELEMS", "RO"},
                                            {"FORMAT", "RO"},
                                            {"BUFFER_BYTES", "RO"},
                                            {"AGG_PORT", "RW"},
                                            {"CLEAR_COUNTERS", "WO"},
                                            {"AGG_TX_FRAMES_LO", "RO"},
                                            {"AGG_TX_FRAMES_HI", "RO"}};
  const auto g = m.global_registers();
  if (g.size() != std::size(kGlobals)) changed("global registers");
  for (size_t i = 0; i < g.size(); ++i)
    if (g[i].name != kGlobals[i][0] || g[i].access != kGlobals[i][1]) changed("global register " + g[i].name);
  if (g[0].reset != RegMap::kIdValue || g[1].reset != RegMap::kVersionValue) changed("ID or VERSION value");
}

// The context registers (name, access) the block decodes, in map order, then the member words
// at CTX_MEMBERS0 + 4k; the four counter words must be contiguous (one range check).
void check_context(const RegMap& m) {
  static const char* const kContext[][2] = {{"CTX_CTRL", "RW"},
                                            {"CTX_STATUS", "RO"},
                                            {"CTX_JID", "RW"},
                                            {"CTX_TID", "RW"},
                                            {"CTX_MODE", "RW"},
                                            {"CTX_UPSTREAM_PORT", "RW"},
                                            {"CTX_GROUP_MAC_HI", "RW"},
                                            {"CTX_GROUP_MAC_LO", "RW"},
                                            {"CTX_GROUP_IP", "RW"},
                                            {"CTX_OWN_MAC_HI", "RW"},
                                            {"CTX_OWN_MAC_LO", "RW"},
                                            {"CTX_OWN_IP", "RW"},
                                            {"CTX_TIMEOUT", "RW"},
                                            {"CTX_EXPECTED_VID", "RO"},
                                            {"CTX_VECTORS_COMPLETED_LO", "RO"},
                                            {"CTX_VECTORS_COMPLETED_HI", "RO"},
                                            {"CTX_VECTORS_DROPPED_LO", "RO"},
                                            {"CTX_VECTORS_DROPPED_HI", "RO"}};
  const size_t n = std::size(kContext);
  const auto r = m.context_registers();
  if (r.size() != n + static_cast<size_t>(m.member_words)) changed("context registers");
  for (size_t i = 0; i < n; ++i)
    if (r[i].name != kContext[i][0] || r[i].access != kContext[i][1]) changed("context register " + r[i].name);
  if (RegMap::kCtxCompletedHi != RegMap::kCtxCompletedLo + 4 || RegMap::kCtxDroppedLo != RegMap::kCtxCompletedHi + 4 ||
      RegMap::kCtxDroppedHi != RegMap::kCtxDroppedLo + 4)
    changed("counter words not contiguous");
  for (int k = 0; k < m.member_words; ++k) {
    const Register& w = r[n + static_cast<size_t>(k)];
    if (w.name != "CTX_MEMBERS" + std::to_string(k) || w.access != "RW" ||
        w.offset != RegMap::kCtxMembers + 4u * static_cast<uint32_t>(k) || w.offset >= m.ctx_stride)
      changed("member word " + w.name);
  }
}

}  // namespace

std::vector<std::pair<std::string, long>> regs_params(const Config& c) {
  const RegMap m = RegMap::from(c);
  check_layout(m);
  check_globals(m);
  check_context(m);
  // The constant registers read their published reset values.
  const nlohmann::json map = nlohmann::json::parse(regmap_json(c));
  auto reset = [&](const std::string& name) -> long {
    for (const auto& r : map.at("global"))
      if (r.at("name").get<std::string>() == name) return r.at("reset").get<long>();
    changed("no global register " + name);
  };
  if (reset("PORTS") != m.ports || reset("CONTEXTS") != m.contexts) changed("PORTS or CONTEXTS value");
  return {{"PORTS", m.ports},
          {"CONTEXTS", m.contexts},
          {"ADDR_W", clog2(m.size)},
          {"PEND_W", regs_pending_bits(c)},
          {"BUS_BITS", reset("BUS_BITS")},
          {"MAX_ELEMS", reset("MAX_ELEMS")},
          {"FORMAT", reset("FORMAT")},
          {"BUFFER_BYTES", reset("BUFFER_BYTES")}};
}

}  // namespace panama
