#!/usr/bin/env bash
# The GPU benchmark: the examples at the sizes of ../shared/design/PERFORMANCE.md, then the
# peers (../shared/bench/peers.py, copied next to this script by the gpu-tests target) in the
# same run, then a table of ratios and its plots (plots/, by bench/plot.py). Runs from the
# GPU test set folder (build/gpu):
#   bash build/gpu/bench/run_gpu.sh [--quick]
#   bash build/gpu/bench/run_gpu.sh --data   (only the kernels whose tiles data chooses, and
#                                            their peers: bench/peers_data.py)
set -u
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH="$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# 5 samples of 10 launches after 10 warm-ups: the launches of peers.py (10 + 50), so that
# both run as long at the GPU's power limit (examples/common.h).
export TILE_DEVICE=cuda TILE_BENCH_REPS=${TILE_BENCH_REPS:-5}
out=${OUT:-.}/bench.jsonl
# A build with multicast=on: its kernels' names get "_multicast" after the kernel's own.
multicast() { sed -u 's/"kernel": "\(gemm_simple\|gemm\|attn_fwd_simple\)_/"kernel": "\1_multicast_/'; }
: > "$out"
# Tiles that data chooses: a grouped GEMM, packed sequences, block-sparse attention, MLA
# decoding over a paged cache, each in its bench mode, and their peers.
data() {
  for p in grouped_gemm varlen_attention sparse_attention mla_decode; do
    bin/example-$p bench | tee -a "$out"
  done
  python3 bench/peers_data.py | tee -a "$out"
}
if [ "${1:-}" = --data ]; then
  data
  python3 bench/ratios.py "$out"
  exit 0
fi
sizes="4096"
[ "${1:-}" = --quick ] || sizes="4096 8192"
for n in $sizes; do
  bin/example-gemm "$n" "$n" "$n" | tee -a "$out"
  bin/example-gemm "$n" "$n" "$n" f16 | tee -a "$out"
  # The GEMM as the language reference writes it (128 x 128 x 32 tiles, 128 threads, 3 stages).
  bin/example-gemm_simple "$n" "$n" "$n" | tee -a "$out"
  bin/example-gemm_simple "$n" "$n" "$n" f16 | tee -a "$out"
  # The same two with clusters and multicast (multicast=on), named *_multicast_*.
  for p in gemm gemm_simple; do
    for t in bf16 f16; do
      bin/example-$p-multicast "$n" "$n" "$n" $t | multicast | tee -a "$out"
    done
  done
done
bin/example-gemm_fp8 8192 8192 8192 | tee -a "$out" # against cuBLASLt (torch._scaled_mm)
# The autotuned GEMM (issue 11's bar: its choice within 3% of the fastest candidate alone),
# with a tuning cache of this run's own, so that it tunes here.
for size in "4096 4096 4096" "2000 3000 1000"; do
  TILE_TUNING_CACHE=${OUT:-.}/tuning.tsv bin/example-gemm_autotune $size | tee -a "$out"
done
for name in softmax rmsnorm layernorm; do
  bin/example-$name 32768 8192 | tee -a "$out"
done
bin/example-flash_attention bench | tee -a "$out" # b4 h32 s4096, d64 and d128, causal and not
bin/example-flash_attention-simple bench | tee -a "$out" # the same with 64 x 64 tiles, 128 threads, 2 stages
bin/example-flash_attention-simple-multicast bench | multicast | tee -a "$out" # and with multicast=on
bin/example-flash_decoding bench | tee -a "$out" # b8 h32 hkv8 s32768 d128: against the copy bandwidth
[ "${1:-}" = --quick ] || data
python3 bench/peers.py --only gemm,attn,norm ${1:-} | tee -a "$out"
# peers.py times no causal d64 attention; issue 8's bar compares it too.
python3 -c 'import sys; sys.path.insert(0, "bench"); import peers; peers.attention([(4, 32, 4096, 64, True)])' |
  tee -a "$out"
python3 bench/ratios.py "$out"
# PNG plots of tile against each peer (bench/plot.py), where matplotlib is installed; the
# ratios they show go to plots/ratios.txt, so that the table above stays the output's end.
plots=${OUT:-.}/plots
if python3 -c 'import matplotlib' 2>/dev/null; then
  mkdir -p "$plots" && python3 bench/plot.py "$out" "$plots" > "$plots/ratios.txt" && tail -1 "$plots/ratios.txt"
else
  echo "run_gpu.sh: no plots: python3 has no matplotlib (python3 bench/plot.py $out DIR plots it elsewhere)"
fi
