#!/usr/bin/env bash
# Runs the GPU test set (build/gpu, made by `cmake --build build --target gpu-tests`) on a
# machine with an NVIDIA GPU, and packs what each program printed into $OUT/results.tgz
# (or ./results.tgz) for test/gpu/check.py. Needs no compiler: only the driver, and
# compute-sanitizer for the memcheck and racecheck runs of the examples.
#   bash build/gpu/run.sh
# Each program may run TILE_GPU_TIMEOUT seconds (default 300), then it is stopped (a hung
# kernel must not hold the GPU while the programs after it run).
set -u
cd "$(dirname "$0")"
limit=${TILE_GPU_TIMEOUT:-300}
export LD_LIBRARY_PATH="$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
rm -rf results && mkdir -p results
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > results/gpu.txt 2>&1
for program in bin/*; do
  name=$(basename "$program")
  # The runtime's unit tests register CPU images of their own on the current device.
  device=cuda
  [ "$name" = unit-tests ] && device=cpu
  TILE_DEVICE=$device TILE_TEST_IMAGE="$PWD/lib/libtile_runtime_test_image.so" \
    TILE_FAKE_HIP="$PWD/lib/libtile_fake_hip_runtime.so" \
    timeout -k 10 "$limit" "$program" > "results/$name.out" 2> "results/$name.err"
  echo $? > "results/$name.rc"
  printf '%-24s exit %s\n' "$name" "$(cat "results/$name.rc")"
done
# The FP8 GEMM at a size with whole tiles too (on wgmma: K tiles of 128).
TILE_DEVICE=cuda timeout -k 10 "$limit" bin/example-gemm_fp8 1024 768 1280 > results/example-gemm_fp8-whole.out 2> results/example-gemm_fp8-whole.err
echo $? > results/example-gemm_fp8-whole.rc
printf '%-24s exit %s\n' example-gemm_fp8-whole "$(cat results/example-gemm_fp8-whole.rc)"
# The GEMM example in fp16 as well.
TILE_DEVICE=cuda timeout -k 10 "$limit" bin/example-gemm 333 222 111 f16 > results/example-gemm-f16.out 2> results/example-gemm-f16.err
echo $? > results/example-gemm-f16.rc
printf '%-24s exit %s\n' example-gemm-f16 "$(cat results/example-gemm-f16.rc)"
# Attention with head_dim 128 and grouped-query heads, causal and not, on wgmma (the default on
# the H200: head_dim 128 tiles are K-major slabs) and causal on mma.sync.
for run in "example-flash_attention causal 1" "example-flash_attention full 0" \
           "example-flash_attention-overlap causal 1" "example-flash_attention-overlap full 0" \
           "example-flash_attention-launch-grid causal 1" "example-flash_attention-launch-grid full 0" \
           "example-flash_attention-no-pingpong causal 1" "example-flash_attention-no-pingpong full 0" \
           "example-flash_attention-no-bulk-store causal 1" "example-flash_attention-no-bulk-store full 0" \
           "example-flash_attention-mma causal 1"; do
  set -- $run
  tag=$1-$2-d128
  TILE_DEVICE=cuda timeout -k 10 "$limit" bin/$1 2 8 2 1000 777 128 $3 > results/$tag.out 2> results/$tag.err
  echo $? > results/$tag.rc
  printf '%-24s exit %s\n' "$tag" "$(cat results/$tag.rc)"
done
# The norms with more rows than blocks (each block walks several rows), in registers up to
# 1024 and up to 8192 columns.
for name in rmsnorm layernorm; do
  for size in "2500 300" "1500 5000"; do
    tag=example-$name-loop-${size% *}
    TILE_DEVICE=cuda timeout -k 10 "$limit" bin/example-$name $size > results/$tag.out 2> results/$tag.err
    echo $? > results/$tag.rc
    printf '%-24s exit %s\n' "$tag" "$(cat results/$tag.rc)"
  done
done
# The PyTorch example on CUDA tensors (examples/torch), where python3 has torch with CUDA.
if [ -f torch/libtile_torch.so ] && python3 -c "import torch; assert torch.cuda.is_available()" > /dev/null 2>&1; then
  timeout -k 10 "$limit" python3 torch/test_tile_torch.py --device cuda --library torch/libtile_torch.so \
    > results/example-torch-cuda.out 2> results/example-torch-cuda.err
  echo $? > results/example-torch-cuda.rc
  printf '%-24s exit %s\n' example-torch-cuda "$(cat results/example-torch-cuda.rc)"
else
  printf '%-24s skipped (no python3 with torch and CUDA here)\n' example-torch-cuda
fi
# The examples under compute-sanitizer, on sizes that divide no tile but run quickly.
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    for program in bin/example-*; do
      name=$(basename "$program")
      args="200 190 170"
      case $name in example-flash_attention*) args="1 2 1 150 130 64 1" ;; esac # batch heads kv-heads sq sk d causal
      case $name in example-flash_decoding) args="1 8 2 700" ;; esac # batch heads kv-heads tokens
      # More rows than the norms' blocks: a block's second row reuses its shared memory.
      case $name in example-rmsnorm | example-layernorm) args="1200 190" ;; esac
      TILE_DEVICE=cuda timeout -k 10 "$limit" compute-sanitizer --tool "$tool" --error-exitcode 99 "$program" $args \
        > "results/$name.$tool" 2>&1
      echo $? >> "results/$name.$tool"
      printf '%-24s %-9s exit %s\n' "$name" "$tool" "$(tail -1 "results/$name.$tool")"
    done
    # The persistent grids (test/lit/exec/persistent.cpp: blocks taking several tiles).
    TILE_DEVICE=cuda timeout -k 10 "$limit" compute-sanitizer --tool "$tool" --error-exitcode 99 bin/persistent \
      > "results/persistent.$tool" 2>&1
    echo $? >> "results/persistent.$tool"
    printf '%-24s %-9s exit %s\n' persistent "$tool" "$(tail -1 "results/persistent.$tool")"
    # The GEMMs again with rows of a multiple of 16 bytes (N and K multiples of 8, still no
    # multiple of a tile): on sm_90a the warp-specialized entry with tensor maps runs (with
    # the sizes above, rows of 340 bytes, its fallback does).
    for name in example-gemm example-gemm_fp8; do
      TILE_DEVICE=cuda timeout -k 10 "$limit" compute-sanitizer --tool "$tool" --error-exitcode 99 bin/$name 200 184 176 \
        > "results/$name-aligned.$tool" 2>&1
      echo $? >> "results/$name-aligned.$tool"
      printf '%-24s %-9s exit %s\n' "$name-aligned" "$tool" "$(tail -1 "results/$name-aligned.$tool")"
    done
  done
fi
# What the tensor-core kernels became in SASS: per architecture and kernel, the count of
# HMMA and HGMMA instructions (the device images the programs embed, from the build's cache).
# A cache entry is a header of five lines (magic, key, size, SHA-256, a blank line) and then
# the fatbin.
if command -v cuobjdump > /dev/null && ls cache/cuda/*.fatbin > /dev/null 2>&1; then
  fatbin="${TMPDIR:-/tmp}/tile-sass-$$.fatbin"
  for image in cache/cuda/*.fatbin; do
    tail -n +6 "$image" > "$fatbin"
    cuobjdump --dump-sass "$fatbin" 2>&1 | awk -v image="$(basename "$image")" '
      /^[ \t]*arch = / { arch = $3 }
      /Function : / { name = $3; hmma[arch " " name] += 0; hgmma[arch " " name] += 0 }
      /HMMA/ { hmma[arch " " name]++ }
      /HGMMA/ { hgmma[arch " " name]++ }
      END { for (k in hmma) print image, k, hmma[k], hgmma[k] }'
  done > results/sass-hmma.txt
  rm -f "$fatbin"
fi
tar czf "${OUT:-.}/results.tgz" results
