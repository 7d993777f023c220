// SPDX-License-Identifier: MIT
// panama_port_cdc: one Ethernet port of a board shell, between its MAC's user clock and the core
// clock. Receive: MAC -> frame FIFO that never back-pressures (a MAC cannot wait) and drops a
// frame meeting a full FIFO -> core sPP. Transmit: core mPP (plus, on the port chosen for them,
// the frames the core builds, m_agg) -> frame FIFO with back-pressure -> MAC, which receives a
// frame only once it is whole, so it never underruns inside a frame.
`timescale 1ns / 1ps
`default_nettype none

module panama_port_cdc #(
  // Bits of tdata on both sides (the MAC's user width equals the core's bus on the boards).
  parameter DATA_W = 64,
  // log2 of each FIFO's depth in beats; at least one maximum-size frame (1518 B / (W/8)).
  parameter ADDR_W = 9,
  // 1: this port also carries the core's built frames (m_agg), frame-interleaved with mPP.
  parameter AGG = 0
) (
  input  wire                    mac_clk,
  input  wire                    mac_rst,
  input  wire                    core_clk,
  input  wire                    core_rst,
  // MAC receive (mac_clk)
  input  wire [DATA_W-1:0]   mac_rx_tdata,
  input  wire [DATA_W/8-1:0] mac_rx_tkeep,
  input  wire                    mac_rx_tvalid,
  input  wire                    mac_rx_tlast,
  input  wire                    mac_rx_tuser,
  // MAC transmit (mac_clk)
  output wire [DATA_W-1:0]   mac_tx_tdata,
  output wire [DATA_W/8-1:0] mac_tx_tkeep,
  output wire                    mac_tx_tvalid,
  output wire                    mac_tx_tlast,
  output wire                    mac_tx_tuser,
  input  wire                    mac_tx_tready,
  output wire                    rx_drop,       // mac_clk pulse: a frame met a full FIFO
  // core sPP (core_clk)
  output wire [DATA_W-1:0]   s_axis_tdata,
  output wire [DATA_W/8-1:0] s_axis_tkeep,
  output wire                    s_axis_tvalid,
  output wire                    s_axis_tlast,
  output wire                    s_axis_tuser,
  input  wire                    s_axis_tready,
  // core mPP (core_clk)
  input  wire [DATA_W-1:0]   m_axis_tdata,
  input  wire [DATA_W/8-1:0] m_axis_tkeep,
  input  wire                    m_axis_tvalid,
  input  wire                    m_axis_tlast,
  input  wire                    m_axis_tuser,
  output wire                    m_axis_tready,
  // core m_agg (core_clk), used when AGG = 1
  input  wire [DATA_W-1:0]   agg_axis_tdata,
  input  wire [DATA_W/8-1:0] agg_axis_tkeep,
  input  wire                    agg_axis_tvalid,
  input  wire                    agg_axis_tlast,
  output wire                    agg_axis_tready
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 512 && DATA_W % 64 == 0,
                  "panama_port_cdc: DATA_W must be a multiple of 64, 64..512")
  `PANAMA_REQUIRE(g_req_addr_w, ADDR_W >= 2 && ADDR_W <= 20, "panama_port_cdc: ADDR_W must be 2..20")
  `PANAMA_REQUIRE(g_req_agg, AGG == 0 || AGG == 1, "panama_port_cdc: AGG must be 0 or 1")

  localparam KW = DATA_W / 8;

  panama_axis_async_fifo #(
    .DATA_W(DATA_W), .USER_W(1), .ADDR_W(ADDR_W),
    .FRAME_FIFO(1), .DROP_WHEN_FULL(1)
  ) u_rx_fifo (
    .s_clk(mac_clk), .s_rst(mac_rst),
    .s_axis_tdata(mac_rx_tdata), .s_axis_tkeep(mac_rx_tkeep), .s_axis_tvalid(mac_rx_tvalid),
    .s_axis_tlast(mac_rx_tlast), .s_axis_tuser(mac_rx_tuser), .s_axis_tready(),
    .s_drop(rx_drop),
    .m_clk(core_clk), .m_rst(core_rst),
    .m_axis_tdata(s_axis_tdata), .m_axis_tkeep(s_axis_tkeep), .m_axis_tvalid(s_axis_tvalid),
    .m_axis_tlast(s_axis_tlast), .m_axis_tuser(s_axis_tuser), .m_axis_tready(s_axis_tready));

  wire [DATA_W-1:0] tx_tdata;
  wire [KW-1:0]         tx_tkeep;
  wire                  tx_tvalid, tx_tlast, tx_tuser, tx_tready;

  generate
    if (AGG != 0) begin : g_agg
      panama_axis_arb2 #(.DATA_W(DATA_W), .USER_W(1)) u_arb (
        .clk(core_clk), .rst(core_rst),
        .s0_axis_tdata(m_axis_tdata), .s0_axis_tkeep(m_axis_tkeep),
        .s0_axis_tvalid(m_axis_tvalid), .s0_axis_tlast(m_axis_tlast),
        .s0_axis_tuser(m_axis_tuser), .s0_axis_tready(m_axis_tready),
        .s1_axis_tdata(agg_axis_tdata), .s1_axis_tkeep(agg_axis_tkeep),
        .s1_axis_tvalid(agg_axis_tvalid), .s1_axis_tlast(agg_axis_tlast),
        .s1_axis_tuser(1'b0), .s1_axis_tready(agg_axis_tready),
        .m_axis_tdata(tx_tdata), .m_axis_tkeep(tx_tkeep), .m_axis_tvalid(tx_tvalid),
        .m_axis_tlast(tx_tlast), .m_axis_tuser(tx_tuser), .m_axis_tready(tx_tready));
    end else begin : g_no_agg
      assign tx_tdata = m_axis_tdata;
      assign tx_tkeep = m_axis_tkeep;
      assign tx_tvalid = m_axis_tvalid;
      assign tx_tlast = m_axis_tlast;
      assign tx_tuser = m_axis_tuser;
      assign m_axis_tready = tx_tready;
      assign agg_axis_tready = 1'b0;
    end
  endgenerate

  panama_axis_async_fifo #(
    .DATA_W(DATA_W), .USER_W(1), .ADDR_W(ADDR_W),
    .FRAME_FIFO(1), .DROP_WHEN_FULL(0)
  ) u_tx_fifo (
    .s_clk(core_clk), .s_rst(core_rst),
    .s_axis_tdata(tx_tdata), .s_axis_tkeep(tx_tkeep), .s_axis_tvalid(tx_tvalid),
    .s_axis_tlast(tx_tlast), .s_axis_tuser(tx_tuser), .s_axis_tready(tx_tready),
    .s_drop(),
    .m_clk(mac_clk), .m_rst(mac_rst),
    .m_axis_tdata(mac_tx_tdata), .m_axis_tkeep(mac_tx_tkeep), .m_axis_tvalid(mac_tx_tvalid),
    .m_axis_tlast(mac_tx_tlast), .m_axis_tuser(mac_tx_tuser), .m_axis_tready(mac_tx_tready));

endmodule

`default_nettype wire
