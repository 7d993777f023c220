# tclsh board_vivado_stub.tcl OUT_DIR
# Runs OUT_DIR/build.tcl with every Vivado command it uses replaced by a stub, and parses every
# XDC the build reads with the constraint commands stubbed. Checks: each Tcl/XDC file is complete
# Tcl (info complete), the build script runs end to end (so every branch taken is valid Tcl and
# every command it calls is a known Vivado command), every file it reads exists, and every XDC
# command is one we know. Prints, one per line, what the XDCs constrain, for board_check.py:
#   port NAME               a get_ports target (pins, I/O standards, false paths)
#   clock NAME PORT|PIN X   a create_clock on port X / create_generated_clock on pin X
#   loc NAME                a PACKAGE_PIN on port NAME
#   cell PATTERN / pin PATTERN
#   ref MODULE              cells found by module (REF_NAME / ORIG_REF_NAME == MODULE); they stand
#                           for one instance "@MODULE", so what is named under them prints as
#                           cell @MODULE/REG_reg... or pin @MODULE/REG_reg.../PIN
set out_dir [file normalize [lindex $argv 0]]
set errors 0
proc fail {msg} { global errors; puts "ERROR: $msg"; incr errors }

foreach f [glob -directory $out_dir *.tcl *.xdc] {
  set fh [open $f r]; set text [read $fh]; close $fh
  if {![info complete $text]} { fail "[file tail $f]: incomplete Tcl (unbalanced braces or quotes)" }
}

# ---- Vivado commands used by build.tcl ----
set read_files {}
proc need_file {f} {
  global read_files
  if {![file exists $f]} { fail "build.tcl reads [file tail $f], which the output does not hold" }
  lappend read_files $f
}
proc create_project {args} {}
proc set_property {args} {}
proc current_project {args} { return proj }
proc create_ip {args} {
  set i [lsearch $args -module_name]
  if {$i < 0} { fail "create_ip without -module_name" } else { lappend ::ips [lindex $args [expr {$i + 1}]] }
}
proc get_ips {name} {
  if {[lsearch $::ips $name] < 0} { fail "get_ips $name: no such IP created" }
  return $name
}
proc generate_target {args} {}
proc synth_ip {args} {}
proc read_verilog {files} { foreach f $files { need_file $f } }
proc read_xdc {args} { set f [lindex $args end]; need_file $f; lappend ::xdcs $f }
proc synth_design {args} {
  set i [lsearch $args -top]
  set ::synth_top [lindex $args [expr {$i + 1}]]
}
foreach c {report_utilization opt_design place_design phys_opt_design route_design
           report_timing_summary report_clock_interaction report_cdc write_checkpoint} {
  proc $c {args} {}
}
proc get_timing_paths {args} { return path }
proc get_property {prop obj} { return 0.100 }
proc write_bitstream {args} { set ::bitstream [lindex $args end] }
set ::ips {}
set ::xdcs {}
set ::bitstream ""
rename exit real_exit
proc exit {{code 0}} { fail "build.tcl exits with $code under nominal timing" }

set saved_argv $argv
set argv {}
if {[catch {source [file join $out_dir build.tcl]} msg]} { fail "build.tcl: $msg" }
set argv $saved_argv
if {$::bitstream eq ""} { fail "build.tcl never writes a bitstream" }
if {![info exists ::synth_top]} { fail "build.tcl never synthesises" } else { puts "top $::synth_top" }
foreach ip $::ips { puts "ip $ip" }
puts "part $board_part"

# ---- XDC commands ----
# A placed port: "loc NAME" (PACKAGE_PIN given directly or in a -dict).
proc set_property {args} {
  set target [lindex $args end]
  if {[lindex $target 0] ne "port"} return
  if {[lsearch [lrange $args 0 end-1] PACKAGE_PIN] >= 0 || [string match "*PACKAGE_PIN*" [lrange $args 0 end-1]]} {
    foreach p [lindex $target 1] { puts "loc $p" }
  }
}
proc get_ports {pat} { foreach p $pat { puts "port $p" }; return [list port $pat] }
proc get_pins {args} { puts "pin [lindex $args end]"; return [list pin [lindex $args end]] }
proc get_cells {args} {
  set what [lindex $args end]
  if {[regexp {REF_NAME == ([A-Za-z_][A-Za-z0-9_]*)} $what -> module]} {
    puts "ref $module"
    return [list "@$module"]
  }
  puts "cell $what"
  return [list cell $what]
}
proc get_clocks {args} { return [list clock [lindex $args end]] }
# A clock's period: any positive number will do for the parse.
proc get_property {args} { return 3.103 }
proc current_design {args} { return design }
proc create_clock {args} {
  set n [lindex $args [expr {[lsearch $args -name] + 1}]]
  lassign [lindex $args end] kind what
  puts "clock $n $kind $what"
}
proc create_generated_clock {args} {
  set n [lindex $args [expr {[lsearch $args -name] + 1}]]
  lassign [lindex $args end] kind what
  puts "clock $n $kind $what"
}
foreach c {set_false_path set_max_delay set_clock_groups set_input_delay set_output_delay
           set_multicycle_path} {
  proc $c {args} {}
}
foreach x $::xdcs {
  if {[catch {source $x} msg]} { fail "[file tail $x]: $msg" }
}
real_exit [expr {$errors ? 1 : 0}]
