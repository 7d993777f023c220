# SPDX-License-Identifier: MIT
# Alveo U250: facts for build.tcl.
set board_part xcu250-figd2104-2L-e
set board_top  panama_u250_top
set board_xdc  {panama_u250.xdc}
# UltraScale+ integrated 100G MAC, CAUI-4 with RS-FEC, 512-bit AXI-Stream, 156.25 MHz reference,
# 125 MHz DRP/init clock; QSFP0 = CMACE4_X0Y8 on GTY X1Y44-47, QSFP1 = CMACE4_X0Y7 on X1Y40-43.
proc cmac_props {core gts} {
  lassign $gts g0 g1 g2 g3
  return [list CONFIG.CMAC_CAUI4_MODE 1 CONFIG.NUM_LANES 4x25 CONFIG.GT_REF_CLK_FREQ 156.25 \
      CONFIG.USER_INTERFACE AXIS CONFIG.GT_DRP_CLK 125 CONFIG.INCLUDE_RS_FEC 1 \
      CONFIG.TX_FLOW_CONTROL 0 CONFIG.RX_FLOW_CONTROL 0 CONFIG.CMAC_CORE_SELECT $core \
      CONFIG.GT_GROUP_SELECT "${g0}~${g3}" CONFIG.LANE1_GT_LOC $g0 CONFIG.LANE2_GT_LOC $g1 \
      CONFIG.LANE3_GT_LOC $g2 CONFIG.LANE4_GT_LOC $g3]
}
set board_ip [list \
  [list cmac_usplus_0 cmac_usplus [cmac_props CMACE4_X0Y8 {X1Y44 X1Y45 X1Y46 X1Y47}]] \
  [list cmac_usplus_1 cmac_usplus [cmac_props CMACE4_X0Y7 {X1Y40 X1Y41 X1Y42 X1Y43}]]]
