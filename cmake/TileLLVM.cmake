# Finds LLVM and Clang 19 (Debian: llvm-19-dev, libclang-19-dev).
find_package(LLVM REQUIRED CONFIG HINTS /usr/lib/llvm-19/lib/cmake/llvm)
find_package(Clang REQUIRED CONFIG HINTS ${LLVM_DIR}/../clang /usr/lib/llvm-19/lib/cmake/clang)
message(STATUS "tile: LLVM ${LLVM_PACKAGE_VERSION} at ${LLVM_INSTALL_PREFIX}")
if(NOT LLVM_PACKAGE_VERSION VERSION_GREATER_EQUAL 19 OR LLVM_PACKAGE_VERSION VERSION_GREATER_EQUAL 20)
  message(FATAL_ERROR "tile needs LLVM/Clang 19, found ${LLVM_PACKAGE_VERSION}")
endif()
# The clang++ the plugin is loaded into; also the default CPU device compiler.
find_program(TILE_CLANGXX NAMES clang++ HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH REQUIRED)
find_program(TILE_FILECHECK NAMES FileCheck HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
find_program(TILE_LIT NAMES lit.py lit HINTS ${LLVM_INSTALL_PREFIX}/build/utils/lit ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
find_program(TILE_NVCC NAMES nvcc HINTS /usr/local/cuda/bin)
# The HIP target's tests: hipcc, and what unbundles and disassembles its code objects.
find_program(TILE_HIPCC NAMES hipcc HINTS $ENV{ROCM_PATH}/bin /opt/rocm/bin)
find_program(TILE_OFFLOAD_BUNDLER NAMES clang-offload-bundler clang-offload-bundler-19 clang-offload-bundler-15
             HINTS ${LLVM_TOOLS_BINARY_DIR})
find_program(TILE_LLVM_OBJDUMP NAMES llvm-objdump HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
