// The accelerator's register map (AXI4-Lite, 32-bit data, 32-bit byte addresses), derived from a
// Config. This is the single definition: the generator writes it out as regmap.json/.h/.md, the
// SystemC model's register file implements it, and the RTL implements the same map.
//
// Layout (all offsets in bytes, registers 32 bits wide and 4-byte aligned):
//   0x0000 ..          global registers (identification, aggregation UDP port, agg_tx_frames)
//   ctx_base + c*ctx_stride    context c's table entry and its two counters
//   port_base + p*port_stride  port p's sixteen 64-bit counters (lo word, then hi word)
// 64-bit counters: reading the lo word latches the counter's hi word into a shadow register
// that the next read of that counter's hi word returns, so software reads lo then hi and gets
// one consistent 64-bit value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config.h"

namespace panama {

struct RegField {
  std::string name;
  int lsb = 0;
  int width = 32;
  std::string desc;
};

struct Register {
  std::string name;     // e.g. "CTX_JID" (block-relative for context and port blocks)
  uint32_t offset = 0;  // absolute for global registers, relative to the block otherwise
  std::string access;   // "RO", "RW", "WO"
  uint32_t reset = 0;
  std::string desc;
  std::vector<RegField> fields;
};

// Per-port counters of accelerator.md rule 10, in counters.json order.
enum PortCounter : int {
  kRxFrames,
  kTxFrames,
  kBypassFrames,
  kAggAdmitted,
  kResultPassed,
  kRunt,
  kRxError,
  kMalformed,
  kNoContext,
  kNotMember,
  kOverflow,
  kBypassOverflow,
  kStale,
  kIncomplete,
  kCountMismatch,
  kTimeout,
  kNumPortCounters
};
const std::vector<std::string>& port_counter_names();  // "rx_frames", ... (counters.json keys)

struct RegMap {
  // Global registers (absolute offsets).
  static constexpr uint32_t kId = 0x000;             // RO 0x50414E41 ("PANA")
  static constexpr uint32_t kVersion = 0x004;        // RO wire format version << 16 | map revision
  static constexpr uint32_t kPorts = 0x008;          // RO N
  static constexpr uint32_t kContexts = 0x00C;       // RO C
  static constexpr uint32_t kBusBits = 0x010;        // RO W
  static constexpr uint32_t kMaxElems = 0x014;       // RO MAX_ELEMS
  static constexpr uint32_t kFormat = 0x018;         // RO [1:0] 0 fp32 1 bf16 2 fp16, [8] ftz, [9] exact sum
  static constexpr uint32_t kBufferBytes = 0x01C;    // RO per-port buffer bytes
  static constexpr uint32_t kAggPort = 0x020;        // RW [15:0] aggregation UDP port (9056)
  static constexpr uint32_t kClearCounters = 0x024;  // WO write 1: clear every counter
  static constexpr uint32_t kAggTxFramesLo = 0x028;  // RO
  static constexpr uint32_t kAggTxFramesHi = 0x02C;  // RO
  static constexpr uint32_t kIdValue = 0x50414E41u;
  static constexpr uint32_t kVersionValue = 0x00010001u;

  // Context block (relative to ctx_base + c*ctx_stride).
  static constexpr uint32_t kCtxCtrl = 0x00;          // RW [0] ENABLE
  static constexpr uint32_t kCtxStatus = 0x04;        // RO [0] ENABLED, [8..12] error bits
  static constexpr uint32_t kCtxJid = 0x08;           // RW [15:0]
  static constexpr uint32_t kCtxTid = 0x0C;           // RW [7:0]
  static constexpr uint32_t kCtxMode = 0x10;          // RW [0] 0 multicast, 1 upstream
  static constexpr uint32_t kCtxUpstreamPort = 0x14;  // RW [7:0]
  static constexpr uint32_t kCtxGroupMacHi = 0x18;    // RW [15:0] MAC bytes 0..1
  static constexpr uint32_t kCtxGroupMacLo = 0x1C;    // RW MAC bytes 2..5
  static constexpr uint32_t kCtxGroupIp = 0x20;       // RW
  static constexpr uint32_t kCtxOwnMacHi = 0x24;      // RW (upstream mode source MAC)
  static constexpr uint32_t kCtxOwnMacLo = 0x28;
  static constexpr uint32_t kCtxOwnIp = 0x2C;
  static constexpr uint32_t kCtxTimeout = 0x30;      // RW cycles, 0 = never
  static constexpr uint32_t kCtxExpectedVid = 0x34;  // RO
  static constexpr uint32_t kCtxCompletedLo = 0x38;  // RO vectors_completed
  static constexpr uint32_t kCtxCompletedHi = 0x3C;
  static constexpr uint32_t kCtxDroppedLo = 0x40;  // RO vectors_dropped
  static constexpr uint32_t kCtxDroppedHi = 0x44;
  static constexpr uint32_t kCtxMembers = 0x80;  // RW word k: ports 32k..32k+31

  // CTX_STATUS bits.
  static constexpr uint32_t kStEnabled = 1u << 0;
  static constexpr uint32_t kErrNoMembers = 1u << 8;       // enable refused: empty bitmap
  static constexpr uint32_t kErrUpstreamMember = 1u << 9;  // enable refused: upstream port is a member
  static constexpr uint32_t kErrDuplicate = 1u << 10;      // enable refused: (JID,TID) enabled elsewhere
  static constexpr uint32_t kErrUpstreamRange = 1u << 11;  // enable refused: upstream port >= N
  static constexpr uint32_t kErrWriteEnabled = 1u << 12;   // a field write while enabled was ignored

  int ports = 0;
  int contexts = 0;
  int member_words = 0;  // ceil(N / 32)
  uint32_t ctx_base = 0x1000;
  uint32_t ctx_stride = 0x100;
  uint32_t port_base = 0;
  uint32_t port_stride = 0x80;  // sixteen 64-bit counters
  uint32_t size = 0;            // bytes of address space used (a power of two)

  static RegMap from(const Config& c);

  uint32_t ctx(int c, uint32_t reg) const { return ctx_base + static_cast<uint32_t>(c) * ctx_stride + reg; }
  uint32_t ctx_members(int c, int word) const { return ctx(c, kCtxMembers + 4u * static_cast<uint32_t>(word)); }
  uint32_t port_counter_lo(int p, int counter) const {
    return port_base + static_cast<uint32_t>(p) * port_stride + 8u * static_cast<uint32_t>(counter);
  }
  uint32_t port_counter_hi(int p, int counter) const { return port_counter_lo(p, counter) + 4; }

  std::vector<Register> global_registers() const;
  std::vector<Register> context_registers() const;  // offsets relative to a context block
  std::vector<Register> port_registers() const;     // offsets relative to a port block
};

// Writes regmap.json, regmap.h (C #defines) and regmap.md into dir (deterministic content).
// Throws std::runtime_error when a file cannot be written.
// The published register map of c: regmap.json, regmap.h, regmap.md (name, content).
std::vector<std::pair<std::string, std::string>> regmap_files(const Config& c);
void write_regmap(const Config& c, const std::string& dir);

// The three texts, for tests and for writers that want them in memory.
std::string regmap_json(const Config& c);
std::string regmap_c_header(const Config& c);
std::string regmap_markdown(const Config& c);

}  // namespace panama
