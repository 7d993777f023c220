// The register writes that configure the accelerator's contexts from CTX.json (tools.md).
// One sequence used everywhere a design is programmed: the SystemC model, the live model of the
// switch stand-in, the RTL harness, the register-file testbench and the controller's list of
// writes for a board. Header-only; needs the wire library's include directory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "ctx.h"
#include "regmap.h"

namespace panama {

struct RegWrite {
  uint32_t addr = 0;
  uint32_t value = 0;
  std::string what;  // register and context, for lists meant to be read
};

inline uint32_t mac_hi_word(const wire::Mac& a) { return (uint32_t{a[0]} << 8) | a[1]; }
inline uint32_t mac_lo_word(const wire::Mac& a) {
  return (uint32_t{a[2]} << 24) | (uint32_t{a[3]} << 16) | (uint32_t{a[4]} << 8) | a[5];
}

// Every field of context ci (JID, TID, MODE, member words, upstream port, group and own MAC/IP,
// timeout), fields of the other mode included (0 when the entry has none). The context must be
// disabled for the writes to take effect; they do not enable it.
inline std::vector<RegWrite> context_field_writes(const RegMap& m, int ci, const wire::CtxEntry& e) {
  const std::string c = "ctx " + std::to_string(ci) + " ";
  std::vector<RegWrite> w;
  auto put = [&](uint32_t reg, uint32_t v, const char* name) { w.push_back({m.ctx(ci, reg), v, c + name}); };
  put(RegMap::kCtxJid, e.jid, "JID");
  put(RegMap::kCtxTid, e.tid, "TID");
  put(RegMap::kCtxMode, e.multicast ? 0u : 1u, "MODE");
  for (int k = 0; k < m.member_words; ++k) {
    uint32_t bits = 0;
    for (int p : e.members)
      if (p / 32 == k) bits |= 1u << (p % 32);
    w.push_back({m.ctx_members(ci, k), bits, c + "MEMBERS[" + std::to_string(k) + "]"});
  }
  put(RegMap::kCtxUpstreamPort, e.upstream_port < 0 ? 0u : static_cast<uint32_t>(e.upstream_port), "UPSTREAM_PORT");
  put(RegMap::kCtxGroupMacHi, mac_hi_word(e.group_mac), "GROUP_MAC_HI");
  put(RegMap::kCtxGroupMacLo, mac_lo_word(e.group_mac), "GROUP_MAC_LO");
  put(RegMap::kCtxGroupIp, e.group_ip, "GROUP_IP");
  put(RegMap::kCtxOwnMacHi, mac_hi_word(e.src_mac), "OWN_MAC_HI");
  put(RegMap::kCtxOwnMacLo, mac_lo_word(e.src_mac), "OWN_MAC_LO");
  put(RegMap::kCtxOwnIp, e.src_ip, "OWN_IP");
  put(RegMap::kCtxTimeout, e.timeout_cycles, "TIMEOUT");
  return w;
}

inline RegWrite context_enable_write(const RegMap& m, int ci) {
  return {m.ctx(ci, RegMap::kCtxCtrl), 1u, "ctx " + std::to_string(ci) + " CTRL (enable)"};
}

// Programs a whole CTX.json on a register file given as write/read callables: AGG_PORT, then per
// context its fields and the enable, whose CTX_STATUS is read back. Throws std::runtime_error
// naming the context and status when the register file refuses to enable it.
template <typename Write, typename Read>
void program_ctx_file(const RegMap& m, const wire::CtxFile& f, Write&& write, Read&& read) {
  write(RegMap::kAggPort, uint32_t{f.agg_port});
  for (size_t i = 0; i < f.contexts.size(); ++i) {
    const int ci = static_cast<int>(i);
    for (const RegWrite& w : context_field_writes(m, ci, f.contexts[i])) write(w.addr, w.value);
    const RegWrite en = context_enable_write(m, ci);
    write(en.addr, en.value);
    const uint32_t st = read(m.ctx(ci, RegMap::kCtxStatus));
    if (!(st & RegMap::kStEnabled)) {
      char b[96];
      std::snprintf(b, sizeof b, "context %d: enable refused, CTX_STATUS = 0x%08x", ci, st);
      throw std::runtime_error(b);
    }
  }
}

}  // namespace panama
