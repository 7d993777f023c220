// SPDX-License-Identifier: MIT
// One port of the accelerator (docs/rtl.md): receive stage, parser, bypass FIFO with
// commit/rewind and transmit to mPP (panama_port_bypass), contribution memory of linked beats
// (panama_port_alloc), admission (accelerator.md rule 2; panama_port_admit), descriptor queues
// per context (panama_port_queues). The buffer sizes are computed by panama-gen
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
  output wire ev_valid,
  output wire ev_stale,
  output wire ev_at_e,
  output wire [31:0] ev_dist,
  output wire [15:0] ev_count,
  output wire ev_fin,
  output wire ev_ce,
  output wire [MEM_PTR_W-1:0] ev_ptr,
  output wire [FRAME_CNT_W-1:0] ev_beats,
  output wire ev_expired,
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
  // Bus width in bits and bytes, and the bits of a byte index within a beat.
  localparam W = DATA_W;
  localparam BB = DATA_W / 8;
  localparam KW = $clog2(BB);
  // A contribution memory address, and a count of 0..FRAME_BEATS beats.
  localparam BW = MEM_PTR_W;
  localparam SBW = FRAME_CNT_W;

  // The blocks (docs/rtl.md, "The port"): the receive stage and the parser here, then
  // panama_port_bypass (bypass FIFO and transmit), panama_port_alloc (contribution memory and its
  // free chain), panama_port_admit (context match and rule 9 accounting) and panama_port_queues
  // (descriptors, per-context queues, the scheduler's head reads, timeouts). The decision that
  // joins them (classification, commits, counters) is below.

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

  wire rx_end = rx_valid_q & rx_last_q;

  // ---------------------------------------------------------------- bypass FIFO and transmit
  wire byp_write;   // this beat is written to the bypass FIFO
  wire commit_byp;  // on a last beat: the frame is committed to it
  panama_port_bypass #(.DATA_W(W), .BYP_BEATS(BYP_BEATS)) u_bypass (
    .clk(clk), .rst(rst),
    .rx_valid(rx_valid_q), .rx_user(rx_user_q), .rx_last(rx_last_q), .rx_bytes(rx_bytes_q), .rx_data(rx_data_q),
    .write(byp_write), .commit(commit_byp),
    .m_axis_tdata(m_axis_tdata), .m_axis_tkeep(m_axis_tkeep), .m_axis_tvalid(m_axis_tvalid),
    .m_axis_tlast(m_axis_tlast), .m_axis_tuser(m_axis_tuser), .m_axis_tready(m_axis_tready));

  // ---------------------------------------------------------------- contribution memory
  wire commit_contrib;  // on a last beat: the contribution is admitted (pushed into its queue)
  wire free_any;        // a frame's beats go back to the free chain (from the queues)
  wire [BW-1:0] pop_first;
  wire [SBW-1:0] pop_beats;
  wire room_ok;         // on the last beat: the whole frame was written
  wire [SBW-1:0] cur_beat_q;
  wire [BW-1:0] frame_first;
  wire [SBW-1:0] frame_beats;
  panama_port_alloc #(.DATA_W(W), .FRAME_BEATS(FRAME_BEATS), .MEM_BEATS(MEM_BEATS), .SEGS(SEGS)) u_alloc (
    .clk(clk), .rst(rst), .rx_valid(rx_valid_q), .rx_last(rx_last_q), .rx_data(rx_data_q),
    .commit(commit_contrib), .free(free_any), .free_first(pop_first), .free_beats(pop_beats),
    .room_ok(room_ok), .cur_beat(cur_beat_q), .frame_first(frame_first), .frame_beats(frame_beats),
    .rd_addr(rd_addr), .rd_data(rd_data), .rd_link(rd_link));

  // ---------------------------------------------------------------- admission (rule 2)
  wire any_hit, member_hit, uplink_hit, contrib_fits;
  wire agg_pre;
  wire [C-1:0] push_ctx, fr_hit;
  wire [CW-1:0] sel_idx, fr_idx;
  panama_port_admit #(.CONTEXTS(C), .DATA_W(W), .DESC_STAGES(DESC_STAGES), .ELEM_BYTES(ELEM_BYTES),
                      .FRAME_BEATS(FRAME_BEATS), .CONTRIB_BEATS(CONTRIB_BEATS)) u_admit (
    .clk(clk), .rst(rst),
    .ctx_enable(ctx_enable), .ctx_jid(ctx_jid), .ctx_tid(ctx_tid), .ctx_member(ctx_member), .ctx_uplink(ctx_uplink),
    .hdr_jid(hdr_jid), .hdr_tid(hdr_tid),
    .agg_pre(agg_pre), .room_ok(room_ok), .cur_beat(cur_beat_q), .frame_beats(frame_beats),
    .fr_hit(fr_hit), .fr_idx(fr_idx), .free_beats(pop_beats),
    .any_hit(any_hit), .member_hit(member_hit), .uplink_hit(uplink_hit), .contrib_fits(contrib_fits),
    .commit(commit_contrib), .push(push_ctx), .push_idx(sel_idx));

  wire byp_fits = byp_write;  // on the last beat: this beat is written, so the frame fits
  wire is_result = desc_flags[1];
  // A frame that broke the tkeep contract is dropped whole whatever its class and counted
  // rx_error (docs/rtl.md, "tkeep outside the contract"): neither bypass nor aggregation.
  wire is_bypass = (desc_class == CLASS_BYPASS) & ~desc_keep_bad;
  wire is_agg = (desc_class != CLASS_BYPASS) & (desc_class != CLASS_RUNT) & ~desc_keep_bad;
  wire agg_ok = is_agg & ~desc_rx_error & ~desc_malformed & any_hit;
  wire pass_result = agg_ok & is_result & uplink_hit;
  wire contrib = agg_ok & ~is_result & member_hit;
  assign commit_byp = rx_end & (is_bypass | pass_result) & byp_fits;
  // A well-formed contribution's last beat: admission pushes it if this port is a member of the
  // matched context and it fits.
  assign agg_pre = rx_end & is_agg & ~desc_rx_error & ~desc_malformed & ~is_result;

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

  // ---------------------------------------------------------------- queues
  panama_port_queues #(.CONTEXTS(C), .FRAME_BEATS(FRAME_BEATS), .MEM_BEATS(MEM_BEATS), .DESCS(DESCS)) u_queues (
    .clk(clk), .rst(rst), .now(now), .ctx_enable(ctx_enable), .to_ctx(to_ctx), .to_cycles(to_cycles),
    .push(push_ctx), .commit(commit_contrib), .push_idx(sel_idx),
    .push_info({desc_ecn == 2'b11, desc_flags[0], desc_count, desc_vid, frame_beats, frame_first}),
    .push_hdr({desc_csum_part, desc_ip_dst, desc_tos, desc_eth_dst}),
    .q_valid(q_valid), .q_expired(q_expired), .ev_ctx(ev_ctx), .ev_e(ev_e),
    .ev_valid(ev_valid), .ev_stale(ev_stale), .ev_at_e(ev_at_e), .ev_dist(ev_dist), .ev_count(ev_count),
    .ev_fin(ev_fin), .ev_ce(ev_ce), .ev_ptr(ev_ptr), .ev_beats(ev_beats), .ev_expired(ev_expired),
    .q_pop(q_pop), .pop_first_in(pop_first_in), .pop_beats_in(pop_beats_in), .q_hold(q_hold), .q_release(q_release),
    .meta_sel(meta_sel), .meta_eth_dst(meta_eth_dst), .meta_tos(meta_tos), .meta_ip_dst(meta_ip_dst),
    .meta_csum_part(meta_csum_part),
    .free(free_any), .free_first(pop_first), .free_beats(pop_beats), .fr_hit(fr_hit), .fr_idx(fr_idx));

endmodule

`default_nettype wire
