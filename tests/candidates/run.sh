#!/usr/bin/env bash
# GPU test: candidates that exercise the harness's host-side duties must pass: a CUDA C++
# candidate with inline PTX (NVRTC), and a kernel launched in clusters with 64 KB of dynamic
# shared memory (opt-in), and a TMA kernel whose tensor map the harness encodes
# (tests/tasks/tma_copy), whose required TMA and mbarrier instructions are also proven with
# `--prove ncu`. Exit 77 (skip) without a GPU.
set -u
ptxforge=$1; dir=$2
fail=0
for f in "$dir"/*.cu "$dir"/*.ptx; do
  out=$("$ptxforge" run --no-time vector_add "$f" 2>&1); rc=$?
  if grep -q "NOT verified on a GPU" <<<"$out"; then echo "no GPU: skipping"; exit 77; fi
  if ((rc == 0)); then echo "ok   $(basename "$f"): $(grep '^verdict' <<<"$out")"
  else echo "FAIL $(basename "$f") (exit $rc):"; echo "$out"; fail=1; fi
done
tma=$dir/../tasks/tma_copy
out=$("$ptxforge" run --no-time "$tma" "$tma/solution.ptx" 2>&1); rc=$?
if ((rc == 0)); then echo "ok   tma_copy: $(grep '^verdict' <<<"$out")"; else echo "FAIL tma_copy (exit $rc):"; echo "$out"; fail=1; fi
# The executed proof with Nsight Compute as a second witness: it must agree.
out=$("$ptxforge" run --no-time --prove ncu "$tma" "$tma/solution.ptx" 2>&1); rc=$?
if ((rc == 0)) && grep -q "ncu agrees" <<<"$out"; then echo "ok   tma_copy --prove ncu: $(grep 'ncu:' <<<"$out")"
else echo "FAIL tma_copy --prove ncu (exit $rc):"; echo "$out"; fail=1; fi
exit $fail
