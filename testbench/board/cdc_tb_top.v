// cdc_tb_top: three configurations of panama_axis_async_fifo between two clocks, reset by
// panama_reset_sync in each domain, for cdc_tb.cpp. Stream "a" is frame-safe with back-pressure
// (core -> transmit MAC), "b" frame-safe dropping when full (receive MAC -> core), "c" beat by
// beat with back-pressure.
`timescale 1ns / 1ps
`default_nettype none

module cdc_tb_top (
  input  wire        s_clk,
  input  wire        m_clk,
  input  wire        arst,
  output wire        s_rst,
  output wire        m_rst,
  // Stimulus shared by the three FIFOs (each has its own valid).
  input  wire [63:0] s_tdata,
  input  wire [7:0]  s_tkeep,
  input  wire        s_tlast,
  input  wire        s_tuser,
  input  wire [2:0]  s_tvalid,
  output wire [2:0]  s_tready,
  output wire [2:0]  s_drop,
  input  wire [2:0]  m_tready,
  output wire [2:0]  m_tvalid,
  output wire [191:0] m_tdata,
  output wire [23:0] m_tkeep,
  output wire [2:0]  m_tlast,
  output wire [2:0]  m_tuser
);

  panama_reset_sync #(.STAGES(3)) u_rs_s (.clk(s_clk), .rst_in(arst), .rst_out(s_rst));
  panama_reset_sync #(.STAGES(3)) u_rs_m (.clk(m_clk), .rst_in(arst), .rst_out(m_rst));

  // Small depths so full, drop and too-long frames happen within a short run.
  localparam [11:0] ADDR_WIDTHS = {4'd3, 4'd4, 4'd4};
  localparam [2:0]  FRAME_MODES = 3'b011;
  localparam [2:0]  DROP_MODES  = 3'b010;

  genvar i;
  generate
    for (i = 0; i < 3; i = i + 1) begin : g_fifo
      panama_axis_async_fifo #(
        .DATA_W(64), .USER_W(1), .ADDR_W(ADDR_WIDTHS[i*4 +: 4]),
        .FRAME_FIFO(FRAME_MODES[i]), .DROP_WHEN_FULL(DROP_MODES[i]), .SYNC_STAGES(2)
      ) u_fifo (
        .s_clk(s_clk), .s_rst(s_rst),
        .s_axis_tdata(s_tdata), .s_axis_tkeep(s_tkeep), .s_axis_tvalid(s_tvalid[i]),
        .s_axis_tlast(s_tlast), .s_axis_tuser(s_tuser), .s_axis_tready(s_tready[i]),
        .s_drop(s_drop[i]),
        .m_clk(m_clk), .m_rst(m_rst),
        .m_axis_tdata(m_tdata[i*64 +: 64]), .m_axis_tkeep(m_tkeep[i*8 +: 8]),
        .m_axis_tvalid(m_tvalid[i]), .m_axis_tlast(m_tlast[i]), .m_axis_tuser(m_tuser[i]),
        .m_axis_tready(m_tready[i]));
    end
  endgenerate

endmodule

`default_nettype wire
