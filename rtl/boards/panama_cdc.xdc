# SPDX-License-Identifier: MIT
# Clock-domain-crossing constraints shared by the board shells. This file is Tcl (it loops over the
# crossings it finds): build.tcl reads it with read_xdc -unmanaged, after the board's own XDC.
# The MAC and core clocks are asynchronous, but they are deliberately not put in an asynchronous
# clock group: any crossing other than the ones below then shows up as a timing failure instead
# of being silently ignored.
#
# Every crossing is found by the module that makes it (REF_NAME, or ORIG_REF_NAME when Vivado
# uniquified a parameterised instance), not by instance names, and every bound is read from the
# clocks that reach it (get_property PERIOD), so a board with other clocks or another shell layout
# needs no edit here.

# The period (ns) of the clock at clock pin `pin`: the shortest when several reach it; `fallback`
# when none does (an unconstrained clock is reported by Vivado's own checks).
proc panama_cdc_period {pin fallback} {
  set best $fallback
  foreach clk [get_clocks -quiet -of_objects [get_pins -quiet $pin]] {
    set p [get_property PERIOD $clk]
    if {$p < $best} { set best $p }
  }
  return $best
}

# The hierarchical instances of module `mod`.
proc panama_cdc_instances {mod} {
  return [get_cells -quiet -hierarchical -filter "REF_NAME == $mod || ORIG_REF_NAME == $mod"]
}

# ---- panama_axis_async_fifo: one per direction of every port (panama_port_cdc)
set panama_cdc_fifos [panama_cdc_instances panama_axis_async_fifo]
if {[llength $panama_cdc_fifos] == 0} {
  puts "CRITICAL WARNING: panama_cdc.xdc: no panama_axis_async_fifo instance, no FIFO crossing constrained"
}
foreach fifo $panama_cdc_fifos {
  set wr_period [panama_cdc_period "$fifo/wr_ptr_q_reg\[0\]/C" 1000.0]
  set rd_period [panama_cdc_period "$fifo/rd_ptr_q_reg\[0\]/C" 1000.0]
  set fast [expr {min($wr_period, $rd_period)}]
  # Gray-coded pointers: the delay (and so the skew between bits) bounded by one period of the
  # faster side, so that the synchroniser never sees two bits of one pointer step apart.
  set_max_delay -datapath_only $fast \
      -from [get_cells $fifo/wr_commit_gray_q_reg*] -to [get_cells $fifo/wr_gray_sync_q_reg*]
  set_max_delay -datapath_only $fast \
      -from [get_cells $fifo/rd_gray_q_reg*] -to [get_cells $fifo/rd_gray_sync_q_reg*]
  # Storage: written in one domain, read in the other only after the pointer has crossed (at
  # least two read cycles later); for distributed RAM the path is bounded all the same, by one
  # read period.
  set_max_delay -datapath_only $rd_period \
      -from [get_cells $fifo/mem_reg*] -to [get_cells $fifo/mem_q_reg*]
}

# ---- panama_reset_sync: asynchronous assertion into the synchronisers' preset pins
foreach rs [panama_cdc_instances panama_reset_sync] {
  set_false_path -to [get_pins $rs/sync_q_reg*/PRE]
}

# Status levels into the board top's LED register (quasi-static: link up / aligned).
set_false_path -to [get_cells -hierarchical -filter {NAME =~ led_q_reg*}]
