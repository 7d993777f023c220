# Verilator testbenches of single blocks of the full accelerator (--module top), each verilated
# with its own top module. Included from testbench/CMakeLists.txt; the tests are registered here
# (labels "rtl;<block>").

# panama_parser_tb(NAME FRAMES GEN_ARGS...): generate a top configuration, verilate its parser with
# testbench/parser_tb.cpp and the wire library (compiled in: the expected side of the
# scoreboard), and register ctest parser.NAME.
function(panama_parser_tb name frames)
  set(gen_dir ${CMAKE_CURRENT_BINARY_DIR}/parser_${name}/rtl)
  set(obj_dir ${CMAKE_CURRENT_BINARY_DIR}/parser_${name}/obj)
  set(exe ${obj_dir}/tb_parser_${name})
  add_custom_command(
    OUTPUT ${gen_dir}/config.json ${gen_dir}/panama_parser.v
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${gen_dir}
    COMMAND $<TARGET_FILE:panama-gen> ${ARGN} --module top --out ${gen_dir}
    DEPENDS panama-gen
    COMMENT "panama-gen parser_${name}")
  add_custom_command(
    OUTPUT ${exe}
    COMMAND ${VERILATOR} --cc --exe --build -j 1 -O3 --x-assign fast --x-initial fast
            -Wno-fatal --Mdir ${obj_dir} -o tb_parser_${name} --prefix Vparser --top-module panama_parser
            -CFLAGS "-O1 -std=c++17 -I${CMAKE_SOURCE_DIR}/wire -I${CMAKE_SOURCE_DIR}/testbench"
            ${gen_dir}/panama_parser.v ${CMAKE_CURRENT_SOURCE_DIR}/parser_tb.cpp ${CMAKE_SOURCE_DIR}/wire/wire.cpp
    DEPENDS ${gen_dir}/config.json ${gen_dir}/panama_parser.v ${CMAKE_CURRENT_SOURCE_DIR}/parser_tb.cpp
            ${CMAKE_SOURCE_DIR}/wire/wire.cpp ${CMAKE_SOURCE_DIR}/wire/wire.h
    COMMENT "verilator parser_${name}")
  add_custom_target(tb_parser_${name} ALL DEPENDS ${exe})
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
