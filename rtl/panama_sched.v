// The aggregation scheduler (docs/rtl.md, accelerator.md rules 5-8: stale, build, count
// mismatch, incomplete, skip, timeout), the result builder and the m_agg FIFO. It watches the
// queue heads of every port's contexts, decides one context at a time, pops the heads, reads
// a build's contributions from every member port into the adder tree (<prefix>_addtree, which
// the generator writes for the configuration), rewrites the copied header beside the tree and
// queues the built frame for m_agg.
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
  input  wire [CONTEXTS-1:0] ctx_enable,
  // One-cycle pulse: context c was just enabled (its expected VID starts at 0).
  input  wire [CONTEXTS-1:0] ctx_enable_set,
  input  wire [CONTEXTS*PORTS-1:0] ctx_members,
  input  wire [CONTEXTS-1:0] ctx_upstream,
  input  wire [CONTEXTS*48-1:0] ctx_group_mac,
  input  wire [CONTEXTS*32-1:0] ctx_group_ip,
  input  wire [CONTEXTS*48-1:0] ctx_own_mac,
  input  wire [CONTEXTS*32-1:0] ctx_own_ip,
  input  wire [CONTEXTS*32-1:0] ctx_timeout,
  output wire [CONTEXTS*32-1:0] ctx_expected_vid,
  // Queue heads of every port: port p, context c at index p*C + c.
  input  wire [PORTS*CONTEXTS-1:0] q_valid,
  input  wire [PORTS*CONTEXTS*32-1:0] q_vid,
  input  wire [PORTS*CONTEXTS*16-1:0] q_count,
  input  wire [PORTS*CONTEXTS-1:0] q_fin,
  input  wire [PORTS*CONTEXTS-1:0] q_ce,
  input  wire [PORTS*CONTEXTS*ADDR_W-1:0] q_ptr,
  // The head has waited longer than its context's timeout since it became head (the port
  // checks one context per cycle; registered).
  input  wire [PORTS*CONTEXTS-1:0] q_expired,
  // Registered: remove these heads; q_hold: they are a build's (free the beats at q_release).
  output reg  [PORTS*CONTEXTS-1:0] q_pop,
  output reg  q_hold,
  output reg  q_release,
  // Header fields of each port's head of context meta_sel (registered; answered the cycle after).
  output wire [(CONTEXTS > 1 ? $clog2(CONTEXTS) : 1)-1:0] meta_sel,
  input  wire [PORTS*48-1:0] meta_eth_dst,
  input  wire [PORTS*8-1:0] meta_tos,
  input  wire [PORTS*32-1:0] meta_ip_dst,
  input  wire [PORTS*16-1:0] meta_csum_part,
  input  wire [PORTS*8-1:0] meta_flags,
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
  localparam BW = ADDR_W;
  localparam KW = $clog2(BB);
  localparam PW = N > 1 ? $clog2(N) : 1;
  localparam CW = C > 1 ? $clog2(C) : 1;
  localparam FAW = $clog2(FD);
  localparam FCW = $clog2(FD + 1);
  // Actions of one context (accelerator.md rules 5-7).
  localparam [2:0] ACT_NONE = 3'd0, ACT_STALE = 3'd1, ACT_BUILD = 3'd2, ACT_MISMATCH = 3'd3,
                   ACT_INCOMPLETE = 3'd4, ACT_SKIP = 3'd5, ACT_TDROP = 3'd6, ACT_TSKIP = 3'd7;

  genvar g;

  // The decision is a pipeline of registered stages:
  //  A  (every cycle, every context) the action of each context from its member heads and E,
  //     registered (a_*);
  //  B  the lowest-index context whose registered action is ready goes first (rule 8); its
  //     pops, counter pulses and build parameters are registered;
  //  I  a build issues one read per cycle to every member's contribution memory.
  // A context's heads and E change only one cycle after its own decision (the ports pop from
  // the registered q_pop, E moves from the registered decision), so its stage-A result is stale
  // for the two cycles after a decision: the context is masked for them ("dirty"). A build may
  // be decided in the last issue cycle of the one before, so back-to-back vectors of one
  // context leave at one beat per cycle as long as a vector is at least three beats long.

  // ---------------------------------------------------------------- A: actions per context
  wire [C*3-1:0] act;
  wire [C*N-1:0] act_stale, act_at_e;
  wire [C*NB-1:0] act_beats;
  wire [C*(KW+1)-1:0] act_rem;
  wire [C*32-1:0] act_min;  // smallest distance VID - E among the heads considered
  wire [C*PW-1:0] act_low;  // the lowest member (it supplies the copied header)
  wire [C-1:0] act_fin, act_ce;
  // Expected VIDs and the cycles of their last changes (registers in g_e below).
  // A decision one and two cycles ago, and its context (stage B below).
  reg d1_q, d2_q;
  reg [CW-1:0] d1_ctx_q, d2_ctx_q;
  // The port whose head each context's running minimum looks at this cycle.
  reg [PW-1:0] min_rot_q;
  localparam integer N_LAST_I = PORTS - 1;
  always @(posedge clk) begin
    if (rst || min_rot_q == N_LAST_I[PW-1:0]) min_rot_q <= {PW{1'b0}};
    else min_rot_q <= min_rot_q + 1'b1;
  end
  wire [C*32-1:0] e_flat, echg_flat;
  generate
    for (g = 0; g < C; g = g + 1) begin : g_ctx
      wire [N-1:0] mem = ctx_members[g*N +: N];
      wire [31:0] e_g = e_flat[g*32 +: 32];
      wire [31:0] echg_g = echg_flat[g*32 +: 32];
      reg [N-1:0] has, stale, at_e, cnt_ne, expired;
      reg [15:0] ref_cnt;
      reg [31:0] d;
      // The distance of every head and whether it counts for the minimum (present, not stale).
      reg [32*N-1:0] d_all;
      reg [N-1:0] d_ok;
      reg e_old;
      reg [PW-1:0] low;
      reg fin_or, ce_or;
      integer p;
      always @* begin
        ref_cnt = 16'd0;
        low = {PW{1'b0}};
        fin_or = 1'b0;
        ce_or = 1'b0;
        for (p = N - 1; p >= 0; p = p - 1)
          if (mem[p]) begin
            ref_cnt = q_count[(p*C + g)*16 +: 16];
            low = p[PW-1:0];
            fin_or = fin_or | q_fin[p*C + g];
            ce_or = ce_or | q_ce[p*C + g];
          end
        // A head waits from when it became head or from the last change of E, the later: it
        // has waited more than the timeout iff both times lie more than the timeout back.
        e_old = (now - echg_g) > ctx_timeout[g*32 +: 32];
        for (p = 0; p < N; p = p + 1) begin
          has[p] = mem[p] & q_valid[p*C + g];
          d = q_vid[(p*C + g)*32 +: 32] - e_g;
          // Serial-number arithmetic: stale iff (v - E) mod 2^32 >= 2^31.
          stale[p] = has[p] & d[31];
          at_e[p] = has[p] & (d == 32'd0);
          cnt_ne[p] = has[p] & (q_count[(p*C + g)*16 +: 16] != ref_cnt);
          d_all[p*32 +: 32] = d;
          d_ok[p] = has[p] & ~d[31];
          // q_expired is only ever set under a non-zero timeout (the port tests it, and clears
          // the mark when the context is disabled, the only time its timeout can change).
          expired[p] = has[p] & e_old & q_expired[p*C + g];
        end
      end
      // The smallest distance of the heads (rule 6's skip, rule 7's): one port per cycle, in
      // turn (min_rot_q), into a running minimum that starts again whenever what it is taken
      // over may change - a decision of this context in the last two cycles (its pops and E
      // take effect two cycles after it), a member queue gaining or losing its head, the context
      // disabled or enabled - and is valid once every port has been looked at since. Heads of a
      // context change only in those ways. A skip waits for it (up to N + 3 cycles); nothing
      // else uses it. One comparison per context instead of a tree of N - 1 per context.
      reg [N-1:0] has_prev_q;
      reg [31:0] run_q;
      reg [PW:0] left_q;
      wire restart = ~ctx_enable[g] | ctx_enable_set[g] | (has != has_prev_q) |
                     (d1_q & (d1_ctx_q == g)) | (d2_q & (d2_ctx_q == g));
      wire [31:0] smp_d = d_all[min_rot_q*32 +: 32];
      wire smp_ok = d_ok[min_rot_q];
      wire min_valid = (left_q == {(PW+1){1'b0}}) & ~restart;
      always @(posedge clk) begin
        has_prev_q <= has;
        if (restart) begin
          run_q <= 32'hFFFFFFFF;
          left_q <= N[PW:0];
        end else begin
          if (smp_ok && smp_d < run_q) run_q <= smp_d;
          if (left_q != {(PW+1){1'b0}}) left_q <= left_q - 1'b1;
        end
      end
      wire all_heads = (&(has | ~mem)) & (|mem);
      wire all_at_e = &(at_e | ~mem);
      wire [2:0] my_act = ~ctx_enable[g] ? ACT_NONE :
                      (|stale) ? ACT_STALE :
                      all_heads ? (all_at_e ? ((|cnt_ne) ? ACT_MISMATCH : ACT_BUILD) :
                                   (|at_e) ? ACT_INCOMPLETE : min_valid ? ACT_SKIP : ACT_NONE) :
                      ((|has) & (|expired)) ? ((|at_e) ? ACT_TDROP : min_valid ? ACT_TSKIP : ACT_NONE) :
                      ACT_NONE;
      wire [17:0] len = 18'd64 + ref_cnt * ES;
      /* verilator lint_off UNUSEDSIGNAL */
      wire [17:0] beats = (len + BB - 1) >> KW;
      /* verilator lint_on UNUSEDSIGNAL */
      reg [2:0] act_q;
      reg [N-1:0] stale_q, at_e_q;
      reg [NB-1:0] beats_q;
      reg [KW:0] rem_q;
      reg [PW-1:0] low_q;
      reg fin_q, ce_q;
      always @(posedge clk) begin
        if (rst) act_q <= ACT_NONE;
        else act_q <= my_act;
        stale_q <= stale;
        at_e_q <= at_e;
        beats_q <= beats[NB-1:0];
        rem_q <= {1'b0, len[KW-1:0]};
        low_q <= low;
        fin_q <= fin_or;
        ce_q <= ce_or;
      end
      assign act[g*3 +: 3] = act_q;
      assign act_stale[g*N +: N] = stale_q;
      assign act_at_e[g*N +: N] = at_e_q;
      // The registered action's minimum: run_q of the next cycle has taken in one more sample,
      // of the same heads and E (a change restarts it and holds the action back first).
      assign act_min[g*32 +: 32] = run_q;
      assign act_beats[g*NB +: NB] = beats_q;
      assign act_rem[g*(KW+1) +: KW+1] = rem_q;
      assign act_low[g*PW +: PW] = low_q;
      assign act_fin[g] = fin_q;
      assign act_ce[g] = ce_q;
    end
  endgenerate

  // ---------------------------------------------------------------- B: choice
  // Building waits for room in the m_agg FIFO for the whole frame, so a started frame never
  // stalls in the tree's pipeline. A build may be decided while the issue stage sends the last
  // beat of the one before; any other action waits until the issue stage is idle (its pops
  // free beats at once, which must not meet a build's release in the same cycle).
  reg busy_q;                    // I is issuing a build's reads
  reg [NB-1:0] b_beat_q;         // the beat I issues
  reg [FCW-1:0] reserved_q;      // FIFO entries held by frames being built or queued
  reg [2:0] d1_act_q;
  reg [31:0] d1_min_q;
  reg [NB-1:0] n_beats_q;        // the build being issued: beats, bytes of the last beat
  reg [KW:0] n_rem_q;
  wire last_issue = busy_q & (b_beat_q == n_beats_q - 1'b1);
  wire issue_free = ~busy_q | last_issue;
  reg [C-1:0] ready;
  reg [CW-1:0] sel;
  reg any_ready;
  integer k;
  always @* begin
    sel = {CW{1'b0}};
    any_ready = 1'b0;
    for (k = C - 1; k >= 0; k = k - 1) begin
      ready[k] = (act[k*3 +: 3] != ACT_NONE) &
                 ~(d1_q & (d1_ctx_q == k[CW-1:0])) & ~(d2_q & (d2_ctx_q == k[CW-1:0])) &
                 ((act[k*3 +: 3] != ACT_BUILD) |
                  ({{(32-FCW){1'b0}}, reserved_q} + {{(32-NB){1'b0}}, act_beats[k*NB +: NB]} <= FD));
      if (ready[k]) begin
        sel = k[CW-1:0];
        any_ready = 1'b1;
      end
    end
  end
  // The chosen context as a one-hot (the lowest ready index, as sel), and its fields through
  // AND-OR multiplexers on it: one OR reduction of a transposed vector per bit. (A part-select
  // at sel * WIDTH with a WIDTH that is not a power of two infers a multiplier: six DSP48E2 at
  // 8 x 100G before.) The row of context k: act, members, beats, low, rem, upstream, fin, ce,
  // group MAC, own MAC, group IP, own IP, stale heads, heads at E.
  wire [C-1:0] sel_oh = ready & (~ready + {{(C-1){1'b0}}, 1'b1});
  localparam integer RW = 3 + N + NB + PW + (KW + 1) + 3 + 160 + 2 * N;
  wire [C*RW-1:0] sel_rows;
  wire [RW-1:0] sel_row;
  wire [C-1:0] build_k;  // per context: its registered action is a build
  generate
    for (g = 0; g < C; g = g + 1) begin : g_sel_row
      assign sel_rows[g*RW +: RW] = {act[g*3 +: 3], ctx_members[g*N +: N], act_beats[g*NB +: NB], act_low[g*PW +: PW],
                                     act_rem[g*(KW+1) +: KW+1], ctx_upstream[g], act_fin[g], act_ce[g],
                                     ctx_group_mac[g*48 +: 48], ctx_own_mac[g*48 +: 48], ctx_group_ip[g*32 +: 32],
                                     ctx_own_ip[g*32 +: 32], act_stale[g*N +: N], act_at_e[g*N +: N]};
      assign build_k[g] = act[g*3 +: 3] == ACT_BUILD;
    end
    for (g = 0; g < RW; g = g + 1) begin : g_sel_bit
      wire [C-1:0] col;
      genvar h;
      for (h = 0; h < C; h = h + 1) begin : g_col
        assign col[h] = sel_rows[h*RW + g];
      end
      assign sel_row[g] = |(col & sel_oh);
    end
  endgenerate
  wire [2:0] sel_act;
  wire [N-1:0] sel_mem;
  wire [NB-1:0] sel_beats;
  wire [PW-1:0] sel_low;
  wire [KW:0] sel_rem;
  wire sel_up, sel_fin, sel_ce;
  wire [47:0] sel_gmac, sel_omac;
  wire [31:0] sel_gip, sel_oip;
  wire [N-1:0] sel_stale, sel_at_e;
  assign {sel_act, sel_mem, sel_beats, sel_low, sel_rem, sel_up, sel_fin, sel_ce, sel_gmac, sel_omac, sel_gip, sel_oip,
          sel_stale, sel_at_e} = sel_row;
  wire sel_build = |(build_k & sel_oh);
  wire fire = any_ready & (sel_build ? issue_free : ~busy_q);
  wire start_build = fire & sel_build;
  wire [31:0] sel32 = {{(32-CW){1'b0}}, sel};
  // The chosen build's beats, sized to the FIFO count (FIFO_DEPTH holds more than a frame).
  wire [FCW-1:0] sel_beats_f;
  generate
    if (FCW > NB) begin : g_beats_ext
      assign sel_beats_f = {{(FCW-NB){1'b0}}, sel_beats};
    end else begin : g_beats_cut
      assign sel_beats_f = sel_beats[FCW-1:0];
    end
  endgenerate

  // Pops and counter pulses of the decision, registered.
  integer m;
  always @(posedge clk) begin
    q_pop <= {N*C{1'b0}};
    drop_inc <= {N*4{1'b0}};
    ctx_completed_inc <= {C{1'b0}};
    ctx_dropped_inc <= {C{1'b0}};
    q_hold <= start_build;
    q_release <= last_issue;
    if (fire) begin
      for (m = 0; m < N; m = m + 1) begin
        case (sel_act)
          ACT_BUILD: q_pop[m*C + sel32] <= sel_mem[m];
          ACT_STALE: begin
            q_pop[m*C + sel32] <= sel_stale[m];
            drop_inc[m*4 + 0] <= sel_stale[m];
          end
          ACT_INCOMPLETE: begin
            q_pop[m*C + sel32] <= sel_at_e[m];
            drop_inc[m*4 + 1] <= sel_at_e[m];
          end
          ACT_MISMATCH: begin
            q_pop[m*C + sel32] <= sel_mem[m];
            drop_inc[m*4 + 2] <= sel_mem[m];
          end
          ACT_TDROP: begin
            q_pop[m*C + sel32] <= sel_at_e[m];
            drop_inc[m*4 + 3] <= sel_at_e[m];
          end
          default: ;
        endcase
      end
      if (sel_act == ACT_BUILD) ctx_completed_inc[sel] <= 1'b1;
      if (sel_act == ACT_INCOMPLETE || sel_act == ACT_MISMATCH || sel_act == ACT_TDROP)
        ctx_dropped_inc[sel] <= 1'b1;
    end
    if (rst) begin
      q_pop <= {N*C{1'b0}};
      q_hold <= 1'b0;
      q_release <= 1'b0;
      d1_q <= 1'b0;
      d2_q <= 1'b0;
    end else begin
      d1_q <= fire;
      d2_q <= d1_q;
    end
    d1_ctx_q <= sel;
    d2_ctx_q <= d1_ctx_q;
    d1_act_q <= sel_act;
    d1_min_q <= act_min[sel*32 +: 32];
  end

  // E moves, one cycle after the decision (with the pops): to 0 on enabling; +1 after a built,
  // mismatched, incomplete or timed-out vector; to the smallest waiting VID on a skip.
  generate
    for (g = 0; g < C; g = g + 1) begin : g_e
      reg [31:0] e_q, echg_q;
      always @(posedge clk) begin
        if (ctx_enable_set[g]) begin
          e_q <= 32'd0;
          echg_q <= now;
        end else if (d1_q && d1_ctx_q == g && d1_act_q != ACT_STALE) begin
          e_q <= (d1_act_q == ACT_SKIP || d1_act_q == ACT_TSKIP) ? e_q + d1_min_q : e_q + 32'd1;
          echg_q <= now;
        end
      end
      assign e_flat[g*32 +: 32] = e_q;
      assign echg_flat[g*32 +: 32] = echg_q;
      assign ctx_expected_vid[g*32 +: 32] = e_q;
    end
  endgenerate

  // ---------------------------------------------------------------- builder state
  // Captured at the decision (n_*), used by the issue stage; copied into p_* when the first
  // read is issued, for the header patch and the tree beside the reads (the next build may be
  // decided before this one's last beat has passed the patch).
  reg [N-1:0] n_mask_q, p_mask_q;
  reg [N*BW-1:0] n_ptr_q;
  reg [PW-1:0] n_low_q, p_low_q;
  reg n_mcast_q, n_fin_q, n_ce_q, p_mcast_q, p_fin_q, p_ce_q;
  reg [47:0] n_gmac_q, n_omac_q, p_gmac_q, p_omac_q, b_cmac_q;
  reg [31:0] n_gip_q, n_oip_q, p_gip_q, p_oip_q, b_cip_q;
  reg [15:0] b_csum_q;
  always @(posedge clk) begin
    if (start_build) begin
      n_mask_q <= sel_mem;
      n_low_q <= sel_low;
      n_beats_q <= sel_beats;
      n_rem_q <= sel_rem;
      n_mcast_q <= ~sel_up;
      n_fin_q <= sel_fin;
      n_ce_q <= sel_ce;
      n_gmac_q <= sel_gmac;
      n_omac_q <= sel_omac;
      n_gip_q <= sel_gip;
      n_oip_q <= sel_oip;
    end
  end
  generate
    for (g = 0; g < N; g = g + 1) begin : g_ptr
      // Port g's head pointer of the chosen context (one-hot AND-OR, as above).
      wire [BW-1:0] ptr;
      genvar pb, pk;
      for (pb = 0; pb < BW; pb = pb + 1) begin : g_bit
        wire [C-1:0] col;
        for (pk = 0; pk < C; pk = pk + 1) begin : g_col
          assign col[pk] = q_ptr[(g*C + pk)*BW + pb];
        end
        assign ptr[pb] = |(col & sel_oh);
      end
      always @(posedge clk)
        if (start_build) n_ptr_q[g*BW +: BW] <= ptr;
    end
  endgenerate

  // ---------------------------------------------------------------- I: reads
  // Beat 0 at each member's head frame, then each following beat at the link read with the
  // one before.
  reg first_q;  // I issues beat 0
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
    end
  end
  assign rd_addr = first_q ? n_ptr_q : rd_link;

  // The ports answer meta_sel (the decision, registered) the cycle after: header fields of the
  // heads of the context chosen, read before its pops take effect, valid when beat 0 leaves
  // the read stage.
  assign meta_sel = d1_ctx_q;
  reg b_hdr_q;  // the cycle the meta_* outputs are the new build's headers
  always @(posedge clk) begin
    if (rst) b_hdr_q <= 1'b0;
    else b_hdr_q <= first_q;
  end
  wire [47:0] low_mac = meta_eth_dst[p_low_q*48 +: 48];
  wire [7:0] low_tos = meta_tos[p_low_q*8 +: 8];
  wire [31:0] low_ip = meta_ip_dst[p_low_q*32 +: 32];
  wire [15:0] low_part = meta_csum_part[p_low_q*16 +: 16];
  wire unused_meta_flags = ^meta_flags;  // the copied FLAGS byte is patched from the stored word
  // The rebuilt IPv4 header checksum (RFC 1071 over the whole header): the copied words' partial
  // sum from the parser plus version/IHL/TOS and the two addresses as they will be sent.
  wire [7:0] new_tos = {low_tos[7:2], p_ce_q ? 2'b11 : low_tos[1:0]};
  wire [31:0] new_src = p_mcast_q ? low_ip : p_oip_q;
  wire [31:0] new_dst = p_mcast_q ? p_gip_q : low_ip;
  wire [18:0] csum_wide = {3'd0, low_part} + {3'd0, IPV4_VER_IHL, new_tos} + {3'd0, new_src[31:16]} +
                          {3'd0, new_src[15:0]} + {3'd0, new_dst[31:16]} + {3'd0, new_dst[15:0]};
  wire [16:0] csum_f1 = {1'b0, csum_wide[15:0]} + {14'd0, csum_wide[18:16]};
  wire [15:0] csum_f2 = csum_f1[15:0] + {15'd0, csum_f1[16]};
  // The copied fields the header patch uses: live in the first read cycle, then held.
  wire [47:0] h_cmac = b_hdr_q ? low_mac : b_cmac_q;
  wire [31:0] h_cip = b_hdr_q ? low_ip : b_cip_q;
  wire [15:0] h_csum = b_hdr_q ? ~csum_f2 : b_csum_q;
  always @(posedge clk) begin
    if (b_hdr_q) begin
      b_cmac_q <= low_mac;
      b_cip_q <= low_ip;
      b_csum_q <= ~csum_f2;
    end
  end

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
            assign hb[8*b +: 8] = p_mcast_q ? h_cmac[47 - 8*(O - OFF_ETH_SRC) -: 8] :
                                              p_omac_q[47 - 8*(O - OFF_ETH_SRC) -: 8];
          end else if (O == OFF_IP_TOS) begin : g_ecn
            assign hb[8*b +: 8] = {rb[7:2], p_ce_q ? 2'b11 : rb[1:0]};
          end else if (O == OFF_IP_CSUM) begin : g_csum_hi
            assign hb[8*b +: 8] = h_csum[15:8];
          end else if (O == OFF_IP_CSUM + 1) begin : g_csum_lo
            assign hb[8*b +: 8] = h_csum[7:0];
          end else if (O >= OFF_IP_SRC && O < OFF_IP_SRC + 4) begin : g_ip_src
            assign hb[8*b +: 8] = p_mcast_q ? h_cip[31 - 8*(O - OFF_IP_SRC) -: 8] :
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
      reserved_q <= {FCW{1'b0}};
    end else begin
      if (tree_valid) f_wp_q <= f_wp_q + 1'b1;
      if (f_take) f_rp_q <= f_rp_q + 1'b1;
      f_cnt_q <= f_cnt_q + {{(FCW-1){1'b0}}, tree_valid} - {{(FCW-1){1'b0}}, f_take};
      reserved_q <= reserved_q + (start_build ? sel_beats_f : {FCW{1'b0}}) -
                    {{(FCW-1){1'b0}}, f_pop};
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
