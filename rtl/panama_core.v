// SPDX-License-Identifier: MIT
// panama_core: the whole accelerator with the per-port streams packed into vectors (docs/rtl.md,
// "The datapath"): the register file, one panama_port per port and the scheduler. panama-gen sets
// every parameter from the configuration (core_params in gen/emit/top.cpp; these defaults become the
// configuration's in its output, and <prefix>_top passes them again with #(...)); the board shells
// instantiate it (rtl/boards/panama_board_shell.v), and <prefix>_top gives each port its
// sPP/mPP names around it.
`timescale 1ns / 1ps
`default_nettype none

module panama_core #(
  // Ports, 2..256.
  parameter PORTS = 4,
  // Contexts (JID, TID), 1..256.
  parameter CONTEXTS = 8,
  // Bus width in bits: a power of two, 64..4096.
  parameter DATA_W = 64,
  // Register-map address bits (regmap.json's size is 2^ADDR_W).
  parameter ADDR_W = 14,
  // The ports' receive stages (1 or 2), element bytes (2 or 4) and largest COUNT (panama_port).
  parameter DESC_STAGES = 1,
  parameter ELEM_BYTES = 4,
  parameter MAX_ELEMS = 362,
  // Each port's buffer, in beats (panama_port; buffer_plan in gen/emit/top.cpp).
  parameter BYP_BEATS = 4096,
  parameter FRAME_BEATS = 189,
  parameter CONTRIB_BEATS = 4096,
  parameter MEM_BEATS = 4096,
  parameter DESCS = 512,
  parameter SEGS = 456,
  // The m_agg FIFO's depth in beats and the adder tree's latency in cycles (panama_sched).
  parameter FIFO_DEPTH = 256,
  parameter TREE_LATENCY = 6,
  // The register file's pending-count bits and its FORMAT and BUFFER_BYTES words (panama_regs).
  parameter PEND_W = 7,
  parameter FORMAT = 0,
  parameter BUFFER_BYTES = 65536
) (
  input  wire clk,
  input  wire rst,
  // Port p's streams at [p*DATA_W +: DATA_W], [p*DATA_W/8 +: DATA_W/8] and bit p (the top's sPP
  // and mPP).
  input  wire [PORTS*DATA_W-1:0] s_tdata,
  input  wire [PORTS*DATA_W/8-1:0] s_tkeep,
  input  wire [PORTS-1:0] s_tvalid,
  input  wire [PORTS-1:0] s_tlast,
  input  wire [PORTS-1:0] s_tuser,
  output wire [PORTS-1:0] s_tready,
  output wire [PORTS*DATA_W-1:0] m_tdata,
  output wire [PORTS*DATA_W/8-1:0] m_tkeep,
  output wire [PORTS-1:0] m_tvalid,
  output wire [PORTS-1:0] m_tlast,
  output wire [PORTS-1:0] m_tuser,
  input  wire [PORTS-1:0] m_tready,
  // The context table, for switch functions beside the core (a standalone board shell).
  output wire [15:0] cfg_agg_port,
  output wire [CONTEXTS-1:0] cfg_ctx_enable,
  output wire [CONTEXTS-1:0] cfg_ctx_upstream,
  output wire [CONTEXTS*16-1:0] cfg_ctx_jid,
  output wire [CONTEXTS*8-1:0] cfg_ctx_tid,
  output wire [CONTEXTS*8-1:0] cfg_ctx_upstream_port,
  output wire [CONTEXTS*PORTS-1:0] cfg_ctx_members,
  // Frames the accelerator builds, to the switch chip's internal port.
  output wire [DATA_W-1:0] m_agg_axis_tdata,
  output wire [DATA_W/8-1:0] m_agg_axis_tkeep,
  output wire m_agg_axis_tvalid,
  output wire m_agg_axis_tlast,
  input  wire m_agg_axis_tready,
  // Configuration and counters (regmap.md).
  input  wire [ADDR_W-1:0] s_axil_awaddr,
  input  wire [2:0] s_axil_awprot,
  input  wire s_axil_awvalid,
  output wire s_axil_awready,
  input  wire [31:0] s_axil_wdata,
  input  wire [3:0] s_axil_wstrb,
  input  wire s_axil_wvalid,
  output wire s_axil_wready,
  output wire [1:0] s_axil_bresp,
  output wire s_axil_bvalid,
  input  wire s_axil_bready,
  input  wire [ADDR_W-1:0] s_axil_araddr,
  input  wire [2:0] s_axil_arprot,
  input  wire s_axil_arvalid,
  output wire s_axil_arready,
  output wire [31:0] s_axil_rdata,
  output wire [1:0] s_axil_rresp,
  output wire s_axil_rvalid,
  input  wire s_axil_rready
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts"); the blocks check the rest.
  `PANAMA_REQUIRE(g_req_ports, PORTS >= 2 && PORTS <= 256, "panama_core: PORTS must be 2..256")
  `PANAMA_REQUIRE(g_req_contexts, CONTEXTS >= 1 && CONTEXTS <= 256, "panama_core: CONTEXTS must be 1..256")

  // Ports, contexts, bus bits and bytes; the bits of a context index, of a contribution memory
  // address and of a frame's beat count (0..FRAME_BEATS), as panama_port derives them.
  localparam N = PORTS;
  localparam C = CONTEXTS;
  localparam W = DATA_W;
  localparam BB = DATA_W / 8;
  localparam CW = CONTEXTS > 1 ? $clog2(CONTEXTS) : 1;
  localparam BW = MEM_BEATS > 1 ? $clog2(MEM_BEATS) : 1;
  localparam NB = $clog2(FRAME_BEATS + 1);

  // Free-running cycle count: the age of queue heads for timeouts.
  reg [31:0] now_q;
  always @(posedge clk) now_q <= rst ? 32'd0 : now_q + 32'd1;

  // ---------------------------------------------------------------- register file
  wire [15:0] agg_port;
  wire [C-1:0] ctx_enable, ctx_enable_set, ctx_kill, ctx_upstream;
  wire [C*16-1:0] ctx_jid;
  wire [C*8-1:0] ctx_tid, ctx_upstream_port;
  wire [C*N-1:0] ctx_members;
  wire [CW-1:0] hdr_ctx;
  wire [159:0] ctx_hdr;
  wire [C*32-1:0] ctx_timeout, ctx_expected_vid;
  wire [N*16-1:0] port_count_inc;
  wire [C-1:0] ctx_completed_inc, ctx_dropped_inc;
  wire agg_tx_inc;

  assign cfg_agg_port = agg_port;
  assign cfg_ctx_enable = ctx_enable;
  assign cfg_ctx_upstream = ctx_upstream;
  assign cfg_ctx_jid = ctx_jid;
  assign cfg_ctx_tid = ctx_tid;
  assign cfg_ctx_upstream_port = ctx_upstream_port;
  assign cfg_ctx_members = ctx_members;
  panama_regs #(
    .PORTS(PORTS), .CONTEXTS(CONTEXTS), .ADDR_W(ADDR_W), .PEND_W(PEND_W), .BUS_BITS(DATA_W), .MAX_ELEMS(MAX_ELEMS),
    .FORMAT(FORMAT), .BUFFER_BYTES(BUFFER_BYTES)
  ) u_regs (
    .clk(clk), .rst(rst),
    .s_axil_awaddr(s_axil_awaddr), .s_axil_awprot(s_axil_awprot), .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready), .s_axil_wdata(s_axil_wdata), .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid), .s_axil_wready(s_axil_wready), .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid), .s_axil_bready(s_axil_bready), .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot), .s_axil_arvalid(s_axil_arvalid), .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata), .s_axil_rresp(s_axil_rresp), .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready),
    .agg_port(agg_port), .ctx_enable(ctx_enable), .ctx_enable_set(ctx_enable_set), .ctx_kill(ctx_kill),
    .ctx_jid(ctx_jid), .ctx_tid(ctx_tid), .ctx_members(ctx_members), .ctx_upstream(ctx_upstream),
    .ctx_upstream_port(ctx_upstream_port), .hdr_ctx(hdr_ctx), .ctx_hdr(ctx_hdr), .ctx_timeout(ctx_timeout),
    .ctx_expected_vid(ctx_expected_vid), .port_count_inc(port_count_inc),
    .ctx_completed_inc(ctx_completed_inc), .ctx_dropped_inc(ctx_dropped_inc), .agg_tx_inc(agg_tx_inc));

  // ---------------------------------------------------------------- ports and scheduler
  wire [N*C-1:0] q_valid, q_pop, q_expired;
  wire q_hold, q_release;
  wire [CW-1:0] ev_ctx, to_ctx;
  wire [31:0] to_cycles;
  wire [31:0] ev_e;
  wire [N-1:0] ev_valid, ev_stale, ev_at_e, ev_fin, ev_ce, ev_expired;
  wire [N*32-1:0] ev_dist;
  wire [N*16-1:0] ev_count;
  wire [N*BW-1:0] ev_ptr, pop_first;
  wire [N*NB-1:0] ev_beats, pop_beats;
  wire [CW-1:0] meta_sel;
  wire [N*48-1:0] meta_eth_dst;
  wire [N*8-1:0] meta_tos;
  wire [N*32-1:0] meta_ip_dst;
  wire [N*16-1:0] meta_csum_part;
  wire [N*BW-1:0] rd_addr, rd_link;
  wire [N*W-1:0] rd_data;
  wire [N*4-1:0] drop_inc;
  wire [N*12-1:0] port_inc;
  genvar p;
  generate
    for (p = 0; p < N; p = p + 1) begin : g_port
      // The port's role in each context. "Is the upstream port" is a compare, registered here
      // (fields change only while a context is disabled, and enabling is a later write).
      wire [C-1:0] member;
      reg [C-1:0] uplink;
      genvar k;
      for (k = 0; k < C; k = k + 1) begin : g_role
        assign member[k] = ctx_members[k*N + p];
        always @(posedge clk) uplink[k] <= ctx_upstream[k] & (ctx_upstream_port[k*8 +: 8] == p);
      end
      panama_port #(
        .CONTEXTS(CONTEXTS), .DATA_W(DATA_W), .DESC_STAGES(DESC_STAGES), .ELEM_BYTES(ELEM_BYTES),
        .MAX_ELEMS(MAX_ELEMS), .BYP_BEATS(BYP_BEATS), .FRAME_BEATS(FRAME_BEATS), .CONTRIB_BEATS(CONTRIB_BEATS),
        .MEM_BEATS(MEM_BEATS), .DESCS(DESCS), .SEGS(SEGS)
      ) u_port (
        .clk(clk), .rst(rst), .now(now_q), .agg_port(agg_port),
        .ctx_enable(ctx_enable), .ctx_jid(ctx_jid), .ctx_tid(ctx_tid), .ctx_member(member), .ctx_uplink(uplink),
        .to_ctx(to_ctx), .to_cycles(to_cycles),
        .s_axis_tdata(s_tdata[p*W +: W]), .s_axis_tkeep(s_tkeep[p*BB +: BB]), .s_axis_tvalid(s_tvalid[p]),
        .s_axis_tlast(s_tlast[p]), .s_axis_tuser(s_tuser[p]), .s_axis_tready(s_tready[p]),
        .m_axis_tdata(m_tdata[p*W +: W]), .m_axis_tkeep(m_tkeep[p*BB +: BB]), .m_axis_tvalid(m_tvalid[p]),
        .m_axis_tlast(m_tlast[p]), .m_axis_tuser(m_tuser[p]), .m_axis_tready(m_tready[p]),
        .q_valid(q_valid[p*C +: C]), .q_expired(q_expired[p*C +: C]),
        .ev_ctx(ev_ctx), .ev_e(ev_e), .ev_valid(ev_valid[p]), .ev_stale(ev_stale[p]), .ev_at_e(ev_at_e[p]),
        .ev_dist(ev_dist[p*32 +: 32]), .ev_count(ev_count[p*16 +: 16]), .ev_fin(ev_fin[p]), .ev_ce(ev_ce[p]),
        .ev_ptr(ev_ptr[p*BW +: BW]), .ev_beats(ev_beats[p*NB +: NB]), .ev_expired(ev_expired[p]),
        .q_pop(q_pop[p*C +: C]), .pop_first_in(pop_first[p*BW +: BW]),
        .pop_beats_in(pop_beats[p*NB +: NB]), .q_hold(q_hold), .q_release(q_release),
        .meta_sel(meta_sel), .meta_eth_dst(meta_eth_dst[p*48 +: 48]), .meta_tos(meta_tos[p*8 +: 8]),
        .meta_ip_dst(meta_ip_dst[p*32 +: 32]), .meta_csum_part(meta_csum_part[p*16 +: 16]),
        .rd_addr(rd_addr[p*BW +: BW]), .rd_data(rd_data[p*W +: W]), .rd_link(rd_link[p*BW +: BW]),
        .count_inc(port_inc[p*12 +: 12]));
      assign port_count_inc[p*16 +: 16] = {drop_inc[p*4 +: 4], port_inc[p*12 +: 12]};
    end
  endgenerate

  panama_sched #(
    .PORTS(PORTS), .CONTEXTS(CONTEXTS), .DATA_W(DATA_W), .ELEM_BYTES(ELEM_BYTES), .ADDR_W(BW), .BEAT_W(NB),
    .FIFO_DEPTH(FIFO_DEPTH), .TREE_LATENCY(TREE_LATENCY)
  ) u_sched (
    .clk(clk), .rst(rst), .now(now_q),
    .ctx_enable_set(ctx_enable_set), .ctx_kill(ctx_kill), .ctx_members(ctx_members),
    .ctx_upstream(ctx_upstream), .hdr_ctx(hdr_ctx), .ctx_hdr(ctx_hdr), .ctx_timeout(ctx_timeout),
    .ctx_expected_vid(ctx_expected_vid), .to_ctx(to_ctx), .to_cycles(to_cycles),
    .q_valid(q_valid), .q_expired(q_expired), .ev_ctx(ev_ctx), .ev_e(ev_e), .ev_valid(ev_valid),
    .ev_stale(ev_stale), .ev_at_e(ev_at_e), .ev_dist(ev_dist), .ev_count(ev_count), .ev_fin(ev_fin), .ev_ce(ev_ce),
    .ev_ptr(ev_ptr), .ev_beats(ev_beats), .ev_expired(ev_expired), .q_pop(q_pop), .pop_first(pop_first),
    .pop_beats(pop_beats), .q_hold(q_hold), .q_release(q_release),
    .meta_sel(meta_sel), .meta_eth_dst(meta_eth_dst), .meta_tos(meta_tos), .meta_ip_dst(meta_ip_dst),
    .meta_csum_part(meta_csum_part),
    .rd_addr(rd_addr), .rd_data(rd_data), .rd_link(rd_link), .drop_inc(drop_inc),
    .ctx_completed_inc(ctx_completed_inc), .ctx_dropped_inc(ctx_dropped_inc), .agg_tx_inc(agg_tx_inc),
    .m_agg_axis_tdata(m_agg_axis_tdata), .m_agg_axis_tkeep(m_agg_axis_tkeep),
    .m_agg_axis_tvalid(m_agg_axis_tvalid), .m_agg_axis_tlast(m_agg_axis_tlast),
    .m_agg_axis_tready(m_agg_axis_tready));

endmodule

`default_nettype wire
