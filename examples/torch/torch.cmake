# The PyTorch example, included by examples/CMakeLists.txt where dlpack/dlpack.h is found
# (included, so that its library is a part of the `examples` target): libtile_torch.so,
# built with tile-c++ as users do, and the test example-torch, which runs
# test_tile_torch.py on CPU tensors (TILE_DEVICE=cpu). The test is skipped (status 77)
# where no Python imports torch (Debian: python3-torch).
set(tile_torch_lib ${CMAKE_BINARY_DIR}/examples/torch/libtile_torch.so)
file(GLOB tile_torch_headers ${PROJECT_SOURCE_DIR}/include/tile/*.h ${PROJECT_SOURCE_DIR}/include/tile/detail/*.h)
add_custom_command(
  OUTPUT ${tile_torch_lib}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/examples/torch
  COMMAND $<TARGET_FILE:tile-cxx> -O2 -shared -fPIC -idirafter ${TILE_DLPACK_INCLUDE_DIR}
          ${CMAKE_CURRENT_LIST_DIR}/tile_torch.cpp -o ${tile_torch_lib}
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/tile_torch.cpp ${tile_torch_headers} tile-cxx tile_plugin tile_runtime
  COMMENT "Building tile library libtile_torch.so"
  VERBATIM)
set_property(GLOBAL APPEND PROPERTY TILE_PROGRAMS ${tile_torch_lib})

# The Python that runs the test: TILE_TORCH_PYTHON, else the first of the suite's Python
# and /usr/bin/python3 that imports torch (Debian's python3-torch is /usr/bin/python3's
# even where another python3 comes first on PATH).
set(TILE_TORCH_PYTHON "" CACHE FILEPATH "Python with torch for the test example-torch (default: found)")
set(tile_torch_python ${TILE_TORCH_PYTHON})
if(NOT tile_torch_python)
  find_package(Python3 COMPONENTS Interpreter)
  foreach(candidate ${Python3_EXECUTABLE} /usr/bin/python3)
    if(NOT tile_torch_python AND EXISTS ${candidate})
      execute_process(COMMAND ${candidate} -c "import torch" RESULT_VARIABLE no_torch OUTPUT_QUIET ERROR_QUIET)
      if(no_torch EQUAL 0)
        set(tile_torch_python ${candidate})
      endif()
    endif()
  endforeach()
  if(NOT tile_torch_python)
    message(STATUS "examples/torch: no Python imports torch (python3-torch): example-torch will be skipped")
    set(tile_torch_python ${Python3_EXECUTABLE})
  endif()
endif()
add_test(NAME example-torch
         COMMAND ${tile_torch_python} ${CMAKE_CURRENT_LIST_DIR}/test_tile_torch.py --library ${tile_torch_lib})
set_tests_properties(example-torch PROPERTIES ENVIRONMENT TILE_DEVICE=cpu SKIP_RETURN_CODE 77
                     PASS_REGULAR_EXPRESSION "PASS" FAIL_REGULAR_EXPRESSION "FAIL")
if(TILE_SANITIZE)
  # The library is instrumented and Python is not: the ASan runtime is preloaded, and leaks
  # are not checked (Python's and torch's own at exit; the DLPack exports' are, by the unit
  # tests).
  set_property(TEST example-torch APPEND PROPERTY ENVIRONMENT "LD_PRELOAD=${TILE_SANITIZE_RUNTIME}"
               "ASAN_OPTIONS=detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:detect_leaks=0")
endif()
