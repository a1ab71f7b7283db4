#!/usr/bin/env bash
# GPU test: candidate buffers are placed with guard pages. The candidates here access memory
# far outside a buffer (1 MiB past the end of 'c', 64 KiB past the end of 'a', 1 MiB before
# 'c'); each verdict must match the regex on its `// expect:` line, and the task's solution,
# run after them in the same harness, must pass with "guard": "vmm" in its record.
# Exit 77 (skip) without a GPU.
set -u
ptxforge=$1; dir=$2; task=${3:-vector_add}
solution="$dir/../../tasks/level1/$task/solution.ptx"
out=$("$ptxforge" run --device gpu --no-time "$task" "$solution" 2>&1)
if grep -q "NOT verified on a GPU" <<<"$out"; then echo "no GPU: skipping"; exit 77; fi
fail=0
json=$("$ptxforge" run --no-time --json "$task" "$solution" 2>&1)
if grep -q '"guard": "vmm"' <<<"$json"; then echo "ok   the solution ran on buffers with guard pages"
else echo "FAIL the solution's record does not say \"guard\": \"vmm\":"; grep -E '"guard' <<<"$json"; fail=1; fi
files=("$dir"/*.ptx)
out=$("$ptxforge" run --no-time --timeout 20 "$task" "${files[@]}" "$solution" 2>&1)
echo "$out" > "${TEST_LOG:-/dev/null}"
mapfile -t verdicts < <(grep '^verdict: ' <<<"$out")
if ((${#verdicts[@]} != ${#files[@]} + 1)); then
  echo "FAIL: expected $((${#files[@]} + 1)) verdicts, got ${#verdicts[@]}"; echo "$out" | tail -40; exit 1
fi
for i in "${!files[@]}"; do
  f=${files[$i]}; want=$(sed -n 's|^// expect: ||p' "$f" | head -1)
  if grep -qE -- "$want" <<<"${verdicts[$i]}"; then printf 'ok   %-28s %s\n' "$(basename "$f")" "$(cut -c1-160 <<<"${verdicts[$i]}")"
  else printf 'FAIL %-28s want /%s/, got: %s\n' "$(basename "$f")" "$want" "${verdicts[$i]}"; fail=1; fi
done
last=${verdicts[${#files[@]}]}
if [[ $last == "verdict: passed"* ]]; then echo "ok   solution after them: $last"; else echo "FAIL solution after them: $last"; fail=1; fi
exit $fail
