#!/usr/bin/env bash
# CPU test of run.sh's judging: a saved `ptxforge run --json` array (testdata/sample_run.json,
# written to the shape eval/report.cpp prints) judged against the kernels' expect.toml files
# must give exactly testdata/judge.expected (right stage and reason, wrong stage, wrong reason,
# a kernel that passed, a neutralised cheat timed honestly and one that failed instead, a missing record, a solution that passed and one that failed) and
# exit 1.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
command -v python3 >/dev/null || { echo "no python3: skipping"; exit 77; }
A=tests/adversarial
pairs=()
for n in write_just_past_end done_flag_scratch skip_when_output_written infinite_loop all_zero reduce_missing_barrier \
         modifies_input grid_capped trap; do
  pairs+=("$A/$n/kernel.ptx=$n")
done
pairs+=(tasks/level1/vector_add/solution.ptx=solution:vector_add tasks/level1/saxpy/solution.ptx=solution:saxpy)
out=$("$here/run.sh" --judge "$A/testdata/sample_run.json" "${pairs[@]}"); rc=$?
if ! diff -u "$A/testdata/judge.expected" <(echo "$out"); then echo "FAIL: the judgement differs"; exit 1; fi
((rc == 1)) || { echo "FAIL: exit $rc, want 1 (mismatches present)"; exit 1; }
# Every row right: exit 0.
"$here/run.sh" --judge "$A/testdata/sample_run.json" "$A/grid_capped/kernel.ptx=grid_capped" \
  tasks/level1/vector_add/solution.ptx=solution:vector_add >/dev/null || { echo "FAIL: an all-ok judgement exits non-zero"; exit 1; }
echo "judge: ok"
