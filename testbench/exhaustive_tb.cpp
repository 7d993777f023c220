// Exhaustive testbench of a generated 2-port adder tree of a 16-bit format (--ports 2, several
// lanes per beat): every ordered pair (a, b) of the 2^32, in order, against the CPU reference of
// numerics.md (ref::add; for two members the exact-sum mode's single rounding of a + b is the
// same value: the exact sum of two operands lies on the result's grid unless it needs rounding
// at a normal exponent, where both round alike). --first/--pairs select a slice.
#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "Vaddtree.h"
#include "ref_float.h"
#include "vl_util.h"
#include "verilated.h"

int main(int argc, char** argv) {
  uint64_t first = 0, pairs = uint64_t{1} << 32;
  const std::string config = tb::parse_flags(argc, argv, "exhaustive_tb",
                                             {{"--first", [&](const std::string& v) { first = tb::to_u64(v); }},
                                              {"--pairs", [&](const std::string& v) { pairs = tb::to_u64(v); }}});
  nlohmann::json cfg;
  {
    std::ifstream f(config);
    if (!f) {
      std::fprintf(stderr, "exhaustive_tb: cannot read %s\n", config.c_str());
      return 2;
    }
    f >> cfg;
  }
  const int N = cfg.at("ports"), LANES = cfg.at("lanes"), L = cfg.at("addtree_latency");
  const std::string fs = cfg.at("format");
  if (N != 2 || fs == "fp32" || first + pairs > (uint64_t{1} << 32)) {
    std::fprintf(stderr, "exhaustive_tb: needs a 2-port bf16 or fp16 tree and a slice within 2^32 pairs\n");
    return 2;
  }
  const panama::Format fmt = panama::parse_format(fs);
  const bool ftz = cfg.at("subnormals") == "ftz";
  // ref::add for a 16-bit format is double_to_half(half_to_double(a) + half_to_double(b)); the
  // operand values are tabulated once (2^16 of them) instead of decoded 2^33 times.
  const panama::ref::FmtBits fb = panama::ref::fmt_bits(fmt);
  std::vector<double> value(1u << 16);
  for (uint32_t h = 0; h < (1u << 16); ++h) value[h] = panama::ref::half_to_double(h, fb, ftz);
  auto ctx = std::make_unique<VerilatedContext>();
  auto top = std::make_unique<Vaddtree>(ctx.get());
  top->rst = 1;
  for (int i = 0; i < 2; ++i) {
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
  }
  top->rst = 0;
  tb::set_bits(top->in_mask, 0, 2, 3);
  const uint64_t beats = (pairs + LANES - 1) / LANES;
  uint64_t checked = 0, bad = 0;
  for (uint64_t k = 0; k < beats + L; ++k) {
    top->in_valid = k < beats;
    for (int l = 0; l < LANES; ++l) {
      const uint64_t i = first + k * LANES + l;
      tb::set_field(top->in_data, l * 16, 16, (i >> 16) & 0xFFFF);
      tb::set_field(top->in_data, (LANES + l) * 16, 16, i & 0xFFFF);
    }
    top->clk = 0;
    top->eval();
    top->clk = 1;
    top->eval();
    // After edge k the beat sent at edge k - L + 1 is on the outputs.
    if (k + 1 < static_cast<uint64_t>(L)) continue;
    const uint64_t ob = k + 1 - L;
    if (!top->out_valid) {
      if (ob < beats && ++bad <= 10) std::fprintf(stderr, "beat %llu: out_valid low\n", (unsigned long long)ob);
      continue;
    }
    for (int l = 0; l < LANES; ++l) {
      const uint64_t j = ob * LANES + l;
      if (j >= pairs) break;
      const uint64_t i = first + j;
      const uint32_t a = static_cast<uint32_t>((i >> 16) & 0xFFFF), b = static_cast<uint32_t>(i & 0xFFFF);
      const uint32_t want = panama::ref::double_to_half(value[a] + value[b], fb, ftz);
      const uint32_t got = static_cast<uint32_t>(tb::get_field(top->out_data, l * 16, 16));
      ++checked;
      if (got != want && ++bad <= 10) std::fprintf(stderr, "%04x + %04x: RTL %04x, reference %04x\n", a, b, got, want);
    }
  }
  std::printf("exhaustive %s: %s/%s sum %s, %d lanes: pairs %llu..%llu, %llu checked, %llu mismatches\n",
              config.c_str(), fs.c_str(), ftz ? "ftz" : "ieee", cfg.value("sum", std::string("tree")).c_str(), LANES,
              (unsigned long long)first, (unsigned long long)(first + pairs - 1), (unsigned long long)checked,
              (unsigned long long)bad);
  return bad == 0 && checked == pairs ? 0 : 1;
}
