# tile_device_compiler: running device compilers (with a time limit: Subprocess.h), and the
# cache of their images (included from lib/Pipeline/CMakeLists.txt). It takes LLVM from
# libLLVM.so, which the clang that loads the plugin has loaded already.
add_library(tile_device_compiler STATIC ${CMAKE_CURRENT_LIST_DIR}/DeviceCompiler.cpp
            ${CMAKE_CURRENT_LIST_DIR}/Subprocess.cpp ${CMAKE_CURRENT_LIST_DIR}/ChildEnvironment.cpp)
target_include_directories(tile_device_compiler PUBLIC ${PROJECT_SOURCE_DIR}/lib)
target_include_directories(tile_device_compiler SYSTEM PUBLIC ${LLVM_INCLUDE_DIRS})
separate_arguments(TILE_LLVM_DEFINITIONS NATIVE_COMMAND "${LLVM_DEFINITIONS}")
target_compile_definitions(tile_device_compiler PRIVATE ${TILE_LLVM_DEFINITIONS})
target_compile_options(tile_device_compiler PRIVATE ${TILE_COMPILER_FLAGS})
set_target_properties(tile_device_compiler PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_link_libraries(tile_device_compiler PUBLIC LLVM)
