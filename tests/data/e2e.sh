#!/usr/bin/env bash
# `ptxforge data` end to end without a GPU: the ISA dictionary; CUDA/PTX pairs from corpus
# files and the generator; mutants labelled by ptxas; repair pairs from a replayed compile
# session, and from another model repairing a failed session (`ptxforge fixit`); the chat
# export with splits and a card. Checks the dataset's invariants: every
# pair's PTX assembles, every mutant differs from its original in one line and its label is
# what ptxas says, the mix is at most 1 broken to 4 good, no source is in two splits.
# Exit 77 without nvcc or ptxas.
set -u
ptxforge=$1; root=$2
for tool in nvcc ptxas; do
  if [[ ! -x /usr/local/cuda/bin/$tool ]] && ! command -v $tool >/dev/null; then echo "no $tool: skipping"; exit 77; fi
done
tmp=$(mktemp -d)
[[ -n ${KEEP_TMP:-} ]] && echo "keeping $tmp" || trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fail=1; fi; }
export PTXFORGE_CACHE_DIR=$tmp/cache

"$ptxforge" data isa -o "$tmp/isa.jsonl"
check "isa: one line per family, each with its manual link" \
  "(( \$(wc -l <'$tmp/isa.jsonl') > 100 )) && ! grep -v '\"manual\":\"https://docs.nvidia.com/cuda/parallel-thread-execution' '$tmp/isa.jsonl' | grep -q ."

mkdir -p "$tmp/src"
cp "$root/tests/corpus/"{vector_add,reduce_sum,transpose}.cu "$tmp/src/"
"$ptxforge" data pairs "$tmp/src" --generate 6 --seed 3 --arch sm_80 --arch sm_90a --flags -O3 --flags -G -o "$tmp/pairs.jsonl" 2>"$tmp/pairs.log"
check "pairs: exit 0" "(( \$? == 0 ))"
cat "$tmp/pairs.log"
"$ptxforge" data pairs "$tmp/src" --generate 6 --seed 3 --arch sm_80 --arch sm_90a --flags -O3 --flags -G -o "$tmp/pairs2.jsonl" 2>/dev/null
check "pairs: the same seed gives the same file" "cmp -s '$tmp/pairs.jsonl' '$tmp/pairs2.jsonl'"

"$ptxforge" data mutate "$tmp/pairs.jsonl" --mix 1:4 --seed 5 -o "$tmp/mutants.jsonl" 2>"$tmp/mutate.log"
check "mutate: exit 0" "(( \$? == 0 ))"
cat "$tmp/mutate.log"

# A replayed session: round 1 fails the front end, round 2 is the solution (assembled here).
python3 - "$root/tasks/level1/vector_add/solution.ptx" "$tmp/replay.json" <<'PY'
import json, sys
sol = open(sys.argv[1]).read()
broken = sol.replace("ret;", "mov.u32 %undeclared, 0; ret;", 1)
json.dump({"replies": [f"```ptx\n{broken}```\n", f"```ptx\n{sol}```\n"]}, open(sys.argv[2], "w"))
PY
# --device gpu: these checks are about sessions that stop at assemble for want of a GPU.
"$ptxforge" compile vector_add --model "replay:$tmp/replay.json" --rounds 2 --out "$tmp/sessions/s1" --no-sanitize --device gpu >/dev/null 2>&1
"$ptxforge" data fixit "$tmp/sessions" -o "$tmp/fixit.jsonl" 2>"$tmp/fixit.log"
cat "$tmp/fixit.log"
check "fixit: one repair pair from the replayed session" "(( \$(wc -l <'$tmp/fixit.jsonl') == 1 ))"

# ptxforge fixit: another model repairs a session that failed (its model only ever answered
# the broken kernel). Without a GPU nothing verifies: kept only with --keep-unverified, and
# only because the failed kernel did not even assemble.
python3 - "$tmp/replay.json" "$tmp/broken.json" <<'PY'
import json, sys
replies = json.load(open(sys.argv[1]))["replies"]
json.dump({"replies": [replies[0]]}, open(sys.argv[2], "w"))
PY
"$ptxforge" compile vector_add --model "replay:$tmp/broken.json" --rounds 1 --out "$tmp/failed/f1" --no-sanitize --device gpu >/dev/null 2>&1
export BENCH_MODEL_LOG=$tmp/fixer-calls.log
fixer="cmd:$root/tests/bench/model.sh good"
"$ptxforge" fixit --model "$fixer" --out "$tmp/repairs" "$tmp/failed" -o "$tmp/repairs-strict.jsonl" 2>"$tmp/fixit-model.log"
rc=$?
cat "$tmp/fixit-model.log"
check "fixit --model: exit 0, one failure found" "((rc == 0)) && grep -q '^fixit: 1 failed trajectories' '$tmp/fixit-model.log'"
check "fixit --model: no GPU, so no pair without --keep-unverified, and it says why" \
  "[[ ! -s '$tmp/repairs-strict.jsonl' ]] && grep -q 'ran without a GPU.*--keep-unverified' '$tmp/fixit-model.log'"
check "fixit --model: the repairing model saw the failed kernel and its verdict" \
  "grep -q '## An earlier attempt that failed' '$tmp/repairs/001-f1-s1/round-01/prompt.md' && grep -q '%undeclared' '$tmp/repairs/001-f1-s1/round-01/prompt.md' && grep -q '### The verdict' '$tmp/repairs/001-f1-s1/round-01/prompt.md'"
