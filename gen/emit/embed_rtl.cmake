# Turns the hand-written files of rtl/ (the fixed blocks' Verilog, the board shells' Verilog, XDC
# and Tcl) into a C++ source holding their text, so that an installed panama-gen needs no source
# tree (docs/generator.md, "Fixed blocks"). Names are paths relative to rtl/.
# Run with cmake -P and -DRTL_DIR=<dir> -DOUT=<file.cpp>.
file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${RTL_DIR}"
     "${RTL_DIR}/*.v" "${RTL_DIR}/*.vh" "${RTL_DIR}/*.xdc" "${RTL_DIR}/*.tcl")
list(SORT files)
set(body "// Generated from rtl/ by gen/emit/embed_rtl.cmake; do not edit.\n#include \"rtl_lib.h\"\n\nnamespace panama {\n\nconst std::vector<RtlSource>& rtl_sources() {\n  static const std::vector<RtlSource> sources = {\n")
foreach(name ${files})
  set(f "${RTL_DIR}/${name}")
  file(READ "${f}" text)
  if(text MATCHES "\\)panama_rtl\"")
    message(FATAL_ERROR "${f} contains the raw-string delimiter )panama_rtl\"")
  endif()
  # A raw string literal is limited in length by some compilers: split it every 8000 characters.
  string(LENGTH "${text}" len)
  set(lit "")
  set(pos 0)
  while(pos LESS len)
    string(SUBSTRING "${text}" ${pos} 8000 chunk)
    string(APPEND lit "R\"panama_rtl(${chunk})panama_rtl\"\n")
    math(EXPR pos "${pos} + 8000")
  endwhile()
  if(lit STREQUAL "")
    set(lit "\"\"")
  endif()
  string(APPEND body "      {\"${name}\",\n${lit}},\n")
endforeach()
string(APPEND body "  };\n  return sources;\n}\n\n}  // namespace panama\n")
# Write only on a change, so that an unchanged rtl/ rebuilds nothing.
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL body)
  file(WRITE "${OUT}" "${body}")
endif()
