// SPDX-License-Identifier: MIT
// panama_board_shell: what every board top shares around its MACs: one clock-domain crossing per
// port (rtl/panama_port_cdc.v) between the MAC user clocks and the core clock, and the core
// (panama_core, the generated accelerator with packed per-port streams). The frames the core
// builds leave through port AGG_PORT's transmit path, frame-interleaved with its mPP.
// Management over Ethernet (panama_mgmt_eth, docs/mgmt.md) sits between the crossings and the
// core: it takes management requests out of the receive streams (they never reach the core),
// drives the register file's AXI4-Lite slave, and merges each response into the transmit stream
// of the port its request came in on. On the management ports panama_arp answers ARP for the
// management address (its replies merged after the responses).
// STANDALONE = 1 (panama-gen --standalone: servers plugged straight into the board, no switch
// beside it): panama_l2sw sits between the core's outputs and the ports and does the switch
// chip's work (forwarding by a MAC table, replication of built frames to their context's members,
// ECN-marking egress queues; docs/fpga.md "Standalone"); m_agg then goes to it instead of onto
// AGG_PORT, and its registers are reached through management at the register map's size +
// L2SW_WINDOW (panama_defs.vh).
`timescale 1ns / 1ps
`default_nettype none
`include "panama_proto.vh"

module panama_board_shell #(
  parameter PORTS = 4,          // ports
  parameter DATA_W = 64,         // bus bits, the same on the MAC and core sides
  parameter CONTEXTS = 8,          // contexts of the core
  parameter ADDR_W = 14,        // register-file address bits of the core (regmap.json)
  parameter AGG_PORT = 0,   // the port whose transmit path also carries m_agg
  parameter FIFO_ADDR_W = 9,    // log2 of each CDC FIFO's depth in beats (>= one 1518-byte frame)
  parameter STANDALONE = 0, // 1: the switch functions in the shell (panama_l2sw)
  // Management over Ethernet (set by panama-gen --mgmt-*): ports requests are accepted from,
  // SipHash-2-4 key, the board's MAC and IPv4 address, and the UDP port.
  parameter [PORTS-1:0] MGMT_PORTS = {{(PORTS-1){1'b0}}, 1'b1},
  parameter [127:0] MGMT_KEY = 128'h0f0e0d0c0b0a09080706050403020100,
  parameter [47:0] MGMT_MAC = 48'h02504e4d0001,
  parameter [31:0] MGMT_IP = 32'h0a0000fe,
  parameter [15:0] MGMT_UDP_PORT = `PANAMA_MGMT_UDP_PORT_DEFAULT
) (
  input  wire             core_clk,
  input  wire             core_rst,
  // Per port p, in mac_clk[p]: bit p, or bits [p*DATA_W +: DATA_W] and [p*DATA_W/8 +: DATA_W/8].
  input  wire [PORTS-1:0]     mac_clk,
  input  wire [PORTS-1:0]     mac_rst,
  input  wire [PORTS*DATA_W-1:0]   mac_rx_tdata,
  input  wire [PORTS*DATA_W/8-1:0] mac_rx_tkeep,
  input  wire [PORTS-1:0]     mac_rx_tvalid,
  input  wire [PORTS-1:0]     mac_rx_tlast,
  input  wire [PORTS-1:0]     mac_rx_tuser,   // 1 on the last beat of a bad frame (the core's convention)
  output wire [PORTS*DATA_W-1:0]   mac_tx_tdata,
  output wire [PORTS*DATA_W/8-1:0] mac_tx_tkeep,
  output wire [PORTS-1:0]     mac_tx_tvalid,
  output wire [PORTS-1:0]     mac_tx_tlast,
  output wire [PORTS-1:0]     mac_tx_tuser,
  input  wire [PORTS-1:0]     mac_tx_tready,
  output wire [PORTS-1:0]     rx_drop,        // mac_clk[p] pulse: a frame met a full receive FIFO
  // management counters (core_clk; docs/mgmt.md)
  output wire [31:0]      mgmt_accepted,
  output wire [31:0]      mgmt_bad_port,
  output wire [31:0]      mgmt_malformed,
  output wire [31:0]      mgmt_bad_tag,
  output wire [31:0]      mgmt_replay,
  output wire [31:0]      mgmt_rx_busy
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_ports, PORTS >= 2 && PORTS <= 256, "panama_board_shell: PORTS must be 2..256")
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 512 && DATA_W % 64 == 0,
                  "panama_board_shell: DATA_W must be a multiple of 64, 64..512")
  `PANAMA_REQUIRE(g_req_agg_port, AGG_PORT >= 0 && AGG_PORT < PORTS,
                  "panama_board_shell: AGG_PORT must be a port, 0..PORTS-1")
  `PANAMA_REQUIRE(g_req_standalone, STANDALONE == 0 || STANDALONE == 1, "panama_board_shell: STANDALONE must be 0 or 1")

  // Short names used below.
  localparam N = PORTS;
  localparam W = DATA_W;
  localparam C = CONTEXTS;
  localparam AW = ADDR_W;
  localparam FIFO_AW = FIFO_ADDR_W;

  // CDC side (port_*) and core side (core_*) of the management block.
  wire [N*W-1:0]   port_s_tdata, port_m_tdata;
  wire [N*W/8-1:0] port_s_tkeep, port_m_tkeep;
  wire [N-1:0]     port_s_tvalid, port_s_tlast, port_s_tuser, port_s_tready;
  wire [N-1:0]     port_m_tvalid, port_m_tlast, port_m_tuser, port_m_tready;
  // After panama_mgmt_eth on the transmit side, before the ARP replies join (management ports).
  wire [N*W-1:0]   port_x_tdata;
  wire [N*W/8-1:0] port_x_tkeep;
  wire [N-1:0]     port_x_tvalid, port_x_tlast, port_x_tuser, port_x_tready;
  wire [N*W-1:0]   core_s_tdata, core_m_tdata;
  wire [N*W/8-1:0] core_s_tkeep, core_m_tkeep;
  wire [N-1:0]     core_s_tvalid, core_s_tlast, core_s_tuser, core_s_tready;
  wire [N-1:0]     core_m_tvalid, core_m_tlast, core_m_tuser, core_m_tready;
  wire [N-1:0]     agg_tready;
  // The core's transmit side (mPP) before the standalone switch; with STANDALONE = 0 it is core_m_*.
  wire [N*W-1:0]   pp_tdata;
  wire [N*W/8-1:0] pp_tkeep;
  wire [N-1:0]     pp_tvalid, pp_tlast, pp_tuser, pp_tready;
  wire             agg_ready_core;
  wire [W-1:0]     agg_tdata;
  wire [W/8-1:0]   agg_tkeep;
  wire             agg_tvalid, agg_tlast;

  genvar p;
  generate
    for (p = 0; p < N; p = p + 1) begin : g_cdc
      panama_port_cdc #(.DATA_W(W), .ADDR_W(FIFO_AW), .AGG(STANDALONE == 0 && p == AGG_PORT)) u_cdc (
        .mac_clk(mac_clk[p]), .mac_rst(mac_rst[p]), .core_clk(core_clk), .core_rst(core_rst),
        .mac_rx_tdata(mac_rx_tdata[p*W +: W]), .mac_rx_tkeep(mac_rx_tkeep[p*W/8 +: W/8]),
        .mac_rx_tvalid(mac_rx_tvalid[p]), .mac_rx_tlast(mac_rx_tlast[p]), .mac_rx_tuser(mac_rx_tuser[p]),
        .mac_tx_tdata(mac_tx_tdata[p*W +: W]), .mac_tx_tkeep(mac_tx_tkeep[p*W/8 +: W/8]),
        .mac_tx_tvalid(mac_tx_tvalid[p]), .mac_tx_tlast(mac_tx_tlast[p]),
        .mac_tx_tuser(mac_tx_tuser[p]), .mac_tx_tready(mac_tx_tready[p]),
        .rx_drop(rx_drop[p]),
        .s_axis_tdata(port_s_tdata[p*W +: W]), .s_axis_tkeep(port_s_tkeep[p*W/8 +: W/8]),
        .s_axis_tvalid(port_s_tvalid[p]), .s_axis_tlast(port_s_tlast[p]),
        .s_axis_tuser(port_s_tuser[p]), .s_axis_tready(port_s_tready[p]),
        .m_axis_tdata(port_m_tdata[p*W +: W]), .m_axis_tkeep(port_m_tkeep[p*W/8 +: W/8]),
        .m_axis_tvalid(port_m_tvalid[p]), .m_axis_tlast(port_m_tlast[p]),
        .m_axis_tuser(port_m_tuser[p]), .m_axis_tready(port_m_tready[p]),
        .agg_axis_tdata(agg_tdata), .agg_axis_tkeep(agg_tkeep), .agg_axis_tvalid(agg_tvalid),
        .agg_axis_tlast(agg_tlast), .agg_axis_tready(agg_tready[p]));
    end
  endgenerate

  wire [AW-1:0] s_axil_awaddr, s_axil_araddr;
  wire [31:0] s_axil_wdata, s_axil_rdata;
  wire [1:0] s_axil_bresp, s_axil_rresp;
  wire s_axil_awvalid, s_axil_awready, s_axil_wvalid, s_axil_wready, s_axil_bvalid, s_axil_bready;
  wire s_axil_arvalid, s_axil_arready, s_axil_rvalid, s_axil_rready;
  // The standalone switch's registers (management window at 2^AW + L2SW_WINDOW).
  wire [10:0] x_awaddr, x_araddr;
  wire [31:0] x_wdata, x_rdata;
  wire [1:0] x_bresp, x_rresp;
  wire x_awvalid, x_awready, x_wvalid, x_wready, x_bvalid, x_bready;
  wire x_arvalid, x_arready, x_rvalid, x_rready;

  panama_mgmt_eth #(.PORTS(N), .DATA_W(W), .ADDR_W(AW), .MGMT_PORTS(MGMT_PORTS), .KEY(MGMT_KEY), .MAC(MGMT_MAC),
                    .IP(MGMT_IP), .UDP_PORT(MGMT_UDP_PORT), .EXT(STANDALONE)) u_mgmt (
    .clk(core_clk), .rst(core_rst),
    .s_rx_tdata(port_s_tdata), .s_rx_tkeep(port_s_tkeep), .s_rx_tvalid(port_s_tvalid),
    .s_rx_tlast(port_s_tlast), .s_rx_tuser(port_s_tuser), .s_rx_tready(port_s_tready),
    .m_rx_tdata(core_s_tdata), .m_rx_tkeep(core_s_tkeep), .m_rx_tvalid(core_s_tvalid),
    .m_rx_tlast(core_s_tlast), .m_rx_tuser(core_s_tuser), .m_rx_tready(core_s_tready),
    .s_tx_tdata(core_m_tdata), .s_tx_tkeep(core_m_tkeep), .s_tx_tvalid(core_m_tvalid),
    .s_tx_tlast(core_m_tlast), .s_tx_tuser(core_m_tuser), .s_tx_tready(core_m_tready),
    .m_tx_tdata(port_x_tdata), .m_tx_tkeep(port_x_tkeep), .m_tx_tvalid(port_x_tvalid),
    .m_tx_tlast(port_x_tlast), .m_tx_tuser(port_x_tuser), .m_tx_tready(port_x_tready),
    .m_axil_awaddr(s_axil_awaddr), .m_axil_awvalid(s_axil_awvalid), .m_axil_awready(s_axil_awready),
    .m_axil_wdata(s_axil_wdata), .m_axil_wvalid(s_axil_wvalid), .m_axil_wready(s_axil_wready),
    .m_axil_bresp(s_axil_bresp), .m_axil_bvalid(s_axil_bvalid), .m_axil_bready(s_axil_bready),
    .m_axil_araddr(s_axil_araddr), .m_axil_arvalid(s_axil_arvalid), .m_axil_arready(s_axil_arready),
    .m_axil_rdata(s_axil_rdata), .m_axil_rresp(s_axil_rresp), .m_axil_rvalid(s_axil_rvalid),
    .m_axil_rready(s_axil_rready),
    .x_axil_awaddr(x_awaddr), .x_axil_awvalid(x_awvalid), .x_axil_awready(x_awready),
    .x_axil_wdata(x_wdata), .x_axil_wvalid(x_wvalid), .x_axil_wready(x_wready), .x_axil_bresp(x_bresp),
    .x_axil_bvalid(x_bvalid), .x_axil_bready(x_bready), .x_axil_araddr(x_araddr), .x_axil_arvalid(x_arvalid),
    .x_axil_arready(x_arready), .x_axil_rdata(x_rdata), .x_axil_rresp(x_rresp), .x_axil_rvalid(x_rvalid),
    .x_axil_rready(x_rready),
    .cnt_accepted(mgmt_accepted), .cnt_bad_port(mgmt_bad_port), .cnt_malformed(mgmt_malformed),
    .cnt_bad_tag(mgmt_bad_tag), .cnt_replay(mgmt_replay), .cnt_rx_busy(mgmt_rx_busy));

  // ARP for the management address, answered on each management port (panama_arp; docs/mgmt.md).
  generate
    for (p = 0; p < N; p = p + 1) begin : g_arp
      if (MGMT_PORTS[p]) begin : g_on
        wire [W-1:0] a_tdata;
        wire [W/8-1:0] a_tkeep;
        wire a_tvalid, a_tlast, a_tready;
        panama_arp #(.DATA_W(W), .MAC(MGMT_MAC), .IP(MGMT_IP)) u_arp (
          .clk(core_clk), .rst(core_rst),
          .tap_tdata(port_s_tdata[p*W +: W]), .tap_beat(port_s_tvalid[p] && port_s_tready[p]),
          .tap_tlast(port_s_tlast[p]), .tap_tkeep(port_s_tkeep[p*W/8 +: W/8]), .tap_tuser(port_s_tuser[p]),
          .m_axis_tdata(a_tdata), .m_axis_tkeep(a_tkeep), .m_axis_tvalid(a_tvalid), .m_axis_tlast(a_tlast),
          .m_axis_tready(a_tready));
        panama_axis_arb2 #(.DATA_W(W), .USER_W(1)) u_arp_merge (
          .clk(core_clk), .rst(core_rst),
          .s0_axis_tdata(port_x_tdata[p*W +: W]), .s0_axis_tkeep(port_x_tkeep[p*W/8 +: W/8]),
          .s0_axis_tvalid(port_x_tvalid[p]), .s0_axis_tlast(port_x_tlast[p]), .s0_axis_tuser(port_x_tuser[p]),
          .s0_axis_tready(port_x_tready[p]),
          .s1_axis_tdata(a_tdata), .s1_axis_tkeep(a_tkeep), .s1_axis_tvalid(a_tvalid), .s1_axis_tlast(a_tlast),
          .s1_axis_tuser(1'b0), .s1_axis_tready(a_tready),
          .m_axis_tdata(port_m_tdata[p*W +: W]), .m_axis_tkeep(port_m_tkeep[p*W/8 +: W/8]),
          .m_axis_tvalid(port_m_tvalid[p]), .m_axis_tlast(port_m_tlast[p]), .m_axis_tuser(port_m_tuser[p]),
          .m_axis_tready(port_m_tready[p]));
      end else begin : g_off
        assign port_m_tdata[p*W +: W] = port_x_tdata[p*W +: W];
        assign port_m_tkeep[p*W/8 +: W/8] = port_x_tkeep[p*W/8 +: W/8];
        assign port_m_tvalid[p] = port_x_tvalid[p];
        assign port_m_tlast[p] = port_x_tlast[p];
        assign port_m_tuser[p] = port_x_tuser[p];
        assign port_x_tready[p] = port_m_tready[p];
      end
    end
  endgenerate

  wire [15:0] cfg_agg_port;
  wire [C-1:0] cfg_ctx_enable, cfg_ctx_upstream;
  wire [C*16-1:0] cfg_ctx_jid;
  wire [C*8-1:0] cfg_ctx_tid, cfg_ctx_upstream_port;
  wire [C*N-1:0] cfg_ctx_members;
  panama_core u_core (
    .clk(core_clk), .rst(core_rst),
    .s_tdata(core_s_tdata), .s_tkeep(core_s_tkeep), .s_tvalid(core_s_tvalid), .s_tlast(core_s_tlast),
    .s_tuser(core_s_tuser), .s_tready(core_s_tready),
    .m_tdata(pp_tdata), .m_tkeep(pp_tkeep), .m_tvalid(pp_tvalid), .m_tlast(pp_tlast),
    .m_tuser(pp_tuser), .m_tready(pp_tready),
    .cfg_agg_port(cfg_agg_port), .cfg_ctx_enable(cfg_ctx_enable), .cfg_ctx_upstream(cfg_ctx_upstream),
    .cfg_ctx_jid(cfg_ctx_jid), .cfg_ctx_tid(cfg_ctx_tid), .cfg_ctx_upstream_port(cfg_ctx_upstream_port),
    .cfg_ctx_members(cfg_ctx_members),
    .m_agg_axis_tdata(agg_tdata), .m_agg_axis_tkeep(agg_tkeep), .m_agg_axis_tvalid(agg_tvalid),
    .m_agg_axis_tlast(agg_tlast), .m_agg_axis_tready(agg_ready_core),
    .s_axil_awaddr(s_axil_awaddr), .s_axil_awprot(3'd0), .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready), .s_axil_wdata(s_axil_wdata), .s_axil_wstrb(4'hf),
    .s_axil_wvalid(s_axil_wvalid), .s_axil_wready(s_axil_wready), .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid), .s_axil_bready(s_axil_bready), .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(3'd0), .s_axil_arvalid(s_axil_arvalid), .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata), .s_axil_rresp(s_axil_rresp), .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready));

  generate
    if (STANDALONE != 0) begin : g_standalone
      // Queues of 16 KiB per port; frames up to 2048 bytes (longer ones are dropped, counted).
      localparam BB = W / 8;
      localparam QAW = BB >= 64 ? 8 : BB >= 32 ? 9 : BB >= 16 ? 10 : 11;
      panama_l2sw #(.PORTS(N), .DATA_W(W), .CONTEXTS(C), .FDB(16), .QAW(QAW), .MAXB(2048 / BB)) u_l2sw (
        .clk(core_clk), .rst(core_rst),
        .s_tdata({agg_tdata, pp_tdata}), .s_tkeep({agg_tkeep, pp_tkeep}), .s_tvalid({agg_tvalid, pp_tvalid}),
        .s_tlast({agg_tlast, pp_tlast}), .s_tuser({1'b0, pp_tuser}), .s_tready({agg_ready_core, pp_tready}),
        .m_tdata(core_m_tdata), .m_tkeep(core_m_tkeep), .m_tvalid(core_m_tvalid), .m_tlast(core_m_tlast),
        .m_tuser(core_m_tuser), .m_tready(core_m_tready),
        .agg_port(cfg_agg_port), .ctx_enable(cfg_ctx_enable), .ctx_upstream(cfg_ctx_upstream),
        .ctx_jid(cfg_ctx_jid), .ctx_tid(cfg_ctx_tid), .ctx_upstream_port(cfg_ctx_upstream_port),
        .ctx_members(cfg_ctx_members),
        .s_axil_awaddr(x_awaddr), .s_axil_awvalid(x_awvalid), .s_axil_awready(x_awready), .s_axil_wdata(x_wdata),
        .s_axil_wvalid(x_wvalid), .s_axil_wready(x_wready), .s_axil_bresp(x_bresp), .s_axil_bvalid(x_bvalid),
        .s_axil_bready(x_bready), .s_axil_araddr(x_araddr), .s_axil_arvalid(x_arvalid),
        .s_axil_arready(x_arready), .s_axil_rdata(x_rdata), .s_axil_rresp(x_rresp), .s_axil_rvalid(x_rvalid),
        .s_axil_rready(x_rready));
      wire unused_agg = &{1'b0, agg_tready};  // no port merges m_agg
    end else begin : g_attached
      // The switch beside the board: mPP straight to the ports, m_agg onto AGG_PORT.
      assign core_m_tdata = pp_tdata;
      assign core_m_tkeep = pp_tkeep;
      assign core_m_tvalid = pp_tvalid;
      assign core_m_tlast = pp_tlast;
      assign core_m_tuser = pp_tuser;
      assign pp_tready = core_m_tready;
      assign agg_ready_core = agg_tready[AGG_PORT];
      assign x_awready = 1'b0;
      assign x_wready = 1'b0;
      assign x_bresp = 2'b00;
      assign x_bvalid = 1'b0;
      assign x_arready = 1'b0;
      assign x_rdata = 32'd0;
      assign x_rresp = 2'b00;
      assign x_rvalid = 1'b0;
      wire unused_cfg = &{1'b0, cfg_agg_port, cfg_ctx_enable, cfg_ctx_upstream, cfg_ctx_jid, cfg_ctx_tid,
                          cfg_ctx_upstream_port, cfg_ctx_members, x_awaddr, x_araddr, x_wdata, x_awvalid,
                          x_wvalid, x_bready, x_arvalid, x_rready};
    end
  endgenerate

endmodule

`default_nettype wire
