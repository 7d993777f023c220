# panama-sim: packet-level replay of pcaps through the SystemC model or the Verilated RTL.
# Included from testbench/CMakeLists.txt; paths relative to this file.
if(TARGET panama_model)
  # The RTL engine verilates a design on first use, linking the harness with these libraries;
  # panama-sim and the switch stand-in (panama-host) share it.
  find_library(PANAMA_PCAP_LIB pcap REQUIRED)
  pkg_check_modules(SYSTEMC_H REQUIRED systemc)
  string(REPLACE ";" " " sc_cflags "${SYSTEMC_H_CFLAGS}")
  set(harness_archives "$<TARGET_FILE:panama_model> $<TARGET_FILE:panama_wire> $<TARGET_FILE:panama_config>")
  string(REPLACE ";" " " sc_ldflags "${SYSTEMC_H_LDFLAGS}")
  add_library(panama_rtl_engine STATIC ${CMAKE_CURRENT_LIST_DIR}/rtl_engine.cpp)
  target_include_directories(panama_rtl_engine PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(panama_rtl_engine PUBLIC panama_model)
  target_compile_definitions(panama_rtl_engine PRIVATE
    PANAMA_SOURCE_DIR="${CMAKE_SOURCE_DIR}" PANAMA_BUILD_DIR="${CMAKE_BINARY_DIR}"
    PANAMA_HARNESS_CFLAGS="${sc_cflags}"
    PANAMA_HARNESS_ARCHIVES="${harness_archives}"
    PANAMA_HARNESS_SYSLIBS="${sc_ldflags} ${PANAMA_PCAP_LIB}")
  # The harness links these archives: build them before anything can verilate a design.
  add_dependencies(panama_rtl_engine panama_model panama_wire panama_config)

  add_executable(panama-sim ${CMAKE_CURRENT_LIST_DIR}/panama_sim.cpp ${CMAKE_CURRENT_LIST_DIR}/traffic.cpp)
  target_link_libraries(panama-sim PRIVATE panama_rtl_engine panama_model panama_wire panama_config CLI11::CLI11)
  set_target_properties(panama-sim PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
