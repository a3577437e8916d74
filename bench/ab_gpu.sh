#!/usr/bin/env bash
# A/B timing of two builds in one call on the GPU machine: the benchmark examples of GPU
# test sets A and B (each made by `cmake --build BUILD --target gpu-tests`, as build/gpu),
# alternating A B A B ... so that clocks and neighbours weigh on both alike, then the peers
# once. Each example line gets "build" and "round" fields; a summary prints the median of
# each build per kernel and shape and the ratio B / A.
#   bash bench/ab_gpu.sh DIR_A DIR_B [ROUNDS] [--quick]
# (The peers need ../shared/bench/peers.py next to this script, as gpu-tests puts it.)
set -u
a=$(cd "$1" && pwd) b=$(cd "$2" && pwd)
rounds=${3:-2}
quick=${4:-}
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-.}/ab.jsonl
: > "$out"
export TILE_DEVICE=cuda TILE_BENCH_REPS=${TILE_BENCH_REPS:-10}
run() { # build-tag dir
  local tag=$1 dir=$2 r=$3
  tagged() { sed -u "s/^{/{\"build\": \"$tag\", \"round\": $r, /" | tee -a "$out"; }
  local sizes="4096"
  [ "$quick" = --quick ] || sizes="4096 8192"
  for n in $sizes; do
    LD_LIBRARY_PATH="$dir/lib" "$dir/bin/example-gemm" "$n" "$n" "$n" | tagged
    LD_LIBRARY_PATH="$dir/lib" "$dir/bin/example-gemm" "$n" "$n" "$n" f16 | tagged
  done
  for name in softmax rmsnorm layernorm; do
    LD_LIBRARY_PATH="$dir/lib" "$dir/bin/example-$name" 32768 8192 | tagged
  done
  LD_LIBRARY_PATH="$dir/lib" "$dir/bin/example-flash_attention" bench | tagged
}
for r in $(seq 1 "$rounds"); do
  run A "$a" "$r"
  run B "$b" "$r"
done
[ -f "$here/peers.py" ] && python3 "$here/peers.py" --only gemm,attn,norm $quick | tee -a "$out"
python3 - "$out" <<'EOF'
import json, statistics, sys
runs, peers = {}, {}
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    rate = r.get("tflops", r.get("gbps"))
    if rate is None or "kernel" not in r:
        continue
    key = (r["kernel"], r["shape"])
    if "build" in r:
        runs.setdefault(key, {}).setdefault(r["build"], []).append(rate)
    else:
        peers.setdefault(key, []).append((rate, r.get("peer", "?")))
print("%-16s %-16s %10s %10s %7s %22s" % ("kernel", "shape", "A", "B", "B/A", "best peer"))
for key, by in sorted(runs.items()):
    a, b = (statistics.median(by[t]) if t in by else None for t in ("A", "B"))
    best = max(peers.get(key, [(None, "-")]), key=lambda p: p[0] or 0)
    print("%-16s %-16s %10s %10s %7s %22s" % (key[0], key[1], "%.1f" % a if a else "-", "%.1f" % b if b else "-",
          "%.3f" % (b / a) if a and b else "-", "%.1f %s" % best if best[0] else "-"))
EOF
