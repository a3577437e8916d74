# The CPU target's unit tests (included from test/unit/CMakeLists.txt): lower-tile-ops, the
# codegen and the device header library, run end to end through clang++ and dlopen.
find_package(Threads REQUIRED)
if(NOT TARGET GTest::gtest)
  find_package(GTest REQUIRED)
endif()
set(TILE_CPU_UNIT_TESTS
  CpuTestSupport.cpp
  CpuCopyTest.cpp
  CpuReduceTest.cpp
  CpuGemmTest.cpp
  CpuAtomicTest.cpp
  CpuCodegenTest.cpp
  CpuCacheTest.cpp
  CudaCompilerTest.cpp
  ChildEnvironmentTest.cpp
  CpuEntryTypeTest.cpp)
list(TRANSFORM TILE_CPU_UNIT_TESTS PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
add_executable(tile_cpu_tests ${TILE_CPU_UNIT_TESTS})
# Calls through a function type that is not the callee's trap here (no sanitizer runtime).
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/CpuEntryTypeTest.cpp PROPERTIES
                            COMPILE_OPTIONS "-fsanitize=function;-fsanitize-trap=function")
target_include_directories(tile_cpu_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../../include
                           ${CMAKE_CURRENT_LIST_DIR}/../../lib ${CMAKE_CURRENT_LIST_DIR}/../..
                           ${CMAKE_CURRENT_LIST_DIR}/../../targets/cpu/include
                           ${CMAKE_CURRENT_LIST_DIR}/../../include/tile/detail)
# Compiled images are cached in the build tree, so that a rerun compiles nothing.
target_compile_definitions(tile_cpu_tests PRIVATE TILE_CPU_TEST_CACHE="${CMAKE_CURRENT_BINARY_DIR}/cpu-test-cache")
target_compile_options(tile_cpu_tests PRIVATE ${TILE_COMPILER_FLAGS})
if(TILE_SANITIZE)
  # The images are sanitized too, as the plugin makes them for sanitized programs.
  string(JOIN " " flags ${TILE_SANITIZE_FLAGS})
  target_compile_definitions(tile_cpu_tests PRIVATE TILE_SANITIZE_FLAGS="${flags}")
endif()
target_link_libraries(tile_cpu_tests PRIVATE tile_transforms tile_target_cpu tile_target_cuda tile_device_compiler tile_ir
                      GTest::gtest_main ${CMAKE_DL_LIBS})
add_test(NAME cpu-target COMMAND tile_cpu_tests)
set_tests_properties(cpu-target PROPERTIES TIMEOUT 900)

# tile_cpu_bench: the tile GEMM kernel against OpenBLAS (not a test; run it by hand).
add_executable(tile_cpu_bench ${CMAKE_CURRENT_LIST_DIR}/CpuGemmBench.cpp ${CMAKE_CURRENT_LIST_DIR}/CpuTestSupport.cpp)
target_include_directories(tile_cpu_bench PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../../include
                           ${CMAKE_CURRENT_LIST_DIR}/../../lib ${CMAKE_CURRENT_LIST_DIR}/../..
                           ${CMAKE_CURRENT_LIST_DIR}/../../targets/cpu/include
                           ${CMAKE_CURRENT_LIST_DIR}/../../include/tile/detail)
target_compile_definitions(tile_cpu_bench PRIVATE TILE_CPU_TEST_CACHE="${CMAKE_CURRENT_BINARY_DIR}/cpu-test-cache")
target_compile_options(tile_cpu_bench PRIVATE ${TILE_COMPILER_FLAGS})
target_link_libraries(tile_cpu_bench PRIVATE tile_transforms tile_target_cpu tile_device_compiler tile_ir
                      GTest::gtest Threads::Threads ${CMAKE_DL_LIBS})
find_library(TILE_OPENBLAS NAMES openblas)
find_path(TILE_CBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas)
if(TILE_OPENBLAS AND TILE_CBLAS_INCLUDE)
  target_compile_definitions(tile_cpu_bench PRIVATE TILE_HAVE_CBLAS)
  target_include_directories(tile_cpu_bench PRIVATE ${TILE_CBLAS_INCLUDE})
  target_link_libraries(tile_cpu_bench PRIVATE ${TILE_OPENBLAS})
endif()
