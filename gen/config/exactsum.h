// The exact-sum lane's plan (--sum exact, numerics.md "Exact-sum mode"): one wide fixed-point
// accumulation per lane and a single roundTiesToEven rounding. Planning only (library
// panama_config); the lane's Verilog is written by emit_exactlane (gen/emit/emit.h, panama_emit).
#pragma once

#include <cstdint>
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

// The sizes of one exact-sum lane.
struct ExactSizes {
  ExactSizes(const FormatInfo& fmt, bool flush, int ports);
  bool ftz;
  int N, E, F, W;
  uint32_t canonical_nan;
  int M, A;  // leaf magnitude and accumulator bits (exact_widths)
  int CW;    // count of negative leaves
  int PW;    // leading-one position in |S| (A - 1 bits)
  int PK;    // packed {exponent, fraction} before saturation
};

// One combinational step of a lane (gen/config/exactsum_plan.cpp's header lists them).
struct ExactStep {
  enum class Kind { decode, csa, cpa, neg, lzc, shift, round };
  Kind kind;
  std::string name;
  double delay;
  int ops = 0;                       // csa: operands in
  int level = 0;                     // csa, cpa: the carry-save level of the operands read
  int w = 0;                         // cpa, neg: the segment's width
  int lo = 0;                        // cpa, neg: the segment's lowest bit
  bool first = false, last = false;  // cpa, neg: the first and the last segment
  long live_bits = 0;                // bits of the signals live after the step (a register stage holds them)
};
std::vector<ExactStep> exact_steps(const ExactSizes& x, double mhz, const DelayModel& dm);

// Register plan of one lane (the steps and where the registers go), like AdderPlan.
AdderPlan plan_exact(const FormatInfo& fmt, Subnormals sub, int ports, double mhz, const DelayModel& dm = DelayModel{});

// Flip-flops of one lane's pipeline registers (from the plan; emit_exactlane checks that the
// Verilog it writes registers exactly these).
long exactlane_flipflops(const Config& c);

}  // namespace panama
