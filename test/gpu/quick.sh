#!/usr/bin/env bash
# A short check of the GPU test set (build/gpu) for a call of a few minutes on the GPU
# machine, where run.sh's whole set does not fit: the execution tests of the Hopper paths
# (bulk stores, ping-pong, persistent grids, warp specialization, the producer's other
# tiles; atomics that return values; argmax, sort and top-k; views of rows; the checked
# build), the attention, GEMM, grouped GEMM, packed-sequence, block-sparse and MLA examples
# in their builds at sizes that divide no tile, and the attention and GEMM builds (and the
# producer's tiles) under memcheck and racecheck. One line a check, on stdout; exit status
# 1 if any failed.
#   bash build/gpu/quick.sh          (TILE_QUICK_TIMEOUT: seconds a program may run, default 120)
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH="$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TILE_DEVICE=${TILE_DEVICE:-cuda}
limit=${TILE_QUICK_TIMEOUT:-120}
failed=0
SECONDS=0
say() { # status what detail
  printf '%-4s %-58s %s\n' "$1" "$2" "$3"
  [ "$1" = ok ] || failed=1
}
for t in bulk-store pingpong persistent persistent-no-pingpong warp-specialized warp-specialized-no-pingpong \
         producer-tiles producer-tiles-mma reduce-into-shared reduce-into-shared-mma multicast pair-blocks \
         pair-blocks-auto pair-blocks-auto-mma gemm-a-registers gemm-a-registers-mma atomics-value argmax sort rows \
         indexed-tiles indexed-tiles-mma \
         check-bounds; do
  [ -x "bin/$t" ] || { say FAIL "$t" "not built"; continue; }
  out=$(timeout -k 5 "$limit" "bin/$t" 2>&1)
  rc=$?
  passes=$(grep -c '^PASS' <<< "$out")
  fails=$(grep '^FAIL' <<< "$out" | head -3 | tr '\n' ' ')
  if [ $rc -eq 0 ] && [ -z "$fails" ]; then say ok "$t" "$passes PASS"; else say FAIL "$t" "exit $rc, $passes PASS; $fails"; fi
done
# Attention: batch heads kv-heads sq sk d causal; GEMM: M N K [f16]. Each prints its check last.
for p in example-flash_attention example-flash_attention-launch-grid example-flash_attention-no-bulk-store \
         example-flash_attention-simple example-flash_attention-simple-multicast \
         example-flash_attention-simple-pairs; do
  for args in "2 8 2 1000 777 128 1" "2 8 2 1000 777 128 0" "1 4 4 300 260 64 1"; do
    [ -x "bin/$p" ] || continue
    out=$(timeout -k 5 "$limit" "bin/$p" $args 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then say ok "$p $args" "$(tail -1 <<< "$out")"; else say FAIL "$p $args" "exit $rc: $(tail -1 <<< "$out")"; fi
  done
done
for p in example-gemm example-gemm-no-bulk-store example-gemm_simple example-gemm-multicast example-gemm_simple-multicast \
         example-gemm_simple-pairs; do
  # (K of 300 and 111: rows no tensor map takes, the build without them; 304: with them.)
  for args in "1000 777 300" "333 222 111 f16" "1000 776 304" "520 264 1000 f16" "1100 1010 1000 f16"; do
    [ -x "bin/$p" ] || continue
    out=$(timeout -k 5 "$limit" "bin/$p" $args 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then say ok "$p $args" "$(tail -1 <<< "$out")"; else say FAIL "$p $args" "exit $rc: $(tail -1 <<< "$out")"; fi
  done
done
# The examples whose tiles data chooses, each with its arguments.
example() { # name args...
  local p=$1
  shift
  [ -x "bin/example-$p" ] || return
  out=$(timeout -k 5 "$limit" "bin/example-$p" "$@" 2>&1)
  rc=$?
  if [ $rc -eq 0 ]; then say ok "example-$p $*" "$(tail -1 <<< "$out")"; else say FAIL "example-$p $*" "exit $rc: $(tail -1 <<< "$out")"; fi
}
example grouped_gemm 8 300 200 300               # experts tokens K N
example grouped_gemm 5 77 33 65
example varlen_attention 5 4 2 300 64 1          # batch H HKV max_len D causal
example varlen_attention 3 4 4 130 128 0
example varlen_attention 32 8 2 1000 128 1
example sparse_attention 2 4 300 64 0.25         # B H S D density
example sparse_attention 1 2 200 128 0.5
example mla_decode 3 20 333 4                    # batch heads max_len splits
example mla_decode 2 70 130 3
example mla_decode 64 128 8192 8
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    for p in example-flash_attention example-flash_attention-launch-grid example-flash_attention-no-bulk-store \
             example-flash_attention-simple \
             example-gemm example-gemm-no-bulk-store example-gemm_simple example-gemm_simple-multicast \
             example-flash_attention-simple-multicast example-flash_attention-simple-pairs \
             example-gemm_simple-pairs producer-tiles reduce-into-shared multicast pair-blocks; do
      [ -x "bin/$p" ] || continue
      args="1 2 1 150 130 128 1"
      case $p in example-gemm_simple*) args="200 184 176" ;; example-gemm*) args="200 190 170" ;; producer-tiles | reduce-into-shared | multicast | pair-blocks) args="" ;; esac
      out=$(timeout -k 5 "$limit" compute-sanitizer --tool $tool --error-exitcode 99 "bin/$p" $args 2>&1)
      rc=$?
      summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<< "$out" | head -1)
      if [ $rc -eq 0 ]; then say ok "$tool $p" "$summary"; else say FAIL "$tool $p" "exit $rc: $summary"; fi
    done
  done
else
  say FAIL "compute-sanitizer" "not found"
fi
echo "quick.sh: $SECONDS s, $([ $failed -eq 0 ] && echo 'all passed' || echo 'some FAILED')"
exit $failed
