// The parameters of the accelerator's datapath around the adder tree (planning, library
// panama_config, gen/config/params.cpp): per-port buffers and queues, the aggregation scheduler and result
// builder, and the core (docs/rtl.md). The top's Verilog is emit_top's (gen/emit/emit.h).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config.h"

namespace panama {

// Derived sizes of the per-port buffers (docs/rtl.md, "Buffers").
struct BufferPlan {
  int byp_beats = 0;      // bypass FIFO depth in beats (bypass_bytes / (W/8))
  int frame_beats = 0;    // beats of the largest frame S (each context's reservation)
  int contrib_beats = 0;  // beats of the contribution half (contribution_bytes / (W/8))
  int mem_beats = 0;      // contribution memory depth: contrib_beats (docs/rtl.md "Buffer depth")
  int descs = 0;          // frame descriptors: the most contributions the half can hold
  int segs = 0;           // free-segment FIFO entries: more than the most frames the memory holds
  int agg_fifo = 0;       // m_agg output FIFO depth in beats
};
BufferPlan buffer_plan(const Config& c);

// The parameters of the fixed block <prefix>_port (rtl/panama_port.v): its kBlocks defaults and
// the #(...) of its instances in <prefix>_core.
std::vector<std::pair<std::string, long>> port_params(const Config& c);
// The parameters of the fixed block rtl/panama_sched.v for this configuration.
std::vector<std::pair<std::string, long>> sched_params(const Config& c);

// <prefix>_core (the fixed block rtl/panama_core.v): its parameters, from the port's, the
// scheduler's and the register file's lists.
std::vector<std::pair<std::string, long>> core_params(const Config& c);

// The configuration's datapath numbers by short name (N ports, C contexts, W bus bits, BB bus
// bytes, the buffer plan's depths and their index widths, ...): the values of the top's template.
std::map<std::string, long> datapath_values(const Config& c);

}  // namespace panama
