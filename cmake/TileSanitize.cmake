# TILE_SANITIZE=ON: tile (plugin, compiler core, runtime, tools) and its tests are built with
# AddressSanitizer and UndefinedBehaviorSanitizer; every UBSan finding is fatal.
#
# The plugin is loaded into clang, which is not instrumented, so the ASan runtime has to be
# in clang before the plugin: tile-c++, the lit substitutions and the package test preload
# TILE_SANITIZE_RUNTIME (the shared runtime of the clang the plugin is loaded into) with
# LD_PRELOAD. What a preloaded clang starts (the linker) sees the preload too; the linker's
# leaks are suppressed by TILE_LSAN_SUPPRESSIONS (test/sanitize/lsan.supp). Device compilers
# started by the plugin are started without it (lib/Pipeline/ChildEnvironment.h).
option(TILE_SANITIZE "Build tile and its tests with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

# The flags of every compile: also what tile-c++ adds, and what users of the sanitized
# runtime (Tile::runtime) compile and link with.
set(TILE_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined)

if(TILE_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TILE_SANITIZE needs clang++ 19 as the C++ compiler (the plugin uses clang's sanitizer runtime)")
  endif()
  execute_process(COMMAND ${TILE_CLANGXX} -print-file-name=libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so
                  OUTPUT_VARIABLE TILE_SANITIZE_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT IS_ABSOLUTE "${TILE_SANITIZE_RUNTIME}" OR NOT EXISTS "${TILE_SANITIZE_RUNTIME}")
    message(FATAL_ERROR "TILE_SANITIZE: ${TILE_CLANGXX} has no shared ASan runtime "
                        "(libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so); on Debian install libclang-rt-19-dev")
  endif()
  set(TILE_LSAN_SUPPRESSIONS ${PROJECT_SOURCE_DIR}/test/sanitize/lsan.supp)
  message(STATUS "tile: sanitized build (ASan + UBSan); clang is started with ${TILE_SANITIZE_RUNTIME} preloaded")
  # Frame pointers: whole stacks in reports, with ASan's fast unwinder.
  add_compile_options(${TILE_SANITIZE_FLAGS} -fno-omit-frame-pointer)
  add_link_options(${TILE_SANITIZE_FLAGS})
endif()
