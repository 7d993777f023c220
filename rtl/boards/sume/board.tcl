# SPDX-License-Identifier: MIT
# NetFPGA SUME: facts for build.tcl.
set board_part xc7vx690tffg1761-3
set board_top  panama_sume_top
set board_xdc  {panama_sume.xdc}
# AXI 10G Ethernet Subsystem, 10GBASE-R, 64-bit AXI-Stream, MAC configured by vectors (no
# AXI4-Lite); port 0 holds the shared logic (QPLL, clocking), ports 1-3 use it.
set board_ip [list \
  [list axi_10g_ethernet_shared axi_10g_ethernet [list \
      CONFIG.Management_Interface false CONFIG.base_kr BASE-R CONFIG.SupportLevel 1 \
      CONFIG.autonegotiation 0 CONFIG.TransceiverControl false CONFIG.Statistics_Gathering 0]] \
  [list axi_10g_ethernet_nonshared axi_10g_ethernet [list \
      CONFIG.Management_Interface false CONFIG.base_kr BASE-R CONFIG.SupportLevel 0 \
      CONFIG.autonegotiation 0 CONFIG.TransceiverControl false CONFIG.Statistics_Gathering 0]]]
