#!/usr/bin/env bash
# The third source of training PTX, where cuobjdump is installed (the GPU machine): the PTX
# modules the CUDA toolkit's own libraries carry in their fatbins, through `data pairs
# --library`, then the smallest of them mutated by `data mutate`. Prints per-library counts and
# checks the invariants: every line is a source-less pair from cuobjdump with ptxas's label and
# a distinct hash, and at least one library gives PTX. Exit 77 (skip) without cuobjdump.
#   tests/data/library.sh PTXFORGE [OUT_DIR]
set -euo pipefail
ptxforge=${1:?usage: library.sh PTXFORGE [OUT_DIR]}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
cuda=${PTXFORGE_CUDA_HOME:-${CUDA_HOME:-/usr/local/cuda}}
if [[ ! -x $cuda/bin/cuobjdump ]] && ! command -v cuobjdump >/dev/null; then echo "no cuobjdump: skipping"; exit 77; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args=()
for name in libcublas libcublasLt libcufft libcurand libcusparse libcusolver libnpps libnvjpeg; do
  f=$(readlink -f "$cuda/lib64/$name.so" 2>/dev/null) || continue
  [[ -f $f ]] && args+=(--library "$f")
done
((${#args[@]})) || { echo "no CUDA libraries under $cuda/lib64"; exit 1; }
"$ptxforge" data pairs "${args[@]}" -o "$work/pairs.jsonl" 2>"$out/library_pairs.log" || {
  cat "$out/library_pairs.log"; exit 1; }
cat "$out/library_pairs.log"
python3 - "$work/pairs.jsonl" "$work/small.jsonl" >"$out/library_summary.txt" <<'PY'
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = collections.defaultdict(lambda: [0, 0, 0, 0])
hashes = set()
for r in rows:
    assert r["kind"] == "pair" and r["compiler"] == "cuobjdump" and r["cuda"] == "", r["source_id"]
    assert r["origin"].startswith("library:") and r["ptx"].strip(), r["source_id"]
    assert r["hash"] not in hashes, "duplicate hash " + r["hash"]
    hashes.add(r["hash"])
    b = by[r["origin"]]
    b[0] += 1; b[1] += r["assembles"]; b[2] += len(r["kernels"]); b[3] += len(r["ptx"])
print(f"{'library':40} {'modules':>8} {'assemble':>9} {'kernels':>8} {'MB':>8}")
for k, (n, ok, kern, size) in sorted(by.items()):
    print(f"{k:40} {n:8} {ok:9} {kern:8} {size / 1e6:8.2f}")
print(f"{'all':40} {len(rows):8} {sum(r['assembles'] for r in rows):9} {sum(len(r['kernels']) for r in rows):8}"
      f" {sum(len(r['ptx']) for r in rows) / 1e6:8.2f}")
assert rows, "no library gave PTX"
small = sorted((r for r in rows if r["assembles"]), key=lambda r: len(r["ptx"]))[:4]
with open(sys.argv[2], "w") as f:
    for r in small: f.write(json.dumps(r) + "\n")
PY
cat "$out/library_summary.txt"
# The smallest modules that assemble, mutated: defects in code unlike the generator's.
"$ptxforge" data mutate "$work/small.jsonl" --mix 1:1 -o "$work/mutants.jsonl" 2>"$out/library_mutate.log"
cat "$out/library_mutate.log"
python3 - "$work/mutants.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
mutants = [r for r in rows if r["kind"] == "mutant"]
print(f"mutants of library PTX: {len(mutants)} (of {len(rows)} lines); rejected by ptxas: "
      f"{sum(not r['ptxas_ok'] for r in mutants)}, our front end agrees with ptxas: {sum(r['agree'] for r in mutants)}")
assert mutants, "no mutant of library PTX"
PY
