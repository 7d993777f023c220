# SPDX-License-Identifier: MIT
# Non-project Vivado build of a panama board shell:
#   vivado -mode batch -source build.tcl
# run from (or pointing at) the directory panama-gen --board wrote. It creates the vendor MAC IP,
# synthesises the board top with the generated core, places, routes, writes timing and
# utilisation reports and the bitstream under vivado/, and exits non-zero if timing fails.
# The board's facts (part, top, IP) come from board.tcl next to this file.

set out_dir [file dirname [file normalize [info script]]]
source [file join $out_dir board.tcl]
# board.tcl sets: board_part, board_top, board_xdc, board_ip (list of {module_name ip_name
# vendor/library version-less properties}).

set run_dir [file join $out_dir vivado]
set ip_dir [file join $run_dir ip]
file mkdir $run_dir
file mkdir $ip_dir

create_project -in_memory -part $board_part
set_property target_language Verilog [current_project]

# ---- vendor IP (MAC/PCS), generated and synthesised out of context ----
foreach ip $board_ip {
  lassign $ip module_name ip_name properties
  create_ip -name $ip_name -vendor xilinx.com -library ip -module_name $module_name -dir $ip_dir
  set_property -dict $properties [get_ips $module_name]
  generate_target all [get_ips $module_name]
  synth_ip [get_ips $module_name]
}

# ---- sources: every file of filelist.f except the stubs (Vivado has the real IP and primitives) ----
set fh [open [file join $out_dir filelist.f] r]
set sources {}
foreach line [split [read $fh] "\n"] {
  set line [string trim $line]
  if {$line eq "" || [string match "#*" $line] || [string match "*_stubs.v" $line]} continue
  lappend sources [file join $out_dir $line]
}
close $fh
read_verilog $sources
foreach xdc $board_xdc { read_xdc [file join $out_dir $xdc] }
# The crossings' constraints are Tcl (loops over the instances they find): unmanaged.
read_xdc -unmanaged [file join $out_dir panama_cdc.xdc]

# ---- implementation ----
synth_design -top $board_top -part $board_part
report_utilization -file [file join $run_dir post_synth_utilization.rpt]
opt_design
place_design
phys_opt_design
route_design
report_timing_summary -max_paths 20 -file [file join $run_dir timing_summary.rpt]
report_clock_interaction -file [file join $run_dir clock_interaction.rpt]
report_cdc -file [file join $run_dir cdc.rpt]
report_utilization -hierarchical -file [file join $run_dir utilization.rpt]
write_checkpoint -force [file join $run_dir $board_top.dcp]

set wns [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]]
set whs [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -hold]]
puts "panama: WNS $wns ns, WHS $whs ns"
if {$wns < 0 || $whs < 0} {
  puts "panama: ERROR: timing not met (see vivado/timing_summary.rpt); no bitstream written"
  exit 1
}
write_bitstream -force [file join $run_dir $board_top.bit]
puts "panama: wrote [file join $run_dir $board_top.bit]"
