// SPDX-License-Identifier: MIT
// panama_axis_arb2: two AXI-Stream inputs onto one output, a whole frame at a time (a frame is
// never interleaved with another), alternating between the inputs when both wait so neither
// starves. Used by the board shells to send the frames the core builds (m_agg) out of one
// Ethernet port next to that port's own traffic. Output registered; full rate.
`timescale 1ns / 1ps
`default_nettype none

module panama_axis_arb2 #(
  // Bits of tdata (tkeep has DATA_W/8 bits).
  parameter DATA_W = 64,
  // Bits of tuser (an input without tuser is tied to zero by the caller).
  parameter USER_W = 1
) (
  input  wire                    clk,
  input  wire                    rst,
  input  wire [DATA_W-1:0]   s0_axis_tdata,
  input  wire [DATA_W/8-1:0] s0_axis_tkeep,
  input  wire                    s0_axis_tvalid,
  input  wire                    s0_axis_tlast,
  input  wire [USER_W-1:0]   s0_axis_tuser,
  output wire                    s0_axis_tready,
  input  wire [DATA_W-1:0]   s1_axis_tdata,
  input  wire [DATA_W/8-1:0] s1_axis_tkeep,
  input  wire                    s1_axis_tvalid,
  input  wire                    s1_axis_tlast,
  input  wire [USER_W-1:0]   s1_axis_tuser,
  output wire                    s1_axis_tready,
  output reg  [DATA_W-1:0]   m_axis_tdata,
  output reg  [DATA_W/8-1:0] m_axis_tkeep,
  output reg                     m_axis_tvalid,
  output reg                     m_axis_tlast,
  output reg  [USER_W-1:0]   m_axis_tuser,
  input  wire                    m_axis_tready
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 8 && DATA_W % 8 == 0, "panama_axis_arb2: DATA_W must be a multiple of 8")
  `PANAMA_REQUIRE(g_req_user_w, USER_W >= 1, "panama_axis_arb2: USER_W must be at least 1")

  reg  busy_q;   // inside a frame: the grant is locked
  reg  grant_q;  // input owning the output while busy; otherwise the one served last
  wire out_free = !m_axis_tvalid || m_axis_tready;

  // Between frames: the input not served last wins if it waits (round robin).
  wire pick = busy_q ? grant_q : (grant_q ? !s0_axis_tvalid : s1_axis_tvalid);
  wire sel_valid = pick ? s1_axis_tvalid : s0_axis_tvalid;
  wire sel_last = pick ? s1_axis_tlast : s0_axis_tlast;
  wire take = out_free && sel_valid;

  assign s0_axis_tready = out_free && !pick;
  assign s1_axis_tready = out_free && pick;

  always @(posedge clk) begin
    if (rst) begin
      busy_q <= 1'b0;
      grant_q <= 1'b0;
      m_axis_tvalid <= 1'b0;
      m_axis_tdata <= {DATA_W{1'b0}};
      m_axis_tkeep <= {(DATA_W/8){1'b0}};
      m_axis_tlast <= 1'b0;
      m_axis_tuser <= {USER_W{1'b0}};
    end else begin
      if (take) begin
        grant_q <= pick;
        busy_q <= !sel_last;
        m_axis_tvalid <= 1'b1;
        m_axis_tdata <= pick ? s1_axis_tdata : s0_axis_tdata;
        m_axis_tkeep <= pick ? s1_axis_tkeep : s0_axis_tkeep;
        m_axis_tlast <= sel_last;
        m_axis_tuser <= pick ? s1_axis_tuser : s0_axis_tuser;
      end else if (m_axis_tready) begin
        m_axis_tvalid <= 1'b0;
      end
    end
  end

endmodule

`default_nettype wire
