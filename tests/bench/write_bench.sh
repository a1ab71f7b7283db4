#!/usr/bin/env bash
# Writes the test bench's definition into folder $1: bench.toml (named $2) with its two
# scripted models — model.sh (cmd:) and a replay of a module the front end rejects, then
# vector_add's solution for every task — over 4 level-1 tasks × 2 samples × 2 rounds, seed 7.
# The [run] table is read from standard input. Used by e2e.sh (CPU) and gpu_bench.sh (GPU).
set -eu
dir=$1; name=$2
here=$(cd "$(dirname "$0")" && pwd)
python3 - "$here/../../tasks/level1/vector_add/solution.ptx" "$dir/replay.json" <<'PY'
import json, sys
sol = open(sys.argv[1]).read()
broken = sol.replace("ret;", "mov.u32 %undeclared, 0; ret;", 1)
json.dump({"produced_by": "the bench tests", "replies": [f"```ptx\n{broken}```\n", f"```ptx\n{sol}```\n"]}, open(sys.argv[2], "w"))
PY
{
  cat <<TOML
name = "$name"
samples = 2
rounds = 2
seeds = [7]
[[models]]
name = "learner"
spec = "cmd:$here/model.sh learner"
[[models]]
name = "replayed"
spec = "replay:$dir/replay.json"
[tasks]
names = ["vector_add", "saxpy", "gelu", "transpose"]
[run]
TOML
  cat
} >"$dir/bench.toml"
