#!/usr/bin/env bash
# Copies the GPU test set (build/gpu, made by the gpu-tests target) into DEST without the
# bulk of its image cache, so that it can be carried to the GPU machine (which takes at most
# 64 MiB in all): the programs, the runtime, the scripts, and of the cached device images
# only those of the tensor-core kernels (GEMM, attention), which run.sh disassembles to
# count HMMA and HGMMA instructions. With --examples, only the example programs (for bench/ab_gpu.sh).
# The tile-shape explorers (bench/tune-gpu*, about 40 MB, run by hand) are left out but with --tune.
#   bash test/gpu/pack.sh build/gpu DEST [--examples | --tune]
set -eu
src=$1 dest=$2 only=${3:-}
for need in lib bench run.sh bin; do
  [ -e "$src/$need" ] || { echo "pack.sh: $src/$need is missing; build the gpu-tests target first" >&2; exit 1; }
done
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/cache/cuda"
cp -r "$src/lib" "$src/bench" "$dest/"
[ "$only" = --tune ] || rm -f "$dest"/bench/tune-gpu*
cp "$src/run.sh" "$dest/"
[ -f "$src/quick.sh" ] && cp "$src/quick.sh" "$dest/"
if [ "$only" = --examples ]; then
  cp "$src"/bin/example-* "$dest/bin/"
else
  cp "$src"/bin/* "$dest/bin/"
  # The PyTorch example's library and scripts (examples/torch), where they were built.
  [ -d "$src/torch" ] && cp -r "$src/torch" "$dest/"
  [ -d "$src/fuzz" ] && cp -r "$src/fuzz" "$dest/"
fi
# The newest cached images of each tensor-core kernel family: the GEMM has three (the
# example's two architecture classes (wgmma on sm_90a, mma.sync on sm_80), and
# example-gemm-mma's one), attention as many.
for family in matmul_relu:3 flash_attention:3; do
  grep -l -a "${family%:*}" "$src"/cache/cuda/*.fatbin 2>/dev/null | xargs -r ls -t 2>/dev/null | head -"${family#*:}" |
    xargs -r cp -t "$dest/cache/cuda/"
done
du -sh "$dest" | awk '{print "packed " $2 ": " $1}'
