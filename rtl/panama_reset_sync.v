// SPDX-License-Identifier: MIT
// panama_reset_sync: reset synchroniser. Asserts at once (asynchronously, so a reset reaches a
// domain whose clock is not running yet, e.g. a MAC before its transceiver locks) and releases
// STAGES cycles of clk after rst_in falls, synchronously, so every flop of the domain leaves
// reset on the same edge. rst_out is a plain synchronous active-high reset for that domain.
`timescale 1ns / 1ps
`default_nettype none

module panama_reset_sync #(
  // Flops in the release chain (>= 2; 3 gives margin for metastability at high clock rates).
  parameter STAGES = 3
) (
  input  wire clk,
  input  wire rst_in,   // asynchronous, active high, from any domain
  output wire rst_out   // synchronous to clk, active high
);

`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_stages, STAGES >= 2, "panama_reset_sync: STAGES must be at least 2")

  (* ASYNC_REG = "TRUE" *) reg [STAGES-1:0] sync_q = {STAGES{1'b1}};

  always @(posedge clk or posedge rst_in) begin
    if (rst_in) sync_q <= {STAGES{1'b1}};
    else        sync_q <= {sync_q[STAGES-2:0], 1'b0};
  end

  assign rst_out = sync_q[STAGES-1];

endmodule

`default_nettype wire
