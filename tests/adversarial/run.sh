#!/usr/bin/env bash
# GPU test: the adversarial candidates run one after another in ONE `ptxforge run` (one
# harness, one worker that must be restarted after the fault and the hang), followed by the
# task's own solution, which must still pass. Each candidate's verdict must match the regex
# on its `// expect:` line. Exit 77 (skip) without a GPU.
set -u
ptxforge=$1; dir=$2; task=${3:-vector_add}
solution="$dir/../../tasks/level1/$task/solution.ptx"
out=$("$ptxforge" run --no-time "$task" "$solution" 2>&1)
if grep -q "NOT verified on a GPU" <<<"$out"; then echo "no GPU: skipping"; exit 77; fi
files=("$dir"/*.ptx)
t0=$(date +%s%N)
out=$("$ptxforge" run --timeout 10 "$task" "${files[@]}" "$solution" 2>&1)
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "$out" > "${TEST_LOG:-/dev/null}"
# verdicts in order, one per candidate
mapfile -t verdicts < <(grep '^verdict: ' <<<"$out")
fail=0
if ((${#verdicts[@]} != ${#files[@]} + 1)); then
  echo "FAIL: expected $((${#files[@]} + 1)) verdicts, got ${#verdicts[@]}"; echo "$out" | tail -40; exit 1
fi
for i in "${!files[@]}"; do
  f=${files[$i]}; want=$(sed -n 's|^// expect: ||p' "$f" | head -1)
  if grep -qE -- "$want" <<<"${verdicts[$i]}"; then
    printf 'ok   %-20s %s\n' "$(basename "$f")" "$(cut -c1-150 <<<"${verdicts[$i]}")"
  else
    printf 'FAIL %-20s want /%s/, got: %s\n' "$(basename "$f")" "$want" "${verdicts[$i]}"; fail=1
  fi
done
last=${verdicts[${#files[@]}]}
if [[ $last == "verdict: passed"* ]]; then echo "ok   solution after them: $last"; else echo "FAIL solution after them: $last"; fail=1; fi
((rc == 1)) || { echo "FAIL: exit code $rc, want 1 (some candidates failed)"; fail=1; }
grep -E '^worker: ' <<<"$out"
# --sanitize: the solution is clean under compute-sanitizer (memcheck, racecheck, synccheck, initcheck).
if [[ -x "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" ]]; then
  san=$("$ptxforge" run --sanitize --no-time "$task" "$solution" 2>&1)
  if grep -qE "^  sanitize +passed +0 errors from memcheck" <<<"$san"; then echo "ok   --sanitize: $(grep -E '^  sanitize' <<<"$san" | tr -s ' ')"
  else echo "FAIL --sanitize:"; echo "$san"; fail=1; fi
fi
echo "all $(( ${#files[@]} + 1 )) candidates in ${ms} ms"
exit $fail
