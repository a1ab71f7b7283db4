#!/usr/bin/env bash
# Whole-process speed of `ptxforge check` against ptxas over the largest modules of a corpus:
# one ptxforge process checks all of them; ptxas assembles each (as a model loop would call
# it), at -O0 for modules built for debugging (-G, as nvcc does) and -O3 otherwise. Each side
# runs `reps` times and the fastest total is kept, so a busy moment does not decide it.
#   perf/check_vs_ptxas.sh <ptxforge> [corpus dir] [count] [reps]
set -euo pipefail
ptxforge=$1
dir=${2:-build/dev/tests/corpus}
count=${3:-20}
reps=${4:-3}
ptxas=${PTXFORGE_CUDA_HOME:-/usr/local/cuda}/bin/ptxas
[[ -x $ptxas ]] || { echo "check_vs_ptxas: no ptxas at $ptxas"; exit 77; }
[[ -x $ptxforge ]] || { echo "check_vs_ptxas: no ptxforge binary at $ptxforge"; exit 2; }
mapfile -t files < <(ls -S "$dir"/*.ptx | head -n "$count")
((${#files[@]})) || { echo "check_vs_ptxas: no modules in $dir (run the corpus test first)"; exit 77; }
bytes=$(cat "${files[@]}" | wc -c)

now() { date +%s.%N; }
best_check=999999; best_ptxas=999999
for ((r = 0; r < reps; ++r)); do
  t0=$(now); "$ptxforge" check --no-warnings "${files[@]}" >/dev/null || true; t1=$(now)
  best_check=$(echo "$t1 - $t0" | bc -l | awk -v b="$best_check" '{print ($1 < b ? $1 : b)}')
  t0=$(now)
  for f in "${files[@]}"; do
    arch=$(sed -n 's/^\.target \(sm_[0-9a-z]*\).*/\1/p' "$f" | head -1)
    opt=-O3; grep -q '^\.target .*debug' "$f" && opt=-O0
    "$ptxas" -arch="$arch" "$opt" "$f" -o /dev/null 2>/dev/null || true
  done
  t1=$(now)
  best_ptxas=$(echo "$t1 - $t0" | bc -l | awk -v b="$best_ptxas" '{print ($1 < b ? $1 : b)}')
done
awk -v n="${#files[@]}" -v bytes="$bytes" -v c="$best_check" -v p="$best_ptxas" 'BEGIN {
  printf "modules: %d largest, %.2f MB\n", n, bytes / 1e6
  printf "ptxforge check (one process): %.3f s, %.1f MB/s\n", c, bytes / 1e6 / c
  printf "ptxas (one process per module): %.3f s, %.1f MB/s\n", p, bytes / 1e6 / p
  printf "check is %.0fx faster than ptxas\n", p / c
}'
