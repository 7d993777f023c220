// SPDX-License-Identifier: MIT
// A port's admission (accelerator.md rule 2, docs/rtl.md "Admission timing"): the context match
// of a frame's (JID, TID), this port's role in the matched context, and the rule 9 accounting
// in beats (every context's beats in use, the running sum of the shared pool) with the fit of a
// contribution. Instantiated by panama_port, which classifies the frame (agg_pre) and decides.
`timescale 1ns / 1ps
`default_nettype none

module panama_port_admit #(
  // Contexts (JID, TID), 1..256.
  parameter CONTEXTS = 8,
  // Bits of a context index: derived; leave it unset.
  parameter CTX_W = CONTEXTS > 1 ? $clog2(CONTEXTS) : 1,
  // Bus width in bits: a power of two, 64..4096.
  parameter DATA_W = 64,
  // Cycles from a frame's last beat to the parser's descriptor, 1 or 2.
  parameter DESC_STAGES = 1,
  // Bytes per element: 4 or 2.
  parameter ELEM_BYTES = 4,
  // Beats of the largest frame (each context's reservation): at least 1.
  parameter FRAME_BEATS = 189,
  // Bits of 0..FRAME_BEATS: derived; leave it unset.
  parameter FRAME_CNT_W = $clog2(FRAME_BEATS + 1),
  // Beats of the contribution half of the buffer: at least FRAME_BEATS.
  parameter CONTRIB_BEATS = 4096
) (
  input  wire clk,
  input  wire rst,
  // Context table and this port's role in each context (panama_port's ports).
  input  wire [CONTEXTS-1:0] ctx_enable,
  input  wire [CONTEXTS*16-1:0] ctx_jid,
  input  wire [CONTEXTS*8-1:0] ctx_tid,
  input  wire [CONTEXTS-1:0] ctx_member,
  input  wire [CONTEXTS-1:0] ctx_uplink,
  // The parser's header bytes (JID, TID) during a frame's last beat.
  input  wire [15:0] hdr_jid,
  input  wire [7:0] hdr_tid,
  // At the decision (the receive stage's last beat): a well-formed contribution, not a result
  // (rx_end and the class); every beat was written (the contribution memory's room_ok); the beats
  // before the last (cur_beat) and the frame's beats.
  input  wire agg_pre,
  input  wire room_ok,
  input  wire [FRAME_CNT_W-1:0] cur_beat,
  input  wire [FRAME_CNT_W-1:0] frame_beats,
  // A frame's beats are freed this cycle: its context one-hot (or zero) and as an index, and
  // its beats.
  input  wire [CONTEXTS-1:0] fr_hit,
  input  wire [CTX_W-1:0] fr_idx,
  input  wire [FRAME_CNT_W-1:0] free_beats,
  // The decision: a context matched, this port is a member of it, its upstream port; the
  // contribution fits the matched context; it is pushed (commit), into push (one-hot) whose
  // index is push_idx (the match's, valid whenever a context matched).
  output wire any_hit,
  output wire member_hit,
  output wire uplink_hit,
  output wire contrib_fits,
  output wire commit,
  output wire [CONTEXTS-1:0] push,
  output wire [CTX_W-1:0] push_idx
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_contexts, CONTEXTS >= 1 && CONTEXTS <= 256, "panama_port_admit: CONTEXTS must be 1..256")
  `PANAMA_REQUIRE(g_req_ctx_w, CTX_W == (CONTEXTS > 1 ? $clog2(CONTEXTS) : 1),
                  "panama_port_admit: CTX_W is derived from CONTEXTS; do not set it")
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 4096 && (DATA_W & (DATA_W - 1)) == 0,
                  "panama_port_admit: DATA_W must be a power of two, 64..4096")
  `PANAMA_REQUIRE(g_req_desc_stages, DESC_STAGES == 1 || DESC_STAGES == 2,
                  "panama_port_admit: DESC_STAGES must be 1 or 2")
  `PANAMA_REQUIRE(g_req_elem_bytes, ELEM_BYTES == 2 || ELEM_BYTES == 4, "panama_port_admit: ELEM_BYTES must be 2 or 4")
  `PANAMA_REQUIRE(g_req_frame_beats, FRAME_BEATS >= 1, "panama_port_admit: FRAME_BEATS must be at least 1")
  `PANAMA_REQUIRE(g_req_frame_cnt_w, FRAME_CNT_W == $clog2(FRAME_BEATS + 1),
                  "panama_port_admit: FRAME_CNT_W is derived from FRAME_BEATS; do not set it")
  `PANAMA_REQUIRE(g_req_contrib_beats, CONTRIB_BEATS >= FRAME_BEATS,
                  "panama_port_admit: CONTRIB_BEATS must be at least FRAME_BEATS")

  // Short names used below.
  localparam C = CONTEXTS;
  localparam CW = CTX_W;
  localparam BB = DATA_W / 8;
  localparam SB = FRAME_BEATS;
  localparam SBW = FRAME_CNT_W;
  // Beats of the contribution half, and the C reservations together.
  localparam [31:0] CAPB = CONTRIB_BEATS;
  localparam [31:0] RESERVED = CONTEXTS * FRAME_BEATS;
  // Width of a context's beats-in-use counter: max(bits of 0..CONTRIB_BEATS, SBW + 1).
  localparam UW = $clog2(CONTRIB_BEATS + 1) > SBW + 1 ? $clog2(CONTRIB_BEATS + 1) : SBW + 1;
  wire [SBW-1:0] cur_beat_q = cur_beat;
  wire [SBW-1:0] pop_beats = free_beats;

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
  // The push into context g's queue: rx_end & contrib & contrib_fits with sel one-hot, per context.
  wire [C-1:0] push_ctx = {C{agg_pre}} & sel_mem & fits;
  wire commit_contrib;  // |push_ctx (with one fit: without the reduction), set with the fit
  assign contrib_fits = |(sel & fits);
  assign commit = commit_contrib;
  assign push = push_ctx;

  // ---------------------------------------------------------------- accounting
  // Beats freed (at most one frame per cycle) and from which context, one-hot. They leave the
  // accounting the cycle after, from these registers: until then the frame still counts as
  // queued, which only ever refuses more.
  reg [C-1:0] fr_oh_q;
  reg [CW-1:0] fr_idx_q;  // its index
  reg [SBW-1:0] fr_b_q;
  always @(posedge clk) begin
    fr_oh_q <= rst ? {C{1'b0}} : fr_hit;
    fr_idx_q <= fr_idx;
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
  assign push_idx = sel_idx;
  // Every context's beats in use and over(used).
  genvar g;
  generate
    for (g = 0; g < C; g = g + 1) begin : g_ctx
      reg [UW-1:0] used_q, over_q;
      always @(posedge clk) begin
        if (rst) begin
          used_q <= {UW{1'b0}};
          over_q <= {UW{1'b0}};
        end else if (push_ctx[g]) begin
          used_q <= used_a;
          over_q <= over_a;
        end else if (fr_oh_q[g]) begin
          used_q <= used_fn;
          over_q <= over_fn;
        end
      end
      assign used_arr[g] = used_q;
      assign over_arr[g] = over_q;
    end
  endgenerate
  always @(posedge clk) begin
    if (rst) shared_q <= {UW{1'b0}};
    else shared_q <= commit_contrib ? shared_a : shared_0;
  end

endmodule

`default_nettype wire
