// SPDX-License-Identifier: MIT
// Port lists of the vendor IP that build.tcl creates for the NetFPGA SUME shell, as
// (* blackbox *) modules so that any Verilog tool elaborates panama_sume_top. Vivado uses the
// real IP (create_ip in build.tcl) and never reads this file. Names follow the AXI 10G Ethernet
// Subsystem (PG157) with 10GBASE-R, 64-bit AXI-Stream, MAC configured by vectors (no AXI4-Lite),
// shared logic in the core for port 0 and in the example design for ports 1-3.
`timescale 1ns / 1ps
`default_nettype none

// The data, configuration and status ports both variants share (after their clocking ports).
`define PANAMA_10G_COMMON_PORTS \
  input  wire         tx_axis_aresetn,              \
  input  wire         rx_axis_aresetn,              \
  input  wire [7:0]   tx_ifg_delay,                 \
  input  wire [63:0]  s_axis_tx_tdata,              \
  input  wire [7:0]   s_axis_tx_tkeep,              \
  input  wire         s_axis_tx_tlast,              \
  input  wire [0:0]   s_axis_tx_tuser,              \
  input  wire         s_axis_tx_tvalid,             \
  output wire         s_axis_tx_tready,             \
  input  wire [15:0]  s_axis_pause_tdata,           \
  input  wire         s_axis_pause_tvalid,          \
  output wire [63:0]  m_axis_rx_tdata,              \
  output wire [7:0]   m_axis_rx_tkeep,              \
  output wire         m_axis_rx_tlast,              \
  output wire         m_axis_rx_tuser,              \
  output wire         m_axis_rx_tvalid,             \
  output wire         tx_statistics_valid,          \
  output wire [25:0]  tx_statistics_vector,         \
  output wire         rx_statistics_valid,          \
  output wire [29:0]  rx_statistics_vector,         \
  input  wire [79:0]  mac_tx_configuration_vector,  \
  input  wire [79:0]  mac_rx_configuration_vector,  \
  output wire [2:0]   mac_status_vector,            \
  input  wire [535:0] pcs_pma_configuration_vector, \
  output wire [447:0] pcs_pma_status_vector,        \
  output wire [7:0]   pcspma_status,                \
  input  wire         sim_speedup_control,          \
  input  wire         signal_detect,                \
  input  wire         tx_fault,                     \
  output wire         tx_disable,                   \
  output wire         resetdone_out,                \
  output wire         txp,                          \
  output wire         txn,                          \
  input  wire         rxp,                          \
  input  wire         rxn

(* blackbox *)
module axi_10g_ethernet_shared (
  input  wire         refclk_p,
  input  wire         refclk_n,
  input  wire         dclk,
  input  wire         reset,
  output wire         coreclk_out,
  output wire         rxrecclk_out,
  output wire         areset_datapathclk_out,
  output wire         txusrclk_out,
  output wire         txusrclk2_out,
  output wire         gttxreset_out,
  output wire         gtrxreset_out,
  output wire         txuserrdy_out,
  output wire         qplllock_out,
  output wire         qplloutclk_out,
  output wire         qplloutrefclk_out,
  output wire         reset_counter_done_out,
`PANAMA_10G_COMMON_PORTS
);
endmodule

(* blackbox *)
module axi_10g_ethernet_nonshared (
  input  wire         coreclk,
  input  wire         dclk,
  input  wire         txusrclk,
  input  wire         txusrclk2,
  output wire         txoutclk,
  output wire         rxrecclk_out,
  input  wire         areset,
  input  wire         areset_coreclk,
  input  wire         gttxreset,
  input  wire         gtrxreset,
  input  wire         txuserrdy,
  input  wire         qplllock,
  input  wire         qplloutclk,
  input  wire         qplloutrefclk,
  input  wire         reset_counter_done,
`PANAMA_10G_COMMON_PORTS
);
endmodule

`undef PANAMA_10G_COMMON_PORTS

`default_nettype wire
