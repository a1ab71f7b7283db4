#!/usr/bin/env bash
# On a GPU machine: the e2e test's bench (2 scripted models × 4 level-1 tasks × 2 samples),
# now verified, timed and profiled (--profile) on the GPU, 2 cells at a time; its reports
# (Markdown, JSON, HTML) and the bench's wall time go to $2. Exit 77 without a GPU.
set -u
ptxforge=$1; out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
tmp=$(mktemp -d)
"$here/write_bench.sh" "$tmp" gpu <<'RUN'
sanitize = false   # compute-sanitizer on each of 16 kernels would take most of the run
profile = true
device = "gpu"     # never the CPU engine: without a GPU this skips
RUN
export PTXFORGE_CACHE_DIR=$tmp/cache
t0=$(date +%s.%N)
"$ptxforge" bench "$tmp/bench.toml" --out "$tmp/bench" --jobs 2 >"$out/bench-run.log" 2>&1
rc=$?
t1=$(date +%s.%N)
echo "bench: exit $rc, wall $(python3 -c "print(f'{$t1 - $t0:.1f}')") s" | tee "$out/bench-wall.txt"
grep -q "NOT verified on a GPU" "$out/bench-run.log" && { echo "no GPU: skipping"; exit 77; }
for f in md json html; do "$ptxforge" bench report "$tmp/bench" --format $f -o "$out/bench-report.$f"; done
"$ptxforge" bench export "$tmp/bench" --table timings --format csv -o "$out/bench-timings.csv"
cp "$(ls -d "$tmp"/bench/cells/0000-*/sample-1/round-02/feedback.md 2>/dev/null | head -1)" "$out/bench-feedback-example.md" 2>/dev/null
exit $rc
