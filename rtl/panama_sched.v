// SPDX-License-Identifier: MIT
// The aggregation scheduler (docs/rtl.md, accelerator.md rules 5-8: stale, build, count
// mismatch, incomplete, skip, timeout), the result builder and the m_agg FIFO. It looks at one
// context per cycle: the ports answer with that context's queue heads, a pipeline decides on
// them, pops the heads, reads a build's contributions from every member port into the adder
// tree (<prefix>_addtree, which the generator writes for the configuration), rewrites the
// copied header beside the tree and queues the built frame for m_agg.
`timescale 1ns / 1ps
`default_nettype none

module panama_sched #(
  // Switch ports, 2..256.
  parameter PORTS = 4,
  // (JID, TID) contexts, 1..256.
  parameter CONTEXTS = 8,
  // Bus width in bits: a power of two, 64..4096.
  parameter DATA_W = 64,
  // Bytes per element: 4 (fp32) or 2 (bf16, fp16).
  parameter ELEM_BYTES = 4,
  // Bits of a contribution memory address (a beat of a port's buffer).
  parameter ADDR_W = 13,
  // Bits of a beat index within a frame (holds 0..beats of the largest frame).
  parameter BEAT_W = 8,
  // m_agg FIFO depth in beats: a power of two, at least 4, room for the largest frame plus the
  // beats in flight behind the reservation.
  parameter FIFO_DEPTH = 256,
  // Adder tree latency in cycles.
  parameter TREE_LATENCY = 6
) (
  input  wire clk,
  input  wire rst,
  input  wire [31:0] now,
  // Context table.
  // One-cycle pulse: context c was just enabled (its expected VID starts at 0).
  input  wire [CONTEXTS-1:0] ctx_enable_set,
  // Context c is disabled or just enabled (~enable | ctx_enable_set, a register of the register
  // file): its looks are dropped.
  input  wire [CONTEXTS-1:0] ctx_kill,
  input  wire [CONTEXTS*PORTS-1:0] ctx_members,
  input  wire [CONTEXTS-1:0] ctx_upstream,
  // The register file's header fields of context hdr_ctx (B's), read without a clock:
  // {group MAC, own MAC, group IP, own IP}.
  output wire [(CONTEXTS > 1 ? $clog2(CONTEXTS) : 1)-1:0] hdr_ctx,
  input  wire [159:0] ctx_hdr,
  input  wire [CONTEXTS*32-1:0] ctx_timeout,
  // The context whose heads the ports check for timeouts in this cycle (in turn) and its
  // timeout, registered: one multiplexer of the timeouts for every port.
  output reg  [(CONTEXTS > 1 ? $clog2(CONTEXTS) : 1)-1:0] to_ctx,
  output reg  [31:0] to_cycles,
  output wire [CONTEXTS*32-1:0] ctx_expected_vid,
  // Queue state of every port: port p, context c at index p*C + c. A head is present; the head
  // has waited longer than its context's timeout since it became head (the port checks one
  // context per cycle; registered). The scheduler looks again at a context when these change.
  input  wire [PORTS*CONTEXTS-1:0] q_valid,
  input  wire [PORTS*CONTEXTS-1:0] q_expired,
  // The context looked at (registered) and its expected VID; every port answers two cycles
  // after (the head's descriptor is read from block RAM, then compared and registered in the
  // port) with its head of that context as it was in the cycle of ev_ctx: present, stale, at E,
  // VID - E, COUNT, FIN, CE, first beat, beats, timed out.
  output reg  [(CONTEXTS > 1 ? $clog2(CONTEXTS) : 1)-1:0] ev_ctx,
  output reg  [31:0] ev_e,
  input  wire [PORTS-1:0] ev_valid,
  input  wire [PORTS-1:0] ev_stale,
  input  wire [PORTS-1:0] ev_at_e,
  input  wire [PORTS*32-1:0] ev_dist,
  input  wire [PORTS*16-1:0] ev_count,
  input  wire [PORTS-1:0] ev_fin,
  input  wire [PORTS-1:0] ev_ce,
  input  wire [PORTS*ADDR_W-1:0] ev_ptr,
  input  wire [PORTS*BEAT_W-1:0] ev_beats,
  input  wire [PORTS-1:0] ev_expired,
  // Registered: remove these heads, whose first beats and beats are pop_first and pop_beats;
  // q_hold: they are a build's (free the beats at q_release).
  output reg  [PORTS*CONTEXTS-1:0] q_pop,
  output reg  [PORTS*ADDR_W-1:0] pop_first,
  output reg  [PORTS*BEAT_W-1:0] pop_beats,
  output reg  q_hold,
  output reg  q_release,
  // Header fields of each port's head of context meta_sel (B's context; answered the cycle after).
  output wire [(CONTEXTS > 1 ? $clog2(CONTEXTS) : 1)-1:0] meta_sel,
  input  wire [PORTS*48-1:0] meta_eth_dst,
  input  wire [PORTS*8-1:0] meta_tos,
  input  wire [PORTS*32-1:0] meta_ip_dst,
  input  wire [PORTS*16-1:0] meta_csum_part,
  // Contribution memory reads, one per port; beat and link one cycle later.
  output wire [PORTS*ADDR_W-1:0] rd_addr,
  input  wire [PORTS*DATA_W-1:0] rd_data,
  input  wire [PORTS*ADDR_W-1:0] rd_link,
  // Drop counter pulses per port: stale, incomplete, count_mismatch, timeout.
  output reg  [PORTS*4-1:0] drop_inc,
  output reg  [CONTEXTS-1:0] ctx_completed_inc,
  output reg  [CONTEXTS-1:0] ctx_dropped_inc,
  output wire agg_tx_inc,
  // Built frames to the switch chip.
  output wire [DATA_W-1:0] m_agg_axis_tdata,
  output wire [DATA_W/8-1:0] m_agg_axis_tkeep,
  output wire m_agg_axis_tvalid,
  output wire m_agg_axis_tlast,
  input  wire m_agg_axis_tready
);

