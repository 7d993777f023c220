// SPDX-License-Identifier: MIT
// Port lists of the vendor IP that build.tcl creates for the Alveo U250 shell, as (* blackbox *)
// modules so that any Verilog tool elaborates panama_u250_top. Vivado uses the real IP
// (create_ip in build.tcl) and never reads this file. Names follow the UltraScale+ integrated
// 100G Ethernet subsystem (cmac_usplus, PG203) configured with the AXI4-Stream user interface
// (512 bits at gt_txusrclk2, 322.265625 MHz), CAUI-4 (4 x 25.78125 Gbit/s) and RS-FEC; the
// statistics outputs the shell does not use are left out (Vivado leaves them unconnected).
`timescale 1ns / 1ps
`default_nettype none

// Both CMAC instances (one per QSFP28 cage) have the same port list.
`define PANAMA_CMAC_PORTS \
  input  wire         gt_ref_clk_p,                         \
  input  wire         gt_ref_clk_n,                         \
  input  wire [3:0]   gt_rxp_in,                            \
  input  wire [3:0]   gt_rxn_in,                            \
  output wire [3:0]   gt_txp_out,                           \
  output wire [3:0]   gt_txn_out,                           \
  output wire         gt_txusrclk2,                         \
  output wire         gt_rxusrclk2,                         \
  output wire         gt_ref_clk_out,                       \
  output wire [3:0]   gt_rxrecclkout,                       \
  output wire [3:0]   gt_powergoodout,                      \
  input  wire [11:0]  gt_loopback_in,                       \
  input  wire         gtwiz_reset_tx_datapath,              \
  input  wire         gtwiz_reset_rx_datapath,              \
  input  wire         sys_reset,                            \
  input  wire         init_clk,                             \
  input  wire         rx_clk,                               \
  output wire         usr_rx_reset,                         \
  output wire         usr_tx_reset,                         \
  input  wire         core_rx_reset,                        \
  input  wire         core_tx_reset,                        \
  input  wire         core_drp_reset,                       \
  input  wire         drp_clk,                              \
  input  wire [9:0]   drp_addr,                             \
  input  wire [15:0]  drp_di,                               \
  input  wire         drp_en,                               \
  input  wire         drp_we,                               \
  output wire [15:0]  drp_do,                               \
  output wire         drp_rdy,                              \
  output wire         rx_axis_tvalid,                       \
  output wire [511:0] rx_axis_tdata,                        \
  output wire         rx_axis_tlast,                        \
  output wire [63:0]  rx_axis_tkeep,                        \
  output wire         rx_axis_tuser,                        \
  output wire         tx_axis_tready,                       \
  input  wire         tx_axis_tvalid,                       \
  input  wire [511:0] tx_axis_tdata,                        \
  input  wire         tx_axis_tlast,                        \
  input  wire [63:0]  tx_axis_tkeep,                        \
  input  wire         tx_axis_tuser,                        \
  output wire         tx_ovfout,                            \
  output wire         tx_unfout,                            \
  input  wire [55:0]  tx_preamblein,                        \
  input  wire         ctl_rx_enable,                        \
  input  wire         ctl_rx_force_resync,                  \
  input  wire         ctl_rx_test_pattern,                  \
  input  wire         ctl_tx_enable,                        \
  input  wire         ctl_tx_send_idle,                     \
  input  wire         ctl_tx_send_rfi,                      \
  input  wire         ctl_tx_send_lfi,                      \
  input  wire         ctl_tx_test_pattern,                  \
  input  wire         ctl_rsfec_ieee_error_indication_mode, \
  input  wire         ctl_rx_rsfec_enable,                  \
  input  wire         ctl_rx_rsfec_enable_correction,       \
  input  wire         ctl_rx_rsfec_enable_indication,       \
  input  wire         ctl_tx_rsfec_enable,                  \
  output wire         stat_rx_aligned,                      \
  output wire         stat_rx_aligned_err,                  \
  output wire         stat_rx_status,                       \
  output wire         stat_rx_local_fault,                  \
  output wire         stat_rx_remote_fault,                 \
  output wire         stat_rx_bad_fcs,                      \
  output wire         stat_tx_local_fault

(* blackbox *)
module cmac_usplus_0 (
`PANAMA_CMAC_PORTS
);
endmodule

(* blackbox *)
module cmac_usplus_1 (
`PANAMA_CMAC_PORTS
);
endmodule

`undef PANAMA_CMAC_PORTS

`default_nettype wire
