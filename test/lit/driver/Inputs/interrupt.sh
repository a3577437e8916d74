# interrupt.sh SIGNAL DIR COMMAND...: runs COMMAND as a job of its own, waits until the
# compiler script DIR/slow has written its pid and its child's to DIR/slow.pids, sends
# SIGNAL (INT: to the job's process group, as Ctrl-C does to the foreground job; others: to
# COMMAND alone, as a build system stopping a job does), and prints
# COMMAND's exit status, whether the compiler and its child are gone, and what is left in
# DIR/tmp (the TMPDIR of COMMAND). Run by bash: job control gives the job its own group;
# COMMAND starts with SIGINT at its default (lit runs tests with it ignored, and a shell
# cannot undo that).
set -m
sig=$1 dir=$2
shift 2
rm -f "$dir/slow.pids"
python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$@" > "$dir/out" 2>&1 &
build=$!
i=0
while [ ! -s "$dir/slow.pids" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
if [ "$sig" = INT ]; then kill -s INT -- -$build; else kill -s "$sig" $build; fi
wait $build
echo "status $?"
# Running means present and not a zombie (what nothing reaps may stay one).
running() { [ -r "/proc/$1/stat" ] && ! grep -q '^[0-9]* ([^)]*) Z' "/proc/$1/stat"; }
i=0
for pid in $(cat "$dir/slow.pids"); do
  while running "$pid" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
  running "$pid" && echo "still running: $pid"
done
echo "compiler stopped"
echo "left in TMPDIR:"
ls -A "$dir/tmp"
