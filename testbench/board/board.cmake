# Board-shell blocks (rtl/panama_axis_async_fifo.v, rtl/panama_reset_sync.v) and the board checks.
# Hand-written RTL, so verilated by a custom command like the generated testbenches.
set(PANAMA_BOARD_TB_DIR ${CMAKE_CURRENT_BINARY_DIR}/board)

# panama_board_tb(NAME TOP module TEST test-name [ARGS test-args...] SOURCES verilog...
#                 [FLAGS verilator-flags...] [CFLAGS c++-flags...] [DEPENDS more-inputs...] [TB other]):
# verilate board/NAME_tb.cpp (or board/OTHER_tb.cpp)
# with the Verilog sources into build/testbench/board/NAME/NAME_tb (target tb_NAME) and register
# ctest TEST, which passes on the testbench's "NAME_tb: PASS" line.
# The shared constants (panama_defs.vh: wire offsets, protocol constants; panama_proto.vh: the
# protocol constants as macros for parameter defaults) for the board blocks
# verilated from rtl/ (they include it, like the core's blocks; panama-gen inlines it in its
# outputs). Only the configuration-independent constants are read, so any configuration will do.
set(PANAMA_BOARD_DEFS_DIR ${PANAMA_BOARD_TB_DIR}/defs)
add_custom_command(
  OUTPUT ${PANAMA_BOARD_DEFS_DIR}/panama_defs.vh ${PANAMA_BOARD_DEFS_DIR}/panama_proto.vh
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${PANAMA_BOARD_DEFS_DIR}
  COMMAND $<TARGET_FILE:panama-gen> --ports 4 --gbps 10 --mhz 200 --out ${PANAMA_BOARD_DEFS_DIR}
  DEPENDS panama-gen
  COMMENT "panama-gen (panama_defs.vh for the board testbenches)")

