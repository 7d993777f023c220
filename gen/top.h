// The accelerator's datapath around the adder tree: per-port buffers and queues, the
// aggregation scheduler and result builder, and the top level (docs/rtl.md).
#pragma once

#include <string>

#include "config.h"

namespace panama {

// Derived sizes of the per-port buffers (docs/rtl.md, "Buffers").
struct BufferPlan {
  int byp_beats = 0;    // bypass FIFO depth in beats (bypass_bytes / (W/8))
  int slot_beats = 0;   // beats per contribution slot (S rounded up to whole beats)
  int slots = 0;        // contribution slots per port
  int agg_fifo = 0;     // m_agg output FIFO depth in beats
};
BufferPlan buffer_plan(const Config& c);

std::string emit_port(const Config& c);   // <prefix>_port
std::string emit_sched(const Config& c);  // <prefix>_sched
std::string emit_top(const Config& c);    // <prefix>_top

}  // namespace panama
