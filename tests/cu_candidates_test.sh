#!/usr/bin/env bash
# `ptxforge run TASK solution.cu`, as a new user runs it, for every shipped
# tasks/level*/*/solution.cu: each passes check (NVRTC, or nvcc for one that includes a C/C++
# standard header such as <stdint.h>) and assemble; on a GPU it also verifies. A standard
# header in front of a stealing include changes nothing: refused at check, no canary out.
# Usage: cu_candidates_test.sh PTXFORGE REPO_ROOT. Exit 77 without bwrap, NVRTC, nvcc or ptxas.
set -u
ptxforge=$1; root=$2
command -v bwrap >/dev/null || { echo "no bwrap: skipping"; exit 77; }
{ [[ -e /usr/local/cuda/lib64/libnvrtc.so.13 ]] || ldconfig -p 2>/dev/null | grep -q libnvrtc.so; } || { echo "no NVRTC: skipping"; exit 77; }
[[ -x /usr/local/cuda/bin/nvcc ]] || command -v nvcc >/dev/null || { echo "no nvcc: skipping"; exit 77; }
[[ -x /usr/local/cuda/bin/ptxas ]] || command -v ptxas >/dev/null || { echo "no ptxas: skipping"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 found=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

cd "$root" || exit 1
for sol in tasks/level*/*/solution.cu; do
  [[ -e $sol ]] || continue
  found=$((found + 1))
  task=$(basename "$(dirname "$sol")")
  out=$("$ptxforge" run --no-time "$task" "$sol" 2>&1)
  rc=$?
  # 0 verified (GPU), 2 not verified for want of a GPU; 1 is a failed stage.
  if ! grep -qE "check +passed" <<<"$out" || ! grep -qE "assemble +passed" <<<"$out" || ((rc == 1)); then
    echo "$out" | head -20
  fi
  check "$sol: check and assemble pass (exit $rc)" \
    "grep -qE 'check +passed' <<<\"\$out\" && grep -qE 'assemble +passed' <<<\"\$out\" && ((rc != 1))"
done
check "found the shipped solution.cu files ($found)" "((found >= 6))"

export PTXFORGE_TEST_SECRET=canary-xyz-cu
printf 'held_back = "canary-xyz-file"\n' >"$tmp/task.toml"
steal() {  # steal <name> <pattern> <include line>
  printf '// @launch grid=(n+255)/256 block=256\n#include <stdint.h>\n%s\n__global__ void vector_add() {}\n' "$3" >"$tmp/$1.cu"
  out=$("$ptxforge" run vector_add "$tmp/$1.cu" 2>&1)
  rc=$?
  check "$1: refused at check (exit $rc)" "((rc == 1)) && grep -q '$2' <<<\"\$out\""
  check "$1: no canary in the output" "! grep -q canary-xyz <<<\"\$out\""
}
steal std_then_environ 'include-quoted' '#include "/proc/self/environ"'
steal std_then_task 'include-path' "#include <$tmp/task.toml>"
steal std_then_computed 'include-computed' "#define F \"$tmp/task.toml\"
#include F"
exit $fail
