#!/usr/bin/env bash
# On a GPU: does a change to the timing loop change what it measures? Times every level-1
# solution (TIMING_LEVELS: other levels, comma-separated, e.g. level1,level2,level3;
# TIMING_TASKS: only these tasks, comma-separated) with two ptxforge binaries (before and after), alternating them for R rounds, and
# prints the median over rounds of each size set's median kernel time, candidate and nvcc
# reference, with the after/before ratio. The events bracket the kernel launches alone, so the
# ratios should stay within noise; a size set whose candidate median moves by more than TOL
# (default 0.15) and lasts at least 0.02 ms is marked DIFF, and the exit code is then 1.
# TIMING_DIR keeps the run records there (default: a temporary folder, removed at the end).
#   perf/timing_compare.sh build-main/tools/ptxforge/ptxforge build-gpu/tools/ptxforge/ptxforge [R]
set -uo pipefail
before=${1:?usage: timing_compare.sh BEFORE_PTXFORGE AFTER_PTXFORGE [ROUNDS]}
after=${2:?usage: timing_compare.sh BEFORE_PTXFORGE AFTER_PTXFORGE [ROUNDS]}
rounds=${3:-3}
tol=${TOL:-0.15}
TIMING_LEVELS=${TIMING_LEVELS:-level1}
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -n ${TIMING_DIR:-} ]]; then
  work=$TIMING_DIR
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
for level in ${TIMING_LEVELS//,/ }; do
  for sol in "$root"/tasks/"$level"/*/solution.ptx; do
    task=$(basename "$(dirname "$sol")")
    [[ -z ${TIMING_TASKS:-} || ,$TIMING_TASKS, == *",$task,"* ]] || continue
    for ((r = 1; r <= rounds; ++r)); do
      for which in before after; do
        bin=$before; [[ $which == after ]] && bin=$after
        "$bin" run --json --sizes shown --seeds 1 "$level/$task" "$sol" >"$work/$task.$which.$r.json" 2>"$work/$task.$which.$r.err"
      done
    done
  done
done
python3 - "$work" "$rounds" "$tol" <<'EOF'
import json, statistics, sys, glob, os
work, rounds, tol = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rows, bad = {}, 0
for path in sorted(glob.glob(os.path.join(work, "*.json"))):
    task, which, _r, _ = os.path.basename(path).split(".")
    try:
        record = json.load(open(path))[0]
    except Exception as e:
        print(f"{task} ({which}): no record: {e}"); bad = 1; continue
    if not record.get("time"):
        print(f"{task} ({which}): not timed: {record.get('verdict')}"); bad = 1; continue
    for s in record["time"]["sizes"]:
        key = (task, s["size_set"])
        rows.setdefault(key, {"before": ([], []), "after": ([], [])})
        rows[key][which][0].append(s["candidate"]["median_ms"])
        rows[key][which][1].append(s["reference"]["median_ms"])
print(f"{'task':<16} {'size set':<12} {'cand before':>12} {'cand after':>11} {'ratio':>7} {'ref before':>11} {'ref after':>10} {'ratio':>7}")
for (task, size), v in sorted(rows.items()):
    if not v["before"][0] or not v["after"][0]:
        print(f"{task:<16} {size:<12} missing runs"); bad = 1; continue
    cb, ca = statistics.median(v["before"][0]), statistics.median(v["after"][0])
    rb, ra = statistics.median(v["before"][1]), statistics.median(v["after"][1])
    ratio = ca / cb if cb > 0 else float("nan")
    rratio = ra / rb if rb > 0 else float("nan")
    mark = "DIFF" if cb >= 0.02 and abs(ratio - 1) > tol else ""
    bad = bad or bool(mark)
    print(f"{task:<16} {size:<12} {cb:>9.4f} ms {ca:>8.4f} ms {ratio:>7.3f} {rb:>8.4f} ms {ra:>7.4f} ms {rratio:>7.3f} {mark}")
sys.exit(1 if bad else 0)
EOF
