#!/usr/bin/env bash
# Records the CPU engine's golden vectors on a GPU (docs/emu.md section 5): builds the GPU test
# binary in <build dir>, runs the recorder (src/worker/emu_golden_record_gpu_test.cpp) with
# PTXFORGE_EMU_GOLDEN_RECORD pointing at tests/emu/golden/, and prints its summary (forms,
# instances, seconds, GPU) and what the CI check will say about the new recording.
# Exit 77 (skipped) where there is no GPU. Then commit tests/emu/golden/{vectors.bin,forms.json}.
set -uo pipefail
build=${1:?usage: tests/emu/golden_record.sh <build dir>}
repo=$(cd "$(dirname "$0")/../.." && pwd)
cmake --build "$build" --target ptxforge_gpu_tests >/dev/null || { echo "building ptxforge_gpu_tests failed" >&2; exit 1; }
out=$(PTXFORGE_EMU_GOLDEN_RECORD="$repo/tests/emu/golden" "$build/tests/ptxforge_gpu_tests" \
        --gtest_filter=EmuGoldenRecord.RecordsTheGpuResults 2>&1)
rc=$?
printf '%s\n' "$out"
if grep -q '^\[  SKIPPED \] EmuGoldenRecord' <<<"$out"; then
  echo "skipped: no GPU (or no driver) here" >&2
  exit 77
fi
[[ $rc -eq 0 ]] && echo "wrote $repo/tests/emu/golden/vectors.bin and forms.json; CI checks them in EmuGolden.MatchesHardware"
exit $rc
