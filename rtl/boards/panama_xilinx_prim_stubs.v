// SPDX-License-Identifier: MIT
// Port lists of the Xilinx primitives the board tops instantiate (clock buffers, MMCMs), as
// (* blackbox *) modules, so that tools without the vendor simulation library (Icarus, the
// linter of Verilator, Yosys without its Xilinx cells) elaborate the board tops. Vivado has
// the real primitives and must never read this file: build.tcl skips every *_stubs.v.
`timescale 1ns / 1ps
`default_nettype none

(* blackbox *)
module IBUFDS (
  output wire O,
  input  wire I,
  input  wire IB
);
endmodule

(* blackbox *)
module BUFG (
  output wire O,
  input  wire I
);
endmodule

// The 7-series and UltraScale+ base MMCMs share the parameters and ports the shells use.
`define PANAMA_MMCM_BASE_STUB \
#(                                                                                        \
  parameter real CLKIN1_PERIOD = 0.0,                                                     \
  parameter real CLKFBOUT_MULT_F = 5.0,                                                   \
  parameter integer DIVCLK_DIVIDE = 1,                                                    \
  parameter real CLKOUT0_DIVIDE_F = 1.0,                                                  \
  parameter integer CLKOUT1_DIVIDE = 1                                                    \
) (                                                                                       \
  output wire CLKFBOUT, CLKFBOUTB,                                                        \
  output wire CLKOUT0, CLKOUT0B, CLKOUT1, CLKOUT1B, CLKOUT2, CLKOUT2B, CLKOUT3, CLKOUT3B, \
  output wire CLKOUT4, CLKOUT5, CLKOUT6,                                                  \
  output wire LOCKED,                                                                     \
  input  wire CLKIN1, CLKFBIN, PWRDWN, RST                                                \
);

(* blackbox *)
module MMCME2_BASE `PANAMA_MMCM_BASE_STUB
endmodule

(* blackbox *)
module MMCME4_BASE `PANAMA_MMCM_BASE_STUB
endmodule

`undef PANAMA_MMCM_BASE_STUB

`default_nettype wire
