// AXI4-Lite master helpers for Verilator testbenches: single writes and reads on any Verilated
// top with the s_axil_* ports of <prefix>_regs (docs/rtl.md "Register file"), programming a
// CTX.json through the register map, and reading every counter into the counters.json layout of
// tools.md. Header-only; needs gen/config/regmap.h (link panama_config) and wire/ctx.h (panama_wire).
//
// The tick callback advances the design by one clock cycle (one rising edge, with the
// evaluations around it); whatever the helpers set on the inputs before calling it is sampled on
// that edge. Between calls the helpers leave every valid/ready they own low.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "ctx.h"
#include "ctx_program.h"
#include "regmap.h"

namespace tb::axil {

struct Timeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Cycles a channel may wait for its handshake before the helpers give up.
constexpr int kMaxWait = 10000;

// Writes one word (wstrb all ones); address and data are offered together, the response is
// taken as soon as it comes. Throws Timeout when the slave never answers, std::runtime_error on
// a response other than OKAY.
template <typename M>
void write(M& m, const std::function<void()>& tick, uint32_t addr, uint32_t data) {
  m.s_axil_awaddr = addr;
  m.s_axil_awprot = 0;
  m.s_axil_awvalid = 1;
  m.s_axil_wdata = data;
  m.s_axil_wstrb = 0xF;
  m.s_axil_wvalid = 1;
  m.s_axil_bready = 1;
  bool done = false;
  for (int n = 0; !done; ++n) {
    if (n > kMaxWait) throw Timeout("axil write timed out");
    m.eval();
    const bool aw = m.s_axil_awvalid && m.s_axil_awready;
    const bool w = m.s_axil_wvalid && m.s_axil_wready;
    const bool b = m.s_axil_bvalid && m.s_axil_bready;
    const uint32_t resp = m.s_axil_bresp;
    tick();
    if (aw) m.s_axil_awvalid = 0;
    if (w) m.s_axil_wvalid = 0;
    if (b) {
      if (resp != 0) throw std::runtime_error("axil write: response " + std::to_string(resp));
      done = true;
    }
  }
  m.s_axil_bready = 0;
}

// Reads one word.
template <typename M>
uint32_t read(M& m, const std::function<void()>& tick, uint32_t addr) {
  m.s_axil_araddr = addr;
  m.s_axil_arprot = 0;
  m.s_axil_arvalid = 1;
  m.s_axil_rready = 1;
  for (int n = 0;; ++n) {
    if (n > kMaxWait) throw Timeout("axil read timed out");
    m.eval();
    const bool ar = m.s_axil_arvalid && m.s_axil_arready;
    const bool r = m.s_axil_rvalid && m.s_axil_rready;
    const uint32_t data = m.s_axil_rdata, resp = m.s_axil_rresp;
    tick();
    if (ar) m.s_axil_arvalid = 0;
    if (r) {
      m.s_axil_rready = 0;
      if (resp != 0) throw std::runtime_error("axil read: response " + std::to_string(resp));
      return data;
    }
  }
}

// A 64-bit counter: LO first (which latches HI), then HI.
template <typename M>
uint64_t read64(M& m, const std::function<void()>& tick, uint32_t lo_addr) {
  const uint64_t lo = read(m, tick, lo_addr);
  const uint64_t hi = read(m, tick, lo_addr + 4);
  return hi << 32 | lo;
}

// Writes context ci's fields (it must be disabled): panama::context_field_writes. Does not
// enable it.
template <typename M>
void program_context_fields(M& m, const std::function<void()>& tick, const panama::RegMap& map, int ci,
                            const panama::wire::CtxEntry& e) {
  for (const panama::RegWrite& w : panama::context_field_writes(map, ci, e)) write(m, tick, w.addr, w.value);
}

// Enables context ci; throws std::runtime_error naming the CTX_STATUS bits if refused.
template <typename M>
void enable_context(M& m, const std::function<void()>& tick, const panama::RegMap& map, int ci) {
  using panama::RegMap;
  write(m, tick, map.ctx(ci, RegMap::kCtxCtrl), 1);
  const uint32_t st = read(m, tick, map.ctx(ci, RegMap::kCtxStatus));
  if (!(st & RegMap::kStEnabled)) {
    char b[96];
    std::snprintf(b, sizeof b, "context %d: enable refused, CTX_STATUS = 0x%08x", ci, st);
    throw std::runtime_error(b);
  }
}

// Programs one context (fields, then ENABLE).
template <typename M>
void program_context(M& m, const std::function<void()>& tick, const panama::RegMap& map, int ci,
                     const panama::wire::CtxEntry& e) {
  program_context_fields(m, tick, map, ci, e);
  enable_context(m, tick, map, ci);
}

// Programs a whole CTX.json: every context's fields, AGG_PORT (while all are still disabled:
// the register ignores writes once one is enabled), then each ENABLE in entry order.
template <typename M>
void program_ctx_file(M& m, const std::function<void()>& tick, const panama::RegMap& map,
                      const panama::wire::CtxFile& f) {
  using panama::RegMap;
  for (size_t i = 0; i < f.contexts.size(); ++i)
    program_context_fields(m, tick, map, static_cast<int>(i), f.contexts[i]);
  write(m, tick, RegMap::kAggPort, f.agg_port);
  if (read(m, tick, RegMap::kAggPort) != f.agg_port) throw std::runtime_error("AGG_PORT write refused");
  for (size_t i = 0; i < f.contexts.size(); ++i) enable_context(m, tick, map, static_cast<int>(i));
}

// Every counter, in the counters.json layout of tools.md (contexts: all C of the design, with
// the JID and TID their registers hold).
template <typename M>
nlohmann::json read_counters(M& m, const std::function<void()>& tick, const panama::RegMap& map) {
  using panama::RegMap;
  nlohmann::json j;
  j["ports"] = nlohmann::json::array();
  const auto& names = panama::port_counter_names();
  for (int p = 0; p < map.ports; ++p) {
    nlohmann::json pj = nlohmann::json::object();
    for (int k = 0; k < panama::kNumPortCounters; ++k) pj[names[k]] = read64(m, tick, map.port_counter_lo(p, k));
    j["ports"].push_back(pj);
  }
  j["contexts"] = nlohmann::json::array();
  for (int c = 0; c < map.contexts; ++c) {
    nlohmann::json cj;
    cj["jid"] = read(m, tick, map.ctx(c, RegMap::kCtxJid));
    cj["tid"] = read(m, tick, map.ctx(c, RegMap::kCtxTid));
    cj["vectors_completed"] = read64(m, tick, map.ctx(c, RegMap::kCtxCompletedLo));
    cj["vectors_dropped"] = read64(m, tick, map.ctx(c, RegMap::kCtxDroppedLo));
    cj["expected_vid"] = read(m, tick, map.ctx(c, RegMap::kCtxExpectedVid));
    j["contexts"].push_back(cj);
  }
  j["agg_tx_frames"] = read64(m, tick, RegMap::kAggTxFramesLo);
  return j;
}

}  // namespace tb::axil
