// panama_board_shell: what every board top shares around its MACs: one clock-domain crossing per
// port (rtl/panama_port_cdc.v) between the MAC user clocks and the core clock, and the core
// (panama_core, the generated accelerator with packed per-port streams). The frames the core
// builds leave through port AGG_PORT's transmit path, frame-interleaved with its mPP.
// Register-file access is tied off until management over Ethernet (docs/mgmt.md) drives it.
`timescale 1ns / 1ps
`default_nettype none

module panama_board_shell #(
  parameter N = 4,          // ports
  parameter W = 64,         // bus bits, the same on the MAC and core sides
  parameter AW = 14,        // register-file address bits of the core (regmap.json)
  parameter AGG_PORT = 0,   // the port whose transmit path also carries m_agg
  parameter FIFO_AW = 9     // log2 of each CDC FIFO's depth in beats (>= one 1518-byte frame)
) (
  input  wire             core_clk,
  input  wire             core_rst,
  // Per port p, in mac_clk[p]: bit p, or bits [p*W +: W] and [p*W/8 +: W/8].
  input  wire [N-1:0]     mac_clk,
  input  wire [N-1:0]     mac_rst,
  input  wire [N*W-1:0]   mac_rx_tdata,
  input  wire [N*W/8-1:0] mac_rx_tkeep,
  input  wire [N-1:0]     mac_rx_tvalid,
  input  wire [N-1:0]     mac_rx_tlast,
  input  wire [N-1:0]     mac_rx_tuser,   // 1 on the last beat of a bad frame (the core's convention)
  output wire [N*W-1:0]   mac_tx_tdata,
  output wire [N*W/8-1:0] mac_tx_tkeep,
  output wire [N-1:0]     mac_tx_tvalid,
  output wire [N-1:0]     mac_tx_tlast,
  output wire [N-1:0]     mac_tx_tuser,
  input  wire [N-1:0]     mac_tx_tready,
  output wire [N-1:0]     rx_drop         // mac_clk[p] pulse: a frame met a full receive FIFO
);

  wire [N*W-1:0]   core_s_tdata, core_m_tdata;
  wire [N*W/8-1:0] core_s_tkeep, core_m_tkeep;
  wire [N-1:0]     core_s_tvalid, core_s_tlast, core_s_tuser, core_s_tready;
  wire [N-1:0]     core_m_tvalid, core_m_tlast, core_m_tuser, core_m_tready;
  wire [N-1:0]     agg_tready;
  wire [W-1:0]     agg_tdata;
  wire [W/8-1:0]   agg_tkeep;
  wire             agg_tvalid, agg_tlast;

  genvar p;
  generate
    for (p = 0; p < N; p = p + 1) begin : g_cdc
      panama_port_cdc #(.DATA_WIDTH(W), .ADDR_WIDTH(FIFO_AW), .AGG(p == AGG_PORT)) u_cdc (
        .mac_clk(mac_clk[p]), .mac_rst(mac_rst[p]), .core_clk(core_clk), .core_rst(core_rst),
        .mac_rx_tdata(mac_rx_tdata[p*W +: W]), .mac_rx_tkeep(mac_rx_tkeep[p*W/8 +: W/8]),
        .mac_rx_tvalid(mac_rx_tvalid[p]), .mac_rx_tlast(mac_rx_tlast[p]), .mac_rx_tuser(mac_rx_tuser[p]),
        .mac_tx_tdata(mac_tx_tdata[p*W +: W]), .mac_tx_tkeep(mac_tx_tkeep[p*W/8 +: W/8]),
        .mac_tx_tvalid(mac_tx_tvalid[p]), .mac_tx_tlast(mac_tx_tlast[p]),
        .mac_tx_tuser(mac_tx_tuser[p]), .mac_tx_tready(mac_tx_tready[p]),
        .rx_drop(rx_drop[p]),
        .s_axis_tdata(core_s_tdata[p*W +: W]), .s_axis_tkeep(core_s_tkeep[p*W/8 +: W/8]),
        .s_axis_tvalid(core_s_tvalid[p]), .s_axis_tlast(core_s_tlast[p]),
        .s_axis_tuser(core_s_tuser[p]), .s_axis_tready(core_s_tready[p]),
        .m_axis_tdata(core_m_tdata[p*W +: W]), .m_axis_tkeep(core_m_tkeep[p*W/8 +: W/8]),
        .m_axis_tvalid(core_m_tvalid[p]), .m_axis_tlast(core_m_tlast[p]),
        .m_axis_tuser(core_m_tuser[p]), .m_axis_tready(core_m_tready[p]),
        .agg_axis_tdata(agg_tdata), .agg_axis_tkeep(agg_tkeep), .agg_axis_tvalid(agg_tvalid),
        .agg_axis_tlast(agg_tlast), .agg_axis_tready(agg_tready[p]));
    end
  endgenerate

  wire s_axil_awready, s_axil_wready, s_axil_bvalid, s_axil_arready, s_axil_rvalid;
  wire [1:0] s_axil_bresp, s_axil_rresp;
  wire [31:0] s_axil_rdata;

  panama_core u_core (
    .clk(core_clk), .rst(core_rst),
    .s_tdata(core_s_tdata), .s_tkeep(core_s_tkeep), .s_tvalid(core_s_tvalid), .s_tlast(core_s_tlast),
    .s_tuser(core_s_tuser), .s_tready(core_s_tready),
    .m_tdata(core_m_tdata), .m_tkeep(core_m_tkeep), .m_tvalid(core_m_tvalid), .m_tlast(core_m_tlast),
    .m_tuser(core_m_tuser), .m_tready(core_m_tready),
    .m_agg_axis_tdata(agg_tdata), .m_agg_axis_tkeep(agg_tkeep), .m_agg_axis_tvalid(agg_tvalid),
    .m_agg_axis_tlast(agg_tlast), .m_agg_axis_tready(agg_tready[AGG_PORT]),
    .s_axil_awaddr({AW{1'b0}}), .s_axil_awprot(3'd0), .s_axil_awvalid(1'b0),
    .s_axil_awready(s_axil_awready), .s_axil_wdata(32'd0), .s_axil_wstrb(4'd0),
    .s_axil_wvalid(1'b0), .s_axil_wready(s_axil_wready), .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid), .s_axil_bready(1'b1), .s_axil_araddr({AW{1'b0}}),
    .s_axil_arprot(3'd0), .s_axil_arvalid(1'b0), .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata), .s_axil_rresp(s_axil_rresp), .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(1'b1));

endmodule

`default_nettype wire
