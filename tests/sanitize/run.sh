#!/usr/bin/env bash
# GPU test for `run --sanitize`: the suite solutions of vector_add and reduce_sum are clean
# under memcheck, racecheck, synccheck and initcheck; each candidate here passes verify but
# must fail the sanitize stage as its `// expect:` line says (a race between two warps with
# no bar.sync, an output read before it is written). Exit 77 (skip) without a GPU or
# without compute-sanitizer.
set -u
ptxforge=$1; dir=$2
root="$dir/../.."
out=$("$ptxforge" run --device gpu --no-time vector_add "$root/tasks/level1/vector_add/solution.ptx" 2>&1)
if grep -q "NOT verified on a GPU" <<<"$out"; then echo "no GPU: skipping"; exit 77; fi
if [[ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" ]] && ! command -v compute-sanitizer >/dev/null; then
  echo "no compute-sanitizer: skipping"; exit 77
fi
fail=0
for task in vector_add reduce_sum; do
  out=$("$ptxforge" run --sanitize --no-time "$task" "$root/tasks/level1/$task/solution.ptx" 2>&1)
  line=$(grep -E '^  sanitize ' <<<"$out" | tr -s ' ')
  if grep -qE "^  sanitize +passed +0 errors from memcheck, racecheck, synccheck, initcheck" <<<"$out"; then echo "ok   $task solution: $line"
  else echo "FAIL $task solution under the sanitizer:"; echo "$out"; fail=1; fi
done
for f in "$dir"/*.ptx; do
  task=vector_add; grep -q "level1/reduce_sum" "$f" && task=reduce_sum
  want=$(sed -n 's|^// expect: ||p' "$f" | head -1)
  out=$("$ptxforge" run --sanitize --no-time "$task" "$f" 2>&1)
  echo "$out" >> "${TEST_LOG:-/dev/null}"
  verdict=$(grep '^verdict: ' <<<"$out")
  if grep -qE -- "$want" <<<"$verdict"; then printf 'ok   %-26s %s\n' "$(basename "$f")" "$(cut -c1-160 <<<"$verdict")"
  else printf 'FAIL %-26s want /%s/, got: %s\n' "$(basename "$f")" "$want" "$verdict"; echo "$out" | tail -20; fail=1; fi
done
exit $fail
