// Config derivation: bus width, lanes, limits and the pipeline plan's response to the clock.
#include <gtest/gtest.h>

#include "config.h"
#include "emit.h"
#include "exactsum.h"
#include "fpadd.h"

using namespace panama;

static Inputs base(int ports, double gbps, double mhz) {
  Inputs in;
  in.ports = ports;
  in.gbps = gbps;
  in.mhz = mhz;
  return in;
}

TEST(Config, PanamaPrototypeIs64BitTwoLanes) {
  const Config c = Config::derive(base(4, 10, 200));
  EXPECT_EQ(c.bus_bits, 64);
  EXPECT_EQ(c.lanes, 2);
  EXPECT_EQ(c.max_elems, 362);
  EXPECT_EQ(c.buffer_bytes, 65536);
  EXPECT_EQ(c.bypass_bytes, 32768);
  EXPECT_EQ(c.tree_levels, 2);
}

TEST(Config, HundredGigAt250Is512Bits) {
  const Config c = Config::derive(base(8, 100, 250));
  EXPECT_EQ(c.bus_bits, 512);
  EXPECT_EQ(c.lanes, 16);
}

TEST(Config, BusIsSmallestPowerOfTwoCarryingTheRate) {
  // 25 Gbit/s at 200 MHz needs 125 bits: 128. Exactly 64 bits at 156.25 MHz for 10 Gbit/s.
  EXPECT_EQ(Config::derive(base(2, 25, 200)).bus_bits, 128);
  EXPECT_EQ(Config::derive(base(2, 10, 156.25)).bus_bits, 64);
  EXPECT_EQ(Config::derive(base(2, 1, 1000)).bus_bits, 64);
  EXPECT_EQ(Config::derive(base(2, 400, 100)).bus_bits, 4096);
  EXPECT_THROW(Config::derive(base(2, 410, 100)), ConfigError);
}

TEST(Config, HalfFormatsDoubleTheLanesAndElements) {
  Inputs in = base(4, 10, 200);
  in.format = Format::bf16;
  const Config c = Config::derive(in);
  EXPECT_EQ(c.lanes, 4);
  EXPECT_EQ(c.max_elems, 725);
  EXPECT_EQ(c.fmt.exp_bits, 8);
  in.format = Format::fp16;
  EXPECT_EQ(Config::derive(in).fmt.exp_bits, 5);
}

TEST(Config, RejectsInvalidCombinations) {
  EXPECT_THROW(Config::derive(base(1, 10, 200)), ConfigError);
  EXPECT_THROW(Config::derive(base(257, 10, 200)), ConfigError);
  EXPECT_THROW(Config::derive(base(4, 0, 200)), ConfigError);
  EXPECT_THROW(Config::derive(base(4, -10, 200)), ConfigError);
  EXPECT_THROW(Config::derive(base(4, 10, 0)), ConfigError);
  Inputs in = base(4, 10, 200);
  in.contexts = 0;
  EXPECT_THROW(Config::derive(in), ConfigError);
  in = base(4, 10, 200);
  in.max_elems = (65535 - 50) / 4 + 1;
  EXPECT_THROW(Config::derive(in), ConfigError);
  in.max_elems = (65535 - 50) / 4;  // largest legal COUNT, but 8 contexts of it do not fit 32 KiB
  EXPECT_THROW(Config::derive(in), ConfigError);
  in.buffer_kib = 2048;
  EXPECT_NO_THROW(Config::derive(in));
  in = base(4, 10, 200);
  in.contexts = 23;  // 23 x 1512 = 34776 > 32768
  EXPECT_THROW(Config::derive(in), ConfigError);
  in.contexts = 21;
  EXPECT_NO_THROW(Config::derive(in));
}

TEST(Config, FasterClockGivesMoreShorterStages) {
  int prev = 0;
  for (double mhz : {50.0, 100.0, 200.0, 300.0, 400.0, 500.0}) {
    const Config c = Config::derive(base(4, 10, mhz));
    EXPECT_GE(c.adder.latency, prev) << mhz;
    // Every stage fits the period in the delay model (a single step may exceed it alone).
    double acc = 0, worst = 0;
    for (size_t i = 0; i < c.adder.step_delay_ns.size(); ++i) {
      acc += c.adder.step_delay_ns[i];
      if (c.adder.reg_after[i]) {
        worst = std::max(worst, acc);
        acc = 0;
      }
    }
    const double budget = 1000.0 / mhz - 0.40;
    double longest_step = 0;
    for (double d : c.adder.step_delay_ns) longest_step = std::max(longest_step, d);
    EXPECT_LE(worst, std::max(budget, longest_step) + 1e-9) << mhz;
    prev = c.adder.latency;
  }
  EXPECT_EQ(Config::derive(base(4, 10, 50)).adder.latency, 1);
  EXPECT_GT(Config::derive(base(4, 10, 500)).adder.latency, Config::derive(base(4, 10, 150)).adder.latency);
}

