// The exact-sum adder tree (--sum exact, numerics.md "Exact-sum mode"): one wide fixed-point
// accumulation per lane and a single roundTiesToEven rounding.
#pragma once

#include <string>
#include <vector>

#include "config.h"
#include "fpadd.h"

namespace panama {

// Widths of one lane's datapath.
struct ExactWidths {
  int mag_bits;  // M: a finite leaf's magnitude in units of the smallest subnormal, F + 2^E - 2
  int acc_bits;  // A: M + clog2(N) + 1 (sign): the exact sum of N leaves in two's complement
};
ExactWidths exact_widths(const FormatInfo& fmt, int ports);

// Register plan of one lane (the steps and where the registers go), like AdderPlan.
AdderPlan plan_exact(const FormatInfo& fmt, Subnormals sub, int ports, double mhz, const DelayModel& dm = DelayModel{});

// Verilog of <prefix>_exactlane (ports clk, mask, data, y; latency = c.exact.latency) and of
// <prefix>_addtree built from LANES of them.
std::string emit_exactlane(const Config& c);
std::string emit_exact_addtree(const Config& c);

// Flip-flops of one lane's pipeline registers (from the plan).
long exactlane_flipflops(const Config& c);

}  // namespace panama
