#!/usr/bin/env bash
# GPU test: candidates that exercise the harness's host-side duties must pass: a CUDA C++
# candidate with inline PTX (NVRTC), and a kernel launched in clusters with 64 KB of dynamic
# shared memory (opt-in), and a TMA kernel whose tensor map the harness encodes
# (tests/tasks/tma_copy), whose required TMA and mbarrier instructions are also proven with
# `--prove ncu`, and two wgmma kernels proving a group of alternatives ("mma.sync |
# wgmma.mma_async"): the wgmma GEMM and a FlashAttention-3-style attention
# (flash_attn_wgmma/). Exit 77 (skip) without a GPU.
set -u
ptxforge=$1; dir=$2
fail=0
for f in "$dir"/*.cu "$dir"/*.ptx; do
  out=$("$ptxforge" run --device gpu --no-time vector_add "$f" 2>&1); rc=$?
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
# Alternatives: the wgmma GEMM against its task with "mma.sync | wgmma.mma_async" in place of
# wgmma (and a floor for each): the group stands on wgmma alone, mma.sync absent, and ncu
# agrees on the binary.
alt=$(mktemp -d)
cp -r "$dir/../../tasks/level3/bgemm_wgmma_nt/." "$alt/"
sed -i -e 's/^required_instructions = \["wgmma.mma_async", /required_instructions = ["mma.sync | wgmma.mma_async", /' \
  -e 's/^\[min_work\]$/[min_work]\n"mma.sync" = "0.9 * m * n * k"/' "$alt/task.toml"
out=$("$ptxforge" run --no-time --prove ncu "$alt" "$alt/solution.ptx" 2>&1); rc=$?
if ((rc == 0)) && grep -q "(or mma.sync)" <<<"$out" && grep -q "ncu agrees" <<<"$out"; then
  echo "ok   bgemm_wgmma_nt with mma.sync | wgmma.mma_async: $(grep '^  prove' <<<"$out")"
else echo "FAIL bgemm_wgmma_nt with mma.sync | wgmma.mma_async (exit $rc):"; echo "$out"; fail=1; fi
rm -rf "$alt"
# The same group in the attention task: a FlashAttention-3-style kernel on wgmma alone passes.
fa=$dir/flash_attn_wgmma/solution.ptx
out=$("$ptxforge" run --no-time flash_attn_fwd "$fa" 2>&1); rc=$?
if ((rc == 0)) && grep -Eq "wgmma\.mma_async +ptx yes .*executed yes" <<<"$out"; then
  echo "ok   flash_attn_wgmma: $(grep '^  prove' <<<"$out")"
else echo "FAIL flash_attn_wgmma (exit $rc):"; echo "$out"; fail=1; fi
exit $fail
