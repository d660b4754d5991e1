# edgeinfer_add_test(NAME name SOURCES a.cpp b.cpp [LIBS extra] [LABELS unit ...] [TIMEOUT s])
# Builds one GoogleTest binary and registers each of its tests with ctest. Tests find the
# reference data through EDGEINFER_DATA (set here from the cache variable of the same name,
# unless the environment already has it).
function(edgeinfer_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE edgeinfer GTest::gtest GTest::gtest_main ${T_LIBS})
  target_compile_definitions(${T_NAME} PRIVATE EDGEINFER_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  edgeinfer_warnings(${T_NAME})
  if(DEFINED ENV{EDGEINFER_DATA})
    set(data "$ENV{EDGEINFER_DATA}")
  else()
    set(data "${EDGEINFER_DATA}")
  endif()
  gtest_discover_tests(${T_NAME}
    DISCOVERY_TIMEOUT 60
    PROPERTIES ENVIRONMENT "EDGEINFER_DATA=${data}" LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()
