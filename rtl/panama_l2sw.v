// SPDX-License-Identifier: MIT
// panama_l2sw: the switch functions a standalone board needs when servers plug straight into it
// (docs/fpga.md "Standalone"): forwarding of every frame the core hands on, replication of built
// frames to their context's members, per-egress queues with DCTCP-style ECN marking, counters.
//
// Sources: the core's mPP of each port (source p) and m_agg (source N). Destinations: the ports.
//   - A frame the core built (m_agg) goes to its context's member ports (multicast mode) or to the
//     context's upstream port (upstream mode); the context is found by the frame's (JID, TID)
//     among the enabled contexts. No context: dropped (`discarded`).
//   - An aggregation frame on mPP (a final sum passed down by an upstream-mode context, rule 3)
//     goes to that context's members: this is the replication the switch chip does beside a core.
//   - Any other frame goes by destination MAC: a valid entry of the forwarding table (FDB, in this
//     block's registers) gives its port mask (group MACs included); no entry: flooded (`flooded`).
//   - Never back to the port it came from.
// A frame is forwarded to all its ports at once: an allocator grants a source every egress port
// of its frame in one step, when none is busy (one grant per cycle, round robin), so replication
// needs no copy and cannot deadlock; the source first in the round-robin order has the ports it
// waits for reserved, so a frame for several ports is not starved either. An egress queue without room for the longest frame (MAXB
// beats) drops the frame for that port only (`queue_drops`); the frame goes on to the others.
// Queues are store-and-forward frame FIFOs in block RAM; a frame leaves only once it is whole.
// ECN: a frame is marked when, at its grant, any of its queues holds more than K frames (one
// decision for all copies, so every member sees the same ECN bits, as the switch chip does); an
// IPv4 (IHL 5) ECT(0)/ECT(1) frame then leaves with CE and its header checksum updated (RFC 1624).
// Frames longer than MAXB beats are dropped (`queue_drops`) by rewinding the queue.
//
// Registers (AXI4-Lite, 11-bit byte addresses; docs/fpga.md):
//   0x000 ID "L2SW" (L2SW_ID)           0x004 {FDB entries, N, QAW} (read-only)
//   0x008 K: ECN threshold, frames (rw)  0x00C flooded   0x010 discarded
//   0x020 + 16 e: port e: +0 tx_frames, +4 ce_marked, +8 queue_drops, +C frames queued now
//   L2SW_FDB_BASE + L2SW_FDB_STRIDE i (panama_defs.vh; address bit 10 and bits [9:4] below): FDB
//                 entry i (i < 64): +0 MAC bytes 2-5 (big-endian), +4 {valid (bit 31), MAC bytes
//                 0-1}, +8 port mask
// Counters are 32 bits, saturating.
`timescale 1ns / 1ps
`default_nettype none

module panama_l2sw #(
  parameter PORTS = 4,         // ports (destinations); sources are PORTS mPP and m_agg
  parameter DATA_W = 64,        // bus bits, at least 64
  parameter CONTEXTS = 8,         // contexts of the core
  parameter FDB = 16,      // forwarding-table entries (at most 64)
  parameter QAW = 11,      // log2 of each egress queue's depth in beats
  parameter MAXB = 1152,   // beats of the longest frame forwarded
  parameter IFAW = 5,      // log2 of each source's input FIFO depth in beats
  parameter K_RESET = 8    // ECN threshold after reset, frames
) (
  input  wire                 clk,
  input  wire                 rst,
  input  wire [(PORTS+1)*DATA_W-1:0]   s_tdata,
  input  wire [(PORTS+1)*DATA_W/8-1:0] s_tkeep,
  input  wire [PORTS:0]           s_tvalid,
  input  wire [PORTS:0]           s_tlast,
  input  wire [PORTS:0]           s_tuser,
  output wire [PORTS:0]           s_tready,
  output reg  [PORTS*DATA_W-1:0]       m_tdata,
  output reg  [PORTS*DATA_W/8-1:0]     m_tkeep,
  output reg  [PORTS-1:0]         m_tvalid,
  output reg  [PORTS-1:0]         m_tlast,
  output reg  [PORTS-1:0]         m_tuser,
  input  wire [PORTS-1:0]         m_tready,
  // The core's context table and aggregation UDP port (its register file).
  input  wire [15:0]          agg_port,
  input  wire [CONTEXTS-1:0]         ctx_enable,
  input  wire [CONTEXTS-1:0]         ctx_upstream,
  input  wire [CONTEXTS*16-1:0]      ctx_jid,
  input  wire [CONTEXTS*8-1:0]       ctx_tid,
  input  wire [CONTEXTS*8-1:0]       ctx_upstream_port,
  input  wire [CONTEXTS*PORTS-1:0]       ctx_members,
  // AXI4-Lite slave, one transaction at a time.
  input  wire [10:0]          s_axil_awaddr,
  input  wire                 s_axil_awvalid,
  output wire                 s_axil_awready,
  input  wire [31:0]          s_axil_wdata,
  input  wire                 s_axil_wvalid,
  output wire                 s_axil_wready,
  output wire [1:0]           s_axil_bresp,
  output reg                  s_axil_bvalid,
  input  wire                 s_axil_bready,
  input  wire [10:0]          s_axil_araddr,
  input  wire                 s_axil_arvalid,
  output wire                 s_axil_arready,
  output reg  [31:0]          s_axil_rdata,
  output reg  [1:0]           s_axil_rresp,
  output reg                  s_axil_rvalid,
  input  wire                 s_axil_rready
);

