# SPDX-License-Identifier: MIT
# Clock-domain-crossing constraints shared by the board shells, sourced from each board's XDC.
# The MAC and core clocks are asynchronous, but they are deliberately not put in an asynchronous
# clock group: any crossing other than the ones below then shows up as a timing failure instead
# of being silently ignored.

# Gray-coded FIFO pointers: bound the delay (and so the skew between bits) to one period of the
# faster side, so that the synchroniser never sees two bits of one pointer step apart.
# 3.0 ns is below the shortest period of every board (3.1 ns, the U250 CMAC clock).
set_max_delay -datapath_only 3.000 \
    -from [get_cells -hierarchical -filter {NAME =~ *u_*_fifo/wr_commit_gray_q_reg*}] \
    -to   [get_cells -hierarchical -filter {NAME =~ *u_*_fifo/wr_gray_sync_q_reg*}]
set_max_delay -datapath_only 3.000 \
    -from [get_cells -hierarchical -filter {NAME =~ *u_*_fifo/rd_gray_q_reg*}] \
    -to   [get_cells -hierarchical -filter {NAME =~ *u_*_fifo/rd_gray_sync_q_reg*}]

# FIFO storage: written in one domain, read in the other only after the pointer has crossed
# (at least two destination cycles later); for distributed RAM bound the path all the same.
set_max_delay -datapath_only 3.000 \
    -from [get_cells -hierarchical -filter {NAME =~ *u_*_fifo/mem_reg*}] \
    -to   [get_cells -hierarchical -filter {NAME =~ *u_*_fifo/mem_q_reg*}]

# Reset synchronisers: asynchronous assertion into the preset pins.
set_false_path -to [get_pins -hierarchical -filter {NAME =~ *u_*rst*/sync_q_reg*/PRE}]
set_false_path -to [get_pins -hierarchical -filter {NAME =~ *g_mac_rst*u_rs/sync_q_reg*/PRE}]

# Status levels into the LED register (quasi-static: link up / aligned).
set_false_path -to [get_cells -hierarchical -filter {NAME =~ led_q_reg*}]
