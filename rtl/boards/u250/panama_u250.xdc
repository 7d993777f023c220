# SPDX-License-Identifier: MIT
# Constraints of panama_u250_top on the Xilinx Alveo U250 (xcu250-figd2104-2L-e).
# Pins from the board's public documentation (Alveo U200/U250 user guide UG1289, master XDC):
# 300 MHz oscillator on AY37/AY38, QSFP28 cage 0 on quad 231 (GTYE4_CHANNEL_X1Y44-47) with the
# Si570 156.25 MHz reference on MGTREFCLK0_231 (M11/M10), cage 1 on quad 230 (X1Y40-43) with
# MGTREFCLK0_230 (T11/T10). GT serial pins: only the P side is placed (the N side follows).

set_property CFGBVS GND                                [current_design]
set_property CONFIG_VOLTAGE 1.8                        [current_design]
set_property BITSTREAM.GENERAL.COMPRESS true           [current_design]
set_property BITSTREAM.CONFIG.CONFIGFALLBACK ENABLE    [current_design]
set_property BITSTREAM.CONFIG.EXTMASTERCCLK_EN DISABLE [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES       [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4           [current_design]
set_property BITSTREAM.CONFIG.SPI_FALL_EDGE YES        [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN PULLUP         [current_design]

# ---- clocks --------------------------------------------------------------------------------
set_property -dict {PACKAGE_PIN AY37 IOSTANDARD LVDS} [get_ports clk_300mhz_p]
set_property -dict {PACKAGE_PIN AY38 IOSTANDARD LVDS} [get_ports clk_300mhz_n]
create_clock -period 3.333 -name clk_300mhz [get_ports clk_300mhz_p]

set_property PACKAGE_PIN M11 [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN M10 [get_ports qsfp0_refclk_n]
create_clock -period 6.400 -name qsfp0_refclk [get_ports qsfp0_refclk_p]
set_property PACKAGE_PIN T11 [get_ports qsfp1_refclk_p]
set_property PACKAGE_PIN T10 [get_ports qsfp1_refclk_n]
create_clock -period 6.400 -name qsfp1_refclk [get_ports qsfp1_refclk_p]

# MMCM outputs, named (Vivado derives their waveforms): 250 MHz core, 125 MHz CMAC init/DRP.
create_generated_clock -name core_clk [get_pins u_mmcm/CLKOUT0]
create_generated_clock -name init_clk [get_pins u_mmcm/CLKOUT1]
# The MAC user clocks (gt_txusrclk2 of u_cmac0 / u_cmac1, 322.265625 MHz) are created by the
# CMAC's own XDC from qsfp0_refclk / qsfp1_refclk.

# ---- QSFP28 cages: port 0 = qsfp0, port 1 = qsfp1 ---------------------------------------------
set_property PACKAGE_PIN N4 [get_ports {qsfp0_rx_p[0]}]
set_property PACKAGE_PIN N9 [get_ports {qsfp0_tx_p[0]}]
set_property PACKAGE_PIN M2 [get_ports {qsfp0_rx_p[1]}]
set_property PACKAGE_PIN M7 [get_ports {qsfp0_tx_p[1]}]
set_property PACKAGE_PIN L4 [get_ports {qsfp0_rx_p[2]}]
set_property PACKAGE_PIN L9 [get_ports {qsfp0_tx_p[2]}]
set_property PACKAGE_PIN K2 [get_ports {qsfp0_rx_p[3]}]
set_property PACKAGE_PIN K7 [get_ports {qsfp0_tx_p[3]}]
set_property PACKAGE_PIN U4 [get_ports {qsfp1_rx_p[0]}]
set_property PACKAGE_PIN U9 [get_ports {qsfp1_tx_p[0]}]
set_property PACKAGE_PIN T2 [get_ports {qsfp1_rx_p[1]}]
set_property PACKAGE_PIN T7 [get_ports {qsfp1_tx_p[1]}]
set_property PACKAGE_PIN R4 [get_ports {qsfp1_rx_p[2]}]
set_property PACKAGE_PIN R9 [get_ports {qsfp1_tx_p[2]}]
set_property PACKAGE_PIN P2 [get_ports {qsfp1_rx_p[3]}]
set_property PACKAGE_PIN P7 [get_ports {qsfp1_tx_p[3]}]

set_property -dict {PACKAGE_PIN BE17 IOSTANDARD LVCMOS12} [get_ports {qsfp_resetl[0]}]
set_property -dict {PACKAGE_PIN BC18 IOSTANDARD LVCMOS12} [get_ports {qsfp_resetl[1]}]
set_property -dict {PACKAGE_PIN BD18 IOSTANDARD LVCMOS12} [get_ports {qsfp_lpmode[0]}]
set_property -dict {PACKAGE_PIN AV22 IOSTANDARD LVCMOS12} [get_ports {qsfp_lpmode[1]}]
set_property -dict {PACKAGE_PIN BE16 IOSTANDARD LVCMOS12} [get_ports {qsfp_modsell[0]}]
set_property -dict {PACKAGE_PIN AY20 IOSTANDARD LVCMOS12} [get_ports {qsfp_modsell[1]}]

# ---- LEDs (slow, asynchronous) ------------------------------------------------------------------
set_property -dict {PACKAGE_PIN BC21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[0]}]
set_property -dict {PACKAGE_PIN BB21 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[1]}]
set_property -dict {PACKAGE_PIN BA20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[2]}]
set_false_path -to [get_ports {led[*] qsfp_resetl[*] qsfp_lpmode[*] qsfp_modsell[*]}]

# Clock-domain crossings: panama_cdc.xdc, read after this file by build.tcl.
