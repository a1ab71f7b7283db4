#!/usr/bin/env bash
# Whole-process speed of `ptxforge check` against ptxas over the largest modules of a corpus:
# ptxas assembles each module in a process of its own (as a model loop would call it), at -O0
# for modules built for debugging (-G, as nvcc does) and -O3 otherwise. `check` runs two ways:
# one process over all the modules, and, with --per-module, one process per module as the
# compile loop calls it, so each module also pays the process start (loading the program and
# its libraries, first use of the tables, a fresh heap). Each side runs `reps` times and the
# fastest total is kept, so a busy moment does not decide it.
#   perf/check_vs_ptxas.sh [--per-module] <ptxforge> [corpus dir] [count] [reps]
set -euo pipefail
per_module=0
if [[ ${1:-} == --per-module ]]; then per_module=1; shift; fi
ptxforge=${1:?usage: check_vs_ptxas.sh [--per-module] <ptxforge> [corpus dir] [count] [reps]}
dir=${2:-build/dev/tests/corpus}
count=${3:-20}
reps=${4:-3}
ptxas=${PTXFORGE_CUDA_HOME:-/usr/local/cuda}/bin/ptxas
[[ -x $ptxas ]] || { echo "check_vs_ptxas: no ptxas at $ptxas"; exit 77; }
[[ -x $ptxforge ]] || { echo "check_vs_ptxas: no ptxforge binary at $ptxforge"; exit 2; }
mapfile -t files < <(ls -S "$dir"/*.ptx | head -n "$count")
((${#files[@]})) || { echo "check_vs_ptxas: no modules in $dir (run the corpus test first)"; exit 77; }
bytes=$(cat "${files[@]}" | wc -c)
# Each module's ptxas arguments, worked out before any clock starts.
archs=(); opts=()
for f in "${files[@]}"; do
  archs+=("$(sed -n 's/^\.target \(sm_[0-9a-z]*\).*/\1/p' "$f" | head -1)")
  if grep -q '^\.target .*debug' "$f"; then opts+=(-O0); else opts+=(-O3); fi
done

now() { date +%s.%N; }
min() { echo "$1 $2" | awk '{print ($1 < $2 ? $1 : $2)}'; }
best_check=999999; best_each=999999; best_ptxas=999999
for ((r = 0; r < reps; ++r)); do
  t0=$(now); "$ptxforge" check --no-warnings "${files[@]}" >/dev/null || true; t1=$(now)
  best_check=$(min "$(echo "$t1 - $t0" | bc -l)" "$best_check")
  if ((per_module)); then
    t0=$(now)
    for f in "${files[@]}"; do "$ptxforge" check --no-warnings "$f" >/dev/null || true; done
    t1=$(now)
    best_each=$(min "$(echo "$t1 - $t0" | bc -l)" "$best_each")
  fi
  t0=$(now)
  for i in "${!files[@]}"; do
    "$ptxas" -arch="${archs[$i]}" "${opts[$i]}" "${files[$i]}" -o /dev/null 2>/dev/null || true
  done
  t1=$(now)
  best_ptxas=$(min "$(echo "$t1 - $t0" | bc -l)" "$best_ptxas")
done
awk -v n="${#files[@]}" -v bytes="$bytes" -v c="$best_check" -v e="$best_each" -v p="$best_ptxas" -v each="$per_module" \
    -v load="$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')" 'BEGIN {
  printf "modules: %d largest, %.2f MB (load average %s; fastest of the runs)\n", n, bytes / 1e6, load
  printf "ptxas (one process per module): %.3f s, %.1f MB/s\n", p, bytes / 1e6 / p
  printf "ptxforge check (one process): %.3f s, %.1f MB/s: %.0fx faster than ptxas\n", c, bytes / 1e6 / c, p / c
  if (each)
    printf "ptxforge check (one process per module): %.3f s, %.1f ms a module: %.0fx faster than ptxas\n", e, e * 1000 / n, p / e
}'
