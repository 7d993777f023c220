// The pipelined IEEE-754 adder's plan: its sizes, its combinational steps with their delays and
// the signals that cross each boundary, and the register stages packed under the clock period.
// This is planning only (library panama_config); the Verilog of each step is written by
// emit_fpadd (gen/emit/emit.h, library panama_emit).
#pragma once

#include <string>
#include <utility>
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

// The sizes of one adder (docs/rtl-timing.md, "Adder").
struct AdderSizes {
  AdderSizes(const FormatInfo& f, bool flush);
  FormatInfo fmt;
  bool ftz;
  int E, F, W;
  int A;    // aligned significand: hidden, F fraction bits, guard, round, sticky
  int S;    // sum: carry + A
  int LZW;  // leading-zero count bits
  int K;    // shifter stages that can keep a bit in view
};

// One combinational step of the adder: its delay estimate, the signals it produces (name,
// width) and those it forwards unchanged from the previous boundary.
struct AdderStep {
  std::string name;
  double delay;
  std::vector<std::pair<std::string, int>> outs;
  std::vector<std::string> pass;
};

// The seven steps in order: classify, swap, align, add, lzc, normalize, round. `split`: whether
// a register stage follows lzc (the plan is made with it set; without it normalize decides what
// lzc would have).
std::vector<AdderStep> adder_steps(const AdderSizes& z, const DelayModel& dm, bool split = true);
constexpr size_t kAdderLzcStep = 4;

// The signals (name, width) on the boundary after step i: the forwarded ones, then the produced.
std::vector<std::pair<std::string, int>> adder_boundary(const std::vector<AdderStep>& steps, size_t i);

// Plans the register stages for one clock: greedy packing of the combinational steps (optimal
// for the minimum stage count of a fixed step sequence) under the clock period.
AdderPlan plan_fpadd(const FormatInfo& fmt, Subnormals sub, double mhz, const DelayModel& dm = DelayModel{});

// Flip-flops held by one adder's pipeline registers (exact, from the plan).
long fpadd_flipflops(const Config& c);

}  // namespace panama
