#!/usr/bin/env bash
# `ptxforge bench` end to end without a GPU: 2 scripted models (cmd: and replay:) × 4 tasks × 2
# samples, run whole (the reference); run again, killed with SIGKILL midway and continued;
# run as 2 shards and merged. All three give the same reports (Markdown, JSON, HTML), the
# continued run asks no model twice, and the results store exports. The HTML report is left
# at $3 for the Chromium render test. Exit 77 without ptxas (nothing would assemble).
set -u
ptxforge=$1; here=$2; html_out=${3:-}
if [[ ! -x /usr/local/cuda/bin/ptxas ]] && ! command -v ptxas >/dev/null; then echo "no ptxas: skipping"; exit 77; fi
tmp=$(mktemp -d)
[[ -n ${KEEP_TMP:-} ]] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
# A watchdog: should anything hang, say where (the processes and the logs so far) and stop
# well inside ctest's limit, instead of a bare timeout.
( sleep "${E2E_WATCHDOG_S:-600}" </dev/null >/dev/null 2>&1
  echo "FAIL still running after ${E2E_WATCHDOG_S:-600} s; processes:"; ps -eo pid,ppid,etimes,stat,args | grep -E 'ptxforge|model.sh|ptxas|script' | grep -v grep
  for f in "$tmp"/*.log; do echo "--- $f"; tail -5 "$f"; done
  kill -- -$$ 2>/dev/null; kill $$ ) &
watchdog=$!
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }

"$here/write_bench.sh" "$tmp" e2e <<'RUN'
time = false       # verdicts only: timings would differ from run to run on a GPU
sanitize = false
device = "gpu"     # the mechanics without a GPU: verify stops at "no GPU" (bench.example runs the CPU engine)
RUN

reports() {  # bench folder -> its reports next to it
  "$ptxforge" bench report "$1" --format md -o "$1.md" && "$ptxforge" bench report "$1" --format json -o "$1.json" &&
    "$ptxforge" bench report "$1" --format html -o "$1.html"
}
same_reports() { cmp -s "$1.md" "$2.md" && cmp -s "$1.json" "$2.json" && cmp -s "$1.html" "$2.html"; }

# 1. The reference: one whole run.
export PTXFORGE_CACHE_DIR=$tmp/cache-ref
"$ptxforge" bench "$tmp/bench.toml" --out "$tmp/ref" >"$tmp/ref.log" 2>&1
rc=$?
cat "$tmp/ref.log"
check "whole run exits 0" "((rc == 0))"
reports "$tmp/ref"
check "8 cells, all finished" "grep -q '^8 of 8 cells in the store, 8 finished' '$tmp/ref.md'"
check "learner: every trajectory assembled by its last round" "grep -qE '^\| learner \| 4 \| 8 \| 100% \(8/8\) / 100% \(8/8\) \| 0% \(0/8\) / 100% \(8/8\) \| 0% \(0/8\) / 100% \(8/8\)' '$tmp/ref.md'"
check "the failure taxonomy counts the undeclared register" "grep -qE '^\| diagnostic \| undeclared-reg \| 8 \| 8 \| 16 \|' '$tmp/ref.md'"
check "a run again is a no-op" "'$ptxforge' bench '$tmp/bench.toml' --out '$tmp/ref' 2>&1 | grep -q '8 cells, 8 finished before'"

# On a terminal the progress is one line redrawn in place (script(1) gives the bench a TTY).
if command -v script >/dev/null; then
  script -qec "'$ptxforge' bench '$tmp/bench.toml' --out '$tmp/ref'" /dev/null >"$tmp/tty.log" 2>&1
  check "on a terminal: one progress line, redrawn" "grep -q \$'\\r' '$tmp/tty.log' && grep -q 'bench: 8/8 cells, 0 verified, 0 stopped, ETA done' '$tmp/tty.log'"
fi

# 2. Killed midway, then continued: the same reports, no model call repeated.
export PTXFORGE_CACHE_DIR=$tmp/cache-kill BENCH_MODEL_LOG=$tmp/calls.log
BENCH_MODEL_DELAY=0.4 "$ptxforge" bench "$tmp/bench.toml" --out "$tmp/kill" >"$tmp/kill1.log" 2>&1 &
pid=$!
finished=0
for _ in $(seq 600); do
  finished=$("$ptxforge" bench export "$tmp/kill" --table cells --format jsonl 2>/dev/null | grep -c '"finished":1')
  ((finished >= 2)) && break
  sleep 0.1
done
kill -9 "$pid"; wait "$pid" 2>/dev/null
check "killed after 2..7 cells (got $finished)" "((finished >= 2 && finished < 8))"
"$ptxforge" bench "$tmp/bench.toml" --out "$tmp/kill" >"$tmp/kill2.log" 2>&1
rc=$?
cat "$tmp/kill2.log"
check "the continued run exits 0" "((rc == 0))"
check "it skipped the finished cells" "grep -qE 'bench: 8 cells, [2-7] finished before' '$tmp/kill2.log'"
reports "$tmp/kill"
check "killed and continued: the same reports" "same_reports '$tmp/ref' '$tmp/kill'"
# A call cut off by the kill before its reply reached the cache may be made again (at most
# the one in flight); a call that completed never is.
repeated=$(grep '^end ' "$tmp/calls.log" | sort | uniq -d | wc -l)
check "no model call completed twice (repeated: $repeated, at most the one in flight)" "((repeated <= 1))"
unset BENCH_MODEL_LOG

# 3. Two shards, merged.
export PTXFORGE_CACHE_DIR=$tmp/cache-ref
"$ptxforge" bench "$tmp/bench.toml" --out "$tmp/s0" --shard 0/2 >/dev/null 2>&1 &&
  "$ptxforge" bench "$tmp/bench.toml" --out "$tmp/s1" --shard 1/2 >/dev/null 2>&1
check "both shards ran" "(($? == 0))"
check "shard 0 holds cells 0, 2, 4, 6" "[[ \$('$ptxforge' bench export '$tmp/s0' --table cells --format csv | cut -d, -f2 | tail -n +2 | tr '\n' ' ') == '0 2 4 6 ' ]]"
"$ptxforge" bench merge --out "$tmp/merged" "$tmp/s0" "$tmp/s1"
check "merge exits 0" "(($? == 0))"
reports "$tmp/merged"
check "sharded and merged: the same reports" "same_reports '$tmp/ref' '$tmp/merged'"
check "merged sessions copied" "[[ -f \$(ls -d '$tmp'/merged/cells/0001-*/sample-1/round-01/round.json | head -1) ]]"

