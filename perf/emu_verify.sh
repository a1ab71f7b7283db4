#!/usr/bin/env bash
# The wall seconds of a level-1 verify on the CPU engine (docs/emu.md section 10; target
# under 2 s a candidate): `ptxforge run --device cpu --no-time` on each level-1 solution, the
# whole command (check, assemble, the reference PTX, verify on the task's CPU size sets), the
# fastest of REPEATS runs (default 3), with its CPU seconds (user + system, the worker
# included) and the engine's own seconds from the verify line. The machine's load is printed
# first: on a shared machine the wall figures move with it, the CPU seconds much less.
#   perf/emu_verify.sh PTXFORGE [REPEATS] [TASK...]
set -uo pipefail
ptxforge=${1:?usage: emu_verify.sh PTXFORGE [REPEATS] [TASK...]}
repeats=${2:-3}
shift $(( $# >= 2 ? 2 : $# ))
root=$(cd "$(dirname "$0")/.." && pwd)
tasks=("$@")
if [ ${#tasks[@]} -eq 0 ]; then
  for d in "$root"/tasks/level1/*/; do tasks+=("$(basename "$d")"); done
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), repeats: $repeats"
printf '%-16s %8s %8s %8s  %s\n' task wall_s cpu_s engine_s verdict
for t in "${tasks[@]}"; do
  best="" cpu="" engine="" verdict=""
  for _ in $(seq "$repeats"); do
    out=$(mktemp) times=$(mktemp)
    /usr/bin/time -o "$times" -f '%e %U %S' \
      "$ptxforge" run --device cpu --no-time "level1/$t" "$root/tasks/level1/$t/solution.ptx" >"$out" 2>&1
    read -r wall user sys <"$times"
    if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
      best=$wall
      cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
      engine=$(grep -o 'engine [0-9.]* s' "$out" | head -1 | awk '{ print $2 }')
      verdict=$(grep -m1 '^verdict' "$out" | cut -c1-60)
    fi
    rm -f "$out" "$times"
  done
  printf '%-16s %8s %8s %8s  %s\n' "$t" "$best" "$cpu" "${engine:--}" "${verdict:--}"
done
