// The SIMD adder tree: LANES identical trees over the N ports, in the fixed order of
// numerics.md (leaves over port indices padded with -0.0 to a power of two, pairwise by level).
#include <sstream>

#include "emit.h"
#include "exactsum.h"
#include "fpadd.h"

namespace panama {

std::string addtree_valid_and_lanes(int L) {
  std::ostringstream v;
  v << "  // Valid travels beside the data; the data registers need no reset.\n";
  v << "  reg [LATENCY-1:0] valid_q;\n";
  v << "  always @(posedge clk) begin\n"
    << "    if (rst) valid_q <= {LATENCY{1'b0}};\n";
  if (L == 1)
    v << "    else valid_q <= in_valid;\n";
  else
    v << "    else valid_q <= {valid_q[LATENCY-2:0], in_valid};\n";
  v << "  end\n";
  v << "  assign out_valid = valid_q[LATENCY-1];\n\n";
  v << "  genvar lane;\n";
  v << "  generate\n";
  v << "    for (lane = 0; lane < LANES; lane = lane + 1) begin : g_lane\n";
  return v.str();
}

std::string addtree_header(const Config& c) {
  const int N = c.in.ports, LANES = c.lanes, WD = c.elem_bits;
  const std::string mod = c.module_name("addtree");
  std::ostringstream v;
  v << "module " << mod << " (\n"
    << "  input  wire clk,\n"
    << "  input  wire rst,\n"
    << "  // One beat: LANES elements from each of the N ports.\n"
    << "  input  wire in_valid,\n"
    << "  // 1 = port p is a member for this beat; an absent port's leaf is -0.0.\n"
    << "  input  wire [" << N - 1 << ":0] in_mask,\n"
    << "  // Port p, lane l at [(p*LANES + l)*WIDTH +: WIDTH].\n"
    << "  input  wire [" << N * LANES * WD - 1 << ":0] in_data,\n"
    << "  output wire out_valid,\n"
    << "  // Lane l at [l*WIDTH +: WIDTH].\n"
    << "  output wire [" << LANES * WD - 1 << ":0] out_data\n"
    << ");\n\n";
  v << "  // Elements per beat.\n  localparam LANES = " << LANES << ";\n";
  v << "  // Element width in bits.\n  localparam WIDTH = " << WD << ";\n";
  return v.str();
}

std::string emit_addtree(const Config& c) {
  if (c.exact_sum()) return emit_exact_addtree(c);
  const int N = c.in.ports, WD = c.elem_bits, L = c.addtree_latency, LA = c.adder.latency;
  const auto tree = resolve_tree(N);
  std::ostringstream v;
  const std::string mod = c.module_name("addtree");
  const std::string neg_zero = std::to_string(WD) + "'h" + (WD == 32 ? "80000000" : "8000");
  v << addtree_header(c);
  v << "  // Cycles from a beat in to its sum out (levels x adder latency).\n  localparam LATENCY = " << L << ";\n";
  bool neg_zero_used = false;  // a raw leaf paired with an absent slot (odd live count)
  for (size_t level = 1; level < tree.size(); ++level)
    for (size_t k = 0; k < tree[level].size(); ++k)
      if (tree[level][k] == NodeKind::adder && tree[level - 1][2 * k + 1] == NodeKind::neg_zero) neg_zero_used = true;
  if (neg_zero_used)
    v << "  // The identity of roundTiesToEven addition: the leaves of absent ports.\n  localparam [WIDTH-1:0] "
         "NEG_ZERO = "
      << neg_zero << ";\n";
  v << "\n";

  v << addtree_valid_and_lanes(L);
  for (int p = 0; p < N; ++p)
    v << "      wire [WIDTH-1:0] leaf_" << p << " = in_data[(" << p << "*LANES + lane)*WIDTH +: WIDTH];\n";
  auto name = [&](size_t level, size_t k) -> std::string {
    if (level == 0) return tree[0][k] == NodeKind::neg_zero ? std::string("NEG_ZERO") : "leaf_" + std::to_string(k);
    if (tree[level][k] == NodeKind::neg_zero) return "NEG_ZERO";
    return "l" + std::to_string(level) + "_n" + std::to_string(k);
  };
  // Leaves are gated by the member mask inside the first-level adders (en = 0: -0.0).
  auto enable = [&](size_t level, size_t k) -> std::string {
    if (level == 0) return tree[0][k] == NodeKind::leaf ? "in_mask[" + std::to_string(k) + "]" : "1'b0";
    return tree[level][k] == NodeKind::neg_zero ? "1'b0" : "1'b1";
  };
  for (size_t level = 1; level < tree.size(); ++level) {
    v << "      // Level " << level << "\n";
    for (size_t k = 0; k < tree[level].size(); ++k) {
      const std::string out = name(level, k), a = name(level - 1, 2 * k), b = name(level - 1, 2 * k + 1);
      switch (tree[level][k]) {
        case NodeKind::neg_zero:
        case NodeKind::leaf:
          break;
        case NodeKind::adder:
          v << "      wire [WIDTH-1:0] " << out << ";\n";
          v << "      " << c.module_name("fpadd") << " u_" << out << " (.clk(clk), .a(" << a << "), .a_en("
            << enable(level - 1, 2 * k) << "), .b(" << b << "), .b_en(" << enable(level - 1, 2 * k + 1) << "), .y("
            << out << "));\n";
          break;
        case NodeKind::pass:
          v << "      // " << a << " + -0.0 = " << a << ": delay only.\n";
          for (int d = 0; d < LA; ++d) {
            v << "      reg [WIDTH-1:0] " << out << "_d" << d << ";\n";
            v << "      always @(posedge clk) " << out << "_d" << d
              << " <= " << (d == 0 ? a : out + "_d" + std::to_string(d - 1)) << ";\n";
          }
          v << "      wire [WIDTH-1:0] " << out << " = " << out << "_d" << LA - 1 << ";\n";
          break;
      }
    }
  }
  v << "      assign out_data[lane*WIDTH +: WIDTH] = " << name(tree.size() - 1, 0) << ";\n";
  v << "    end\n";
  v << "  endgenerate\n\n";
  v << "endmodule\n";
  return v.str();
}

}  // namespace panama