TEST(Config, TreeLatencyIsLevelsTimesAdder) {
  for (int ports : {2, 3, 4, 5, 8, 9, 255, 256}) {
    const Config c = Config::derive(base(ports, 10, 250));
    int levels = 0;
    while ((1 << levels) < ports) ++levels;
    EXPECT_EQ(c.tree_levels, levels);
    EXPECT_EQ(c.addtree_latency, levels * c.adder.latency);
  }
}

TEST(Tree, AbsentLeavesBecomeConstantsAndPassThroughs) {
  // 5 ports: leaves 0..4 live, 5..7 are -0. Level 1: (0,1) (2,3) adders, (4,-0) adder on a
  // raw leaf, (-0,-0) constant. Level 2: adder, then (adder,-0) pass. Level 3: adder.
  const auto t = resolve_tree(5);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[1], (std::vector<NodeKind>{NodeKind::adder, NodeKind::adder, NodeKind::adder, NodeKind::neg_zero}));
  EXPECT_EQ(t[2], (std::vector<NodeKind>{NodeKind::adder, NodeKind::pass}));
  EXPECT_EQ(t[3], (std::vector<NodeKind>{NodeKind::adder}));
  long adders = 0;
  for (const auto& lv : resolve_tree(256))
    for (auto k : lv) adders += k == NodeKind::adder;
  EXPECT_EQ(adders, 255);
}

// Exact-sum mode (--sum exact): selected by Inputs::sum, carried through config.json, and its
// accumulator wide enough for N times the largest finite value (numerics.md).
TEST(Config, ExactSumModeRoundTripsAndSetsTheTreeLatency) {
  Inputs in = base(8, 10, 250);
  in.sum = "exact";
  const Config c = Config::derive(in);
  EXPECT_TRUE(c.exact_sum());
  EXPECT_EQ(c.addtree_latency, c.exact.latency);
  EXPECT_GT(c.exact.latency, 0);
  const auto j = c.to_json();
  EXPECT_EQ(j.at("sum"), "exact");
  // fp32: 23 fraction bits + exponents 1..254 (253 shifts) + hidden = 277; 8 ports: 3 more; sign.
  EXPECT_EQ(j.at("exact_acc_bits"), 277 + 3 + 1);
  const Config back = Config::from_json(j);
  EXPECT_TRUE(back.exact_sum());
  EXPECT_EQ(back.addtree_latency, c.addtree_latency);
  EXPECT_EQ(Config::derive(base(8, 10, 250)).to_json().at("sum"), "tree");
  in.sum = "fast";
  try {
    Config::derive(in);
    FAIL() << "--sum fast accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--sum must be tree or exact, got 'fast'");
  }
}

TEST(Config, ExactSumPipelineFollowsTheClock) {
  Inputs in = base(8, 10, 150);
  in.sum = "exact";
  const int slow = Config::derive(in).addtree_latency;
  in.mhz = 450;
  EXPECT_GT(Config::derive(in).addtree_latency, slow);
}

// The plan's flip-flop counts (the area estimate, panama_config) are those of the Verilog the
// emitters write (panama_emit): the exact lane's live signals at each register stage are counted
// without emitting, and emit_exactlane refuses a lane whose registers differ from that count.
TEST(Plan, ExactLaneFlipFlopsMatchTheEmittedRegisters) {
  int checked = 0;
  for (const char* fmt : {"fp32", "bf16", "fp16"})
    for (const char* sub : {"ieee", "ftz"})
      for (int ports : {2, 3, 5, 8, 17, 32})
        for (double mhz : {100.0, 250.0, 500.0}) {
          Inputs in = base(ports, 10, mhz);
          in.format = parse_format(fmt);
          in.subnormals = parse_subnormals(sub);
          in.sum = "exact";
          in.module = "addtree";
          const Config c = Config::derive(in);
          const std::string v = emit_exactlane(c);
          // Every register the lane declares: "reg  [w-1:0] name;".
          long bits = 0;
          for (size_t p = v.find("  reg  ["); p != std::string::npos; p = v.find("  reg  [", p + 1))
            bits += std::stol(v.substr(p + 8)) + 1;
          EXPECT_EQ(bits, exactlane_flipflops(c)) << fmt << " " << sub << " " << ports << " ports " << mhz << " MHz";
          ++checked;
        }
  EXPECT_EQ(checked, 108);
}

TEST(Plan, AdderFlipFlopsMatchTheEmittedRegisters) {
  for (const char* fmt : {"fp32", "bf16", "fp16"})
    for (double mhz : {100.0, 200.0, 322.0, 500.0}) {
      Inputs in = base(4, 10, mhz);
      in.format = parse_format(fmt);
      in.module = "addtree";
      const Config c = Config::derive(in);
      const std::string v = emit_fpadd(c);
      long bits = 0;
      for (size_t p = v.find("  reg  ["); p != std::string::npos; p = v.find("  reg  [", p + 1))
        bits += std::stol(v.substr(p + 8)) + 1;
      EXPECT_EQ(bits, fpadd_flipflops(c)) << fmt << " " << mhz << " MHz";
    }
}
