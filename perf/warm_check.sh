#!/usr/bin/env bash
# On a GPU: what checking one level-1 candidate costs, as a compile round pays it. `ptxforge
# suite validate --no-time --json` runs each level-1 solution through one pipeline (one GPU
# worker for all), then the same solution again with a fresh seed as the next round would: the
# worker is started and the reference cubin cached, but the inputs and the reference's outputs
# are new. That second run's check_wall_s (check, assemble, verify on every size set and seed,
# prove) is the warm check, target < 1 s; its verify phases say where the worker's time went.
# For scale, one whole `ptxforge run --no-time` process of vector_add with an empty cache
# (worker start, CUDA context, nvcc building the reference) is timed first.
#   perf/warm_check.sh PTXFORGE [LOG_DIR]
set -uo pipefail
ptxforge=${1:?usage: warm_check.sh PTXFORGE [LOG_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${2:-$(mktemp -d)}
mkdir -p "$logs"
export PTXFORGE_CACHE_DIR=$(mktemp -d)
trap 'rm -rf "$PTXFORGE_CACHE_DIR"' EXIT
t0=$(date +%s.%N)
"$ptxforge" run --no-time --trace level1/vector_add "$root/tasks/level1/vector_add/solution.ptx" >"$logs/cold.out" 2>&1
echo "cold process (vector_add, empty cache): $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }') s," \
  "$(grep -m1 '^verdict' "$logs/cold.out")"
"$ptxforge" suite validate --task level1 --no-time --json >"$logs/validate.json" 2>"$logs/validate.err"
python3 - "$logs/validate.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["tasks"]
print(f"{'task':14} {'first':>7} {'warm':>7} {'worker':>7} {'inputs':>7} {'ref':>7} {'cand':>7} {'compare':>7}  verdict")
worst, bad = 0.0, []
for t in rows:
    first, warm = t.get("record", {}), t.get("warm_record")
    if not warm or "verify" not in warm:
        bad.append(t["task"]); print(f"{t['task']:14} not verified: {t.get('status')}"); continue
    v = warm["verify"]; p = v["phases"]
    print(f"{t['task']:14} {first['check_wall_s']:7.3f} {warm['check_wall_s']:7.3f} {v['seconds']:7.3f} {p['inputs_s']:7.3f} "
          f"{p['reference_s']:7.3f} {p['candidate_s']:7.3f} {p['compare_s']:7.3f}  {warm['verdict']}")
    worst = max(worst, warm["check_wall_s"])
print(f"slowest warm check: {worst:.3f} s (target < 1 s)")
sys.exit(1 if bad else 0)
PY
