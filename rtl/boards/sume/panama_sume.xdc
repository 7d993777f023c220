# SPDX-License-Identifier: MIT
# Constraints of panama_sume_top on the NetFPGA SUME (xc7vx690tffg1761-3).
# Pins from the board's public documentation (NetFPGA SUME reference manual / master XDC):
# 200 MHz oscillator on H19/G18, SFP+ cages on quad 119 (GTHE2_CHANNEL_X1Y36-39) with their
# reference clock on MGTREFCLK0_118 (E10/E9) from the Si5324 jitter attenuator (IC20).

set_property CFGBVS GND                        [current_design]
set_property CONFIG_VOLTAGE 1.8                [current_design]
set_property BITSTREAM.GENERAL.COMPRESS true   [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN Pullup [current_design]

# ---- clocks --------------------------------------------------------------------------------
set_property -dict {PACKAGE_PIN H19 IOSTANDARD LVDS} [get_ports clk_200mhz_p]
set_property -dict {PACKAGE_PIN G18 IOSTANDARD LVDS} [get_ports clk_200mhz_n]
create_clock -period 5.000 -name clk_200mhz [get_ports clk_200mhz_p]

set_property PACKAGE_PIN E10 [get_ports sfp_mgt_refclk_p]
set_property PACKAGE_PIN E9  [get_ports sfp_mgt_refclk_n]
create_clock -period 6.400 -name sfp_mgt_refclk [get_ports sfp_mgt_refclk_p]

# MMCM outputs, named (Vivado derives their waveforms): the core clock and the DRP clock.
create_generated_clock -name core_clk [get_pins u_mmcm/CLKOUT0]
create_generated_clock -name drp_clk  [get_pins u_mmcm/CLKOUT1]
# The MAC user clock (coreclk_out of u_mac0, 156.25 MHz) is created by the 10G subsystem's own
# XDC from sfp_mgt_refclk.

# ---- SFP+ cages: port p of the core = cage sfp_{p+1} -----------------------------------------
set_property PACKAGE_PIN A6 [get_ports {sfp_rx_p[0]}]
set_property PACKAGE_PIN A5 [get_ports {sfp_rx_n[0]}]
set_property PACKAGE_PIN B4 [get_ports {sfp_tx_p[0]}]
set_property PACKAGE_PIN B3 [get_ports {sfp_tx_n[0]}]
set_property PACKAGE_PIN B8 [get_ports {sfp_rx_p[1]}]
set_property PACKAGE_PIN B7 [get_ports {sfp_rx_n[1]}]
set_property PACKAGE_PIN C2 [get_ports {sfp_tx_p[1]}]
set_property PACKAGE_PIN C1 [get_ports {sfp_tx_n[1]}]
set_property PACKAGE_PIN C6 [get_ports {sfp_rx_p[2]}]
set_property PACKAGE_PIN C5 [get_ports {sfp_rx_n[2]}]
set_property PACKAGE_PIN D4 [get_ports {sfp_tx_p[2]}]
set_property PACKAGE_PIN D3 [get_ports {sfp_tx_n[2]}]
set_property PACKAGE_PIN D8 [get_ports {sfp_rx_p[3]}]
set_property PACKAGE_PIN D7 [get_ports {sfp_rx_n[3]}]
set_property PACKAGE_PIN E2 [get_ports {sfp_tx_p[3]}]
set_property PACKAGE_PIN E1 [get_ports {sfp_tx_n[3]}]

set_property -dict {PACKAGE_PIN M18 IOSTANDARD LVCMOS15} [get_ports {sfp_tx_disable[0]}]
set_property -dict {PACKAGE_PIN B31 IOSTANDARD LVCMOS15} [get_ports {sfp_tx_disable[1]}]
set_property -dict {PACKAGE_PIN J38 IOSTANDARD LVCMOS15} [get_ports {sfp_tx_disable[2]}]
set_property -dict {PACKAGE_PIN L21 IOSTANDARD LVCMOS15} [get_ports {sfp_tx_disable[3]}]
set_property -dict {PACKAGE_PIN M19 IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_tx_fault[0]}]
set_property -dict {PACKAGE_PIN C26 IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_tx_fault[1]}]
set_property -dict {PACKAGE_PIN E39 IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_tx_fault[2]}]
set_property -dict {PACKAGE_PIN J26 IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_tx_fault[3]}]

# ---- button, LEDs (slow, asynchronous) ----------------------------------------------------------
set_property -dict {PACKAGE_PIN AR13 IOSTANDARD LVCMOS15} [get_ports btn0]
set_property -dict {PACKAGE_PIN AR22 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {led[0]}]
set_property -dict {PACKAGE_PIN AR23 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {led[1]}]
set_false_path -from [get_ports {btn0 sfp_tx_fault[*]}]
set_false_path -to [get_ports {led[*] sfp_tx_disable[*]}]

# Clock-domain crossings: panama_cdc.xdc, read after this file by build.tcl.