`include "panama_defs.vh"
`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_ports, PORTS >= 2 && PORTS <= 256,
                  "panama_sched: PORTS must be 2..256")
  `PANAMA_REQUIRE(g_req_contexts, CONTEXTS >= 1 && CONTEXTS <= 256,
                  "panama_sched: CONTEXTS must be 1..256")
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 4096 && (DATA_W & (DATA_W - 1)) == 0,
                  "panama_sched: DATA_W must be a power of two, 64..4096")
  `PANAMA_REQUIRE(g_req_elem_bytes, ELEM_BYTES == 2 || ELEM_BYTES == 4,
                  "panama_sched: ELEM_BYTES must be 2 or 4")
  `PANAMA_REQUIRE(g_req_addr_w, ADDR_W >= 1 && ADDR_W <= 32,
                  "panama_sched: ADDR_W must be 1..32")
  `PANAMA_REQUIRE(g_req_beat_w, BEAT_W >= 1 && BEAT_W <= 16,
                  "panama_sched: BEAT_W must be 1..16")
  `PANAMA_REQUIRE(g_req_fifo_depth, FIFO_DEPTH >= 4 && (FIFO_DEPTH & (FIFO_DEPTH - 1)) == 0,
                  "panama_sched: FIFO_DEPTH must be a power of two, at least 4")
  `PANAMA_REQUIRE(g_req_tree_latency, TREE_LATENCY >= 0,
                  "panama_sched: TREE_LATENCY must not be negative")

  // Ports, contexts, bus.
  localparam N = PORTS;
  localparam C = CONTEXTS;
  localparam W = DATA_W;
  localparam BB = DATA_W / 8;
  // Element size in bytes.
  localparam ES = ELEM_BYTES;
  // m_agg FIFO depth in beats.
  localparam FD = FIFO_DEPTH;
  // Adder tree latency in cycles.
  localparam L = TREE_LATENCY;
  // Widths: a beat index within a frame, a contribution memory address, a byte index within a
  // beat, a port index, a context index, an m_agg FIFO pointer and its count.
  localparam NB = BEAT_W;
  localparam [NB-1:0] NB_ONE = 1;
  localparam BW = ADDR_W;
  localparam KW = $clog2(BB);
  localparam PW = N > 1 ? $clog2(N) : 1;
  localparam CW = C > 1 ? $clog2(C) : 1;
  localparam FAW = $clog2(FD);
  localparam FCW = $clog2(FD + 1);
  // Levels of the minimum tree over the ports' head distances.
  localparam LV = N > 1 ? $clog2(N) : 1;
  // Actions of one context (accelerator.md rules 5-7).
  localparam [2:0] ACT_NONE = 3'd0, ACT_STALE = 3'd1, ACT_BUILD = 3'd2, ACT_MISMATCH = 3'd3,
                   ACT_INCOMPLETE = 3'd4, ACT_SKIP = 3'd5, ACT_TDROP = 3'd6, ACT_TSKIP = 3'd7;

  genvar g, h;
  integer k, m;

  // The decision is a pipeline that looks at one context per cycle (docs/rtl.md):
  //  P   pick the lowest-index context that needs a look (dirty) and has no decision in B;
  //  EV  the ports address that context's heads (ev_ctx, ev_e); the members are looked up;
  //  R   the ports read the heads' descriptors (block RAM, synchronous) and compare VIDs;
  //  A1  per member port: present, stale, at E, COUNT against the lowest member's, timed out;
  //      the minimum of the distances starts (a tree, one level per cycle);
  //  A2  the action (rules 5-7 in order), the vector's beats; a context with an action goes
  //      to B if B is free or fires this cycle, else it is looked at again;
  //  B   holds one decision until it can fire: a build when the issue stage is free (its last
  //      read, or idle) and the m_agg FIFO has room for the whole frame; a skip once its minimum
  //      has come out of the tree; a drop in any cycle but a build's last read (its pops free
  //      beats at once, which must not meet that build's release, the cycle after). Firing
  //      registers the pops, the counter pulses and the build's parameters, and moves E.
  //  I   a build issues one read per cycle to every member's contribution memory.
  // A context's heads and E change only through its own decisions (pushes only add heads). Its
  // decision in B is the only one of it: while B holds it, it is not picked, and when it fires,
  // every look at it still in the pipeline (read before the pops) is dropped; the pops are
  // applied the cycle after firing, before the next read of it. So B sees the heads it pops. A context needs a look when one of its
  // heads appears or goes, a timeout mark rises, it is enabled, its own decision fired, or its
  // look was dropped (B busy, or the context disabled or re-enabled meanwhile).

  // ---------------------------------------------------------------- P: pick
  wire [C-1:0] kill = ctx_kill;
  reg [C-1:0] dirty_q, e_old_q;
  reg [N*C-1:0] qv_prev_q, qx_prev_q;
  reg ev_go_q, a1_go_q, a2_go_q, b_valid_q;
  reg [CW-1:0] a1_ctx_q, a2_ctx_q, b_ctx_q;
  // The look's E, carried from the pick: a context's E changes only through its own decision,
  // and every look at it in flight is dropped when that fires (or when it is enabled).
  reg [31:0] r_e_q, a1_e_q, a2_e_q, b_e_q;
  reg [C-1:0] b_oh_q;  // B's context as a one-hot
  // Only the context whose decision B holds is not picked. Other looks may overlap (a context
  // whose heads change again is looked at again at once); a look that read the heads before
  // its context's decision fired is dropped when it fires (`*_stale_look` below).
  wire [C-1:0] lock = b_oh_q & {C{b_valid_q}};
  wire [C-1:0] cand = dirty_q & ~lock & ~kill;
  wire [C-1:0] pick_oh = cand & (~cand + {{(C-1){1'b0}}, 1'b1});
  wire pick_any = |cand;
  wire [C*32-1:0] e_flat, echg_flat;
  // The pick's index and E: OR reductions of transposed vectors on the one-hot.
  wire [CW-1:0] pick_idx;
  wire [31:0] pick_e;
  generate
    for (g = 0; g < CW; g = g + 1) begin : g_pick_idx
      wire [C-1:0] col;
      for (h = 0; h < C; h = h + 1) begin : g_col
        localparam [31:0] HV = h;
        assign col[h] = HV[g];
      end
      assign pick_idx[g] = |(col & pick_oh);
    end
    for (g = 0; g < 32; g = g + 1) begin : g_pick_e
      wire [C-1:0] col;
      for (h = 0; h < C; h = h + 1) begin : g_col
        assign col[h] = e_flat[h*32 + g];
      end
      assign pick_e[g] = |(col & pick_oh);
    end
  endgenerate
  always @(posedge clk) begin
    if (rst) ev_go_q <= 1'b0;
    else ev_go_q <= pick_any;
    ev_ctx <= pick_idx;
    ev_e <= pick_e;
  end

  // ---------------------------------------------------------------- EV: members
  wire [C-1:0] ev_oh;
  wire [N-1:0] ev_mem;
  generate
    for (h = 0; h < C; h = h + 1) begin : g_ev_oh
      assign ev_oh[h] = ev_ctx == h;
    end
    for (g = 0; g < N; g = g + 1) begin : g_ev_mem
      wire [C-1:0] col;
      for (h = 0; h < C; h = h + 1) begin : g_col
        assign col[h] = ctx_members[h*N + g];
      end
      assign ev_mem[g] = |(col & ev_oh);
    end
  endgenerate
  reg [PW-1:0] ev_low;
  always @* begin
    ev_low = {PW{1'b0}};
    for (k = N - 1; k >= 0; k = k - 1)
      if (ev_mem[k]) ev_low = k[PW-1:0];
  end
  // The decision of the context of B fires this cycle: looks at it still in the pipeline read
  // its heads before the pops (picked before it fired) and are dropped.
  wire fire;
  wire ev_stale_look = fire & (ev_ctx == b_ctx_q);
  reg r_go_q;
  reg [CW-1:0] r_ctx_q;
  reg [N-1:0] r_mem_q;
  reg [PW-1:0] r_low_q;
  always @(posedge clk) begin
    if (rst) r_go_q <= 1'b0;
    else r_go_q <= ev_go_q & ~kill[ev_ctx] & ~ev_stale_look;
    r_ctx_q <= ev_ctx;
    r_e_q <= ev_e;
    r_mem_q <= ev_mem;
    r_low_q <= ev_low;
  end

  // ---------------------------------------------------------------- R: the ports read
  wire r_stale_look = fire & (r_ctx_q == b_ctx_q);
  reg [N-1:0] a1_mem_q;
  reg [PW-1:0] a1_low_q;
  reg a1_eold_q;
  always @(posedge clk) begin
    if (rst) a1_go_q <= 1'b0;
    else a1_go_q <= r_go_q & ~kill[r_ctx_q] & ~r_stale_look;
    a1_ctx_q <= r_ctx_q;
    a1_e_q <= r_e_q;
    a1_mem_q <= r_mem_q;
    a1_low_q <= r_low_q;
    a1_eold_q <= e_old_q[r_ctx_q];
  end

  // ---------------------------------------------------------------- A1: per port
  wire [N-1:0] has = a1_mem_q & ev_valid;
  wire [15:0] ref_cnt = ev_count[a1_low_q*16 +: 16];
  reg [N-1:0] cnt_ne;
  always @* begin
    for (k = 0; k < N; k = k + 1) cnt_ne[k] = has[k] & (ev_count[k*16 +: 16] != ref_cnt);
  end
  wire a1_stale_look = fire & (a1_ctx_q == b_ctx_q);
  reg [N-1:0] a2_mem_q, a2_stale_q, a2_at_e_q, a2_cnt_ne_q;
  // The reductions A2's action needs, over the members, made here and registered: a stale head,
  // every member's head present, every head at E, a head at E, a timed-out head, some action.
  reg a2_any_stale_q, a2_all_heads_q, a2_all_at_e_q, a2_any_at_e_q, a2_any_exp_q, a2_some_q;
  wire [N-1:0] a1_stale = has & ev_stale;
  wire [N-1:0] a1_at_e = has & ev_at_e;
  wire [N-1:0] a1_exp = has & ev_expired & {N{a1_eold_q}};
  wire a1_all_heads = (&(has | ~a1_mem_q)) & (|a1_mem_q);
  reg [15:0] a2_cnt_q;
  reg [PW-1:0] a2_low_q;
  reg a2_fin_q, a2_ce_q;
  reg [N*BW-1:0] a2_ptr_q;
  reg [N*NB-1:0] a2_pbeats_q;
  always @(posedge clk) begin
    if (rst) a2_go_q <= 1'b0;
    else a2_go_q <= a1_go_q & ~kill[a1_ctx_q] & ~a1_stale_look;
    a2_ctx_q <= a1_ctx_q;
    a2_e_q <= a1_e_q;
    a2_mem_q <= a1_mem_q;
    a2_stale_q <= a1_stale;
    a2_at_e_q <= a1_at_e;
    a2_cnt_ne_q <= cnt_ne;
    a2_any_stale_q <= |a1_stale;
    a2_all_heads_q <= a1_all_heads;
    a2_all_at_e_q <= &(a1_at_e | ~a1_mem_q);
    a2_any_at_e_q <= |a1_at_e;
    a2_any_exp_q <= |a1_exp;
    a2_some_q <= (|a1_stale) | a1_all_heads | (|a1_exp);
    a2_cnt_q <= ref_cnt;
    a2_low_q <= a1_low_q;
    a2_fin_q <= |(has & ev_fin);
    a2_ce_q <= |(has & ev_ce);
    a2_ptr_q <= ev_ptr;
    a2_pbeats_q <= ev_beats;
  end

  // The smallest distance VID - E of the heads present and not stale (rule 6's skip, rule 7's):
  // a tree of N - 1 comparisons, registered at every level (level 1 in A2's cycle). Only skips
  // use it: B waits for the tree's output of the decision it holds, which is marked in the
  // tree from level 2 on (`mt_tag`); at most one such decision is in flight.
  function integer lvn(input integer l);
    lvn = (N + (1 << l) - 1) >> l;
  endfunction
  function integer lvoff(input integer l);  // entries before level l (levels 1..) in mt_w
    integer j;
    begin
      lvoff = 0;
      for (j = 1; j < l; j = j + 1) lvoff = lvoff + lvn(j);
    end
  endfunction
  localparam integer MT = lvoff(LV + 1);
  wire [N*32-1:0] mt_in;
  wire [MT*32-1:0] mt_w;
  generate
    for (g = 0; g < N; g = g + 1) begin : g_mt_in
      assign mt_in[g*32 +: 32] = (has[g] & ~ev_stale[g]) ? ev_dist[g*32 +: 32] : 32'hFFFFFFFF;
    end
    for (g = 1; g <= LV; g = g + 1) begin : g_mt_lvl
      localparam integer NI = lvn(g);
      localparam integer NP = lvn(g - 1);
      localparam integer OI = lvoff(g);
      localparam integer OP = lvoff(g - 1);
      // The level below.
      wire [NP*32-1:0] below;
      if (g == 1) begin : g_leaf
        assign below = mt_in;
      end else begin : g_inner
        assign below = mt_w[OP*32 +: NP*32];
      end
      for (h = 0; h < NI; h = h + 1) begin : g_node
        // This node's two entries (one when it is the last of an odd count).
        wire [31:0] mn;
        if (2*h + 1 < NP) begin : g_pair
          wire [31:0] x = below[(2*h)*32 +: 32];
          wire [31:0] y = below[(2*h+1)*32 +: 32];
          assign mn = (y < x) ? y : x;
        end else begin : g_odd
          assign mn = below[(2*h)*32 +: 32];
        end
        reg [31:0] m_q;
        always @(posedge clk) m_q <= mn;
        assign mt_w[(OI + h)*32 +: 32] = m_q;
      end
    end
  endgenerate
  wire [31:0] mt_out = mt_w[(MT-1)*32 +: 32];

  // ---------------------------------------------------------------- A2: action
  // ACT_NONE exactly when a2_some_q is 0.
  wire [2:0] a2_act = a2_any_stale_q ? ACT_STALE :
                      a2_all_heads_q ? (a2_all_at_e_q ? ((|a2_cnt_ne_q) ? ACT_MISMATCH : ACT_BUILD) :
                                        a2_any_at_e_q ? ACT_INCOMPLETE : ACT_SKIP) :
                      a2_any_exp_q ? (a2_any_at_e_q ? ACT_TDROP : ACT_TSKIP) :
                      ACT_NONE;
  wire [17:0] a2_len = 18'd64 + a2_cnt_q * ES;
  /* verilator lint_off UNUSEDSIGNAL */
  wire [17:0] a2_beats = (a2_len + BB - 1) >> KW;
  /* verilator lint_on UNUSEDSIGNAL */
  wire a2_has_act = a2_go_q & ~kill[a2_ctx_q] & ~(fire & (a2_ctx_q == b_ctx_q)) & a2_some_q;
  wire b_kill = b_valid_q & kill[b_ctx_q];
  wire b_take = a2_has_act & (~b_valid_q | fire | b_kill);
  wire a2_skip = (a2_act == ACT_SKIP) | (a2_act == ACT_TSKIP);

  // ---------------------------------------------------------------- B: decision
  reg busy_q;                    // I is issuing a build's reads
  reg [NB-1:0] b_beat_q;         // the beat I issues
  reg [FCW-1:0] free_q;          // FIFO entries not held by frames being built or queued
  reg [NB-1:0] n_left_q;         // the build being issued: beats after the one I issues,
  reg n_last_q;                  // none (n_left_q == 0, registered), bytes of the last beat
  reg [KW:0] n_rem_q;
  wire last_issue = busy_q & n_last_q;
  wire issue_free = ~busy_q | last_issue;
  reg [2:0] b_act_q;
  reg [N-1:0] b_mem_q, b_stale_q, b_at_e_q;
  reg [NB-1:0] b_beats_q;
  reg [KW:0] b_rem_q;
  reg [PW-1:0] b_low_q;
  reg b_fin_q, b_ce_q;
  reg [N*BW-1:0] b_ptr_q;
  reg [N*NB-1:0] b_pbeats_q;
  reg [31:0] b_min_q;
  reg b_min_ok_q;
  // The tree's output is the minimum of the decision B holds (a skip's, from level 2 on).
  wire min_here;
  wire min_ready = b_min_ok_q | min_here;
  wire [31:0] b_min = b_min_ok_q ? b_min_q : mt_out;
  wire b_build = b_act_q == ACT_BUILD;
  wire b_skip = (b_act_q == ACT_SKIP) | (b_act_q == ACT_TSKIP);
  // The chosen build's beats, sized to the FIFO count (FIFO_DEPTH holds more than a frame).
  wire [FCW-1:0] b_beats_f;
  generate
    if (FCW > NB) begin : g_beats_ext
      assign b_beats_f = {{(FCW-NB){1'b0}}, b_beats_q};
    end else begin : g_beats_cut
      assign b_beats_f = b_beats_q[FCW-1:0];
    end
  endgenerate
  // The free entries are counted rather than the held ones, so the check is one compare.
  wire room = b_beats_f <= free_q;
  assign fire = b_valid_q & ~kill[b_ctx_q] &
                (b_build ? (issue_free & room) : b_skip ? min_ready : ~last_issue);
  wire start_build = fire & b_build;
  always @(posedge clk) begin
    if (rst) b_valid_q <= 1'b0;
    else if (b_take) b_valid_q <= 1'b1;
    else if (fire | b_kill) b_valid_q <= 1'b0;
    if (b_take) begin
      b_ctx_q <= a2_ctx_q;
      b_e_q <= a2_e_q;
      b_act_q <= a2_act;
      b_mem_q <= a2_mem_q;
      b_stale_q <= a2_stale_q;
      b_at_e_q <= a2_at_e_q;
      b_beats_q <= a2_beats[NB-1:0];
      b_rem_q <= {1'b0, a2_len[KW-1:0]};
      b_low_q <= a2_low_q;
      b_fin_q <= a2_fin_q;
      b_ce_q <= a2_ce_q;
      b_ptr_q <= a2_ptr_q;
      b_pbeats_q <= a2_pbeats_q;
    end
    // The minimum of the decision B holds: level 1 is in A2's cycle when the tree has one level.
    if (rst) b_min_ok_q <= 1'b0;
    else if (b_take) b_min_ok_q <= LV == 1;
    else if (min_here) b_min_ok_q <= 1'b1;
    if (b_take & (LV == 1)) b_min_q <= mt_out;
    else if (min_here & ~b_min_ok_q) b_min_q <= mt_out;
  end
  generate
    for (h = 0; h < C; h = h + 1) begin : g_b_oh
      always @(posedge clk)
        if (b_take) b_oh_q[h] <= a2_ctx_q == h;
    end
    if (LV >= 2) begin : g_mt_tag
      // tag_q[l]: the node of level l holds the minimum of B's skip. A killed decision's mark
      // is dropped; the one taken in the same cycle is kept.
      reg [LV:2] tag_q;
      wire tag_in = b_take & a2_skip;
      if (LV == 2) begin : g_one
        always @(posedge clk) tag_q <= ~rst & tag_in;
      end else begin : g_shift
        always @(posedge clk) begin
          if (rst) tag_q <= {(LV-1){1'b0}};
          else tag_q <= {tag_q[LV-1:2] & {(LV-2){~b_kill}}, tag_in};
        end
      end
      assign min_here = tag_q[LV];
    end else begin : g_mt_tag1
      wire unused_skip = a2_skip;  // one level: B takes the minimum with the decision
      assign min_here = 1'b0;
    end
  endgenerate
  // The context's header fields for the build: the register file's RAM, read at B's context.
  assign hdr_ctx = b_ctx_q;
  wire [47:0] b_gmac, b_omac;
  wire [31:0] b_gip, b_oip;
  assign {b_gmac, b_omac, b_gip, b_oip} = ctx_hdr;
  wire [31:0] b_ctx32 = {{(32-CW){1'b0}}, b_ctx_q};

  // Pops and counter pulses of the decision, registered.
  always @(posedge clk) begin
    q_pop <= {N*C{1'b0}};
    drop_inc <= {N*4{1'b0}};
    ctx_completed_inc <= {C{1'b0}};
    ctx_dropped_inc <= {C{1'b0}};
    q_hold <= start_build;
    q_release <= last_issue;
    pop_first <= b_ptr_q;
    pop_beats <= b_pbeats_q;
    if (fire) begin
      for (m = 0; m < N; m = m + 1) begin
        case (b_act_q)
          ACT_BUILD: q_pop[m*C + b_ctx32] <= b_mem_q[m];
          ACT_STALE: begin
            q_pop[m*C + b_ctx32] <= b_stale_q[m];
            drop_inc[m*4 + 0] <= b_stale_q[m];
          end
          ACT_INCOMPLETE: begin
            q_pop[m*C + b_ctx32] <= b_at_e_q[m];
            drop_inc[m*4 + 1] <= b_at_e_q[m];
          end
          ACT_MISMATCH: begin
            q_pop[m*C + b_ctx32] <= b_mem_q[m];
            drop_inc[m*4 + 2] <= b_mem_q[m];
          end
          ACT_TDROP: begin
            q_pop[m*C + b_ctx32] <= b_at_e_q[m];
            drop_inc[m*4 + 3] <= b_at_e_q[m];
          end
          default: ;
        endcase
      end
      if (b_act_q == ACT_BUILD) ctx_completed_inc[b_ctx_q] <= 1'b1;
      if (b_act_q == ACT_INCOMPLETE || b_act_q == ACT_MISMATCH || b_act_q == ACT_TDROP)
        ctx_dropped_inc[b_ctx_q] <= 1'b1;
    end
    if (rst) begin
      q_pop <= {N*C{1'b0}};
      q_hold <= 1'b0;
      q_release <= 1'b0;
    end
  end

  // E moves when the decision fires: to 0 on enabling; +1 after a built, mismatched, incomplete
  // or timed-out vector; to the smallest waiting VID on a skip. The context's next look reads
  // its heads after its pops (the cycle after firing) and this E.
  // Only B's context moves, so its next E is computed once (from the E its look carried) and
  // loaded by that context alone.
  wire [C-1:0] e_chg = b_oh_q & {C{fire & (b_act_q != ACT_STALE)}};
  wire [31:0] e_next = b_e_q + (b_skip ? b_min : 32'd1);
  generate
    for (g = 0; g < C; g = g + 1) begin : g_e
      reg [31:0] e_q, echg_q;
      always @(posedge clk) begin
        if (ctx_enable_set[g]) begin
          e_q <= 32'd0;
          echg_q <= now;
        end else if (e_chg[g]) begin
          e_q <= e_next;
          echg_q <= now;
        end
      end
      assign e_flat[g*32 +: 32] = e_q;
      assign echg_flat[g*32 +: 32] = echg_q;
      assign ctx_expected_vid[g*32 +: 32] = e_q;
    end
  endgenerate

  // A head waits from when it became head or from the last change of E, the later: it has
  // waited more than the timeout iff both times lie more than the timeout back. The ports mark
  // heads (q_expired); E's side is checked here, one context per cycle in turn (e_old_q, set
  // until E changes or the context is enabled). Rule 7 only asks that the head waited longer.
  reg [CW-1:0] eo_rot_q;
  localparam integer C_LAST_I = CONTEXTS - 1;
  wire [31:0] eo_echg = echg_flat[eo_rot_q*32 +: 32];
  wire [31:0] eo_to = ctx_timeout[eo_rot_q*32 +: 32];
  wire eo_old = (now - eo_echg) > eo_to;
  always @(posedge clk) begin
    to_ctx <= eo_rot_q;
    to_cycles <= eo_to;
  end
  reg [C-1:0] e_old_d;
  always @* begin
    for (k = 0; k < C; k = k + 1)
      e_old_d[k] = ~(ctx_enable_set[k] | e_chg[k]) & (e_old_q[k] | (eo_old & (eo_rot_q == k[CW-1:0])));
  end
  // What makes a context need a look (see the pipeline above).
  wire [N*C-1:0] q_chg = (q_valid ^ qv_prev_q) | (q_expired & ~qx_prev_q);
  reg [C-1:0] heads_chg, redo;
  always @* begin
    for (k = 0; k < C; k = k + 1) begin
      heads_chg[k] = 1'b0;
      for (m = 0; m < N; m = m + 1) heads_chg[k] = heads_chg[k] | q_chg[m*C + k];
      // A look at k dropped because k is disabled or re-enabled: kill[k] itself, not the kill
      // of the stage's context (the same value, without a multiplexer by context).
      redo[k] = (kill[k] & ((ev_go_q & ev_oh[k]) | (r_go_q & (r_ctx_q == k[CW-1:0])) |
                            (a1_go_q & (a1_ctx_q == k[CW-1:0])) | (a2_go_q & (a2_ctx_q == k[CW-1:0])))) |
                (a2_has_act & ~b_take & (a2_ctx_q == k[CW-1:0])) |
                ((b_kill | fire) & b_oh_q[k]);
    end
  end
  always @(posedge clk) begin
    if (rst) begin
      dirty_q <= {C{1'b0}};
      e_old_q <= {C{1'b0}};
      eo_rot_q <= {CW{1'b0}};
    end else begin
      dirty_q <= (dirty_q & ~pick_oh) | heads_chg | (e_old_d & ~e_old_q) | ctx_enable_set | redo;
      e_old_q <= e_old_d;
      eo_rot_q <= (eo_rot_q == C_LAST_I[CW-1:0]) ? {CW{1'b0}} : eo_rot_q + 1'b1;
    end
    qv_prev_q <= q_valid;
    qx_prev_q <= q_expired;
  end

  // ---------------------------------------------------------------- builder state
  // Captured at the decision (n_*), used by the issue stage; copied into p_* when the first
  // read is issued, for the header patch and the tree beside the reads (the next build may be
  // decided before this one's last beat has passed the patch).
  reg [N-1:0] n_mask_q, p_mask_q;
  reg [N*BW-1:0] n_ptr_q;
  reg [PW-1:0] n_low_q, p_low_q;
  reg n_mcast_q, n_fin_q, n_ce_q, p_mcast_q, p_fin_q, p_ce_q;
  reg [47:0] n_gmac_q, n_omac_q, p_gmac_q, p_omac_q;
  reg [31:0] n_gip_q, n_oip_q, p_gip_q, p_oip_q;
  // The checksum's words that do not come from the lowest member's frame, summed when I starts
  // the build: version/IHL and the address the context gives (ipv4.dst = the group's when
  // multicast, else ipv4.src = its own; the lowest member's ipv4.dst is the other one).
  reg [17:0] p_fix_q;
  always @(posedge clk) begin
    if (start_build) begin
      n_mask_q <= b_mem_q;
      n_low_q <= b_low_q;
      n_rem_q <= b_rem_q;
      n_mcast_q <= ~ctx_upstream[b_ctx_q];
      n_fin_q <= b_fin_q;
      n_ce_q <= b_ce_q;
      n_gmac_q <= b_gmac;
      n_omac_q <= b_omac;
      n_gip_q <= b_gip;
      n_oip_q <= b_oip;
      n_ptr_q <= b_ptr_q;
    end
  end

  // ---------------------------------------------------------------- I: reads
  // Beat 0 at each member's head frame, then each following beat at the link read with the
  // one before.
  reg first_q;  // I issues beat 0
  wire [31:0] n_ctx_ip = n_mcast_q ? n_gip_q : n_oip_q;
  always @(posedge clk) begin
    if (rst) begin
      busy_q <= 1'b0;
      first_q <= 1'b0;
      b_beat_q <= {NB{1'b0}};
    end else begin
      busy_q <= start_build | (busy_q & ~last_issue);
      first_q <= start_build;
      b_beat_q <= (start_build | ~busy_q | last_issue) ? {NB{1'b0}} : b_beat_q + 1'b1;
    end
    // The beats left count down from the build's beats - 1; the last beat is the one with none
    // left after it, known a cycle ahead (a register, not a compare, on the path to `fire`).
    if (start_build) begin
      n_left_q <= b_beats_q - 1'b1;
      n_last_q <= b_beats_q == NB_ONE;
    end else if (busy_q) begin
      n_left_q <= n_left_q - 1'b1;
      n_last_q <= n_left_q == NB_ONE;
    end
    if (first_q) begin
      p_mask_q <= n_mask_q;
      p_low_q <= n_low_q;
      p_mcast_q <= n_mcast_q;
      p_fin_q <= n_fin_q;
      p_ce_q <= n_ce_q;
      p_gmac_q <= n_gmac_q;
      p_omac_q <= n_omac_q;
      p_gip_q <= n_gip_q;
      p_oip_q <= n_oip_q;
      p_fix_q <= {2'd0, IPV4_VER_IHL, 8'd0} + {2'd0, n_ctx_ip[31:16]} + {2'd0, n_ctx_ip[15:0]};
    end
  end
  assign rd_addr = first_q ? n_ptr_q : rd_link;

  // The ports answer meta_sel (B's context) the cycle after: header fields of the heads of the
  // context chosen, read before its pops take effect (a build's pops leave the cycle after it
  // fires, and no other decision of that context fires before they are done). The lowest
  // member's fields are selected when I starts the build (first_q, by n_low_q) and registered,
  // so the header patch and the checksum start from flip-flops; they are held until the next
  // build starts, which is after this one's header beats were read.
  assign meta_sel = b_ctx_q;
  reg [47:0] low_mac;
  reg [7:0] low_tos;
  reg [31:0] low_ip;
  reg [15:0] low_part;
  always @(posedge clk) begin
    if (first_q) begin
      low_mac <= meta_eth_dst[n_low_q*48 +: 48];
      low_tos <= meta_tos[n_low_q*8 +: 8];
      low_ip <= meta_ip_dst[n_low_q*32 +: 32];
      low_part <= meta_csum_part[n_low_q*16 +: 16];
    end
  end
  // The rebuilt IPv4 header checksum (RFC 1071 over the whole header): the copied words' partial
  // sum from the parser plus version/IHL/TOS and the two addresses as they will be sent. One
  // address is the lowest member's ipv4.dst whichever the mode (the new ipv4.src when multicast,
  // ipv4.dst otherwise), the other and version/IHL are in p_fix_q: five terms, no selection.
  wire [7:0] new_tos = {low_tos[7:2], p_ce_q ? 2'b11 : low_tos[1:0]};
  wire [18:0] csum_wide = {3'd0, low_part} + {11'd0, new_tos} + {3'd0, low_ip[31:16]} + {3'd0, low_ip[15:0]} +
                          {1'b0, p_fix_q};
  wire [16:0] csum_f1 = {1'b0, csum_wide[15:0]} + {14'd0, csum_wide[18:16]};
  wire [15:0] csum_f2 = csum_f1[15:0] + {15'd0, csum_f1[16]};

  // ---------------------------------------------------------------- datapath
  // Cycle after a read: the words of every port go into the adder tree; the lowest member's
  // word, with the header bytes rewritten, travels beside the tree for the header beats.
  reg rd_valid_q;
  reg [NB-1:0] rd_beat_q;
  reg rd_last_q;
  reg [BB-1:0] rd_keep_q;
  // tkeep of the beat being issued: all ones but on a frame's last beat.
  wire [BB-1:0] issue_keep = (~last_issue | (n_rem_q == {KW+1{1'b0}})) ? {BB{1'b1}} : ~({BB{1'b1}} << n_rem_q);
  always @(posedge clk) begin
    if (rst) rd_valid_q <= 1'b0;
    else rd_valid_q <= busy_q;
    rd_beat_q <= b_beat_q;
    rd_last_q <= last_issue;
    rd_keep_q <= issue_keep;
  end
  wire [W-1:0] raw = rd_data[p_low_q*W +: W];
  wire [W-1:0] patched;
  // The header patch (wire-format.md, "Frames the accelerator builds"): byte j of the bus
  // carries header byte b*BB + j in beat b. Every header byte is copied from the lowest member's
  // frame but these: eth.dst (the group's MAC when multicast), eth.src (the copied eth.dst when
  // multicast, else the own MAC), ECN (CE when any contribution had it), the IPv4 checksum,
  // ipv4.src and ipv4.dst (as eth), the UDP checksum (0), FLAGS (RESULT = multicast, FIN) and
  // RANK (RANK_BUILT).
  genvar j, b;
  generate
    for (j = 0; j < BB; j = j + 1) begin : g_patch
      wire [7:0] rb = raw[8*j +: 8];
      if (j < HDR_BYTES) begin : g_hdr
        // Beats 0..HBJ-1 carry header bytes in this byte lane.
        localparam integer HBJ = (HDR_BYTES - j + BB - 1) / BB;
        wire [8*HBJ-1:0] hb;  // the rewritten byte of each of those beats
        for (b = 0; b < HBJ; b = b + 1) begin : g_beat
          // The header byte's offset in the frame.
          localparam integer O = b*BB + j;
          if (O >= OFF_ETH_DST && O < OFF_ETH_DST + 6) begin : g_eth_dst
            assign hb[8*b +: 8] = p_mcast_q ? p_gmac_q[47 - 8*(O - OFF_ETH_DST) -: 8] : rb;
          end else if (O >= OFF_ETH_SRC && O < OFF_ETH_SRC + 6) begin : g_eth_src
            assign hb[8*b +: 8] = p_mcast_q ? low_mac[47 - 8*(O - OFF_ETH_SRC) -: 8] :
                                              p_omac_q[47 - 8*(O - OFF_ETH_SRC) -: 8];
          end else if (O == OFF_IP_TOS) begin : g_ecn
            assign hb[8*b +: 8] = {rb[7:2], p_ce_q ? 2'b11 : rb[1:0]};
          end else if (O == OFF_IP_CSUM) begin : g_csum_hi
            assign hb[8*b +: 8] = ~csum_f2[15:8];
          end else if (O == OFF_IP_CSUM + 1) begin : g_csum_lo
            assign hb[8*b +: 8] = ~csum_f2[7:0];
          end else if (O >= OFF_IP_SRC && O < OFF_IP_SRC + 4) begin : g_ip_src
            assign hb[8*b +: 8] = p_mcast_q ? low_ip[31 - 8*(O - OFF_IP_SRC) -: 8] :
                                              p_oip_q[31 - 8*(O - OFF_IP_SRC) -: 8];
          end else if (O >= OFF_IP_DST && O < OFF_IP_DST + 4) begin : g_ip_dst
            assign hb[8*b +: 8] = p_mcast_q ? p_gip_q[31 - 8*(O - OFF_IP_DST) -: 8] : rb;
          end else if (O == OFF_UDP_CSUM || O == OFF_UDP_CSUM + 1) begin : g_udp_csum
            assign hb[8*b +: 8] = 8'h00;
          end else if (O == OFF_FLAGS) begin : g_flags
            assign hb[8*b +: 8] = {rb[7:2], p_mcast_q, p_fin_q};
          end else if (O == OFF_RANK) begin : g_rank_hi
            assign hb[8*b +: 8] = RANK_BUILT[15:8];
          end else if (O == OFF_RANK + 1) begin : g_rank_lo
            assign hb[8*b +: 8] = RANK_BUILT[7:0];
          end else begin : g_copy
            assign hb[8*b +: 8] = rb;
          end
        end
        reg [7:0] pb;
        integer i;
        always @* begin
          pb = rb;
          for (i = 0; i < HBJ; i = i + 1)
            if (rd_beat_q == i[NB-1:0]) pb = hb[8*i +: 8];
        end
        assign patched[8*j +: 8] = pb;
      end else begin : g_payload
        assign patched[8*j +: 8] = rb;
      end
    end
  endgenerate

  wire tree_valid;
  wire [W-1:0] tree_sum;
  panama_addtree u_addtree (.clk(clk), .rst(rst), .in_valid(rd_valid_q), .in_mask(p_mask_q),
                            .in_data(rd_data), .out_valid(tree_valid), .out_data(tree_sum));
  // Side pipeline of L stages beside the tree: the patched word, beat index, last flag, tkeep.
  localparam SIDE = W + NB + 1 + BB;
  wire [SIDE*(L+1)-1:0] side;
  assign side[SIDE-1:0] = {rd_keep_q, rd_last_q, rd_beat_q, patched};
  generate
    for (g = 0; g < L; g = g + 1) begin : g_side
      reg [SIDE-1:0] stage_q;
      always @(posedge clk) stage_q <= side[g*SIDE +: SIDE];
      assign side[(g+1)*SIDE +: SIDE] = stage_q;
    end
  endgenerate
  wire [SIDE-1:0] side_out = side[L*SIDE +: SIDE];
  // Only the header's lanes read it: on a bus wider than the 64-byte header the rest is unused.
  /* verilator lint_off UNUSEDSIGNAL */
  wire [W-1:0] side_word = side_out[W-1:0];
  /* verilator lint_on UNUSEDSIGNAL */
  wire [NB-1:0] out_beat = side_out[W +: NB];
  wire out_last = side_out[W + NB];
  // Header beats of a lane take the patched word, the others the tree's sum.
  wire [W-1:0] out_word;
  generate
    for (j = 0; j < BB; j = j + 1) begin : g_select
      if (j < HDR_BYTES) begin : g_hdr
        localparam integer HBJ = (HDR_BYTES - j + BB - 1) / BB;
        localparam [NB-1:0] HBJ_B = HBJ[NB-1:0];
        assign out_word[8*j +: 8] = (out_beat < HBJ_B) ? side_word[8*j +: 8] : tree_sum[8*j +: 8];
      end else begin : g_payload
        assign out_word[8*j +: 8] = tree_sum[8*j +: 8];
      end
    end
  endgenerate
  wire [BB-1:0] out_keep = side_out[W + NB + 1 +: BB];

  // ---------------------------------------------------------------- m_agg FIFO
  reg [W+BB:0] fifo [0:FD-1];
  reg [FAW-1:0] f_wp_q, f_rp_q;
  reg [FCW-1:0] f_cnt_q;
  // Output register: m_agg is driven by flip-flops only. f_take moves the FIFO's head into it;
  // f_pop is the handshake (the reservation counts a beat until it has left).
  reg [W+BB:0] o_word_q;
  reg o_valid_q;
  wire f_take = (f_cnt_q != {FCW{1'b0}}) & (~o_valid_q | m_agg_axis_tready);
  wire f_pop = o_valid_q & m_agg_axis_tready;
  always @(posedge clk) begin
    if (tree_valid) fifo[f_wp_q] <= {out_last, out_keep, out_word};
  end
  always @(posedge clk) begin
    if (rst) begin
      f_wp_q <= {FAW{1'b0}};
      f_rp_q <= {FAW{1'b0}};
      f_cnt_q <= {FCW{1'b0}};
      free_q <= FD[FCW-1:0];
    end else begin
      if (tree_valid) f_wp_q <= f_wp_q + 1'b1;
      if (f_take) f_rp_q <= f_rp_q + 1'b1;
      f_cnt_q <= f_cnt_q + {{(FCW-1){1'b0}}, tree_valid} - {{(FCW-1){1'b0}}, f_take};
      free_q <= free_q - (start_build ? b_beats_f : {FCW{1'b0}}) + {{(FCW-1){1'b0}}, f_pop};
    end
  end
  always @(posedge clk) begin
    if (f_take) o_word_q <= fifo[f_rp_q];
    if (rst) o_valid_q <= 1'b0;
    else o_valid_q <= f_take | (o_valid_q & ~m_agg_axis_tready);
  end
  assign m_agg_axis_tvalid = o_valid_q;
  assign m_agg_axis_tdata = o_word_q[W-1:0];
  assign m_agg_axis_tkeep = o_word_q[W+BB-1:W];
  assign m_agg_axis_tlast = o_word_q[W+BB];
  assign agg_tx_inc = f_pop & m_agg_axis_tlast;

endmodule

`default_nettype wire
