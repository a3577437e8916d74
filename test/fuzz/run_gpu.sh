#!/usr/bin/env bash
# Runs the GPU batch of random tile programs (built here by `cmake --build build --target
# gpu-fuzz` into build/gpu/fuzz) on a machine with an NVIDIA GPU. Needs no compiler.
#
#   bash build/gpu/fuzz/run_gpu.sh              # every program; PASS / FAIL lines, a summary
#   bash build/gpu/fuzz/run_gpu.sh racecheck    # each program alone under compute-sanitizer
#   bash build/gpu/fuzz/run_gpu.sh memcheck     #   (racecheck: shared-memory races)
#   JOBS=8 SEEDS="5 17" bash build/gpu/fuzz/run_gpu.sh racecheck   # 8 at a time, only seeds 5 and 17
#
# A program that crashes or hangs is reported as FAIL and the rest of its binary still runs.
# Output goes to the terminal and to results-<mode>.txt here; exit status 1 if any FAIL.
set -u
cd "$(dirname "$0")"
mode=${1:-plain}
export LD_LIBRARY_PATH="$PWD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TILE_DEVICE=${TILE_DEVICE:-cuda}
out="$PWD/results-$mode.txt"
: > "$out"
pass=0
fail=0
say() {
  echo "$1"
  echo "$1" >> "$out"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | sed 's/^/# /' | tee -a "$out"

# Sanitizer modes: each program alone, JOBS at a time (default 1; the GPU runs several
# sanitized processes at once well), only those in SEEDS where it is set.
if [ "$mode" != plain ]; then
  for exe in bin/fuzz-*; do
    case "$exe" in *.seeds) continue ;; esac
    for s in $(cat "$exe.seeds"); do
      if [ -z "${SEEDS:-}" ] || [[ " $SEEDS " == *" $s "* ]]; then echo "$exe $s"; fi
    done
  done > "pairs-$mode.txt"
  MODE=$mode xargs -P "${JOBS:-1}" -L 1 bash -c \
    'timeout 900 compute-sanitizer --tool "$MODE" --error-exitcode 99 "$0" "$1" > "sanitizer-$MODE-$1.log" 2>&1; echo $? > "sanitizer-$MODE-$1.rc"' \
    < "pairs-$mode.txt"
  while read -r exe s; do
    log="sanitizer-$mode-$s.log"
    rc=$(cat "sanitizer-$mode-$s.rc")
    rm -f "sanitizer-$mode-$s.rc"
    if [ "$rc" -eq 0 ]; then
      say "PASS $s"
      pass=$((pass + 1))
      rm -f "$log"
    else
      say "FAIL $s: $mode exit $rc ($(grep -m1 -E 'FAIL|=========  ?[A-Z]' "$log" | cut -c1-300)); see $log"
      fail=$((fail + 1))
    fi
  done < "pairs-$mode.txt"
  rm -f "pairs-$mode.txt"
  say "fuzz-gpu ($mode): $((pass + fail)) programs, $pass passed, $fail failed"
  [ $fail -eq 0 ]
  exit
fi

for exe in bin/fuzz-*; do
  case "$exe" in *.seeds) continue ;; esac
  todo=$(cat "$exe.seeds")
  while [ -n "$todo" ]; do
    output=$(timeout 300 "$exe" $todo 2>&1)
    rc=$?
    current=""
    done_list=" "
    while IFS= read -r line; do
      case "$line" in
      "BEGIN "*) current=${line#BEGIN } ;;
      "PASS "*)
        say "$line"
        pass=$((pass + 1))
        s=${line#PASS }
        done_list="$done_list$s "
        current=""
        ;;
      "FAIL "*)
        say "$line"
        fail=$((fail + 1))
        s=${line#FAIL }
        s=${s%%:*}
        done_list="$done_list$s "
        current=""
        ;;
      esac
    done <<< "$output"
    if [ -n "$current" ]; then
      why="crashed (exit $rc)"
      [ $rc -eq 124 ] && why="timed out"
      say "FAIL $current: $why; $(echo "$output" | grep -v -E '^(BEGIN|PASS)' | tail -3 | tr '\n' ' ' | cut -c1-400)"
      fail=$((fail + 1))
      done_list="$done_list$current "
    elif [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
      say "FAIL (all of $exe): exit $rc: $(echo "$output" | tail -3 | tr '\n' ' ' | cut -c1-400)"
      fail=$((fail + $(echo $todo | wc -w)))
      break
    fi
    rest=""
    for s in $todo; do
      case "$done_list" in *" $s "*) ;; *) rest="$rest $s" ;; esac
    done
    todo=$(echo $rest)
  done
done
say "fuzz-gpu ($mode): $((pass + fail)) programs, $pass passed, $fail failed"
[ $fail -eq 0 ]