`include "panama_defs.vh"
`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_ports, PORTS >= 2 && PORTS <= 256, "panama_l2sw: PORTS must be 2..256")
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W % 64 == 0,
                  "panama_l2sw: DATA_W must be a multiple of 64, at least 64")
  `PANAMA_REQUIRE(g_req_contexts, CONTEXTS >= 1 && CONTEXTS <= 256, "panama_l2sw: CONTEXTS must be 1..256")
  `PANAMA_REQUIRE(g_req_fdb, FDB >= 1 && FDB <= 64, "panama_l2sw: FDB must be 1..64")
  // The FDB's address decode (bit 10 selects it, bits [9:4] the entry) is the table's layout.
  `PANAMA_REQUIRE(g_req_fdb_map, L2SW_FDB_BASE == 1 << 10 && L2SW_FDB_STRIDE == 1 << 4,
                  "panama_l2sw: the FDB decode needs L2SW_FDB_BASE = 2^10 and L2SW_FDB_STRIDE = 2^4")
  `PANAMA_REQUIRE(g_req_qaw, QAW >= 2 && QAW <= 20, "panama_l2sw: QAW must be 2..20")
  `PANAMA_REQUIRE(g_req_maxb, MAXB >= 1 && MAXB < (1 << QAW), "panama_l2sw: MAXB must be 1..2^QAW-1")
  `PANAMA_REQUIRE(g_req_ifaw, IFAW >= 2 && IFAW <= 20, "panama_l2sw: IFAW must be 2..20")

  // Short names used below.
  localparam N = PORTS;
  localparam W = DATA_W;
  localparam C = CONTEXTS;

  function integer clog2;
    input integer v;
    integer r;
    begin
      r = 0;
      while ((1 << r) < v) r = r + 1;
      clog2 = r;
    end
  endfunction

  localparam S = N + 1;                      // sources
  localparam SW = clog2(S + 1);              // source index bits
  localparam BB = W / 8;
  localparam NBW = clog2(BB);                // bytes - 1 of a last beat
  localparam EW = W + NBW + 2;               // a stored beat: {user, last, bytes - 1, data}
  localparam HBYTES = OFF_TID + 1;           // header bytes the lookup reads (to the TID)
  localparam HB = (HBYTES + BB - 1) / BB;    // beats holding them
  localparam HIW = clog2(HB + 1);
  localparam P15 = OFF_IP_TOS / BB, P24 = OFF_IP_CSUM / BB;  // beats of the TOS byte and the IPv4 checksum
  localparam OIW = clog2(P24 + 2);
  localparam QD = 1 << QAW;
  localparam MBW = clog2(MAXB + 1);
  localparam HB_M1 = HB - 1, P24_P1 = P24 + 1;
    localparam S_M1 = S - 1;

  // ---------------------------------------------------------------- sources
  wire [S-1:0] pend, df_room, df_ne, if_ne;
  // Per-source values read at a run-time source index are arrays (multiplexers, no index product).
  wire [HBYTES*8-1:0] hdr_a [0:S-1];             // header bytes 0..OFF_TID of the frame waiting for lookup
  wire [S-1:0] hdr_full;                     // the frame holds byte 46
  wire [N-1:0] dfh_a [0:S-1];                // port mask of the frame at the head of the source
  wire [S*N-1:0] df_head;                    // the same, flat (read at loop indices)
  wire [S*EW-1:0] if_head;
  reg  [S-1:0] sel1;                         // chosen for lookup this cycle (one-hot)
  wire [S-1:0] pop;                          // the head beat leaves for its queues this cycle
  reg  [S-1:0] df_push;
  reg  [N-1:0] df_push_mask;
  wire [S-1:0] df_pop;

  genvar s, e, i;
  generate
    for (s = 0; s < S; s = s + 1) begin : g_src
      wire [W-1:0] d = s_tdata[s*W +: W];
      wire [BB-1:0] k = s_tkeep[s*BB +: BB];
      // Input FIFO: distributed RAM, read asynchronously at the head.
      reg [EW-1:0] if_mem [0:(1<<IFAW)-1];
      reg [IFAW:0] if_wp_q, if_rp_q;
      wire [IFAW:0] if_used = if_wp_q - if_rp_q;
      wire if_full = if_used[IFAW];
      // Header capture and the lookup request.
      reg [HIW-1:0] bidx_q;                  // beat of the frame arriving, saturating at HB
      wire [HBYTES*8-1:0] hdr_q;                 // only the bytes the lookup reads are registers
      reg pend_q, full_q;
      wire acc = s_tvalid[s] && s_tready[s];
      assign s_tready[s] = !if_full && !(pend_q && bidx_q == {HIW{1'b0}});
      reg [NBW-1:0] nb;                      // bytes - 1 of the beat
      integer b;
      always @(*) begin
        nb = {NBW{1'b0}};
        for (b = 1; b < BB; b = b + 1) if (k[b]) nb = b[NBW-1:0];
      end
      wire done = acc && (bidx_q == HB_M1[HIW-1:0] || (s_tlast[s] && bidx_q < HB[HIW-1:0]));
      always @(posedge clk) begin
        if (acc) if_mem[if_wp_q[IFAW-1:0]] <= {s_tuser[s], s_tlast[s], nb, d};
        if (rst) begin
          if_wp_q <= {(IFAW+1){1'b0}};
          if_rp_q <= {(IFAW+1){1'b0}};
          bidx_q <= {HIW{1'b0}};
          pend_q <= 1'b0;
          full_q <= 1'b0;
        end else begin
          if (acc) if_wp_q <= if_wp_q + 1'b1;
          if (pop[s]) if_rp_q <= if_rp_q + 1'b1;
          if (acc) bidx_q <= s_tlast[s] ? {HIW{1'b0}} : (bidx_q == HB[HIW-1:0] ? bidx_q : bidx_q + 1'b1);
          if (done) begin
            pend_q <= 1'b1;
            full_q <= bidx_q == HB_M1[HIW-1:0] && (!s_tlast[s] || k[OFF_TID % BB]);
          end else if (sel1[s]) begin
            pend_q <= 1'b0;
          end
        end
      end
      for (i = 0; i < HBYTES; i = i + 1) begin : g_cap
        localparam AT = i / BB;
        // eth.dst, eth.type, IHL, TOS, flags/offset, protocol, UDP dport, JID, TID.
        if (i < 6 || (i >= 12 && i <= 15) || i == 20 || i == 21 || i == 23 || i == 36 || i == 37 || i >= 44) begin : g_b
          reg [7:0] b_q;
          always @(posedge clk) if (acc && bidx_q == AT[HIW-1:0]) b_q <= d[(i % BB)*8 +: 8];
          assign hdr_q[i*8 +: 8] = b_q;
        end else begin : g_n
          assign hdr_q[i*8 +: 8] = 8'd0;
        end
      end
      assign pend[s] = pend_q;
      assign hdr_a[s] = hdr_q;
      assign hdr_full[s] = full_q;
      assign if_ne[s] = if_wp_q != if_rp_q;
      assign if_head[s*EW +: EW] = if_mem[if_rp_q[IFAW-1:0]];
      // Decision FIFO: the port mask of each frame, in order. At most three lookups of a source
      // are in flight, so a lookup starts only with four entries free (the head register holds
      // one more).
      reg [N-1:0] df_mem [0:7];
      reg [3:0] df_wp_q, df_rp_q;
      // The head entry waits in a register (the allocator reads no RAM).
      reg [N-1:0] dh_q;
      reg dh_v_q;
      wire df_any = df_wp_q != df_rp_q;
      wire df_load = df_any && (!dh_v_q || df_pop[s]);
      always @(posedge clk) begin
        if (df_push[s]) df_mem[df_wp_q[2:0]] <= df_push_mask;
        if (df_load) dh_q <= df_mem[df_rp_q[2:0]];
        if (rst) begin
          df_wp_q <= 4'd0;
          df_rp_q <= 4'd0;
          dh_v_q <= 1'b0;
        end else begin
          if (df_push[s]) df_wp_q <= df_wp_q + 4'd1;
          if (df_load) df_rp_q <= df_rp_q + 4'd1;
          if (df_load) dh_v_q <= 1'b1;
          else if (df_pop[s]) dh_v_q <= 1'b0;
        end
      end
      assign df_room[s] = (df_wp_q - df_rp_q) <= 4'd4;
      assign df_ne[s] = dh_v_q;
      assign dfh_a[s] = dh_q;
      assign df_head[s*N +: N] = dfh_a[s];
    end
  endgenerate

  // ---------------------------------------------------------------- registers (forwarding table)
  reg [31:0] k_q, flooded_q, discarded_q;
  reg [FDB-1:0] fdb_v_q;
  reg [FDB*48-1:0] fdb_mac_q;
  reg [FDB*N-1:0] fdb_mask_q;

  // ---------------------------------------------------------------- lookup: 3 stages
  // 1: one waiting source (round robin), its header copied; 2: compares; 3: the port mask.
  reg [SW-1:0] rr1_q;
  reg l1_v_q, l1_full_q;
  reg [SW-1:0] l1_s_q;
  reg [HBYTES*8-1:0] l1_h_q;
  integer x, y;
  reg [S-1:0] cand1;
  reg [SW-1:0] pick1;
  reg found1;
  always @(*) begin
    cand1 = pend & df_room;
    found1 = 1'b0;
    pick1 = {SW{1'b0}};
    sel1 = {S{1'b0}};
    for (x = 0; x < 2 * S; x = x + 1) begin
      y = x % S;
      if (!found1 && x >= rr1_q && cand1[y]) begin
        found1 = 1'b1;
        pick1 = y[SW-1:0];
      end
    end
    if (found1) sel1[pick1] = 1'b1;
  end
  always @(posedge clk) begin
    if (rst) begin
      rr1_q <= {SW{1'b0}};
      l1_v_q <= 1'b0;
    end else begin
      l1_v_q <= found1;
      if (found1) rr1_q <= pick1 == S_M1[SW-1:0] ? {SW{1'b0}} : pick1 + 1'b1;
    end
    l1_s_q <= pick1;
    l1_h_q <= hdr_a[pick1];
    l1_full_q <= hdr_full[pick1];
  end
  // Header bytes of stage 1: byte j at l1_h_q[j*8 +: 8].
  wire [47:0] l1_dst = {l1_h_q[0*8 +: 8], l1_h_q[1*8 +: 8], l1_h_q[2*8 +: 8], l1_h_q[3*8 +: 8],
                        l1_h_q[4*8 +: 8], l1_h_q[5*8 +: 8]};
  wire [15:0] l1_type = {l1_h_q[OFF_ETH_TYPE*8 +: 8], l1_h_q[(OFF_ETH_TYPE+1)*8 +: 8]};
  wire [7:0]  l1_vihl = l1_h_q[OFF_IP*8 +: 8], l1_tos = l1_h_q[OFF_IP_TOS*8 +: 8];
  wire [7:0]  l1_proto = l1_h_q[OFF_IP_PROTO*8 +: 8];
  wire [15:0] l1_frag = {l1_h_q[OFF_IP_FRAG*8 +: 8], l1_h_q[(OFF_IP_FRAG+1)*8 +: 8]};
  wire [15:0] l1_dport = {l1_h_q[OFF_UDP_DPORT*8 +: 8], l1_h_q[(OFF_UDP_DPORT+1)*8 +: 8]};
  wire [15:0] l1_jid = {l1_h_q[OFF_JID*8 +: 8], l1_h_q[(OFF_JID+1)*8 +: 8]};
  wire [7:0]  l1_tid = l1_h_q[OFF_TID*8 +: 8];
  // Aggregation class (wire-format.md): IPv4, IHL 5, not a fragment, UDP to the aggregation port,
  // DSCP AGG_DSCP (the constants: panama_defs.vh).
  wire l1_agg = l1_full_q && l1_type == ETHERTYPE_IPV4 && l1_vihl == IPV4_VER_IHL && l1_tos[7:2] == AGG_DSCP &&
                l1_frag[13:0] == 14'd0 && l1_proto == IP_PROTO_UDP && l1_dport == agg_port;
  wire unused_ok = &{1'b0, l1_h_q[6*8 +: 6*8], l1_h_q[16*8 +: 4*8], l1_h_q[22*8 +: 8], l1_h_q[24*8 +: 12*8],
                     l1_h_q[38*8 +: 6*8], l1_tos[1:0], l1_frag[15:14]};

  reg l2_v_q, l2_agg_q, l2_built_q;
  reg [SW-1:0] l2_s_q;
  reg [C-1:0] l2_ctx_q;
  reg [FDB-1:0] l2_fdb_q;
  always @(posedge clk) begin
    l2_v_q <= !rst && l1_v_q;
    l2_s_q <= l1_s_q;
    l2_built_q <= l1_s_q == N[SW-1:0];
    l2_agg_q <= l1_agg || (l1_s_q == N[SW-1:0] && l1_full_q);
    for (x = 0; x < C; x = x + 1)
      l2_ctx_q[x] <= ctx_enable[x] && ctx_jid[x*16 +: 16] == l1_jid && ctx_tid[x*8 +: 8] == l1_tid;
    for (x = 0; x < FDB; x = x + 1) l2_fdb_q[x] <= fdb_v_q[x] && fdb_mac_q[x*48 +: 48] == l1_dst;
  end

  reg [N-1:0] m3, mctx, mfdb;
  reg use_ctx;
  always @(*) begin
    mctx = {N{1'b0}};
    mfdb = {N{1'b0}};
    for (x = 0; x < C; x = x + 1)
      if (l2_ctx_q[x])
        mctx = mctx | (ctx_upstream[x] && l2_built_q ? ({{(N-1){1'b0}}, 1'b1} << ctx_upstream_port[x*8 +: 8])
                                                      : ctx_members[x*N +: N]);
    for (x = 0; x < FDB; x = x + 1) if (l2_fdb_q[x]) mfdb = mfdb | fdb_mask_q[x*N +: N];
    use_ctx = l2_agg_q && |l2_ctx_q;
    m3 = use_ctx ? mctx : l2_built_q ? {N{1'b0}} : |l2_fdb_q ? mfdb : {N{1'b1}};
    for (x = 0; x < N; x = x + 1) if (l2_s_q == x[SW-1:0]) m3[x] = 1'b0;
  end
  wire l3_flood = l2_v_q && !use_ctx && !l2_built_q && !(|l2_fdb_q);
  always @(posedge clk) begin
    df_push <= {S{1'b0}};
    if (l2_v_q && !rst) df_push[l2_s_q] <= 1'b1;
    df_push_mask <= m3;
  end

  // ---------------------------------------------------------------- allocator
  reg [N-1:0] busy_q, room_q, cong_q;
  reg [S-1:0] xfer_q, mark_q;
  reg [S*N-1:0] conn_q;
  reg [S*MBW-1:0] xcnt_q;                    // beats of the frame popped so far (saturating)
  reg [N*SW-1:0] owner_q;
  // The source at rr2_q has priority: while it waits, the ports it wants are reserved for it (no
  // other source is granted them), so a frame for several ports is not starved by single-port
  // traffic freeing those ports at different times; the pointer moves on once that source has
  // been granted or has nothing waiting.
  reg [SW-1:0] rr2_q;
  reg found2;
  reg [SW-1:0] pick2;
  // (The reservation is registered: it takes effect a cycle after the source's turn starts.)
  wire pr_wait = df_ne[rr2_q] && !xfer_q[rr2_q];
  reg [N-1:0] resv;
  reg [SW-1:0] resv_src;
  always @(posedge clk) begin
    resv <= rst || !pr_wait ? {N{1'b0}} : dfh_a[rr2_q];
    resv_src <= rr2_q;
  end
  always @(*) begin
    found2 = 1'b0;
    pick2 = {SW{1'b0}};
    for (x = 0; x < 2 * S; x = x + 1) begin
      y = x % S;
      if (!found2 && x >= rr2_q && df_ne[y] && !xfer_q[y] &&
          (df_head[y*N +: N] & (busy_q | (y[SW-1:0] == resv_src ? {N{1'b0}} : resv))) == {N{1'b0}}) begin
        found2 = 1'b1;
        pick2 = y[SW-1:0];
      end
    end
  end
  wire [N-1:0] want2 = dfh_a[pick2];
  wire [N-1:0] grant2 = found2 ? want2 & room_q : {N{1'b0}};
  assign df_pop = found2 ? ({{(S-1){1'b0}}, 1'b1} << pick2) : {S{1'b0}};

  // Transfer: a granted source's beats leave its input FIFO as they come, marked on the way.
  wire [S-1:0] head_last;
  wire [EW-1:0] beat_a [0:S-1];              // the head beat after ECN marking
  wire [MBW-1:0] xcnt_a [0:S-1];
  wire [N-1:0] conn_a [0:S-1];
  wire [S-1:0] ce_now;                       // this beat carries the frame's new CE mark
  generate
    for (s = 0; s < S; s = s + 1) begin : g_xfer
      wire [EW-1:0] hb_ = if_head[s*EW +: EW];
      wire [W-1:0] d = hb_[W-1:0];
      assign pop[s] = xfer_q[s] && if_ne[s];
      assign head_last[s] = hb_[W+NBW];
      reg [OIW-1:0] oidx_q;                  // beat of the frame leaving, saturating at P24 + 1
      reg mk_q;                              // this frame is being marked
      reg [15:0] m_q;                        // IPv4 bytes 14-15 before marking
      wire [7:0] b12 = d[(OFF_ETH_TYPE % BB)*8 +: 8], b13 = d[((OFF_ETH_TYPE+1) % BB)*8 +: 8];
      wire [7:0] b14 = d[(OFF_IP % BB)*8 +: 8], b15 = d[(OFF_IP_TOS % BB)*8 +: 8];
      wire at15 = oidx_q == P15[OIW-1:0], at24 = oidx_q == P24[OIW-1:0];
      wire ect = {b12, b13} == ETHERTYPE_IPV4 && b14 == IPV4_VER_IHL && (b15[1:0] == 2'b01 || b15[1:0] == 2'b10);
      wire mk = at15 ? mark_q[s] && ect : mk_q;
      wire [15:0] m_old = at15 ? {b14, b15} : m_q;
      wire [15:0] m_new = m_old | 16'h0003;
      wire [15:0] hc = {d[(24 % BB)*8 +: 8], d[(25 % BB)*8 +: 8]};
      // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'), ones' complement sums.
      wire [17:0] s1 = {2'b00, ~hc} + {2'b00, ~m_old} + {2'b00, m_new};
      wire [16:0] s2 = {1'b0, s1[15:0]} + {15'd0, s1[17:16]};
      wire [15:0] s3 = s2[15:0] + {15'd0, s2[16]};
      reg [W-1:0] dm;
      always @(*) begin
        dm = d;
        if (at15 && mk) dm[(15 % BB)*8 +: 8] = b15 | 8'h03;
        if (at24 && mk) begin
          dm[(24 % BB)*8 +: 8] = ~s3[15:8];
          dm[(25 % BB)*8 +: 8] = ~s3[7:0];
        end
      end
      assign beat_a[s] = {hb_[EW-1:W], dm};
      assign xcnt_a[s] = xcnt_q[s*MBW +: MBW];
      assign conn_a[s] = conn_q[s*N +: N];
      assign ce_now[s] = pop[s] && at15 && mark_q[s] && ect;
      always @(posedge clk) begin
        if (rst) begin
          oidx_q <= {OIW{1'b0}};
          mk_q <= 1'b0;
        end else if (pop[s]) begin
          oidx_q <= head_last[s] ? {OIW{1'b0}} : (oidx_q == P24_P1[OIW-1:0] ? oidx_q : oidx_q + 1'b1);
          if (at15) begin
            mk_q <= mk;
            m_q <= m_old;
          end
        end
      end
    end
  endgenerate

  wire [N-1:0] released;
  generate
    for (e = 0; e < N; e = e + 1) begin : g_rel
      reg r;
      always @(*) begin
        r = 1'b0;
        for (x = 0; x < S; x = x + 1) if (pop[x] && head_last[x] && conn_q[x*N + e]) r = 1'b1;
      end
      assign released[e] = r;
    end
  endgenerate

  always @(posedge clk) begin
    if (rst) begin
      busy_q <= {N{1'b0}};
      xfer_q <= {S{1'b0}};
      rr2_q <= {SW{1'b0}};
      conn_q <= {(S*N){1'b0}};
      mark_q <= {S{1'b0}};
      xcnt_q <= {(S*MBW){1'b0}};
    end else begin
      busy_q <= (busy_q & ~released) | grant2;
      for (x = 0; x < S; x = x + 1) begin
        if (pop[x] && head_last[x]) xfer_q[x] <= 1'b0;
        if (pop[x]) xcnt_q[x*MBW +: MBW] <= head_last[x] ? {MBW{1'b0}}
                                           : (xcnt_q[x*MBW +: MBW] == MAXB[MBW-1:0] ? xcnt_q[x*MBW +: MBW]
                                                                          : xcnt_q[x*MBW +: MBW] + 1'b1);
      end
      if (!pr_wait || (found2 && pick2 == rr2_q)) rr2_q <= rr2_q == S_M1[SW-1:0] ? {SW{1'b0}} : rr2_q + 1'b1;
      if (found2) begin
        xfer_q[pick2] <= 1'b1;
        for (x = 0; x < S; x = x + 1) if (pick2 == x[SW-1:0]) conn_q[x*N +: N] <= grant2;
        mark_q[pick2] <= |(grant2 & cong_q);

      end
    end
    for (x = 0; x < N; x = x + 1) if (grant2[x]) owner_q[x*SW +: SW] <= pick2;
  end

  // ---------------------------------------------------------------- egress queues
  reg [N-1:0] qdrop_inc, qdrop_long, ce_inc, tx_inc;  // a grant without room and a too-long frame can coincide
  wire [N*16-1:0] qframes;
  generate
    for (e = 0; e < N; e = e + 1) begin : g_q
      wire [SW-1:0] own = owner_q[e*SW +: SW];
      wire [MBW-1:0] own_cnt = xcnt_a[own];
      // Write stage: the owner's beat, registered, then written.
      reg wv_q, over_q, wce_q;
      reg [EW-1:0] wd_q;
      always @(posedge clk) begin
        wv_q <= !rst && busy_q[e] && pop[own] && conn_a[own][e];
        wce_q <= ce_now[own];
        over_q <= own_cnt == MAXB[MBW-1:0];
        wd_q <= beat_a[own];
      end
      (* ram_style = "block" *) reg [EW-1:0] qmem [0:QD-1];
      reg [QAW:0] wp_q, cwp_q, rp_q, fs_q;
      reg inf_q, trunc_q;                    // inside a frame being written; it was too long
      reg fce_q;                             // the frame being written was marked CE
      wire w_last = wd_q[W+NBW];
      always @(posedge clk) begin
        if (wv_q && !over_q && !trunc_q) qmem[wp_q[QAW-1:0]] <= wd_q;
        if (rst) begin
          wp_q <= {(QAW+1){1'b0}};
          cwp_q <= {(QAW+1){1'b0}};
          inf_q <= 1'b0;
          trunc_q <= 1'b0;
          fce_q <= 1'b0;
        end else if (wv_q) begin
          inf_q <= !w_last;
          fce_q <= !w_last && (fce_q || wce_q);
          if (!inf_q) fs_q <= wp_q;
          if (w_last) begin
            trunc_q <= 1'b0;
            if (trunc_q || over_q) wp_q <= inf_q ? fs_q : wp_q;
            else begin
              wp_q <= wp_q + 1'b1;
              cwp_q <= wp_q + 1'b1;
            end
          end else if (over_q || trunc_q) begin
            trunc_q <= 1'b1;
          end else begin
            wp_q <= wp_q + 1'b1;
          end
        end
      end
      // Room for the longest frame, with the beats in flight (two) and one of lag.
      wire [QAW:0] used = wp_q - rp_q;
      always @(posedge clk) room_q[e] <= rst ? 1'b0 : {{(31-QAW){1'b0}}, used} + MAXB + 4 <= QD;
      // Read side: block RAM read one cycle, into the output register or a skid register.
      reg rd_q, sk_v_q;
      reg [EW-1:0] sk_q;
      reg [EW-1:0] rdata_q;
      wire take = m_tvalid[e] && m_tready[e];
      wire [1:0] occ = {1'b0, m_tvalid[e]} + {1'b0, sk_v_q} + {1'b0, rd_q};
      wire rd = rp_q != cwp_q && (occ < 2'd2 || (occ == 2'd2 && take));
      always @(posedge clk) rdata_q <= qmem[rp_q[QAW-1:0]];
      wire [EW-1:0] nxt = sk_v_q ? sk_q : rdata_q;
      always @(posedge clk) begin
        if (rst) begin
          rp_q <= {(QAW+1){1'b0}};
          rd_q <= 1'b0;
          sk_v_q <= 1'b0;
          m_tvalid[e] <= 1'b0;
          m_tlast[e] <= 1'b0;
          m_tuser[e] <= 1'b0;
        end else begin
          rd_q <= rd;
          if (rd) rp_q <= rp_q + 1'b1;
          if (!m_tvalid[e] || take) begin
            if (sk_v_q || rd_q) begin
              m_tvalid[e] <= 1'b1;
              m_tdata[e*W +: W] <= nxt[W-1:0];
              m_tlast[e] <= nxt[W+NBW];
              m_tuser[e] <= nxt[W+NBW+1];
              for (x = 0; x < BB; x = x + 1)
                m_tkeep[e*BB + x] <= !nxt[W+NBW] || x <= nxt[W +: NBW];
              sk_v_q <= sk_v_q && rd_q;
              if (sk_v_q && rd_q) sk_q <= rdata_q;
            end else begin
              m_tvalid[e] <= 1'b0;
            end
          end else if (rd_q) begin
            sk_v_q <= 1'b1;
            sk_q <= rdata_q;
          end
        end
      end
      // Frames queued: + at a commit, - when a last beat leaves.
      reg [15:0] qf_q;
      wire commit = wv_q && w_last && !(trunc_q || over_q);
      always @(posedge clk) begin
        if (rst) qf_q <= 16'd0;
        else qf_q <= qf_q + {15'd0, commit} - {15'd0, take && m_tlast[e]};
        cong_q[e] <= !rst && {16'd0, qf_q} > k_q;
      end
      assign qframes[e*16 +: 16] = qf_q;
      always @(*) begin
        qdrop_inc[e] = found2 && want2[e] && !room_q[e];
        qdrop_long[e] = wv_q && w_last && (trunc_q || over_q);
        tx_inc[e] = take && m_tlast[e];
        ce_inc[e] = commit && (fce_q || wce_q);  // counted when the marked frame is queued
      end
    end
  endgenerate

  // ---------------------------------------------------------------- counters and registers
  function [31:0] sat;
    input [31:0] v;
    input inc;
    sat = (inc && v != 32'hffffffff) ? v + 32'd1 : v;
  endfunction
  reg [N*32-1:0] tx_q, ce_q, qd_q;
  // The allocator's events reach the counters a cycle later (off its path).
  reg discard_q;
  reg [N-1:0] qdrop_q;
  always @(posedge clk) begin
    discard_q <= !rst && found2 && grant2 == {N{1'b0}} && want2 == {N{1'b0}};
    qdrop_q <= rst ? {N{1'b0}} : qdrop_inc;
  end
  always @(posedge clk) begin
    if (rst) begin
      flooded_q <= 32'd0;
      discarded_q <= 32'd0;
      tx_q <= {(N*32){1'b0}};
      ce_q <= {(N*32){1'b0}};
      qd_q <= {(N*32){1'b0}};
    end else begin
      flooded_q <= sat(flooded_q, l3_flood);
      discarded_q <= sat(discarded_q, discard_q);
      for (x = 0; x < N; x = x + 1) begin
        tx_q[x*32 +: 32] <= sat(tx_q[x*32 +: 32], tx_inc[x]);
        ce_q[x*32 +: 32] <= sat(ce_q[x*32 +: 32], ce_inc[x]);
        qd_q[x*32 +: 32] <= sat(sat(qd_q[x*32 +: 32], qdrop_q[x]), qdrop_long[x]);
      end
    end
  end

  // AXI4-Lite: a write takes its address and data together and answers the next cycle; a read
  // answers the cycle after its address.
  wire wr = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid;
  assign s_axil_awready = wr;
  assign s_axil_wready = wr;
  assign s_axil_bresp = 2'b00;
  assign s_axil_arready = s_axil_arvalid && !s_axil_rvalid;
  wire [10:0] wa = s_axil_awaddr, ra = s_axil_araddr;
  always @(posedge clk) begin
    if (rst) begin
      s_axil_bvalid <= 1'b0;
      s_axil_rvalid <= 1'b0;
      k_q <= K_RESET;
      fdb_v_q <= {FDB{1'b0}};
    end else begin
      if (wr) s_axil_bvalid <= 1'b1;
      else if (s_axil_bready) s_axil_bvalid <= 1'b0;
      if (s_axil_arready) s_axil_rvalid <= 1'b1;
      else if (s_axil_rready) s_axil_rvalid <= 1'b0;
      if (wr && wa == 11'h008) k_q <= s_axil_wdata;
      for (x = 0; x < FDB; x = x + 1)
        if (wr && wa[10] && wa[9:4] == x[5:0] && wa[3:2] == 2'd1) fdb_v_q[x] <= s_axil_wdata[31];
    end
    for (x = 0; x < FDB; x = x + 1)
      if (wr && wa[10] && wa[9:4] == x[5:0]) begin
        if (wa[3:2] == 2'd0) fdb_mac_q[x*48 +: 32] <= s_axil_wdata;
        if (wa[3:2] == 2'd1) fdb_mac_q[x*48 + 32 +: 16] <= s_axil_wdata[15:0];
        if (wa[3:2] == 2'd2) fdb_mask_q[x*N +: N] <= s_axil_wdata[N-1:0];
      end
    if (s_axil_arready) begin
      s_axil_rresp <= 2'b00;
      s_axil_rdata <= 32'd0;
      if (ra == 11'h000) s_axil_rdata <= L2SW_ID;
      else if (ra == 11'h004) s_axil_rdata <= {FDB[15:0], N[7:0], QAW[7:0]};
      else if (ra == 11'h008) s_axil_rdata <= k_q;
      else if (ra == 11'h00c) s_axil_rdata <= flooded_q;
      else if (ra == 11'h010) s_axil_rdata <= discarded_q;
      else if (!ra[10] && ra >= 11'h020 && {21'd0, ra} < 32'h20 + 16 * N) begin
        for (x = 0; x < N; x = x + 1)
          if ((ra[9:4] - 6'h02) == x[5:0])
            case (ra[3:2])
              2'd0: s_axil_rdata <= tx_q[x*32 +: 32];
              2'd1: s_axil_rdata <= ce_q[x*32 +: 32];
              2'd2: s_axil_rdata <= qd_q[x*32 +: 32];
              default: s_axil_rdata <= {16'd0, qframes[x*16 +: 16]};
            endcase
      end else if (ra[10] && {26'd0, ra[9:4]} < FDB) begin
        for (x = 0; x < FDB; x = x + 1)
          if (ra[9:4] == x[5:0])
            case (ra[3:2])
              2'd0: s_axil_rdata <= fdb_mac_q[x*48 +: 32];
              2'd1: s_axil_rdata <= {fdb_v_q[x], 15'd0, fdb_mac_q[x*48 + 32 +: 16]};
              2'd2: s_axil_rdata <= {{(32-N){1'b0}}, fdb_mask_q[x*N +: N]};
              default: s_axil_rdata <= 32'd0;
            endcase
      end else begin
        s_axil_rresp <= 2'b11;
      end
    end
  end

endmodule

`default_nettype wire