# 4. The store exports, and wrong use is refused with a reason.
check "rounds export: one row per evaluated round" "(( \$('$ptxforge' bench export '$tmp/ref' --table rounds | wc -l) == 32 ))"
check "csv has a header" "'$ptxforge' bench export '$tmp/ref' --table cells --format csv | head -1 | grep -q '^id,idx,model'"
check "an unknown table is refused with the list" "'$ptxforge' bench export '$tmp/ref' --table nope 2>&1 >/dev/null | grep -q 'no table .nope. (tables: meta'"
sed 's/^rounds = 2/rounds = 3/' "$tmp/bench.toml" >"$tmp/other.toml"
"$ptxforge" bench "$tmp/other.toml" --out "$tmp/ref" >"$tmp/other.log" 2>&1
check "another definition in the same folder: exit 2" "(($? == 2)) && grep -q 'another definition' '$tmp/other.log'"
grep -v '^seeds' "$tmp/bench.toml" >"$tmp/noseed.toml"
"$ptxforge" bench "$tmp/noseed.toml" --out "$tmp/noseed" --shard 0/2 >"$tmp/noseed.log" 2>&1
check "--shard without seeds: exit 2" "(($? == 2)) && grep -q 'needs the seeds' '$tmp/noseed.log'"
"$ptxforge" bench merge --out "$tmp/bad" "$tmp/ref" "$tmp/noseed" >"$tmp/merge.log" 2>&1
check "merging different benches: exit 2" "(($? == 2))"

[[ -n $html_out ]] && cp "$tmp/ref.html" "$html_out"
pkill -P "$watchdog" sleep 2>/dev/null; kill "$watchdog" 2>/dev/null
exit $fail
