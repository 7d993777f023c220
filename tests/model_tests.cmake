# Tests of the wire-format library, the register map, the SystemC model and panama-sim.
# Included from tests/CMakeLists.txt; paths are relative to this file. Each target is defined
# only when its sources exist, so that a partial checkout still configures.
set(PANAMA_CONFORMANCE_DIR ${CMAKE_CURRENT_LIST_DIR}/conformance)
set(_mt ${CMAKE_CURRENT_LIST_DIR})

if(TARGET panama_wire AND EXISTS ${_mt}/test_wire.cpp)
  add_executable(test_wire ${_mt}/test_wire.cpp)
  target_link_libraries(test_wire PRIVATE panama_wire GTest::gtest_main)
  gtest_discover_tests(test_wire PROPERTIES LABELS "wire")
endif()

if(TARGET panama_model AND EXISTS ${_mt}/test_regmap.cpp)
  add_executable(test_regmap ${_mt}/test_regmap.cpp)
  target_link_libraries(test_regmap PRIVATE panama_model GTest::gtest_main)
  gtest_discover_tests(test_regmap PROPERTIES LABELS "regmap")
endif()

if(TARGET panama_model AND EXISTS ${_mt}/test_model.cpp AND EXISTS ${_mt}/test_model_random.cpp)
  add_executable(test_model ${_mt}/test_model.cpp ${_mt}/test_model_random.cpp)
  target_link_libraries(test_model PRIVATE panama_model GTest::gtest_main)
  gtest_discover_tests(test_model PROPERTIES LABELS "model" DISCOVERY_TIMEOUT 60)
endif()

if(TARGET panama-sim AND TARGET panama-gen AND EXISTS ${_mt}/test_sim.cpp)
  add_executable(test_sim ${_mt}/test_sim.cpp)
  target_link_libraries(test_sim PRIVATE panama_wire GTest::gtest_main)
  target_compile_definitions(test_sim PRIVATE
    PANAMA_GEN="$<TARGET_FILE:panama-gen>" PANAMA_SIM="$<TARGET_FILE:panama-sim>"
    PANAMA_CONFORMANCE="${PANAMA_CONFORMANCE_DIR}")
  add_dependencies(test_sim panama-sim panama-gen)
  gtest_discover_tests(test_sim PROPERTIES LABELS "sim")
endif()
