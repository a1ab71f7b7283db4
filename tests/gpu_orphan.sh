#!/usr/bin/env bash
# A `ptxforge run` killed with SIGKILL while its candidate spins on the GPU leaves no worker
# behind: the worker (in a process group of its own, so a ^C to the terminal does not reach it
# mid-launch) sees its parent gone (util/orphan_watch.h) and exits, and the GPU is free for the
# next measurement. Exit 77 (skipped) without a GPU.
set -u
ptxforge=$1
root=$(cd "$(dirname "$0")/.." && pwd)
if "$ptxforge" doctor 2>&1 | grep -q "^  none: "; then echo "no GPU: skipped"; exit 77; fi
log=$(mktemp); trap 'rm -f "$log"' EXIT
"$ptxforge" run level1/vector_add "$root/tests/adversarial/infinite_loop/kernel.ptx" --timeout 120 --no-time \
  >"$log" 2>&1 &
run_pid=$!
# The worker is the run's child; wait until it is there and the endless kernel has had time to start.
worker=""
for _ in $(seq 1 100); do
  worker=$(pgrep -P "$run_pid" -f "ptxforge.* worker" | head -1)
  [[ -n $worker ]] && break
  sleep 0.2
done
[[ -n $worker ]] || { echo "FAIL: no worker process under run (pid $run_pid)"; cat "$log"; exit 1; }
sleep 5
kill -0 "$worker" 2>/dev/null || { echo "FAIL: the worker ended before the run was killed"; cat "$log"; exit 1; }
kill -9 "$run_pid"
wait "$run_pid" 2>/dev/null
for _ in $(seq 1 50); do
  kill -0 "$worker" 2>/dev/null || { echo "ok: the worker (pid $worker) exited after its run was killed"; exit 0; }
  sleep 0.2
done
echo "FAIL: worker pid $worker still running 10 s after its run was killed"
ps -o pid,ppid,pgid,etime,args -p "$worker"
kill -9 "$worker"
exit 1