function(panama_board_tb name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TOP;TEST;TB" "ARGS;SOURCES;FLAGS;CFLAGS;DEPENDS")
  string(JOIN " " cflags_extra ${arg_CFLAGS})
  set(dir ${PANAMA_BOARD_TB_DIR}/${name})
  set(tb_src ${CMAKE_CURRENT_SOURCE_DIR}/board/${name}_tb.cpp)
  if(arg_TB)  # another name's testbench, built differently (TB mgmt_eth)
    set(tb_src ${CMAKE_CURRENT_SOURCE_DIR}/board/${arg_TB}_tb.cpp)
  endif()
  add_custom_command(
    OUTPUT ${dir}/${name}_tb
    COMMAND ${VERILATOR} --cc --exe --build -j 1 -O3 -Wno-fatal -Werror-USERERROR -I${CMAKE_SOURCE_DIR}/rtl -I${PANAMA_BOARD_DEFS_DIR} --Mdir ${dir}
            -o ${name}_tb --top-module ${arg_TOP} ${arg_FLAGS}
            -CFLAGS "-O1 -std=c++17 -I${CMAKE_CURRENT_SOURCE_DIR}/board -I${CMAKE_CURRENT_SOURCE_DIR} -I${CMAKE_SOURCE_DIR}/standin/engines -I${CMAKE_SOURCE_DIR}/wire ${cflags_extra}"
            ${arg_SOURCES} ${tb_src}
    DEPENDS ${arg_SOURCES} ${tb_src} ${CMAKE_CURRENT_SOURCE_DIR}/board/board_tb.h ${CMAKE_SOURCE_DIR}/rtl/panama_require.vh
            ${PANAMA_BOARD_DEFS_DIR}/panama_defs.vh ${PANAMA_BOARD_DEFS_DIR}/panama_proto.vh
            ${CMAKE_SOURCE_DIR}/wire/protocol.h
            ${CMAKE_SOURCE_DIR}/standin/engines/vl_util.h ${arg_DEPENDS}
    COMMENT "verilator ${name}_tb"
    VERBATIM)
  add_custom_target(tb_${name} ALL DEPENDS ${dir}/${name}_tb)
  add_test(NAME ${arg_TEST} COMMAND ${dir}/${name}_tb ${arg_ARGS})
  set(pass ${name})
  if(arg_TB)
    set(pass ${arg_TB})
  endif()
  set_tests_properties(${arg_TEST} PROPERTIES LABELS "board;rtl" PASS_REGULAR_EXPRESSION "${pass}_tb: PASS")
endfunction()

panama_board_tb(cdc TOP cdc_tb_top TEST board.cdc_fifo ARGS --cycles 50000 --seed 1
                SOURCES ${CMAKE_SOURCE_DIR}/rtl/panama_reset_sync.v ${CMAKE_SOURCE_DIR}/rtl/panama_axis_async_fifo.v
                        ${CMAKE_CURRENT_SOURCE_DIR}/board/cdc_tb_top.v)

# Board shells as panama-gen --board writes them: build script and XDC checked with Vivado's
# commands stubbed, Yosys elaboration with the whole core, every clock constrained, synth_xilinx
# of the shell for the board's family (tests/board_check.sh; about 30 s (sume) / 50 s (u250)).
foreach(board sume u250)
  add_test(NAME board.shell.${board}
           COMMAND ${CMAKE_SOURCE_DIR}/tests/board_check.sh $<TARGET_FILE:panama-gen>
                   ${PANAMA_BOARD_TB_DIR}/shell_${board} ${board})
  set_tests_properties(board.shell.${board} PROPERTIES LABELS "board" TIMEOUT 600
                       SKIP_RETURN_CODE 77)
endforeach()
# The standalone shell (panama_l2sw inside) of the 4 x 10G board.
add_test(NAME board.shell.sume_standalone
         COMMAND ${CMAKE_SOURCE_DIR}/tests/board_check.sh $<TARGET_FILE:panama-gen>
                 ${PANAMA_BOARD_TB_DIR}/shell_sume_standalone sume --standalone)
set_tests_properties(board.shell.sume_standalone PROPERTIES LABELS "board" TIMEOUT 600 SKIP_RETURN_CODE 77)

# SipHash-2-4 (management authentication) against the paper's vectors and a C++ implementation.
panama_board_tb(siphash TOP panama_siphash TEST board.siphash SOURCES ${CMAKE_SOURCE_DIR}/rtl/panama_siphash.v
                DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/board/siphash_ref.h)

# Frame-atomic two-input merge (m_agg onto a port's transmit).
panama_board_tb(arb2 TOP panama_axis_arb2 TEST board.arb2 SOURCES ${CMAKE_SOURCE_DIR}/rtl/panama_axis_arb2.v)

# Management requests: good, wrong key, tampered, replayed, wrong port, malformed.
panama_board_tb(mgmt TOP panama_mgmt TEST board.mgmt FLAGS -GPORTS=4 -GMGMT_PORTS=1
                SOURCES ${CMAKE_SOURCE_DIR}/rtl/panama_mgmt.v ${CMAKE_SOURCE_DIR}/rtl/panama_siphash.v
                DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/board/siphash_ref.h)

# One shell port as the boards use it (both FIFOs and the m_agg merge) across the MAC/core ratio.
panama_board_tb(port_cdc TOP panama_port_cdc TEST board.port_cdc FLAGS -GDATA_W=64 -GADDR_W=6 -GAGG=1
                SOURCES ${CMAKE_SOURCE_DIR}/rtl/panama_port_cdc.v ${CMAKE_SOURCE_DIR}/rtl/panama_axis_async_fifo.v
                        ${CMAKE_SOURCE_DIR}/rtl/panama_axis_arb2.v)

# Management over Ethernet through the whole board shell (CDC, panama_mgmt_eth, the generated
# core) as panama-gen --board sume writes it, with its own key, MAC and IPv4 address.
set(mgmt_eth_gen ${PANAMA_BOARD_TB_DIR}/mgmt_eth/gen)
add_custom_command(
  OUTPUT ${mgmt_eth_gen}/filelist.f ${mgmt_eth_gen}/regmap.json
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${mgmt_eth_gen}
  COMMAND $<TARGET_FILE:panama-gen> --board sume --insecure-dev-key --out ${mgmt_eth_gen} 2>/dev/null
  DEPENDS panama-gen
  COMMENT "panama-gen --board sume (mgmt_eth)")
panama_board_tb(mgmt_eth TOP panama_board_shell TEST board.mgmt_eth ARGS --regmap ${mgmt_eth_gen}/regmap.json
                FLAGS -GPORTS=4 -GDATA_W=64 -GADDR_W=14 -GAGG_PORT=3 -GFIFO_ADDR_W=9 "-GMGMT_PORTS=4'b0001"
                      "-GMGMT_KEY=128'h3c4fcf098815f7aba6d2ae2816157e2b" "-GMGMT_MAC=48'h02504e4d0007"
                      "-GMGMT_IP=32'hc0a83902" -F ${mgmt_eth_gen}/filelist.f
                      -LDFLAGS "$<TARGET_FILE:panama_wire> -lpcap"
                CFLAGS -I${CMAKE_SOURCE_DIR}/wire
                DEPENDS ${mgmt_eth_gen}/filelist.f panama_wire ${CMAKE_CURRENT_SOURCE_DIR}/board/siphash_ref.h)

# The management path under randomised abuse (issue 33): 100 random and mutated management
# frames, each followed by a read-back of the registers the requests use (about 4 s).
# scripts/regress runs 300, and 2000 per seed with --full.
add_test(NAME board.mgmt_eth.fuzz COMMAND ${PANAMA_BOARD_TB_DIR}/mgmt_eth/mgmt_eth_tb --regmap ${mgmt_eth_gen}/regmap.json
                                          --fuzz 100 --seed 1)
set_tests_properties(board.mgmt_eth.fuzz PROPERTIES LABELS "board;rtl" PASS_REGULAR_EXPRESSION "mgmt_eth_tb: PASS")

# The same at 512 bits on two ports, as panama-gen --board u250 writes it.
set(mgmt_eth_u250_gen ${PANAMA_BOARD_TB_DIR}/mgmt_eth_u250/gen)
add_custom_command(
  OUTPUT ${mgmt_eth_u250_gen}/filelist.f ${mgmt_eth_u250_gen}/regmap.json
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${mgmt_eth_u250_gen}
  COMMAND $<TARGET_FILE:panama-gen> --board u250 --insecure-dev-key --out ${mgmt_eth_u250_gen} 2>/dev/null
  DEPENDS panama-gen
  COMMENT "panama-gen --board u250 (mgmt_eth_u250)")
panama_board_tb(mgmt_eth_u250 TB mgmt_eth TOP panama_board_shell TEST board.mgmt_eth_u250
                ARGS --regmap ${mgmt_eth_u250_gen}/regmap.json
                FLAGS -GPORTS=2 -GDATA_W=512 -GADDR_W=14 -GAGG_PORT=1 -GFIFO_ADDR_W=6 "-GMGMT_PORTS=2'b01"
                      "-GMGMT_KEY=128'h3c4fcf098815f7aba6d2ae2816157e2b" "-GMGMT_MAC=48'h02504e4d0007"
                      "-GMGMT_IP=32'hc0a83902" -F ${mgmt_eth_u250_gen}/filelist.f
                      -LDFLAGS "$<TARGET_FILE:panama_wire> -lpcap"
                CFLAGS -I${CMAKE_SOURCE_DIR}/wire -DTB_PORTS=2 -DTB_W=512 -DTB_AGG_PORT=1
                DEPENDS ${mgmt_eth_u250_gen}/filelist.f panama_wire ${CMAKE_CURRENT_SOURCE_DIR}/board/siphash_ref.h)

add_test(NAME board.mgmt_eth_u250.fuzz
         COMMAND ${PANAMA_BOARD_TB_DIR}/mgmt_eth_u250/mgmt_eth_u250_tb --regmap ${mgmt_eth_u250_gen}/regmap.json
                 --fuzz 60 --seed 2)
set_tests_properties(board.mgmt_eth_u250.fuzz PROPERTIES LABELS "board;rtl" PASS_REGULAR_EXPRESSION "mgmt_eth_tb: PASS")

# panama-host controller --target against the Verilated shell (mgmt_eth_tb --serve), good and
# wrong key (tests/mgmt_controller.sh; UDP on 127.0.0.1).
add_test(NAME board.mgmt_controller
         COMMAND ${CMAKE_SOURCE_DIR}/tests/mgmt_controller.sh $<TARGET_FILE:panama-host>
                 ${PANAMA_BOARD_TB_DIR}/mgmt_eth/mgmt_eth_tb ${mgmt_eth_gen} ${PANAMA_BOARD_TB_DIR}/mgmt_controller)
set_tests_properties(board.mgmt_controller PROPERTIES LABELS "board;host" TIMEOUT 300
                     PASS_REGULAR_EXPRESSION "mgmt_controller: PASS")

# The standalone switch functions (forwarding table, replication, ECN egress queues) against the
# forwarding rules written out in the testbench.
# The testbench's MAXB is 1600 bytes in beats.
panama_board_tb(l2sw TOP panama_l2sw TEST board.l2sw FLAGS -GPORTS=4 -GDATA_W=64 -GCONTEXTS=2 -GFDB=4 -GQAW=9 -GMAXB=200
                SOURCES ${CMAKE_SOURCE_DIR}/rtl/panama_l2sw.v CFLAGS -DTB_QAW=9)
# Two 512-bit ports as the u250 uses: the TOS byte and the IPv4 checksum in one beat.
panama_board_tb(l2sw_u250 TB l2sw TOP panama_l2sw TEST board.l2sw_u250 FLAGS -GPORTS=2 -GDATA_W=512 -GCONTEXTS=2 -GFDB=4 -GQAW=6 -GMAXB=25
                SOURCES ${CMAKE_SOURCE_DIR}/rtl/panama_l2sw.v CFLAGS -DTB_N=2 -DTB_W=512 -DTB_QAW=6)
