# Board-shell blocks (rtl/panama_axis_async_fifo.v, rtl/panama_reset_sync.v) and the board checks.
# Hand-written RTL, so verilated by a custom command like the generated testbenches.
set(PANAMA_BOARD_TB_DIR ${CMAKE_CURRENT_BINARY_DIR}/board)
set(PANAMA_CDC_SOURCES ${CMAKE_SOURCE_DIR}/rtl/panama_reset_sync.v
    ${CMAKE_SOURCE_DIR}/rtl/panama_axis_async_fifo.v ${CMAKE_CURRENT_SOURCE_DIR}/board/cdc_tb_top.v)
add_custom_command(
  OUTPUT ${PANAMA_BOARD_TB_DIR}/cdc/cdc_tb
  COMMAND ${VERILATOR} --cc --exe --build -j 1 -O3 -Wno-fatal --Mdir ${PANAMA_BOARD_TB_DIR}/cdc
          -o cdc_tb --top-module cdc_tb_top -CFLAGS "-O1 -std=c++17"
          ${PANAMA_CDC_SOURCES} ${CMAKE_CURRENT_SOURCE_DIR}/board/cdc_tb.cpp
  DEPENDS ${PANAMA_CDC_SOURCES} ${CMAKE_CURRENT_SOURCE_DIR}/board/cdc_tb.cpp
  COMMENT "verilator cdc_tb")
add_custom_target(tb_cdc ALL DEPENDS ${PANAMA_BOARD_TB_DIR}/cdc/cdc_tb)

add_test(NAME board.cdc_fifo COMMAND ${PANAMA_BOARD_TB_DIR}/cdc/cdc_tb --cycles 50000 --seed 1)
set_tests_properties(board.cdc_fifo PROPERTIES LABELS "board;rtl" PASS_REGULAR_EXPRESSION "cdc_tb: PASS")

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

# SipHash-2-4 (management authentication) against the paper's vectors and a C++ implementation.
add_custom_command(
  OUTPUT ${PANAMA_BOARD_TB_DIR}/siphash/siphash_tb
  COMMAND ${VERILATOR} --cc --exe --build -j 1 -O3 -Wno-fatal --Mdir ${PANAMA_BOARD_TB_DIR}/siphash
          -o siphash_tb --top-module panama_siphash
          -CFLAGS "-O1 -std=c++17 -I${CMAKE_CURRENT_SOURCE_DIR}/board"
          ${CMAKE_SOURCE_DIR}/rtl/panama_siphash.v ${CMAKE_CURRENT_SOURCE_DIR}/board/siphash_tb.cpp
  DEPENDS ${CMAKE_SOURCE_DIR}/rtl/panama_siphash.v ${CMAKE_CURRENT_SOURCE_DIR}/board/siphash_tb.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/board/siphash_ref.h
  COMMENT "verilator siphash_tb")
add_custom_target(tb_siphash ALL DEPENDS ${PANAMA_BOARD_TB_DIR}/siphash/siphash_tb)
add_test(NAME board.siphash COMMAND ${PANAMA_BOARD_TB_DIR}/siphash/siphash_tb)
set_tests_properties(board.siphash PROPERTIES LABELS "board;rtl" PASS_REGULAR_EXPRESSION "siphash_tb: PASS")

# Frame-atomic two-input merge (m_agg onto a port's transmit).
add_custom_command(
  OUTPUT ${PANAMA_BOARD_TB_DIR}/arb2/arb2_tb
  COMMAND ${VERILATOR} --cc --exe --build -j 1 -O3 -Wno-fatal --Mdir ${PANAMA_BOARD_TB_DIR}/arb2
          -o arb2_tb --top-module panama_axis_arb2 -CFLAGS "-O1 -std=c++17"
          ${CMAKE_SOURCE_DIR}/rtl/panama_axis_arb2.v ${CMAKE_CURRENT_SOURCE_DIR}/board/arb2_tb.cpp
  DEPENDS ${CMAKE_SOURCE_DIR}/rtl/panama_axis_arb2.v ${CMAKE_CURRENT_SOURCE_DIR}/board/arb2_tb.cpp
  COMMENT "verilator arb2_tb")
