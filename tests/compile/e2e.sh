#!/usr/bin/env bash
# GPU test: `ptxforge compile` end to end with a cmd: model that first answers a kernel with a
# wrong index, then the solution: two rounds, the second verified and timed, and the second
# prompt carries the first round's mismatch summary. Exit 77 (skip) without a GPU.
set -u
ptxforge=$1; here=$2
out=$(mktemp -d)/session
"$ptxforge" compile vector_add --device gpu --model "cmd:$here/model.sh" --out "$out" --no-cache --knowledge none > "$out.log" 2>&1
rc=$?
cat "$out.log"
if grep -q "NOT verified on a GPU" "$out.log"; then echo "no GPU: skipping"; exit 77; fi
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
check "exit code 0 (verified)" "((rc == 0))"
check "two rounds" "grep -qE '^  round  2 ' '$out.log' && ! grep -qE '^  round  3 ' '$out.log'"
check "round 1 failed at verify" "grep -qE '^  round  1  FAILED at verify' '$out.log'"
check "round 2 verified and timed" "grep -qE '^  round  2  passed.*x nvcc' '$out.log'"
check "round 2's prompt has round 1's hint" "grep -q 'only the first 256' '$out/round-02/prompt.md'"
check "best.ptx, best.cubin, report.json, transcript.md" "[[ -s $out/best.ptx && -s $out/best.cubin && -s $out/report.json && -s $out/transcript.md ]]"
check "report says verified" "grep -q '\"status\": \"verified\"' '$out/report.json'"
exit $fail
