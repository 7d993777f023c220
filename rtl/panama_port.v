// SPDX-License-Identifier: MIT
// One port of the accelerator (docs/rtl.md): receive stage, parser, bypass FIFO with
// commit/rewind, contribution memory of linked beats, descriptor queues per context, admission
// (accelerator.md rule 2), and transmit to mPP. The buffer sizes are computed by panama-gen
// (buffer_plan in gen/emit/top.cpp) and passed down by the instance in <prefix>_core; every width is
// derived here from them (docs/rtl.md, "Parameter contracts").
`timescale 1ns / 1ps
`default_nettype none

module panama_port #(
  // Contexts (JID, TID), 1..256.
  parameter CONTEXTS = 8,
  // Bits of a context index (ev_ctx, meta_sel, to_ctx): derived, max(1, clog2(CONTEXTS)). A
  // parameter only because Verilog-2005 port widths cannot name a localparam; leave it unset.
  parameter CTX_W = CONTEXTS > 1 ? $clog2(CONTEXTS) : 1,
  // Bus width in bits: a power of two, 64..4096.
  parameter DATA_W = 64,
  // Cycles from a frame's last beat to the parser's descriptor, 1 or 2 (docs/rtl.md, "Receive
  // stages"); the receive stage delays the beats by as many.
  parameter DESC_STAGES = 1,
  // Bytes per element, for the parser: 4 (fp32) or 2 (bf16, fp16).
  parameter ELEM_BYTES = 4,
  // Largest valid COUNT (elements per frame), for the parser: at least 1.
  parameter MAX_ELEMS = 362,
  // Bypass FIFO depth in beats: at least FRAME_BEATS.
  parameter BYP_BEATS = 4096,
  // Beats of the largest frame (each context's reservation): at least 1.
  parameter FRAME_BEATS = 189,
  // Bits of 0..FRAME_BEATS (ev_beats, pop_beats_in): derived, like CTX_W; leave it unset.
  parameter FRAME_CNT_W = $clog2(FRAME_BEATS + 1),
  // Beats of the contribution half of the buffer: at least FRAME_BEATS.
  parameter CONTRIB_BEATS = 4096,
  // Beats of the contribution memory (the contribution half, plus any slack): at least
  // CONTRIB_BEATS.
  parameter MEM_BEATS = 4285,
  // Bits of a contribution memory address, 0..MEM_BEATS-1 (ev_ptr, rd_addr, ...): derived, like
  // CTX_W; leave it unset.
  parameter MEM_PTR_W = MEM_BEATS > 1 ? $clog2(MEM_BEATS) : 1,
  // Frame descriptors (the most contributions the contribution half can hold): at least 1.
  parameter DESCS = 512,
  // Entries of the free-segment FIFO: more than the most contributions the contribution memory
  // holds (MEM_BEATS / the beats of a frame of 64 + ELEM_BYTES bytes).
  parameter SEGS = 477
) (
  input  wire clk,
  input  wire rst,
  // Free-running cycle count (queue head ages for timeouts).
  input  wire [31:0] now,
  input  wire [15:0] agg_port,
  // Context table (the register file), and this port's role in each context.
  input  wire [CONTEXTS-1:0] ctx_enable,
  input  wire [CONTEXTS*16-1:0] ctx_jid,
  input  wire [CONTEXTS*8-1:0] ctx_tid,
  input  wire [CONTEXTS-1:0] ctx_member,
  // Context c is in upstream mode and this port is its upstream port.
  input  wire [CONTEXTS-1:0] ctx_uplink,
  // Timeouts: the context whose head every port checks in this cycle (all ports in turn, the
  // same one at once) and its timeout in cycles (0 = never), both registered in the scheduler.
  input  wire [CTX_W-1:0] to_ctx,
  input  wire [31:0] to_cycles,
  // Receive (sPP), held ready.
  input  wire [DATA_W-1:0] s_axis_tdata,
  input  wire [DATA_W/8-1:0] s_axis_tkeep,
  input  wire s_axis_tvalid,
  input  wire s_axis_tlast,
  input  wire s_axis_tuser,
  output wire s_axis_tready,
  // Transmit (mPP): bypass frames and final sums passing through.
  output wire [DATA_W-1:0] m_axis_tdata,
  output wire [DATA_W/8-1:0] m_axis_tkeep,
  output wire m_axis_tvalid,
  output wire m_axis_tlast,
  output wire m_axis_tuser,
  input  wire m_axis_tready,
  // Queue state per context, to the scheduler: a head is present, and the head has waited
  // longer than its context's timeout since it became head (registered; found at most CONTEXTS
  // cycles late, cleared when the head changes).
  output wire [CONTEXTS-1:0] q_valid,
  output wire [CONTEXTS-1:0] q_expired,
  // The scheduler looks at one context per cycle: ev_ctx and its expected VID ev_e (registered in
  // the scheduler). The head of that context's queue as it is in that cycle comes back two
  // cycles after (a synchronous read of the descriptor table, then the compares), registered:
  // present, VID stale against ev_e (serial-number arithmetic), VID = ev_e, VID - ev_e, COUNT,
  // FIN, CE, first beat, beats, timed out.
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
  // Remove the head of context c (its descriptor becomes free; its beats too unless q_hold),
  // with the head's first beat and beats as ev_* gave them (registered in the scheduler).
  input  wire [CONTEXTS-1:0] q_pop,
  input  wire [MEM_PTR_W-1:0] pop_first_in,
  input  wire [FRAME_CNT_W-1:0] pop_beats_in,
  // The frame popped this cycle is a build's: keep its beats until q_release.
  input  wire q_hold,
  // The build's last read is done: free the beats of the frame held.
  input  wire q_release,
  // Header fields of the head of context meta_sel (registered: the cycle after), for the result builder.
  input  wire [CTX_W-1:0] meta_sel,
  output wire [47:0] meta_eth_dst,
  output wire [7:0] meta_tos,
  output wire [31:0] meta_ip_dst,
  output wire [15:0] meta_csum_part,
  // Contribution memory read port, one cycle of latency: the beat at rd_addr and the address
  // of its frame's next beat.
  input  wire [MEM_PTR_W-1:0] rd_addr,
  output wire [DATA_W-1:0] rd_data,
  output wire [MEM_PTR_W-1:0] rd_link,
  // Counter pulses, PortCounter order 0..11 (registered).
  output reg  [11:0] count_inc
);

