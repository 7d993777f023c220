// The pipelined IEEE-754 adder: its delay-model pipeline plan and its Verilog.
#pragma once

#include <string>
#include <vector>

#include "config.h"

namespace panama {

// Delay model (ns) of an UltraScale+-class FPGA, -2 speed grade; see docs/generator.md.
struct DelayModel {
  double lut_level = 0.45;      // one LUT6 plus a typical local net
  double carry_base = 0.35;     // entering and leaving a carry chain
  double carry_per_bit = 0.02;  // per bit of carry chain
  double ff_overhead = 0.40;    // clock-to-out + setup + skew margin per stage
  double carry(int bits) const { return carry_base + carry_per_bit * bits; }
};

// Greedy stage packing of combinational steps (name, delay) under the clock period: a register
// goes after a step when the next one would overflow the stage; the last step is always
// registered. Used by the tree adder and the exact-sum lane.
AdderPlan pack_stages(const std::vector<std::string>& names, const std::vector<double>& delays, double mhz,
                      const DelayModel& dm);

// Plans the register stages for one clock: greedy packing of the combinational steps (optimal
// for the minimum stage count of a fixed step sequence) under the clock period.
AdderPlan plan_fpadd(const FormatInfo& fmt, Subnormals sub, double mhz, const DelayModel& dm = DelayModel{});

// Verilog-2005 text of module <prefix>_fpadd (ports clk, a, b, y; latency = plan.latency).
std::string emit_fpadd(const Config& c);

// The generator's own area estimate of a whole output (adder trees, buffers, control).
Resources estimate_resources(const Config& c);

// Flip-flops held by one adder's pipeline registers (exact, from the plan).
long fpadd_flipflops(const Config& c);

}  // namespace panama
