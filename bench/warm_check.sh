#!/usr/bin/env bash
# On a GPU: how long a check of one level-1 candidate takes, cold and warm. For each level-1
# solution, `ptxforge run --no-time` (check, assemble, verify on every size set with fresh
# seeds, prove) four times with an empty cache folder at first: run 1 is cold (nvcc builds the
# reference), runs 2-4 are warm (cached reference cubin; the reference still runs on the GPU
# for the fresh inputs). Prints wall seconds per run (process start to exit, GPU worker start
# included) and the median of the warm runs; the target is a warm check under 1 s.
#   bench/warm_check.sh PTXFORGE [LOG_DIR]
set -uo pipefail
ptxforge=${1:?usage: warm_check.sh PTXFORGE [LOG_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${2:-$(mktemp -d)}
mkdir -p "$logs"
export PTXFORGE_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$PTXFORGE_CACHE_DIR"' EXIT
printf '%-16s %8s %8s %8s %8s %8s  %s\n' task cold warm1 warm2 warm3 median verdict
worst=0
for sol in "$root"/tasks/level1/*/solution.ptx; do
  task=$(basename "$(dirname "$sol")")
  times=()
  for r in 1 2 3 4; do
    t0=$(date +%s.%N)
    "$ptxforge" run --no-time --trace "level1/$task" "$sol" >"$logs/$task.$r.out" 2>"$logs/$task.$r.trace"
    rc=$?
    times+=("$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')")
  done
  verdict=$(grep -m1 '^verdict' "$logs/$task.4.out" || echo "exit $rc")
  median=$(printf '%s\n' "${times[1]}" "${times[2]}" "${times[3]}" | sort -n | sed -n 2p)
  printf '%-16s %8s %8s %8s %8s %8s  %s\n' "$task" "${times[@]}" "$median" "$verdict"
  worst=$(awk -v a="$worst" -v b="$median" 'BEGIN { print (b > a ? b : a) }')
done
echo "slowest warm check: $worst s (target < 1 s); logs in $logs"
