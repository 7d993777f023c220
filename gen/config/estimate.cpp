// The generator's own area estimate of an output (planning, library panama_config): it counts
// the resolved tree's adders and reads the buffer plan and the register file's counter count.
#include "estimate.h"

#include <algorithm>
#include <cmath>

#include "exactsum.h"
#include "fpadd.h"
#include "regs_rtl.h"
#include "top.h"

namespace panama {

std::vector<std::vector<NodeKind>> resolve_tree(int ports) {
  int p = 1;
  while (p < ports) p *= 2;
  std::vector<std::vector<NodeKind>> lv(1);
  for (int i = 0; i < p; ++i) lv[0].push_back(i < ports ? NodeKind::leaf : NodeKind::neg_zero);
  while (lv.back().size() > 1) {
    const auto& below = lv.back();
    std::vector<NodeKind> up;
    for (size_t k = 0; k < below.size() / 2; ++k) {
      const NodeKind a = below[2 * k], b = below[2 * k + 1];
      if (a == NodeKind::neg_zero && b == NodeKind::neg_zero)
        up.push_back(NodeKind::neg_zero);
      else if (b == NodeKind::neg_zero && (a == NodeKind::adder || a == NodeKind::pass))
        // add(x, -0) = x bit for bit when x already left an adder (canonical NaN, no subnormal
        // in ftz mode), so only a delay is needed. A raw leaf still goes through an adder.
        up.push_back(NodeKind::pass);
      else
        up.push_back(NodeKind::adder);
    }
    lv.push_back(up);
  }
  return lv;
}

// The generator's own resource estimate: UltraScale+ cells after Yosys 0.23 `synth_xilinx -family
// xcup -abc9 -flatten` (the flow of scripts/timing), per module with what it instantiates, and
// the top's totals. Each term is fitted to scripts/timing's per-module syntheses of 4 x 10G @ 200
// (W 64) and 8 x 100G @ 250 (W 512), both with 8 contexts and 64 KiB per port (docs/rtl.md,
// "Resource estimate"), and follows the structure that sets it: adders per tree node, the
// contribution memory's depth T for the port's distributed RAM and its read multiplexers, the
// bus width for the builder and the output FIFO, the counter count for the register file.
namespace {

// Block RAM36 (RAMB18 count as halves) of a memory of depth x width bits with one write and one
// synchronous read port, the way Yosys 0.23 maps it for UltraScale+: the largest power of two
// not above the depth in one aspect ratio of one primitive for every word (the cheaper of
// RAMB18 and RAMB36), the rest of the depth again the same way.
double bram36_for(long depth, long width) {
  if (depth <= 0 || width <= 0) return 0;
  long main = 512;
  while (main * 2 <= depth) main *= 2;
  if (depth < 512) main = depth;
  // (depth, width) of each aspect ratio, RAMB18 then RAMB36 (72 bits: simple dual port).
  static const long r18[][2] = {{16384, 1}, {8192, 2}, {4096, 4}, {2048, 9}, {1024, 18}, {512, 36}};
  static const long r36[][2] = {{32768, 1}, {16384, 2}, {8192, 4}, {4096, 9}, {2048, 18}, {1024, 36}, {512, 72}};
  double best = 1e18;
  for (const auto& m : r18)
    best = std::min(best, 0.5 * static_cast<double>(((main + m[0] - 1) / m[0]) * ((width + m[1] - 1) / m[1])));
  for (const auto& m : r36)
    best = std::min(best, static_cast<double>(((main + m[0] - 1) / m[0]) * ((width + m[1] - 1) / m[1])));
  return best + (depth > main ? bram36_for(depth - main, width) : 0.0);
}

// The parser and the port (the parser included) of configuration c.
std::pair<ModuleEstimate, ModuleEstimate> parser_port_estimates(const Config& c, const BufferPlan& plan) {
  const long W = c.bus_bits, BB = W / 8, N = c.in.ports, C = c.in.contexts;
  // Parser (inside each port): 307 LUTs / 352 FFs at W 64, 364 / 347 at W 512 (the descriptor's
  // header fields are the kept header bytes; 489 / 552 and 540 / 547 when they were copied).
  // With two descriptor stages: the registered length, port, last-beat and error flags, and the copy
  // of the header bytes of beat 0 that the descriptor reads (eth.dst at W 64; every field read
  // from W 512 on, where the whole header is in beat 0).
  const long parser_ff2 = c.desc_stages > 1 ? 35 + (BB >= 64 ? 250 : 48) : 0;
  // Its LUTs: 179 at W 64 with two stages (the checks start from registers, not the live view).
  const ModuleEstimate parser{"parser", N, (c.desc_stages > 1 ? 171 : 299) + (W * 127) / 1000, 0, 350 + parser_ff2,
                              0,        0};
  // Port (parser included): T = the contribution memory's beats (the contribution half), D =
  // frame descriptors. The contribution memory (split where its width is not a whole number of
  // block RAM widths at depth T, as rtl/panama_port_alloc.v does), its links, the free segments, the
  // bypass FIFO and the descriptors (head fields, read for the scheduler's look at one context,
  // and header fields) are block RAM read synchronously; what stays in distributed RAM is the
  // descriptors' next pointers (read when a queue pops), D deep, 64 words per LUT group, mPP's
  // four-beat FIFO and the heads' ages (two C-word RAMs of 32 bits). Each context costs about
  // 113 LUTs and 49 FFs (its queue's head, tail and flags, `used` and `over(used)` loaded from
  // one accounting datapath, its match with the port's roles and its timeout mark): 2045 LUTs / 1326 FFs at 4 x 10G
  // (C = 8), 1331 / 1028 with C = 2; 1954 / 2152 and 1310 / 1890 at 8 x 100G.
  const long T = plan.mem_beats, D = plan.descs;
  const long BW = clog2(T), SBW = clog2(plan.frame_beats + 1), DW = clog2(D), HIW = BW + SBW + 50;
  const long XW = W + clog2(BB) + 3;  // a bypass FIFO word: tdata, byte count, tlast, tuser
  const long port_lutram =
      ((D + 63) / 64) * 8 * ((DW + 6) / 7) + 8 * ((XW + 13) / 14) + 2 * 8 * ((32 + 13) / 14) * ((C + 31) / 32);
  // Two descriptor stages: the beat registered once more (tdata, byte count, valid, last, user).
  const long rx2_ffs = c.desc_stages > 1 ? W + clog2(BB) + 4 : 0;
  ModuleEstimate port{"port",
                      N,
                      1037 + 113 * C + (T * 254) / 10000,
                      port_lutram,
                      844 + 49 * C + (W * 1844) / 1000 + rx2_ffs + parser_ff2,
                      0,
                      0};
  // Block RAM, memory by memory as Yosys maps them (bram36_for): 21.5 at W 64, 19 at W 512.
  const long b36w = T <= 512     ? 72
                    : T <= 1024  ? 36
                    : T <= 2048  ? 18
                    : T <= 4096  ? 9
                    : T <= 8192  ? 4
                    : T <= 16384 ? 2
                                 : 1;
  const long whole = (W + BW) / b36w * b36w;  // the widest whole number of RAMB36 widths
  const long blo = whole == 0 ? W + BW : whole;
  port.bram36 = bram36_for(plan.byp_beats, XW) + bram36_for(T, blo) + bram36_for(T, W + BW - blo) + bram36_for(T, BW) +
                bram36_for(plan.segs, BW + SBW) + bram36_for(D, 104) + bram36_for(D, HIW) + bram36_for(D, DW);
  return {parser, port};
}

// The port's blocks (each counted in the port's estimate too): the bypass FIFO with transmit,
// the contribution memory with its allocator, admission, the descriptors and queues. Fitted to
// the same syntheses as the port (each block alone: 107 / 282 / 785 / 503 LUTs at 4 x 10G, 158 / 223 / 635 / 510 at 8 x
// 100G).
std::vector<ModuleEstimate> port_block_estimates(const Config& c, const BufferPlan& plan) {
  const long W = c.bus_bits, BB = W / 8, N = c.in.ports, C = c.in.contexts;
  const long T = plan.mem_beats, D = plan.descs;
  const long BW = clog2(T), SBW = clog2(plan.frame_beats + 1), DW = clog2(D), HIW = BW + SBW + 50;
  const long XW = W + clog2(BB) + 3;
  const long UW = std::max<long>(clog2(plan.contrib_beats + 1), SBW + 1);
  // Bypass: the FIFO (block RAM), mPP's four-beat FIFO (distributed RAM), the read word and
  // output register, pointers and counts.
  ModuleEstimate byp{"port_bypass", N, 100 + W / 9, 8 * ((XW + 13) / 14), 78 + (W * 1092) / 1000, 0, 0};
  byp.bram36 = bram36_for(plan.byp_beats, XW);
  // Allocator: beats and links, the links again, the free segments (block RAM); the walk's
  // pointers and counts, the forwarding of the last write to each read.
  ModuleEstimate alloc{"port_alloc", N, 206 + (T * 18) / 1000, 0, 36 + 12 * BW, 0, 0};
  const long b36w = T <= 512     ? 72
                    : T <= 1024  ? 36
                    : T <= 2048  ? 18
                    : T <= 4096  ? 9
                    : T <= 8192  ? 4
                    : T <= 16384 ? 2
                                 : 1;
  const long whole = (W + BW) / b36w * b36w;
  const long blo = whole == 0 ? W + BW : whole;
  alloc.bram36 = bram36_for(T, blo) + bram36_for(T, W + BW - blo) + bram36_for(T, BW) + bram36_for(plan.segs, BW + SBW);
  // Admission: per context its match and roles, used and over(used); one accounting datapath.
  const ModuleEstimate admit{"port_admit", N, 135 + (25 * UW * C) / 4, 0, 12 + 6 * UW + 2 * UW * C, 0, 0};
  // Queues: head and tail per context, the head reads' registers; next pointers and the heads'
  // ages in distributed RAM, the descriptors' fields and free list in block RAM.
  ModuleEstimate queues{"port_queues",
                        N,
                        268 + 30 * C,
                        ((D + 63) / 64) * 8 * ((DW + 6) / 7) + 2 * 8 * ((32 + 13) / 14) * ((C + 31) / 32),
                        142 + HIW + 2 * DW * C,
                        0,
                        0};
  queues.bram36 = bram36_for(D, 104) + bram36_for(D, HIW) + bram36_for(D, DW);
  return {byp, alloc, admit, queues};
}

}  // namespace

Resources estimate_resources(const Config& c) {
  Resources r;
  const long W = c.bus_bits, BB = W / 8, N = c.in.ports, C = c.in.contexts;
  // Adders: the tree nodes that need one (not constants, not pass-throughs), per lane.
  long adders = 0;
  for (const auto& level : resolve_tree(c.in.ports))
    for (NodeKind k : level) adders += k == NodeKind::adder;
  ModuleEstimate tree{"addtree", 1, 0, 0, 0, 0, 0};
  if (c.exact_sum()) {
    // Exact mode: per lane the leaf shifters, N - 1 rows of 3:2 compressors (one LUT6_2 per
    // bit), the addition and negation carry chains, the leading-one search and the final shift.
    const ExactWidths xw = exact_widths(c.fmt, c.in.ports);
    const long M = xw.mag_bits, A = xw.acc_bits, PW = clog2(A - 1);
    const long lane = N * (M * ((c.fmt.exp_bits + 1) / 2) + c.elem_bits) + (N - 1) * A + 2 * A + A + A * (PW + 1) / 2 +
                      3 * (c.fmt.exp_bits + c.fmt.frac_bits);
    r.modules.push_back(ModuleEstimate{"exactlane", c.lanes, lane, 0, exactlane_flipflops(c), 0, 0});
    tree.luts = lane * c.lanes;
    tree.ffs = exactlane_flipflops(c) * c.lanes + c.addtree_latency;
  } else {
    r.fpadd_instances = adders * c.lanes;
    // One adder (abc9): fp32 433 LUTs at 200 MHz, 417 at 250 MHz; bf16 and fp16 scaled by their
    // adder areas against fp32's (207 and 212 against 551 in the first fit). The tree's member
    // gating costs next to nothing: the tree is its adders (2600 = 6 x 433, 46178 = 112 x 412).
    const long fp_luts = c.elem_bits == 32 ? 425 : (c.fmt.exp_bits == 8 ? 160 : 164);
    // SRLs: stages of the fp32 adder that delay operands by more than one cycle (4 at 250 MHz).
    const long fp_srl = c.elem_bits == 32 && c.addtree_latency / std::max<long>(1, clog2(N)) >= 4 ? 4 : 0;
    r.modules.push_back(ModuleEstimate{"fpadd", r.fpadd_instances, fp_luts, fp_srl, fpadd_flipflops(c), 0, 0});
    tree.luts = r.fpadd_instances * fp_luts;
    tree.lutram = r.fpadd_instances * fp_srl;
    tree.ffs = r.fpadd_instances * fpadd_flipflops(c) + c.addtree_latency;
  }
  r.modules.push_back(tree);
  r.luts = tree.luts;
  r.lutram = tree.lutram;
  r.ffs = tree.ffs;
  if (c.in.module != "top") return r;
  const BufferPlan plan = buffer_plan(c);
  const auto [parser, port] = parser_port_estimates(c, plan);
  r.modules.push_back(parser);
  for (const auto& b : port_block_estimates(c, plan)) r.modules.push_back(b);
  r.modules.push_back(port);
  // Register file: the NCNT = 16 N + 2 C + 1 counters in one block RAM (NCNT x 64 bits, 512 words
  // per RAMB36), each with a PW-bit pending count, a valid bit and a place in the flush's one-hot
  // ring in flip-flops, flushed by a plain round robin that LO reads wait for, plus the context
  // registers (70 + N bits each, read through one multiplexer by context index) and the
  // addressed context's fields for the enable checks; the header fields (six words, 160 bits per
  // context) in distributed RAM with two read ports: RAM32M16 groups of 14 bits, 2 x 16 of them
  // per 32 contexts. 1904 LUTs + 263 LUTRAM sites, 1740 FFs, 1 BRAM36 at 4 x 10G (C = 8,
  // NCNT = 81); about 10 LUTs per counter and 122 per context (C = 2 and 8 x 100G, NCNT = 145);
  // 3271 LUTs at 4 x 10G when reads took the flush's slot for their counter.
  const long ncnt = regs_counter_count(c);
  ModuleEstimate regs{"regs",
                      1,
                      100 + 10 * ncnt + 122 * C,
                      2 * 8 * 16 * ((C + 31) / 32),
                      440 + 2 * N + ncnt * (regs_pending_bits(c) + 2) + (70 + N) * C,
                      0,
                      static_cast<double>((ncnt + 511) / 512)};
  r.modules.push_back(regs);
  // Scheduler, result builder and m_agg FIFO, with the adder tree. It looks at one context per
  // cycle, so its decision logic is per port (A1's checks, the minimum tree) and per context
  // (E, the pick); the builder selects one word from every member port (N x W) and reads the
  // context's addresses from the register file's RAM. Without the tree: 1980 LUTs at 4 x 10G
  // (2155 with an adder for E per context, 2873 when it selected the addresses of B's context from every context's
  // registers, 5633 when every (port, context) pair was evaluated every cycle). Flip-flops: E and its time per context,
  // a per-port pipeline of the heads' first beats and beats (A2, B, the issue stage), the minimum tree, the output
  // register. The header word travels beside the tree in SRLs (W + W/8 bits); the m_agg FIFO (W + W/8 + 1 bits, FD
  // beats) is block RAM when deeper than 64 beats (3 RAMB18E2 at W 64), else distributed RAM.
  ModuleEstimate sched{"sched", 1, 0, 0, 0, 0, 0};
  const long NB = clog2(plan.frame_beats + 1), BW = clog2(plan.mem_beats);
  sched.luts = tree.luts + 1882 + 26 * C + (N * W * 434) / 1000;
  sched.ffs = tree.ffs + 600 + 66 * C + 2 * N * C + N * (3 * (BW + NB) + 38) + W / 2;
  sched.lutram = tree.lutram + (W + BB) * std::max<long>(1, (c.addtree_latency + 15) / 32);
  {
    const long fw = W + BB + 1, fd = plan.agg_fifo;
    if (fd > 64) {
      sched.bram36 = static_cast<double>(((fw + 35) / 36) * ((fd + 511) / 512)) / 2;
    } else {
      sched.lutram += fd <= 32 ? 8 * ((fw + 13) / 14) : 8 * ((fw + 6) / 7);
    }
  }
  r.modules.push_back(sched);
  // The top: every port, the scheduler (tree included) and the register file.
  r.luts = N * port.luts + sched.luts + regs.luts;
  r.lutram = N * port.lutram + sched.lutram + regs.lutram;
  r.ffs = N * port.ffs + sched.ffs + regs.ffs;
  r.bram36 = static_cast<long>(std::ceil(N * port.bram36 + sched.bram36 + regs.bram36));
  r.dsps = N * port.dsps + sched.dsps;
  return r;
}

}  // namespace panama
