# Verilator testbenches of single blocks of the full accelerator (--module top), each verilated
# with its own top module. Included from testbench/CMakeLists.txt; the tests are registered here
# (labels "rtl;<block>").

# panama_parser_tb(NAME FRAMES GEN_ARGS...): generate a top configuration, verilate its parser with
# testbench/parser_tb.cpp and the wire library (compiled in: the expected side of the
# scoreboard), and register ctest parser.NAME.
function(panama_parser_tb name frames)
  set(gen_dir ${CMAKE_CURRENT_BINARY_DIR}/parser_${name}/rtl)
  set(exe ${CMAKE_CURRENT_BINARY_DIR}/parser_${name}/obj/tb_parser_${name})
  panama_generate(${gen_dir} parser_${name} top OUTPUT ${gen_dir}/config.json ${gen_dir}/panama_parser.v ARGS ${ARGN})
  panama_verilate_tb(${exe} PREFIX Vparser TOP panama_parser
    INCLUDES ${CMAKE_SOURCE_DIR}/wire ${CMAKE_SOURCE_DIR}/testbench ${CMAKE_SOURCE_DIR}/standin/engines
    INPUTS ${gen_dir}/panama_parser.v ${CMAKE_CURRENT_SOURCE_DIR}/parser_tb.cpp ${CMAKE_SOURCE_DIR}/wire/wire.cpp
    DEPENDS ${gen_dir}/config.json ${gen_dir}/panama_parser.v ${CMAKE_CURRENT_SOURCE_DIR}/parser_tb.cpp
            ${CMAKE_SOURCE_DIR}/standin/engines/vl_util.h ${CMAKE_SOURCE_DIR}/wire/wire.cpp ${CMAKE_SOURCE_DIR}/wire/wire.h)
  add_test(NAME parser.${name} COMMAND ${exe} --config ${gen_dir}/config.json --frames ${frames} --seed 1 --idle 20)
  set_tests_properties(parser.${name} PROPERTIES LABELS "rtl;parser")
endfunction()

# Bus widths 64 (header over seven beats) to 4096 (one beat holds the whole header); fp32 and
# the 2-byte formats; fp16 with the largest MAX_ELEMS, whose well-formed frames reach 65548 bytes.
panama_parser_tb(w64_fp32        50000 --ports 4 --gbps 10  --mhz 200)
panama_parser_tb(w64_fp16_maxcnt 4000  --ports 2 --gbps 10  --mhz 200 --format fp16 --max-elems 32742
                 --contexts 1 --buffer-kib 256)
panama_parser_tb(w128_fp16       50000 --ports 3 --gbps 25  --mhz 200 --format fp16)
panama_parser_tb(w256_bf16       50000 --ports 2 --gbps 40  --mhz 200 --format bf16 --max-elems 100)
panama_parser_tb(w512_fp32       50000 --ports 8 --gbps 100 --mhz 250)
panama_parser_tb(w1024_fp16      50000 --ports 2 --gbps 200 --mhz 250 --format fp16)
panama_parser_tb(w4096_fp32      50000 --ports 2 --gbps 800 --mhz 200)
# Above 250 MHz the descriptor takes two stages (config.json desc_stages = 2).
panama_parser_tb(w64_fp32_322    50000 --ports 8 --gbps 10  --mhz 322)
panama_parser_tb(w512_fp16_322   50000 --ports 2 --gbps 100 --mhz 322.265625 --format fp16)
panama_parser_tb(w1024_fp32_400  20000 --ports 2 --gbps 200 --mhz 400)

# panama_regs_tb(NAME CYCLES GEN_ARGS...): generate a top configuration, verilate its register file
# with testbench/regs_tb.cpp, linked against the SystemC model's RegFile (the reference it runs in
# lockstep with), and register ctest regs.NAME. --public-flat-rw lets the testbench preset the
# counter array (saturation without 2^64 pulses).
if(TARGET panama_model)
  find_library(PANAMA_REGS_PCAP pcap)
  function(panama_regs_tb name cycles)
    set(gen_dir ${CMAKE_CURRENT_BINARY_DIR}/regs_${name}/rtl)
    set(exe ${CMAKE_CURRENT_BINARY_DIR}/regs_${name}/obj/tb_regs_${name})
    set(libs $<TARGET_FILE:panama_model> $<TARGET_FILE:panama_wire> $<TARGET_FILE:panama_config>)
    set(ldflags "-lsystemc")
    if(PANAMA_REGS_PCAP)
      set(ldflags "${ldflags} ${PANAMA_REGS_PCAP}")
    endif()
    panama_generate(${gen_dir} regs_${name} top OUTPUT ${gen_dir}/config.json ${gen_dir}/panama_regs.v ARGS ${ARGN})
    panama_verilate_tb(${exe} PREFIX Vregs TOP panama_regs FLAGS --public-flat-rw LDFLAGS "${ldflags}"
      INCLUDES ${CMAKE_SOURCE_DIR}/wire ${CMAKE_SOURCE_DIR}/gen/config ${CMAKE_SOURCE_DIR}/systemc_model
               ${CMAKE_SOURCE_DIR}/numerics ${CMAKE_SOURCE_DIR}/testbench ${CMAKE_SOURCE_DIR}/standin/engines
      INPUTS ${gen_dir}/panama_regs.v ${CMAKE_CURRENT_SOURCE_DIR}/regs_tb.cpp ${libs}
      DEPENDS ${gen_dir}/config.json ${gen_dir}/panama_regs.v ${CMAKE_CURRENT_SOURCE_DIR}/regs_tb.cpp
              ${CMAKE_CURRENT_SOURCE_DIR}/axil.h ${CMAKE_SOURCE_DIR}/standin/engines/vl_util.h panama_model panama_wire
              panama_config)
    add_test(NAME regs.${name} COMMAND ${exe} --config ${gen_dir}/config.json --cycles ${cycles} --seed 1)
    set_tests_properties(regs.${name} PROPERTIES LABELS "rtl;regs")
  endfunction()

  panama_regs_tb(p2_c1  200000 --ports 2  --gbps 10 --mhz 200 --contexts 1)
  panama_regs_tb(p4_c8  200000 --ports 4  --gbps 10 --mhz 200 --contexts 8)
  panama_regs_tb(p33_c3 100000 --ports 33 --gbps 10 --mhz 200 --contexts 3)
endif()