add_custom_target(tb_arb2 ALL DEPENDS ${PANAMA_BOARD_TB_DIR}/arb2/arb2_tb)
add_test(NAME board.arb2 COMMAND ${PANAMA_BOARD_TB_DIR}/arb2/arb2_tb)
set_tests_properties(board.arb2 PROPERTIES LABELS "board;rtl" PASS_REGULAR_EXPRESSION "arb2_tb: PASS")

# Management requests: good, wrong key, tampered, replayed, wrong port, malformed.
add_custom_command(
  OUTPUT ${PANAMA_BOARD_TB_DIR}/mgmt/mgmt_tb
  COMMAND ${VERILATOR} --cc --exe --build -j 1 -O3 -Wno-fatal --Mdir ${PANAMA_BOARD_TB_DIR}/mgmt
          -o mgmt_tb --top-module panama_mgmt -GN=4 -GMGMT_PORTS=1
          -CFLAGS "-O1 -std=c++17 -I${CMAKE_CURRENT_SOURCE_DIR}/board"
          ${CMAKE_SOURCE_DIR}/rtl/panama_mgmt.v ${CMAKE_SOURCE_DIR}/rtl/panama_siphash.v
          ${CMAKE_CURRENT_SOURCE_DIR}/board/mgmt_tb.cpp
  DEPENDS ${CMAKE_SOURCE_DIR}/rtl/panama_mgmt.v ${CMAKE_SOURCE_DIR}/rtl/panama_siphash.v
          ${CMAKE_CURRENT_SOURCE_DIR}/board/mgmt_tb.cpp ${CMAKE_CURRENT_SOURCE_DIR}/board/siphash_ref.h
  COMMENT "verilator mgmt_tb")
add_custom_target(tb_mgmt ALL DEPENDS ${PANAMA_BOARD_TB_DIR}/mgmt/mgmt_tb)
add_test(NAME board.mgmt COMMAND ${PANAMA_BOARD_TB_DIR}/mgmt/mgmt_tb)
set_tests_properties(board.mgmt PROPERTIES LABELS "board;rtl" PASS_REGULAR_EXPRESSION "mgmt_tb: PASS")

# One shell port as the boards use it (both FIFOs and the m_agg merge) across the MAC/core ratio.
set(PANAMA_PORT_CDC_SOURCES ${CMAKE_SOURCE_DIR}/rtl/panama_port_cdc.v
    ${CMAKE_SOURCE_DIR}/rtl/panama_axis_async_fifo.v ${CMAKE_SOURCE_DIR}/rtl/panama_axis_arb2.v)
add_custom_command(
  OUTPUT ${PANAMA_BOARD_TB_DIR}/port_cdc/port_cdc_tb
  COMMAND ${VERILATOR} --cc --exe --build -j 1 -O3 -Wno-fatal --Mdir ${PANAMA_BOARD_TB_DIR}/port_cdc
          -o port_cdc_tb --top-module panama_port_cdc -GDATA_WIDTH=64 -GADDR_WIDTH=6 -GAGG=1
          -CFLAGS "-O1 -std=c++17" ${PANAMA_PORT_CDC_SOURCES}
          ${CMAKE_CURRENT_SOURCE_DIR}/board/port_cdc_tb.cpp
  DEPENDS ${PANAMA_PORT_CDC_SOURCES} ${CMAKE_CURRENT_SOURCE_DIR}/board/port_cdc_tb.cpp
  COMMENT "verilator port_cdc_tb")
add_custom_target(tb_port_cdc ALL DEPENDS ${PANAMA_BOARD_TB_DIR}/port_cdc/port_cdc_tb)
add_test(NAME board.port_cdc COMMAND ${PANAMA_BOARD_TB_DIR}/port_cdc/port_cdc_tb)
set_tests_properties(board.port_cdc PROPERTIES LABELS "board;rtl" PASS_REGULAR_EXPRESSION "port_cdc_tb: PASS")