calls=$(grep -c '^end ' "$tmp/fixer-calls.log")
"$ptxforge" fixit --model "$fixer" --keep-unverified --out "$tmp/repairs" "$tmp/failed" -o "$tmp/repairs.jsonl" 2>>"$tmp/fixit-model.log"
check "fixit --model: run again, the repair session is continued, no model asked again" \
  "(( \$(grep -c '^end ' '$tmp/fixer-calls.log') == calls && calls >= 1 ))"
unset BENCH_MODEL_LOG
python3 - "$tmp/repairs.jsonl" "$root/tasks/level1/vector_add/solution.ptx" <<'PY' || fail=1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
sol = open(sys.argv[2]).read()
ok = len(lines) == 1 and lines[0]["origin"] == "model-repair" and lines[0]["verified"] is False \
     and "%undeclared" in lines[0]["failed_ptx"] and lines[0]["fixed_ptx"] == sol and lines[0]["feedback"]
print(("ok   " if ok else "FAIL ") + "fixit --keep-unverified: one pair, the failed kernel, its feedback, the solution, marked unverified")
sys.exit(0 if ok else 1)
PY
"$ptxforge" fixit --model "replay:$tmp/broken.json" --rounds 1 --keep-unverified --out "$tmp/repairs-same" "$tmp/failed" -o "$tmp/repairs-same.jsonl" 2>/dev/null
check "fixit --model: a 'repair' that repeats the failed kernel is no pair" "[[ ! -s '$tmp/repairs-same.jsonl' ]]"
"$ptxforge" fixit --model "$fixer" "$tmp/nope" >/dev/null 2>&1
check "fixit --model: a missing folder is a usage error" "(( \$? == 2 ))"

"$ptxforge" data export "$tmp/pairs.jsonl" "$tmp/mutants.jsonl" "$tmp/fixit.jsonl" "$tmp/repairs.jsonl" --out "$tmp/dataset" --seed 9
check "export: exit 0 and a card" "(( \$? == 0 )) && grep -q '^# Dataset card' '$tmp/dataset/card.md'"

# The invariants, read back from the files.
python3 - "$ptxforge" "$tmp" <<'PY' || fail=1
import json, subprocess, sys, os
ptxforge, tmp = sys.argv[1], sys.argv[2]
ok = True
def expect(what, cond):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok = ok and cond
def assemble(ptx, arch, flags):
    path = os.path.join(tmp, "m.ptx")
    open(path, "w").write(ptx)
    args = [ptxforge, "assemble", path, "--arch", arch] + (["-O", "0"] if "-G" in flags else [])
    return subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
pairs = [json.loads(l) for l in open(os.path.join(tmp, "pairs.jsonl"))]
expect("pairs: at least 12 (%d)" % len(pairs), len(pairs) >= 12)
expect("pairs: from the folder and the generator", {p["origin"] for p in pairs} >= {"generator", "folder:src"})
expect("pairs: every PTX assembles (ptxas, again)", all(p["assembles"] and assemble(p["ptx"], p["arch"], p["flags"]) for p in pairs))
expect("pairs: no duplicate hash", len({p["hash"] for p in pairs}) == len(pairs))
expect("pairs: each names its kernels", all(p["kernels"] for p in pairs))
expect("pairs: NVRTC compiled most in this process (%d of %d)" % (sum(p["compiler"] == "nvrtc" for p in pairs), len(pairs)),
       2 * sum(p["compiler"] == "nvrtc" for p in pairs) > len(pairs) and all(p["compiler"] in ("nvrtc", "nvcc") for p in pairs))
lines = [json.loads(l) for l in open(os.path.join(tmp, "mutants.jsonl"))]
bad = [m for m in lines if m["kind"] == "mutant"]
good = [m for m in lines if m["kind"] == "good"]
expect("mutate: some mutants (%d) and good modules (%d), at most 1:4" % (len(bad), len(good)), bad and 4 * len(bad) <= len(good))
def one_line_apart(a, b):
    la, lb = a.split("\n"), b.split("\n")
    return len(la) == len(lb) and sum(x != y for x, y in zip(la, lb)) == 1
expect("mutate: every mutant differs from its original in one line", all(one_line_apart(m["ptx"], m["fixed"]) for m in bad))
expect("mutate: every label is ptxas's verdict", all(assemble(m["ptx"], m["arch"], m["flags"]) == m["ptxas_ok"] for m in bad))
expect("mutate: every mutant is a defect to ptxas or to us", all((not m["ptxas_ok"]) or m["our_errors"] for m in bad))
expect("mutate: several defect classes", len({m["defect"] for m in bad}) >= 3)
fix = json.loads(open(os.path.join(tmp, "fixit.jsonl")).readline())
expect("fixit: failed round 1, fixed round 2, feedback kept", fix["round"] == 1 and "undeclared" in fix["feedback"] and "%undeclared" not in fix["fixed_ptx"])
splits = {}
for s in ("train", "valid", "test"):
    for l in open(os.path.join(tmp, "dataset", s + ".jsonl")):
        e = json.loads(l)
        splits.setdefault(e["source_id"], set()).add(s)
        assert [m["role"] for m in e["messages"]] == ["system", "user", "assistant"]
expect("export: no source in two splits", all(len(v) == 1 for v in splits.values()))
expect("export: every example exported", sum(1 for s in ("train", "valid", "test") for _ in open(os.path.join(tmp, "dataset", s + ".jsonl"))) == len(pairs) + len(lines) + 2)  # + the session's fixit pair and the model's repair
sys.exit(0 if ok else 1)
PY
exit $fail
