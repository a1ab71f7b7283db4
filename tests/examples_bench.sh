#!/usr/bin/env bash
# examples/bench/scripted.toml runs as it is, as a new user would run it from the repository
# root, with no API key in the environment and no GPU needed: the bench finishes its one cell,
# its report shows the replayed trajectory failing the front end in round 1 (the scalar read
# with ld.global) and assembling in round 2, and the results store exports both rounds.
# Usage: examples_bench.sh PTXFORGE REPO_ROOT. Exit 77 without ptxas (nothing would assemble).
set -u
ptxforge=$1; root=$2
if [[ ! -x /usr/local/cuda/bin/ptxas ]] && ! command -v ptxas >/dev/null; then echo "no ptxas: skipping"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

cd "$root" || exit 1
# No key and no base URL reach it: the example must not need them.
env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u OPENAI_BASE_URL -u ANTHROPIC_BASE_URL PTXFORGE_CACHE_DIR="$tmp/cache" \
  "$ptxforge" bench examples/bench/scripted.toml --out "$tmp/b" >"$tmp/run.log" 2>&1
rc=$?
cat "$tmp/run.log"
check "the bench exits 0" "((rc == 0))"
"$ptxforge" bench report "$tmp/b" --format md -o "$tmp/report.md"
check "the report is written" "[[ -s '$tmp/report.md' ]]"
check "its one cell finished" "grep -q '^1 of 1 cells in the store, 1 finished' '$tmp/report.md'"
# | arm | cells | trajectories | extracted | checked | assembled | verified (on a GPU) |: first round / by the last.
check "round 1 fails the front end, round 2 checks and assembles" \
  "grep -qE '^\| replayed \| 1 \| 1 \| 100% \(1/1\) / 100% \(1/1\) \| 0% \(0/1\) / 100% \(1/1\) \| 0% \(0/1\) / 100% \(1/1\) \|' '$tmp/report.md'"
# Without a GPU the CPU engine verifies (named beside the GPU's verdicts, never counted in them).
check "verified: on the CPU engine without a GPU, or by the last round on one" \
  "grep -qE '^\| replayed \| 1 \| 1 \|.*\| (.* / .*; on the CPU engine 100% \(1/1\)|0% \(0/1\) / 100% \(1/1\)) \|$' '$tmp/report.md'"
check "the taxonomy names round 1's mistake (the parameter space)" "grep -qE '^\| diagnostic \| param-space \| 1 \| 1 \|' '$tmp/report.md'"
rounds=$("$ptxforge" bench export "$tmp/b" --table rounds --format jsonl | grep -c '"round"')
check "the store holds both rounds (got $rounds)" "((rounds == 2))"
"$ptxforge" bench report "$tmp/b" --format json -o "$tmp/report.json"
check "the JSON report parses" "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$tmp/report.json'"

exit $fail