`include "panama_defs.vh"
`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_contexts, CONTEXTS >= 1 && CONTEXTS <= 256, "panama_port: CONTEXTS must be 1..256")
  `PANAMA_REQUIRE(g_req_ctx_w, CTX_W == (CONTEXTS > 1 ? $clog2(CONTEXTS) : 1),
                  "panama_port: CTX_W is derived from CONTEXTS; do not set it")
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 4096 && (DATA_W & (DATA_W - 1)) == 0,
                  "panama_port: DATA_W must be a power of two, 64..4096")
  `PANAMA_REQUIRE(g_req_desc_stages, DESC_STAGES == 1 || DESC_STAGES == 2, "panama_port: DESC_STAGES must be 1 or 2")
  `PANAMA_REQUIRE(g_req_elem_bytes, ELEM_BYTES == 2 || ELEM_BYTES == 4, "panama_port: ELEM_BYTES must be 2 or 4")
  `PANAMA_REQUIRE(g_req_max_elems, MAX_ELEMS >= 1, "panama_port: MAX_ELEMS must be at least 1")
  `PANAMA_REQUIRE(g_req_frame_beats, FRAME_BEATS >= 1, "panama_port: FRAME_BEATS must be at least 1")
  `PANAMA_REQUIRE(g_req_frame_cnt_w, FRAME_CNT_W == $clog2(FRAME_BEATS + 1),
                  "panama_port: FRAME_CNT_W is derived from FRAME_BEATS; do not set it")
  `PANAMA_REQUIRE(g_req_byp_beats, BYP_BEATS >= FRAME_BEATS, "panama_port: BYP_BEATS must be at least FRAME_BEATS")
  `PANAMA_REQUIRE(g_req_contrib_beats, CONTRIB_BEATS >= FRAME_BEATS,
                  "panama_port: CONTRIB_BEATS must be at least FRAME_BEATS")
  `PANAMA_REQUIRE(g_req_mem_beats, MEM_BEATS >= CONTRIB_BEATS, "panama_port: MEM_BEATS must be at least CONTRIB_BEATS")
  `PANAMA_REQUIRE(g_req_mem_ptr_w, MEM_PTR_W == (MEM_BEATS > 1 ? $clog2(MEM_BEATS) : 1),
                  "panama_port: MEM_PTR_W is derived from MEM_BEATS; do not set it")
  `PANAMA_REQUIRE(g_req_descs, DESCS >= 1, "panama_port: DESCS must be at least 1")
  `PANAMA_REQUIRE(g_req_segs, SEGS >= 1, "panama_port: SEGS must be at least 1")

  // Short names used below.
  // Contexts, and the bits of a context index.
  localparam C = CONTEXTS;
  localparam CW = CTX_W;
  // Bus width in bits and bytes.
  localparam W = DATA_W;
  localparam BB = DATA_W / 8;
  // Bits of a byte index within a beat, and a bypass FIFO word: {tuser, tlast, the beat's bytes
  // (KW + 1 bits), tdata}.
  localparam KW = $clog2(BB);
  localparam XW = W + KW + 3;
  // Bypass FIFO: depth in beats, pointer (0..BYP-1) and count (0..BYP) widths.
  localparam BYP = BYP_BEATS;
  localparam BPW = BYP_BEATS > 1 ? $clog2(BYP_BEATS) : 1;
  localparam BCW = $clog2(BYP_BEATS + 1);
  // Contribution memory: beats (the contribution half), pointer width, beat count (0..T) width.
  localparam T = MEM_BEATS;
  localparam BW = MEM_PTR_W;
  localparam RW = $clog2(MEM_BEATS + 1);
  // Beats of the largest frame S (each context's reservation R) and their counter width.
  localparam SB = FRAME_BEATS;
  localparam SBW = FRAME_CNT_W;
  // Beats of the contribution half, and the C reservations together.
  localparam [31:0] CAPB = CONTRIB_BEATS;
  localparam [31:0] RESERVED = CONTEXTS * FRAME_BEATS;
  // Width of a context's beats-in-use counter: max(bits of 0..CONTRIB_BEATS, SBW + 1).
  localparam UW = $clog2(CONTRIB_BEATS + 1) > SBW + 1 ? $clog2(CONTRIB_BEATS + 1) : SBW + 1;
  // Frame descriptors: number (the most contributions the half can hold), index and count widths.
  localparam D = DESCS;
  localparam DW = DESCS > 1 ? $clog2(DESCS) : 1;
  localparam DCW = $clog2(DESCS + 1);
  // A descriptor's head fields {CE, FIN, COUNT, VID, beats, first beat} (VID at IB) and the
  // header fields the result builder copies.
  localparam IB = BW + SBW;
  localparam HIW = IB + 50;
  localparam HDW = 104;
  // Constants sized to their registers.
  localparam [RW-1:0] REM_ONE = 1;
  localparam integer D_LAST_I = DESCS - 1;
  localparam [DW-1:0] D_LAST = D_LAST_I[DW-1:0];
  localparam [DCW-1:0] D_LAST_C = D_LAST_I[DCW-1:0];
  // Free-segment FIFO: index width (0..SEGS-1) and last entry.
  localparam SGW = SEGS > 1 ? $clog2(SEGS) : 1;
  localparam integer SG_LAST_I = SEGS - 1;
  localparam [SGW-1:0] SG_LAST = SG_LAST_I[SGW-1:0];

  // A receive MAC cannot be back-pressured: what does not fit is dropped whole.
  assign s_axis_tready = 1'b1;

  // ---------------------------------------------------------------- receive
  // The beat is registered DESC_STAGES times, so that a frame's last beat is written in the
  // cycle the parser's descriptor arrives, and the commit or rewind of one frame is settled
  // before the next frame's first beat is written.
  // tkeep is all ones but on a frame's last beat, where it is contiguous from bit 0
  // (accelerator.md), so the bypass FIFO keeps the beat's byte count instead (KW + 1 bits, not
  // W/8: one block RAM fewer per port) and mPP gets tkeep back from it.
  // The count is the parser's (`beat_bytes`, which also counts the frame's length). A frame
  // whose tkeep breaks that is never committed (rx_error, below), so its counts do not matter.
  wire [W-1:0] rx_data_q;
  wire [KW:0] rx_bytes_q;
  wire rx_valid_q, rx_last_q, rx_user_q;
  wire [KW:0] rx_bytes;
  // The beat into stage r: {tvalid, tuser, tlast, byte count, tdata}; tvalid is cleared by reset.
  localparam RXW = W + KW + 4;
  wire [RXW-1:0] rx_stage [0:DESC_STAGES];
  assign rx_stage[0] = {s_axis_tvalid, s_axis_tuser, s_axis_tlast, rx_bytes, s_axis_tdata};
  genvar gr;
  generate
    for (gr = 0; gr < DESC_STAGES; gr = gr + 1) begin : g_rx
      reg [RXW-1:0] beat_q;
      always @(posedge clk) beat_q <= {rx_stage[gr][RXW-1] & ~rst, rx_stage[gr][RXW-2:0]};
      assign rx_stage[gr+1] = beat_q;
    end
  endgenerate
  assign {rx_valid_q, rx_user_q, rx_last_q, rx_bytes_q, rx_data_q} = rx_stage[DESC_STAGES];

  wire desc_valid;
  wire [15:0] desc_len;
  wire desc_too_long;
  wire [1:0] desc_class;
  wire desc_rx_error, desc_malformed, desc_keep_bad;
  wire [7:0] desc_flags, desc_tid, desc_tos;
  wire [15:0] desc_jid, desc_count, desc_rank, desc_csum_part, hdr_jid;
  wire [7:0] hdr_tid;
  wire [31:0] desc_vid, desc_ip_dst;
  wire [1:0] desc_ecn;
  wire [47:0] desc_eth_dst;
  panama_parser #(.DATA_W(W), .DESC_STAGES(DESC_STAGES), .ELEM_BYTES(ELEM_BYTES), .MAX_ELEMS(MAX_ELEMS)) u_parser (
    .clk(clk), .rst(rst), .agg_port(agg_port),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid),
    .s_axis_tlast(s_axis_tlast), .s_axis_tuser(s_axis_tuser),
    .desc_valid(desc_valid), .desc_len(desc_len), .desc_too_long(desc_too_long), .desc_class(desc_class),
    .desc_rx_error(desc_rx_error), .desc_keep_bad(desc_keep_bad), .desc_malformed(desc_malformed),
    .desc_flags(desc_flags),
    .desc_jid(desc_jid), .desc_tid(desc_tid), .desc_count(desc_count), .desc_vid(desc_vid),
    .desc_rank(desc_rank), .desc_ecn(desc_ecn), .desc_eth_dst(desc_eth_dst), .desc_tos(desc_tos),
    .desc_ip_dst(desc_ip_dst), .desc_csum_part(desc_csum_part), .hdr_jid(hdr_jid), .hdr_tid(hdr_tid),
    .beat_bytes(rx_bytes));
  // Length, RANK, the too-long flag and FLAGS but RESULT and FIN decide nothing here: the stored
  // beats carry tlast/tkeep.
  wire unused_desc = ^{desc_len, desc_too_long, desc_rank, desc_flags[7:2], desc_jid, desc_tid};

  wire rx_beat = rx_valid_q;
  wire rx_end = rx_valid_q & rx_last_q;

  // ---------------------------------------------------------------- bypass FIFO
  // Every frame is written speculatively; its last beat commits it (bypass, or a final sum
  // passing through) or rewinds the write pointer. Each word keeps tuser, tlast and tkeep.
  reg [XW-1:0] byp_mem [0:BYP-1];
  reg [BPW-1:0] byp_wr_q, byp_start_q, byp_rd_q;
  reg [BCW-1:0] byp_count_q;   // committed beats not yet read
  reg [BCW-1:0] byp_spec_q;    // beats of the frame being received
  reg byp_ovf_q;               // the frame being received no longer fits
  wire [BCW-1:0] byp_space = BYP[BCW-1:0] - byp_count_q - byp_spec_q;
  wire byp_write = rx_beat & ~byp_ovf_q & (byp_space != {BCW{1'b0}});
  wire [BPW-1:0] byp_wr_next = (byp_wr_q == BYP[BPW-1:0] - 1'b1) ? {BPW{1'b0}} : byp_wr_q + 1'b1;
  always @(posedge clk) begin
    if (byp_write) byp_mem[byp_wr_q] <= {rx_user_q, rx_last_q, rx_bytes_q, rx_data_q};
  end

  // ---------------------------------------------------------------- contribution memory
  // Beats of W bits, each stored with the address of the next beat of its frame (the link):
  // one write port (receive) and one synchronous read port (the scheduler), block RAM.
  // It is two memories when the beat's bits are not a whole number of block RAM widths at depth
  // T: the widest whole number of them, and the rest (which fits a RAMB18 or less), instead of
  // one more whole RAMB36 for the last few bits (at W 64, T 4096: 8.5 BRAM36 instead of 9).
  localparam integer BEAT_BITS = W + BW;
  localparam integer B36W = T <= 512 ? 72 : T <= 1024 ? 36 : T <= 2048 ? 18 : T <= 4096 ? 9 :
                            T <= 8192 ? 4 : T <= 16384 ? 2 : 1;
  localparam integer BLO_F = (BEAT_BITS / B36W) * B36W;
  localparam integer BLO = (BLO_F == 0) ? BEAT_BITS : BLO_F;
  localparam integer BHI = BEAT_BITS - BLO;
  // The same links again, for the allocator walking a free segment (block RAM).
  reg [BW-1:0] link_mem [0:T-1];
  // The free beats are a chain of segments: after reset the fresh segment 0..T-1, whose links
  // are implicit (beat + 1), then the frames freed since, in the order they were freed (their own
  // links chain their beats). The segments after the current one wait in a FIFO of
  // {first beat, beat count} (block RAM): every free segment is a freed contribution of at least
  // 64 + ES bytes, so fewer than SEGS of them wait at once (gen/emit/top.cpp, buffer_plan).
  reg [BW+SBW-1:0] seg_mem [0:SEGS-1];
  // Committed allocation point: the next free beat, the beats left in its segment, whether that
  // segment is the fresh one, and the FIFO entry of the segment after it.
  reg [BW-1:0] fl_ptr_q;
  reg [RW-1:0] fl_rem_q;
  reg fl_fresh_q;
  reg [SGW-1:0] fl_sg_q;
  reg fl_wait_q;
  // Where the next freed frame is appended to the FIFO.
  reg [SGW-1:0] sg_wr_q;
  // The frame being received takes beats speculatively from the allocation point; admission
  // commits the walk, any other outcome forgets it (its beats stay free, in the same order).
  reg in_frame_q;
  reg [SBW-1:0] cur_beat_q;  // beats written so far, saturating at SB
  reg [BW-1:0] first_q;      // the frame's first beat
  // The allocation point in use: the committed one between frames, the frame's own walk
  // inside one. It is registered as such (cur_* <= cur_*_d, below), so the walk's loop through
  // the link memory's read address starts from flip-flops, not from a selection between the two.
  reg [BW-1:0] cur_ptr;
  reg [RW-1:0] cur_rem;
  reg cur_fresh;
  reg [SGW-1:0] cur_sg;
  // link_mem[cur_ptr] and seg_mem[cur_sg] as an asynchronous read would give them, from
  // synchronous reads: each memory is read every cycle at the address the allocation point
  // takes next (cur_*_d below), and a write in the cycle before, which that read did not see,
  // is taken from the registers that remember it.
  reg [BW-1:0] link_rd_q;
  reg [BW+SBW-1:0] seg_rd_q;
  reg link_pw_q, seg_pw_q;
  reg [BW-1:0] link_pa_q, link_pd_q;
  reg [SGW-1:0] seg_pa_q;
  reg [BW+SBW-1:0] seg_pd_q;
  wire [BW-1:0] link_cur = (link_pw_q & (link_pa_q == cur_ptr)) ? link_pd_q : link_rd_q;
  wire [BW+SBW-1:0] seg_next = (seg_pw_q & (seg_pa_q == cur_sg)) ? seg_pd_q : seg_rd_q;
  wire seg_end = cur_rem == REM_ONE;
  // The beat after cur_ptr in the free chain: where this frame's next beat goes.
  wire [BW-1:0] nxt_ptr = seg_end ? seg_next[BW+SBW-1:SBW] : cur_fresh ? cur_ptr + 1'b1 : link_cur;
  wire [RW-1:0] nxt_rem = seg_end ? {{(RW-SBW){1'b0}}, seg_next[SBW-1:0]} : cur_rem - 1'b1;
  wire nxt_fresh = cur_fresh & ~seg_end;
  wire [SGW-1:0] nxt_sg = ~seg_end ? cur_sg : (cur_sg == SG_LAST) ? {SGW{1'b0}} : cur_sg + 1'b1;
  // A contribution is at most SB beats: longer frames (never admitted here) stop being written.
  // The memory holds exactly the contribution half (T = CAPB beats), so the free chain may be
  // shorter than the frame being received while the buffer is within one frame of full: a beat
  // is written only while the chain has it and, unless it is the frame's last, the beat after
  // it (its link, and where the next beat goes). left_q counts the free beats beyond those this
  // frame has taken; once a beat finds none, the frame writes nothing more (no_room_q) and is
  // not admitted (`room_ok` below: it counts as overflow, docs/rtl.md "Buffer depth").
  reg [RW-1:0] left_q;
  reg left_1, left_2;  // left_q >= 1, left_q >= 2 (registered with it)
  reg no_room_q;
  reg [SBW-1:0] wcnt_q;  // beats this frame has written
  wire has_room = ~no_room_q & (rx_last_q ? left_1 : left_2);
  wire beat_write = rx_beat & (cur_beat_q != SB[SBW-1:0]) & has_room;
  wire room_ok = has_room;  // on the last beat: the whole frame was written
  always @(posedge clk) begin
    if (beat_write) link_mem[cur_ptr] <= nxt_ptr;
  end
  // The scheduler's read port: one beat and its link per cycle, one cycle of latency.
  wire [BEAT_BITS-1:0] beat_wr = {nxt_ptr, rx_data_q};
  wire [BEAT_BITS-1:0] beat_rd;
  assign {rd_link, rd_data} = beat_rd;
  reg [BLO-1:0] beat_lo [0:T-1];
  reg [BLO-1:0] beat_lo_q;
  always @(posedge clk) begin
    if (beat_write) beat_lo[cur_ptr] <= beat_wr[BLO-1:0];
    beat_lo_q <= beat_lo[rd_addr];
  end
  assign beat_rd[BLO-1:0] = beat_lo_q;
  generate
    if (BHI > 0) begin : g_beat_hi
      reg [BHI-1:0] beat_hi [0:T-1];
      reg [BHI-1:0] beat_hi_q;
      always @(posedge clk) begin
        if (beat_write) beat_hi[cur_ptr] <= beat_wr[BEAT_BITS-1:BLO];
        beat_hi_q <= beat_hi[rd_addr];
      end
      assign beat_rd[BEAT_BITS-1:BLO] = beat_hi_q;
    end
  endgenerate
  wire [BW-1:0] frame_first = in_frame_q ? first_q : cur_ptr;
  wire [SBW-1:0] frame_beats = cur_beat_q + 1'b1;  // on the last beat of a contribution (<= SB)

  // ---------------------------------------------------------------- admission (rule 2)
  // The context match is kept off the rule 9 arithmetic (docs/rtl.md, "Admission timing"): the
  // fit is evaluated for every context in parallel from registers only, and every per-context
  // decision is an AND of the one-hot match `sel` with that context's own terms.
  // The register file never has two enabled contexts with the same (JID, TID) (accelerator.md:
  // enabling is refused for a duplicate, and fields are writable only while disabled), so at
  // most one context matches and the match vector is already one-hot: no priority encoder.
  // The (JID, TID) compares are made on the parser's header bytes during the last beat and
  // registered (`match_q`), so the decision a cycle later starts from flip-flops. The match
  // with this port's role in the context is registered with it: a context's fields change only
  // while it is disabled, and enabling it is a later write, so for a context enabled at the
  // decision they are those of the cycle before.
  wire [C-1:0] hit;
  reg [C-1:0] match_q;
  integer c;
  genvar ga;
  // The index of a one-hot (or zero) context vector: per bit, an OR of the contexts whose index
  // has it.
  function [CW-1:0] oh_idx(input [C-1:0] oh);
    integer i;
    begin
      oh_idx = {CW{1'b0}};
      for (i = 0; i < C; i = i + 1) oh_idx = oh_idx | ({CW{oh[i]}} & i[CW-1:0]);
    end
  endfunction
  // Every context's beats in use and over(used), as arrays for the selections by index below.
  wire [UW-1:0] used_arr [0:C-1];
  wire [UW-1:0] over_arr [0:C-1];
  // With one fit (EARLY_FIT, below) the enable is the one of the cycle before the decision,
  // registered with the match: a context counts as enabled for a frame when it is enabled in
  // the cycle before the frame's decision (a disable reaches admission one cycle after the
  // scheduler). Otherwise it is the enable at the decision.
  localparam EARLY_FIT = (64 + ELEM_BYTES) > BB;
  // The (JID, TID) compares are made on the parser's header bytes of the last beat; with two
  // descriptor stages they are registered once (id_at) before the match of the cycle before
  // the decision. A field is written only while its context is disabled, and enabling it is
  // a later write, so a context enabled in that cycle was compared with its new fields.
  wire [C-1:0] id_eq, id_at;
  wire [C-1:0] match_d;  // the match in the cycle before the decision
  generate
    if (DESC_STAGES > 1) begin : g_id2
      reg [C-1:0] id_q;
      always @(posedge clk) id_q <= id_eq;
      assign id_at = id_q;
    end else begin : g_id1
      assign id_at = id_eq;
    end
    for (ga = 0; ga < C; ga = ga + 1) begin : g_match
      assign id_eq[ga] = (ctx_jid[ga*16 +: 16] == hdr_jid) & (ctx_tid[ga*8 +: 8] == hdr_tid);
      assign match_d[ga] = id_at[ga] & (ctx_enable[ga] | ~EARLY_FIT);
      always @(posedge clk) match_q[ga] <= match_d[ga];
    end
  endgenerate
  // The match (hit, one-hot or zero), the matched context's members and upstream roles for this
  // port, and whether anything matched. With one fit they are all registered (the enable of the
  // cycle before is in match_d); otherwise ANDed with the enable at the decision.
  wire [C-1:0] sel_mem;  // hit & ctx_member
  wire member_hit, uplink_hit, any_hit;
  generate
    if (EARLY_FIT) begin : g_hit1
      reg mem_q, up_q, any_q;
      always @(posedge clk) begin
        mem_q <= |(match_d & ctx_member);
        up_q <= |(match_d & ctx_uplink);
        any_q <= |match_d;
      end
      assign hit = match_q;
      assign sel_mem = {C{mem_q}} & match_q;
      assign member_hit = mem_q;
      assign uplink_hit = up_q;
      assign any_hit = any_q;
    end else begin : g_hitc
      reg [C-1:0] match_mem_q, match_up_q;
      always @(posedge clk) begin
        match_mem_q <= match_d & ctx_member;
        match_up_q <= match_d & ctx_uplink;
      end
      assign hit = ctx_enable & match_q;
      assign sel_mem = ctx_enable & match_mem_q;
      assign member_hit = |sel_mem;
      assign uplink_hit = |(ctx_enable & match_up_q);
      assign any_hit = |hit;
    end
  endgenerate
  wire [C-1:0] sel = hit;
  // Rule 9 accounting in beats (a frame occupies its length rounded up to W/8 bytes): every
  // context owns R = SB beats (one largest frame); beyond that it borrows from the pool of
  // P = CAPB - C*R beats shared by all contexts. A frame of F beats fits context k if the growth
  // of its use beyond R fits in what the pool has free (the SystemC model's
  // PortBuffer::contrib_fits): over(used_k + F) - over(used_k) <= P - shared, with
  // over(u) = max(0, u - R) and shared = sum over contexts of over(used), kept as a running sum
  // (shared_q) rather than added up every cycle. A negative pool (C*R > CAPB) refuses every
  // contribution. With S_k = P + over(used_k) - shared this is max(0, used_k + F - R) <= S_k,
  // i.e. S_k >= 0 and F <= S_k + R - used_k; and F = cur_beat_q + 1 on the last beat (a
  // contribution is at most SB beats, so cur_beat_q has not saturated), so F <= room_k is
  // cur_beat_q < room_k. Widths: |S_k|, |room_k| < 2^(UW+2), held signed in UW+3 bits.
  localparam [31:0] POOL = (RESERVED <= CAPB) ? CAPB - RESERVED : 32'd0;
  localparam [31:0] POOL_SB = POOL + SB;
  localparam POOL_OK = RESERVED <= CAPB;
  reg [UW-1:0] shared_q;
  wire [C-1:0] fits;
  // Rule 9's terms for a context using `u` beats, `o` = over(u), with the running sum `sh`:
  // {S >= 0 and room >= 0, room}. A frame whose last beat is beat `last` (F = last + 1) fits if
  // the flag is set and last < room (rule9_fits).
  function [UW+3:0] rule9_room(input [UW-1:0] u, input [UW-1:0] o, input [UW-1:0] sh);
    reg [UW+2:0] slack, room;
    begin
      slack = POOL[UW+2:0] + {3'b0, o} - {3'b0, sh};
      room = POOL_SB[UW+2:0] + {3'b0, o} - {3'b0, sh} - {3'b0, u};
      rule9_room = {POOL_OK & ~slack[UW+2] & ~room[UW+2], room};
    end
  endfunction
  function rule9_fits(input [UW+3:0] r, input [SBW-1:0] last);
    rule9_fits = r[UW+3] & ({{(UW+3-SBW){1'b0}}, last} < r[UW+2:0]);
  endfunction
  // The fit itself (one, or one per context) is set with the accounting, below.
  wire byp_fits = byp_write;  // on the last beat: this beat is written, so the frame fits
  wire is_result = desc_flags[1];
  // A frame that broke the tkeep contract is dropped whole whatever its class and counted
  // rx_error (docs/rtl.md, "tkeep outside the contract"): neither bypass nor aggregation.
  wire is_bypass = (desc_class == CLASS_BYPASS) & ~desc_keep_bad;
  wire is_agg = (desc_class != CLASS_BYPASS) & (desc_class != CLASS_RUNT) & ~desc_keep_bad;
  wire agg_ok = is_agg & ~desc_rx_error & ~desc_malformed & any_hit;
  wire contrib_fits = |(sel & fits);
  wire pass_result = agg_ok & is_result & uplink_hit;
  wire contrib = agg_ok & ~is_result & member_hit;
  wire commit_byp = rx_end & (is_bypass | pass_result) & byp_fits;
  // The push into context g's queue: rx_end & contrib & contrib_fits with sel one-hot, per context.
  wire agg_pre = rx_end & is_agg & ~desc_rx_error & ~desc_malformed & ~is_result;
  wire [C-1:0] push_ctx = {C{agg_pre}} & sel_mem & fits;
  wire commit_contrib;  // |push_ctx (with one fit: without the reduction), set with the fit

  // Counter pulses, PortCounter order 0..11 (the scheduler adds stale..timeout), registered
  // (a cycle later in the register file; the decision's paths end here).
  wire [11:0] count_d;
  always @(posedge clk) begin
    if (rst) count_inc <= 12'd0;
    else count_inc <= count_d;
  end
  assign count_d[0] = rx_end;                                          // rx_frames
  assign count_d[1] = m_axis_tvalid & m_axis_tready & m_axis_tlast;    // tx_frames
  assign count_d[2] = rx_end & is_bypass & byp_fits;                   // bypass_frames
  assign count_d[3] = commit_contrib;                                     // agg_admitted
  assign count_d[4] = rx_end & pass_result & byp_fits;                 // result_passed
  assign count_d[5] = rx_end & (desc_class == CLASS_RUNT) & ~desc_keep_bad;  // runt
  assign count_d[6] = rx_end & (desc_keep_bad | (is_agg & desc_rx_error));  // rx_error
  assign count_d[7] = rx_end & is_agg & ~desc_rx_error & desc_malformed;  // malformed
  assign count_d[8] = rx_end & is_agg & ~desc_rx_error & ~desc_malformed & ~any_hit;  // no_context
  assign count_d[9] = rx_end & agg_ok & (is_result ? ~uplink_hit : ~member_hit);  // not_member
  assign count_d[10] = rx_end & ((pass_result & ~byp_fits) | (contrib & ~contrib_fits));  // overflow
  assign count_d[11] = rx_end & is_bypass & ~byp_fits;                 // bypass_overflow
  wire unused_desc_valid = desc_valid;  // equals rx_end by construction

  // Bypass FIFO pointers.
  wire tx_issue;
  always @(posedge clk) begin
    if (rst) begin
      byp_wr_q <= {BPW{1'b0}};
      byp_start_q <= {BPW{1'b0}};
      byp_spec_q <= {BCW{1'b0}};
      byp_ovf_q <= 1'b0;
      byp_count_q <= {BCW{1'b0}};
    end else begin
      if (rx_end) begin
        if (commit_byp) begin
          byp_wr_q <= byp_wr_next;
          byp_start_q <= byp_wr_next;
        end else begin
          byp_wr_q <= byp_start_q;  // rewind
        end
        byp_spec_q <= {BCW{1'b0}};
        byp_ovf_q <= 1'b0;
      end else if (rx_beat) begin
        if (byp_write) begin
          byp_wr_q <= byp_wr_next;
          byp_spec_q <= byp_spec_q + 1'b1;
        end else begin
          byp_ovf_q <= 1'b1;
        end
      end
      byp_count_q <= byp_count_q + (commit_byp ? byp_spec_q + 1'b1 : {BCW{1'b0}}) - {{(BCW-1){1'b0}}, tx_issue};
    end
  end

  // ---------------------------------------------------------------- frame descriptors
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
  wire [HIW-1:0] new_info = {desc_ecn == 2'b11, desc_flags[0], desc_count, desc_vid, frame_beats, frame_first};
  always @(posedge clk) begin
    if (commit_contrib) begin
      d_info[d_new] <= new_info;
      d_hdr[d_new] <= {desc_csum_part, desc_ip_dst, desc_tos, desc_eth_dst};
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

  // Frame state and the free chain: admission commits the walk; a removed frame is appended
  // to the FIFO of free segments whole (its links already chain its beats).
  // A frame that takes the chain's last free beat (left_q = 1: the end of the current segment,
  // the FIFO empty) leaves nothing to advance to: the allocation point waits (fl_wait_q) at
  // the FIFO entry the next freed frame is written to, and takes that frame as its segment when
  // it comes (in the same cycle as the admission, or later).
  wire [SGW-1:0] sg_wr_next = (sg_wr_q == SG_LAST) ? {SGW{1'b0}} : sg_wr_q + 1'b1;
  wire last_free = left_1 & ~left_2;  // left_q == 1
  wire [RW-1:0] pop_rem = {{(RW-SBW){1'b0}}, pop_beats};
  wire take_c = free_any & last_free;   // admitting takes the last beat; a frame is freed
  wire take_w = free_any & fl_wait_q;   // waiting, and a frame is freed
  wire [BW-1:0] fl_ptr_d = commit_contrib ? (take_c ? pop_first : nxt_ptr) : (take_w ? pop_first : fl_ptr_q);
  wire [RW-1:0] fl_rem_d = commit_contrib ? (take_c ? pop_rem : nxt_rem) : (take_w ? pop_rem : fl_rem_q);
  wire fl_fresh_d = commit_contrib ? (~take_c & nxt_fresh) : (~take_w & fl_fresh_q);
  wire [SGW-1:0] fl_sg_d = commit_contrib ? (take_c ? sg_wr_next : last_free ? cur_sg : nxt_sg)
                                          : (take_w ? sg_wr_next : fl_sg_q);
  wire fl_wait_d = commit_contrib ? (last_free & ~free_any) : (fl_wait_q & ~free_any);
  always @(posedge clk) begin
    if (rst) begin
      in_frame_q <= 1'b0;
      cur_beat_q <= {SBW{1'b0}};
      fl_ptr_q <= {BW{1'b0}};
      fl_rem_q <= T[RW-1:0];
      fl_fresh_q <= 1'b1;
      fl_sg_q <= {SGW{1'b0}};
      fl_wait_q <= 1'b0;
      sg_wr_q <= {SGW{1'b0}};
    end else begin
      if (rx_end) begin
        in_frame_q <= 1'b0;
        cur_beat_q <= {SBW{1'b0}};
      end else if (rx_beat) begin
        in_frame_q <= 1'b1;
        if (cur_beat_q != SB[SBW-1:0]) cur_beat_q <= cur_beat_q + 1'b1;
      end
      fl_ptr_q <= fl_ptr_d;
      fl_rem_q <= fl_rem_d;
      fl_fresh_q <= fl_fresh_d;
      fl_sg_q <= fl_sg_d;
      fl_wait_q <= fl_wait_d;
      if (free_any) sg_wr_q <= sg_wr_next;
    end
    if (rx_beat & ~in_frame_q) first_q <= cur_ptr;
  end
  always @(posedge clk) begin
    if (free_any) seg_mem[sg_wr_q] <= {pop_first, pop_beats};
  end
  // The free chain's length beyond the frame's beats (see beat_write): a written beat takes
  // one, a freed frame adds its beats, and a frame that is not admitted gives back its own.
  wire [RW-1:0] left_fr = left_q + (free_any ? {{(RW-SBW){1'b0}}, pop_beats} : {RW{1'b0}});
  wire [RW-1:0] left_rw = left_fr + {{(RW-SBW){1'b0}}, wcnt_q};        // the frame is forgotten
  wire [RW-1:0] left_tk = left_fr - {{(RW-1){1'b0}}, beat_write};     // otherwise
  // left_fr >= 1, 2, 3, so that the flags of left_tk need beat_write only to choose.
  wire fr_ge1 = left_fr != {RW{1'b0}};
  wire fr_ge2 = left_fr[RW-1:1] != {(RW-1){1'b0}};
  wire fr_ge3 = (left_fr[RW-1:2] != {(RW-2){1'b0}}) | (left_fr[1] & left_fr[0]);
  always @(posedge clk) begin
    if (rst) begin
      left_q <= T[RW-1:0];
      left_1 <= 1'b1;
      left_2 <= 1'b1;
      no_room_q <= 1'b0;
      wcnt_q <= {SBW{1'b0}};
    end else begin
      if (rx_end & ~commit_contrib) begin
        left_q <= left_rw;
        left_1 <= left_rw != {RW{1'b0}};
        left_2 <= left_rw[RW-1:1] != {(RW-1){1'b0}};
      end else begin
        left_q <= left_tk;
        left_1 <= beat_write ? fr_ge2 : fr_ge1;
        left_2 <= beat_write ? fr_ge3 : fr_ge2;
      end
      no_room_q <= ~rx_end & (no_room_q | (rx_beat & ~has_room));
      wcnt_q <= rx_end ? {SBW{1'b0}} : wcnt_q + {{(SBW-1){1'b0}}, beat_write};
    end
  end
  // The allocation point of the next cycle (what the registers above take), which addresses the
  // two reads; and the writes of this cycle, which those reads do not see.
  wire in_frame_d = ~rx_end & (rx_beat | in_frame_q);
  // Inside a frame the walk moves with each written beat (a frame whose first beat finds no room
  // keeps the committed point, and writes nothing more); between frames it is the committed
  // point. The reset values are the committed point's.
  wire [BW-1:0] cur_ptr_d = rst ? {BW{1'b0}}
                          : in_frame_d ? (beat_write ? nxt_ptr : cur_ptr)
                          : fl_ptr_d;
  wire [RW-1:0] cur_rem_d = rst ? T[RW-1:0]
                          : in_frame_d ? (beat_write ? nxt_rem : cur_rem)
                          : fl_rem_d;
  wire cur_fresh_d = rst | (in_frame_d ? (beat_write ? nxt_fresh : cur_fresh) : fl_fresh_d);
  wire [SGW-1:0] cur_sg_d = rst ? {SGW{1'b0}}
                          : in_frame_d ? (beat_write ? nxt_sg : cur_sg)
                          : fl_sg_d;
  always @(posedge clk) begin
    cur_ptr <= cur_ptr_d;
    cur_rem <= cur_rem_d;
    cur_fresh <= cur_fresh_d;
    cur_sg <= cur_sg_d;
    link_rd_q <= link_mem[cur_ptr_d];
    seg_rd_q <= seg_mem[cur_sg_d];
    link_pw_q <= beat_write & ~rst;
    link_pa_q <= cur_ptr;
    link_pd_q <= nxt_ptr;
    seg_pw_q <= free_any & ~rst;
    seg_pa_q <= sg_wr_q;
    seg_pd_q <= {pop_first, pop_beats};
  end

  // ---------------------------------------------------------------- queues
  // One linked list of descriptors per context: head, tail, "not empty" and the context's beats in
  // use in registers; the head's fields stay in its descriptor (d_info), read for the
  // scheduler one context per cycle (ev_* below).
  // Beats freed (at most one frame per cycle) and from which context, one-hot. They leave the
  // accounting the cycle after, from these registers: until then the frame still counts as
  // queued, which only ever refuses more.
  wire [C-1:0] fr_hit;
  reg [C-1:0] fr_oh_q;
  reg [CW-1:0] fr_idx_q;  // its index
  reg [SBW-1:0] fr_b_q;
  always @(posedge clk) begin
    fr_oh_q <= rst ? {C{1'b0}} : fr_hit;
    fr_idx_q <= rel_now ? held_ctx_q : pop_ctx;
    fr_b_q <= pop_beats;
  end
  // The accounting of one cycle is one datapath, not one per context: at most two contexts
  // change, the freed one (fr_oh_q) and the pushed one (the match, `sel`), and both are known
  // from registers before admission decides, which only chooses between the outcomes. The
  // free comes first: a free of f beats takes min(f, over(used)) off over(used), since
  // over(u - f) = max(0, over(u) - f); a push of F beats then gives used + F and
  // over(used + F), from the freed values when the same context was freed.
  // The freed context's used and over(used): multiplexers by index.
  wire [CW-1:0] sel_idx = oh_idx(sel);
  wire [UW-1:0] uf = used_arr[fr_idx_q];
  wire [UW-1:0] of = over_arr[fr_idx_q];
  wire [UW-1:0] fr = (|fr_oh_q) ? {{(UW-SBW){1'b0}}, fr_b_q} : {UW{1'b0}};
  wire [UW-1:0] fo = (fr < of) ? fr : of;
  wire [UW-1:0] used_fn = uf - fr;
  wire [UW-1:0] over_fn = of - fo;
  // The matched context's used and over(used) as this cycle began (ub, ob) and the beats freed
  // from it in this cycle (frs, zero when the free is another context's): from the fit's
  // generate below, registers with one fit, multiplexers by index otherwise.
  wire [UW-1:0] ub, ob, frs;
  wire [UW-1:0] used_b = ub - frs;
  wire [UW-1:0] fos = (frs < ob) ? frs : ob;
  wire [UW-1:0] over_b = ob - fos;
  wire [UW-1:0] used_a = used_b + {{(UW-SBW){1'b0}}, frame_beats};
  wire [UW-1:0] over_a = (used_a > SB) ? used_a - SB : {UW{1'b0}};
  // The running sum of over(used) without a push, and with the matched context pushed.
  wire [UW-1:0] shared_0 = shared_q - fo;
  wire [UW-1:0] shared_a = shared_0 + over_a - over_b;
  // One fit or one per context (docs/rtl.md, "One fit"). When every well-formed contribution
  // is at least two beats long (64 + ES > W/8 bytes: W <= 512), no contribution is admitted in
  // the cycle of a last beat (the one before the decision), so the matched context's counters
  // at the decision are those of that cycle with that cycle's free applied: used_fn/over_fn
  // when the free is the matched context's, and the running sum is shared_0. They are taken into
  // registers there (a multiplexer on the compares of that cycle, which `match_q` registers),
  // with the beats the decision's own cycle frees from that context, and the fit is evaluated
  // once, from them, at the decision; `hit` is zero or `match_q`, the context they were taken
  // from. The decision's own free still counts for the fit: this only ever refuses more. With
  // one-beat contributions (W >= 1024) the fit is evaluated for every context, at the decision.
  generate
    if (EARLY_FIT) begin : g_fit1
      // match_d is one-hot or zero here (it includes the enable); with zero nothing is pushed.
      wire [CW-1:0] midx = oh_idx(match_d);
      wire fr_same = |(fr_oh_q & match_d);  // this cycle frees the matched context
      wire [UW-1:0] mu_d = fr_same ? used_fn : used_arr[midx];
      wire [UW-1:0] mo_d = fr_same ? over_fn : over_arr[midx];
      reg [UW-1:0] mu_q, mo_q, frs_q;
      always @(posedge clk) begin
        mu_q <= mu_d;
        mo_q <= mo_d;
        // fr_hit becomes fr_oh_q at the decision, with pop_beats as fr_b_q.
        frs_q <= (|(fr_hit & match_d)) ? {{(UW-SBW){1'b0}}, pop_beats} : {UW{1'b0}};
      end
      // Rule 9's terms from the same values and the running sum shared_0: with two descriptor
      // stages (the match of this cycle from registers) their sums are registered here too;
      // with one (the match from the last beat's live header bytes) they are made at the
      // decision, from registers.
      wire [UW+3:0] room_r;
      if (DESC_STAGES > 1) begin : g_room_early
        reg [UW+3:0] room_q;
        always @(posedge clk) room_q <= rule9_room(mu_d, mo_d, shared_0);
        assign room_r = room_q;
      end else begin : g_room_late
        reg [UW-1:0] msh_q;
        always @(posedge clk) msh_q <= shared_0;
        assign room_r = rule9_room(mu_q, mo_q, msh_q);
      end
      wire fit = rule9_fits(room_r, cur_beat_q) & room_ok;
      assign fits = {C{fit}};
      // member_hit: the match is one-hot and a member, so push_ctx is match_q where this is set.
      assign commit_contrib = agg_pre & member_hit & fit;
      assign ub = mu_q;
      assign ob = mo_q;
      assign frs = frs_q;
    end else begin : g_fitc
      for (ga = 0; ga < C; ga = ga + 1) begin : g_fit
        assign fits[ga] = rule9_fits(rule9_room(used_arr[ga], over_arr[ga], shared_q), cur_beat_q) & room_ok;
      end
      assign commit_contrib = |push_ctx;
      wire same_ctx = |(sel & fr_oh_q);
      assign ub = used_arr[sel_idx];
      assign ob = over_arr[sel_idx];
      assign frs = same_ctx ? fr : {UW{1'b0}};
    end
  endgenerate
  genvar g;
  generate
    for (g = 0; g < C; g = g + 1) begin : g_queue
      reg [DW-1:0] head_q, tail_q;
      reg [UW-1:0] used_q, over_q;
      wire push = push_ctx[g];
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
      assign becomes_head[g] = push & (~ne_q | (pop & one_q));
      // Whether this context is the one freed (fr_oh_q, above): the held frame on its release,
      // else this queue's head when it is the dropped one.
      assign fr_hit[g] = rel_now ? (held_ctx_q == g) : (pop & ~q_hold);
      always @(posedge clk) begin
        if (rst) begin
          ne_q <= 1'b0;
          one_q <= 1'b0;
          used_q <= {UW{1'b0}};
          over_q <= {UW{1'b0}};
        end else begin
          ne_q <= push | (ne_q & ~(pop & one_q));
          if (push & ~pop) one_q <= ~ne_q;
          else if (pop & ~push) one_q <= ~one_q & (after_desc == tail_q);
          if (push) begin
            used_q <= used_a;
            over_q <= over_a;
          end else if (fr_oh_q[g]) begin
            used_q <= used_fn;
            over_q <= over_fn;
          end
        end
        if (becomes_head[g]) head_q <= d_new;
        else if (pop) head_q <= after_desc;
        if (push) tail_q <= d_new;
      end
      assign head_arr[g] = head_q;
      assign tail_arr[g] = tail_q;
      assign used_arr[g] = used_q;
      assign over_arr[g] = over_q;
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
  always @(posedge clk) begin
    if (rst) shared_q <= {UW{1'b0}};
    else shared_q <= commit_contrib ? shared_a : shared_0;
  end
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
  reg [C-1:0] exp_hit;
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

  // ---------------------------------------------------------------- transmit (mPP)
  // Reads committed beats into a four-entry FIFO; a read is issued only when the FIFO can take
  // it, so a started frame never underruns (the whole frame is already in memory).
  reg [XW-1:0] tx_word_q;
  reg tx_inflight_q;
  reg [XW-1:0] tx_fifo [0:3];
  reg [1:0] tx_wp_q, tx_rp_q;
  reg [2:0] tx_cnt_q;
  assign tx_issue = (byp_count_q != {BCW{1'b0}}) & (({1'b0, tx_cnt_q} + {3'b0, tx_inflight_q}) < 4'd3);
  // A FIFO entry moves to the output register when that is empty or being taken.
  wire tx_pop = (tx_cnt_q != 3'd0) & (~tx_out_valid_q | m_axis_tready);
  wire tx_take = tx_pop;
  always @(posedge clk) begin
    if (tx_issue) tx_word_q <= byp_mem[byp_rd_q];
    if (tx_inflight_q) tx_fifo[tx_wp_q] <= tx_word_q;
  end
  always @(posedge clk) begin
    if (rst) begin
      byp_rd_q <= {BPW{1'b0}};
      tx_inflight_q <= 1'b0;
      tx_wp_q <= 2'd0;
      tx_rp_q <= 2'd0;
      tx_cnt_q <= 3'd0;
    end else begin
      if (tx_issue) byp_rd_q <= (byp_rd_q == BYP[BPW-1:0] - 1'b1) ? {BPW{1'b0}} : byp_rd_q + 1'b1;
      tx_inflight_q <= tx_issue;
      if (tx_inflight_q) tx_wp_q <= tx_wp_q + 1'b1;
      if (tx_pop) tx_rp_q <= tx_rp_q + 1'b1;
      tx_cnt_q <= tx_cnt_q + {2'b0, tx_inflight_q} - {2'b0, tx_pop};
    end
  end
  // Output register: mPP is driven by flip-flops only.
  // tkeep from the byte count as the output register is loaded.
  wire [XW-1:0] tx_head = tx_fifo[tx_rp_q];
  wire [KW:0] tx_bytes = tx_head[W +: KW+1];
  wire [BB-1:0] tx_keep = tx_head[W+KW+1] ? ~({BB{1'b1}} << tx_bytes) : {BB{1'b1}};
  reg [W+BB+1:0] tx_out_q;
  reg tx_out_valid_q;
  always @(posedge clk) begin
    if (tx_take) tx_out_q <= {tx_head[W+KW+2], tx_head[W+KW+1], tx_keep, tx_head[W-1:0]};
    if (rst) tx_out_valid_q <= 1'b0;
    else tx_out_valid_q <= tx_take | (tx_out_valid_q & ~m_axis_tready);
  end
  assign m_axis_tvalid = tx_out_valid_q;
  assign m_axis_tdata = tx_out_q[W-1:0];
  assign m_axis_tkeep = tx_out_q[W+BB-1:W];
  assign m_axis_tlast = tx_out_q[W+BB];
  assign m_axis_tuser = tx_out_q[W+BB+1];

endmodule

`default_nettype wire
