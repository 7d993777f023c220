# panama-sim: packet-level replay of pcaps through the SystemC model (and, with issue 4, the RTL).
# Included from testbench/CMakeLists.txt; paths relative to this file.
if(TARGET panama_model)
  add_executable(panama-sim ${CMAKE_CURRENT_LIST_DIR}/panama_sim.cpp)
  target_link_libraries(panama-sim PRIVATE panama_model panama_wire panama_config CLI11::CLI11)
  set_target_properties(panama-sim PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endif()
