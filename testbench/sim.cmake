# panama-sim: packet-level replay of pcaps through the SystemC model or the Verilated RTL.
# Included from testbench/CMakeLists.txt; paths relative to this file. Its RTL engine is the
# stand-in's (standin/engines/rtl_engine.cpp).
if(TARGET panama_model)
  add_executable(panama-sim ${CMAKE_CURRENT_LIST_DIR}/panama_sim.cpp ${CMAKE_CURRENT_LIST_DIR}/traffic.cpp)
  target_link_libraries(panama-sim PRIVATE panama_rtl_engine panama_model panama_wire panama_config CLI11::CLI11)
  set_target_properties(panama-sim PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
