#!/usr/bin/env bash
# GPU test: every adversarial candidate must fail, at the stage and for the reason its
# `// expect:` line names (a regex over the report). Exit 77 (skip) without a GPU.
set -u
ptxforge=$1; dir=$2; task=${3:-vector_add}
out=$("$ptxforge" run --no-time "$task" "$dir/../../tasks/level1/$task/solution.ptx" 2>&1)
rc=$?
if grep -q "NOT verified on a GPU" <<<"$out"; then echo "no GPU: skipping"; exit 77; fi
if ((rc != 0)); then echo "FAIL: the task's own solution does not pass:"; echo "$out"; exit 1; fi
fail=0
for f in "$dir"/*.ptx; do
  want=$(sed -n 's|^// expect: ||p' "$f" | head -1)
  t0=$(date +%s.%N)
  out=$("$ptxforge" run --timeout 10 "$task" "$f" 2>&1); rc=$?
  secs=$(echo "$(date +%s.%N) - $t0" | bc)
  line=$(grep -E "^  (check|assemble|verify|time|prove) +FAILED" <<<"$out" | head -1)
  detail=$(grep -E "FAILED|hint|write past|modified|held back|fresh inputs|never written|ILLEGAL|timeout|all zeros|only the first" <<<"$out")
  if ((rc != 1)) || ! grep -qE -- "$want" <<<"$(echo "$line"; echo "$detail")"; then
    echo "FAIL: $(basename "$f") (exit $rc, want 1 and /$want/):"; echo "$out" | head -40; fail=1
  else
    printf 'ok   %-22s %6.2f s  %s\n' "$(basename "$f")" "$secs" "$(sed 's/^ *//' <<<"$line" | cut -c1-150)"
  fi
done
exit $fail
