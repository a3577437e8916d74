#!/usr/bin/env bash
# The test suite (lit, unit tests, examples, the CPU and Hopper fuzz batches, the manual's
# programs, the package test) under AddressSanitizer and UndefinedBehaviorSanitizer: configures BUILD_DIR
# (default build-sanitize) with -DTILE_SANITIZE=ON, builds it and runs ctest, printing how
# long each step took.
#   bash test/sanitize/run.sh [BUILD_DIR]
# Needs clang's shared ASan runtime (Debian: libclang-rt-19-dev). What the build does and
# why: cmake/TileSanitize.cmake; what it found: test/sanitize/FINDINGS.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-sanitize}

# Every finding fails the test that makes it; reports carry whole stacks. tile-c++ and the lit
# substitutions preload the ASan runtime into clang and add the suppressions file themselves;
# it is set here too for everything else that runs.
export ASAN_OPTIONS=detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/test/sanitize/lsan.supp:print_suppressions=0

# The test suite's image cache of the plain build (build/test/cache), where it ran: nvcc's and
# hipcc's images of the same generated source are the same with the sanitizers, so that this
# run compiles only what the plain run did not (the CPU images' keys hold the sanitizers' flags).
cache=()
[ -d build/test/cache ] && cache=(-DTILE_TEST_CACHE_HOME="$PWD/build/test/cache")

start=$SECONDS
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTILE_SANITIZE=ON "${cache[@]}"
cmake --build "$build" -j"$(nproc)"
built=$SECONDS
status=0
# Everything but the tests whose work under the sanitizers is a second run of what the plain
# suite checked, with nothing of tile's own code that lit, the unit tests and the CPU and
# Hopper fuzz batches do not run sanitized already: every lit kernel and the random programs
# built for gfx90a alone (the HIP pipeline runs sanitized in lit's HIP tests), the plots, the
# PyTorch example and the doc test's own test (Python).
skip='^(lit-kernels-hip|fuzz-hip-build|fuzz-hip-mfma-build|bench-plots|example-torch|doc-selftest)$'
ctest --test-dir "$build" --output-on-failure -j2 -E "$skip" || status=$?
echo "sanitized build: $((built - start)) s; tests: $((SECONDS - built)) s"
exit $status
