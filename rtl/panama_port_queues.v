// SPDX-License-Identifier: MIT
// A port's frame descriptors and per-context queues (docs/rtl.md): one descriptor per queued
// contribution (its head fields and the header fields the result builder copies), one linked
// list of descriptors per context, the frame a build holds until its last read, the head reads
// for the scheduler (ev_*) and the result builder (meta_*), and the rotating timeout check.
// Instantiated by panama_port, whose admission pushes (push) and whose scheduler pops (q_pop).
`timescale 1ns / 1ps
`default_nettype none

module panama_port_queues #(
  // Contexts (JID, TID), 1..256.
  parameter CONTEXTS = 8,
  // Bits of a context index: derived; leave it unset.
  parameter CTX_W = CONTEXTS > 1 ? $clog2(CONTEXTS) : 1,
  // Beats of the largest frame: at least 1.
  parameter FRAME_BEATS = 189,
  // Bits of 0..FRAME_BEATS: derived; leave it unset.
  parameter FRAME_CNT_W = $clog2(FRAME_BEATS + 1),
  // Beats of the contribution memory: at least 1.
  parameter MEM_BEATS = 4285,
  // Bits of a contribution memory address: derived; leave it unset.
  parameter MEM_PTR_W = MEM_BEATS > 1 ? $clog2(MEM_BEATS) : 1,
  // Frame descriptors: at least 1.
  parameter DESCS = 512
) (
  input  wire clk,
  input  wire rst,
  input  wire [31:0] now,
  input  wire [CONTEXTS-1:0] ctx_enable,
  // The timeout check of this cycle (panama_port's to_ctx, to_cycles).
  input  wire [CTX_W-1:0] to_ctx,
  input  wire [31:0] to_cycles,
  // Admission: push a descriptor into context push_idx's queue (push: one-hot or zero, and
  // commit = |push), with its head fields {CE, FIN, COUNT, VID, beats, first beat} and header
  // fields {checksum partial sum, ipv4.dst, TOS, eth.dst}.
  input  wire [CONTEXTS-1:0] push,
  input  wire commit,
  input  wire [CTX_W-1:0] push_idx,
  input  wire [MEM_PTR_W+FRAME_CNT_W+49:0] push_info,
  input  wire [103:0] push_hdr,
  // Queue state and head reads, as panama_port's ports of the same names.
  output wire [CONTEXTS-1:0] q_valid,
  output wire [CONTEXTS-1:0] q_expired,
  input  wire [CTX_W-1:0] ev_ctx,
  input  wire [31:0] ev_e,
  output reg  ev_valid,
  output reg  ev_stale,
  output reg  ev_at_e,
  output reg  [31:0] ev_dist,
  output reg  [15:0] ev_count,
  output reg  ev_fin,
  output reg  ev_ce,
  output reg  [MEM_PTR_W-1:0] ev_ptr,
  output reg  [FRAME_CNT_W-1:0] ev_beats,
  output reg  ev_expired,
  input  wire [CONTEXTS-1:0] q_pop,
  input  wire [MEM_PTR_W-1:0] pop_first_in,
  input  wire [FRAME_CNT_W-1:0] pop_beats_in,
  input  wire q_hold,
  input  wire q_release,
  input  wire [CTX_W-1:0] meta_sel,
  output wire [47:0] meta_eth_dst,
  output wire [7:0] meta_tos,
  output wire [31:0] meta_ip_dst,
  output wire [15:0] meta_csum_part,
  // A frame's beats are freed this cycle (a dropped head, or the held frame released): its first
  // beat and beats, its context one-hot (fr_hit) and as an index (fr_idx).
  output wire free,
  output wire [MEM_PTR_W-1:0] free_first,
  output wire [FRAME_CNT_W-1:0] free_beats,
  output wire [CONTEXTS-1:0] fr_hit,
  output wire [CTX_W-1:0] fr_idx
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_contexts, CONTEXTS >= 1 && CONTEXTS <= 256, "panama_port_queues: CONTEXTS must be 1..256")
  `PANAMA_REQUIRE(g_req_ctx_w, CTX_W == (CONTEXTS > 1 ? $clog2(CONTEXTS) : 1),
                  "panama_port_queues: CTX_W is derived from CONTEXTS; do not set it")
  `PANAMA_REQUIRE(g_req_frame_beats, FRAME_BEATS >= 1, "panama_port_queues: FRAME_BEATS must be at least 1")
  `PANAMA_REQUIRE(g_req_frame_cnt_w, FRAME_CNT_W == $clog2(FRAME_BEATS + 1),
                  "panama_port_queues: FRAME_CNT_W is derived from FRAME_BEATS; do not set it")
  `PANAMA_REQUIRE(g_req_mem_beats, MEM_BEATS >= 1, "panama_port_queues: MEM_BEATS must be at least 1")
  `PANAMA_REQUIRE(g_req_mem_ptr_w, MEM_PTR_W == (MEM_BEATS > 1 ? $clog2(MEM_BEATS) : 1),
                  "panama_port_queues: MEM_PTR_W is derived from MEM_BEATS; do not set it")
  `PANAMA_REQUIRE(g_req_descs, DESCS >= 1, "panama_port_queues: DESCS must be at least 1")

  // Short names used below.
  localparam C = CONTEXTS;
  localparam CW = CTX_W;
  localparam BW = MEM_PTR_W;
  localparam SBW = FRAME_CNT_W;
  // Frame descriptors: number, index and count widths.
  localparam D = DESCS;
  localparam DW = DESCS > 1 ? $clog2(DESCS) : 1;
  localparam DCW = $clog2(DESCS + 1);
  // A descriptor's head fields {CE, FIN, COUNT, VID, beats, first beat} (VID at IB) and the
  // header fields the result builder copies.
  localparam IB = BW + SBW;
  localparam HIW = IB + 50;
  localparam HDW = 104;
  localparam integer D_LAST_I = DESCS - 1;
  localparam [DW-1:0] D_LAST = D_LAST_I[DW-1:0];
  localparam [DCW-1:0] D_LAST_C = D_LAST_I[DCW-1:0];

  integer c;
  // The index of a one-hot (or zero) context vector: per bit, an OR of the contexts whose index
  // has it.
  function [CW-1:0] oh_idx(input [C-1:0] oh);
    integer i;
    begin
      oh_idx = {CW{1'b0}};
      for (i = 0; i < C; i = i + 1) oh_idx = oh_idx | ({CW{oh[i]}} & i[CW-1:0]);
    end
  endfunction
  wire commit_contrib = commit;
  wire [C-1:0] push_ctx = push;
  wire [CW-1:0] sel_idx = push_idx;
  wire [HIW-1:0] new_info = push_info;

  // One descriptor per queued contribution, written at admission: the head fields below, and
  // the header fields the result builder copies. Free descriptors: first the never-used ones
  // (d_fresh_q up to D), then a FIFO of released ones.
  // The next descriptor of the same queue. Distributed RAM: read at the registered pop_desc
  // and the new head taken in the same cycle (block RAM's clock-to-out would start that path).
  (* ram_style = "distributed" *) reg [DW-1:0] d_next [0:D-1];
  reg [HIW-1:0] d_info [0:D-1];    // {CE, FIN, COUNT, VID, beats, first beat}
  reg [HDW-1:0] d_hdr [0:D-1];     // {checksum partial sum, ipv4.dst, TOS, eth.dst}
  reg [DW-1:0] d_free [0:D-1];
  reg [DCW-1:0] d_fresh_q;
  reg d_from_fresh;  // d_fresh_q != D, registered with it
  reg [DW-1:0] d_free_rd_q, d_free_wr_q;
  wire [DW-1:0] d_new = d_from_fresh ? d_fresh_q[DW-1:0] : d_free[d_free_rd_q];
  always @(posedge clk) begin
    if (commit_contrib) begin
      d_info[d_new] <= new_info;
      d_hdr[d_new] <= push_hdr;
    end
  end

  // The head being removed (at most one per cycle: the scheduler pops one context at a time;
  // q_pop comes from a register in the scheduler). Its first beat and beats come with the pop
  // (pop_first_in, pop_beats_in: the scheduler has them from the ev_* read it decided on).
  wire [DW-1:0] tail_arr [0:C-1];
  // The same heads as an array, for the selections by ev_ctx and meta_sel (multiplexers).
  wire [DW-1:0] head_arr [0:C-1];
  wire [C-1:0] becomes_head, pops;
  // At most one queue pops per cycle, so `pops` is one-hot or zero. A pop is the scheduler's
  // decision on context meta_sel (B's context) registered, so the popped head is the head of
  // context meta_sel in the cycle before, registered here (the multiplexer is the one of the
  // header read below): that head is still the head at the pop, since a queue about to be
  // popped is not empty (no push makes a head) and is never popped two cycles running (the
  // scheduler's B takes no decision of the context that fires in the same cycle).
  wire pop_any = |pops;
  wire [CW-1:0] pop_ctx = oh_idx(pops);
  reg [DW-1:0] pop_desc;
  always @(posedge clk) pop_desc <= head_arr[meta_sel];
  wire [DW-1:0] after_desc = d_next[pop_desc];
  // A frame popped by a build is still being read: its beats (and its share of the context's
  // use) are freed only at q_release, after its last read. At most one frame is held: the
  // release of one build and the pop of the next can fall in the same cycle, never two pops.
  reg held_q;
  reg [CW-1:0] held_ctx_q;
  reg [BW-1:0] held_first_q;
  reg [SBW-1:0] held_beats_q;
  always @(posedge clk) begin
    if (rst) held_q <= 1'b0;
    else if (pop_any & q_hold) held_q <= 1'b1;
    else if (q_release) held_q <= 1'b0;
    if (pop_any & q_hold) begin
      held_ctx_q <= pop_ctx;
      held_first_q <= pop_first_in;
      held_beats_q <= pop_beats_in;
    end
  end
  // Frames whose beats go back to the free chain this cycle: a dropped head, or the held frame.
  // The scheduler never drops a head in the cycle the held frame is released.
  wire rel_now = q_release & held_q;
  wire free_any = rel_now | (pop_any & ~q_hold);
  wire [BW-1:0] pop_first = rel_now ? held_first_q : pop_first_in;
  wire [SBW-1:0] pop_beats = rel_now ? held_beats_q : pop_beats_in;

  always @(posedge clk) begin
    if (rst) begin
      d_fresh_q <= {DCW{1'b0}};
      d_from_fresh <= 1'b1;
      d_free_rd_q <= {DW{1'b0}};
      d_free_wr_q <= {DW{1'b0}};
    end else begin
      if (commit_contrib) begin
        if (d_from_fresh) begin
          d_fresh_q <= d_fresh_q + 1'b1;
          d_from_fresh <= d_fresh_q != D_LAST_C;
        end
        else d_free_rd_q <= (d_free_rd_q == D_LAST) ? {DW{1'b0}} : d_free_rd_q + 1'b1;
      end
      if (pop_any) d_free_wr_q <= (d_free_wr_q == D_LAST) ? {DW{1'b0}} : d_free_wr_q + 1'b1;
    end
  end
  always @(posedge clk) begin
    if (pop_any) d_free[d_free_wr_q] <= pop_desc;
  end
  assign free = free_any;
  assign free_first = pop_first;
  assign free_beats = pop_beats;
  assign fr_idx = rel_now ? held_ctx_q : pop_ctx;

  // ---------------------------------------------------------------- queues
  // One linked list of descriptors per context: head, tail and "not empty" in registers (the
  // context's beats in use are admission's); the head's fields stay in its descriptor (d_info),
  // read for the scheduler one context per cycle (ev_* below).
  reg [C-1:0] exp_hit;
  genvar g;
  generate
    for (g = 0; g < C; g = g + 1) begin : g_queue
      reg [DW-1:0] head_q, tail_q;
      wire push_g = push_ctx[g];
      // The queue is not empty, and holds exactly one frame (its head is its tail): registers,
      // so the push's head-or-link choice does not wait for a compare of head and tail. A push
      // alone makes one of an empty queue; a pop alone leaves one when the popped head's
      // successor is the tail (not when it held one); a push and a pop together keep the count.
      reg ne_q, one_q;
      // The scheduler pops only heads its look saw present, and nothing else removes a head
      // (a look read before its context's decision fired is dropped), so q_pop needs no
      // "not empty" here: it reaches the free chain without one more gate.
      wire pop = q_pop[g];
      assign pops[g] = pop;
      assign becomes_head[g] = push_g & (~ne_q | (pop & one_q));
      // Whether this context is the one freed (fr_oh_q, above): the held frame on its release,
      // else this queue's head when it is the dropped one.
      assign fr_hit[g] = rel_now ? (held_ctx_q == g) : (pop & ~q_hold);
      always @(posedge clk) begin
        if (rst) begin
          ne_q <= 1'b0;
          one_q <= 1'b0;
        end else begin
          ne_q <= push_g | (ne_q & ~(pop & one_q));
          if (push_g & ~pop) one_q <= ~ne_q;
          else if (pop & ~push_g) one_q <= ~one_q & (after_desc == tail_q);
        end
        if (becomes_head[g]) head_q <= d_new;
        else if (pop) head_q <= after_desc;
        if (push_g) tail_q <= d_new;
      end
      assign head_arr[g] = head_q;
      assign tail_arr[g] = tail_q;
      assign q_valid[g] = ne_q;
      // Set when the rotating check below finds this head too old; cleared by a new head.
      reg exp_q;
      always @(posedge clk) begin
        if (rst | ~ctx_enable[g] | becomes_head[g] | pop) exp_q <= 1'b0;
        else if (exp_hit[g]) exp_q <= 1'b1;
      end
      assign q_expired[g] = exp_q;
    end
  endgenerate
  // The head of context ev_ctx for the scheduler: its descriptor is read from the table
  // (block RAM, synchronous) with the queue's state of the same cycle, and the compares are
  // registered the cycle after. A read made before the pops of that context's decision are
  // applied is dropped by the scheduler when the decision fires, so the head it pops is the
  // one it read; a push that makes a head in the same cycle is seen by the next request (the
  // scheduler asks again when q_valid changes). The descriptor written in the cycle of the
  // read is a free one, never a head, so the read never meets the write.
  reg [HIW-1:0] ev_info;
  reg ev_valid_r, ev_expired_r;
  reg [31:0] ev_e_r;
  always @(posedge clk) begin
    ev_info <= d_info[head_arr[ev_ctx]];
    ev_valid_r <= q_valid[ev_ctx];
    ev_expired_r <= q_expired[ev_ctx];
    ev_e_r <= ev_e;
  end
  wire [31:0] ev_vid = ev_info[IB +: 32];
  wire [31:0] ev_d = ev_vid - ev_e_r;
  always @(posedge clk) begin
    ev_valid <= ev_valid_r;
    ev_expired <= ev_expired_r;
    // Serial-number arithmetic: stale iff (v - E) mod 2^32 >= 2^31.
    ev_stale <= ev_d[31];
    ev_at_e <= ev_vid == ev_e_r;
    ev_dist <= ev_d;
    ev_count <= ev_info[IB+32 +: 16];
    ev_fin <= ev_info[IB+48];
    ev_ce <= ev_info[IB+49];
    ev_ptr <= ev_info[BW-1:0];
    ev_beats <= ev_info[BW +: SBW];
  end
  // The tail of the matching context's queue.
  wire [DW-1:0] link_addr = tail_arr[sel_idx];
  // The link from the tail of the pushed context's queue (unless the frame becomes its head).
  wire link_write = |(push_ctx & ~becomes_head);
  always @(posedge clk) begin
    if (link_write) d_next[link_addr] <= d_new;
  end

  // Timeouts (accelerator.md rule 7): one queue's head per cycle, in turn, is checked against its
  // context's timeout, and a head found too old stays marked until it changes. One subtraction
  // and one comparison per port instead of one per (port, context) pair in the scheduler; a
  // timeout is seen at most C cycles after it passed (rule 7 only asks that the head waited
  // longer). The check reads the head's time in the same cycle as its flag is written, so a
  // head that changes in that cycle is never marked by its predecessor's age.
  // When each head became head: a push that makes a head and a pop can fall in the same cycle
  // (for different contexts), so each writes its own small memory (distributed RAM, C words),
  // and one bit per context says which of the two holds the head's time.
  reg [31:0] since_push [0:C-1];
  reg [31:0] since_pop [0:C-1];
  reg [C-1:0] since_by_pop_q;
  // A push that makes a head is the matched context's (`sel`, from registers, so the write
  // address stays off the admission decision).
  wire [C-1:0] head_by_pop = pops & ~becomes_head;
  always @(posedge clk) begin
    if (|becomes_head) since_push[sel_idx] <= now;
    if (|head_by_pop) since_pop[pop_ctx] <= now;
    since_by_pop_q <= (since_by_pop_q & ~becomes_head) | head_by_pop;
  end
  // The context to check comes from the scheduler with its timeout (one multiplexer of the
  // timeouts for all ports).
  wire [31:0] chk_since = since_by_pop_q[to_ctx] ? since_pop[to_ctx] : since_push[to_ctx];
  wire chk_old = (to_cycles != 32'd0) & ((now - chk_since) > to_cycles);
  always @* begin
    for (c = 0; c < C; c = c + 1) exp_hit[c] = chk_old & (to_ctx == c[CW-1:0]);
  end

  // Header fields of the head of context meta_sel, for the result builder: a synchronous read
  // (block RAM), so they come out the cycle after meta_sel. The builder uses them from the
  // cycle after its decision; the heads it reads then are those of the decision cycle (a
  // descriptor written at admission is never a queue's head in the same cycle's read).
  reg [HDW-1:0] sel_hdr;
  always @(posedge clk) sel_hdr <= d_hdr[head_arr[meta_sel]];
  assign meta_eth_dst = sel_hdr[47:0];
  assign meta_tos = sel_hdr[55:48];
  assign meta_ip_dst = sel_hdr[87:56];
  assign meta_csum_part = sel_hdr[103:88];

endmodule

`default_nettype wire
