#!/usr/bin/env bash
# GPU test: `ptxforge suite validate --no-time`: every task's solution passes on all sizes and
# seeds, trivial outputs fail every task, references agree with cuBLAS. Skips without a GPU.
ptxforge=$1
out=$("$ptxforge" suite validate --device gpu --no-time 2>&1); rc=$?
echo "$out" | grep -E "^[a-z_0-9]+: |HOLE|DISAGREES|validated"
if ((rc == 2)) && grep -q "NOT verified (no GPU)" <<<"$out"; then exit 77; fi
exit $rc
