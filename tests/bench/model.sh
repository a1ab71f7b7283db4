#!/usr/bin/env bash
# A scripted model for the bench test (cmd: provider). `model.sh good` answers every task with
# its solution at once; `model.sh learner` first answers a module that fails the front end (a
# register it never declares), then the solution. Each call is logged ("start"/"end" and a
# hash of the request) to $BENCH_MODEL_LOG, so the test can prove no call was made twice;
# $BENCH_MODEL_DELAY slows every call (seconds), so a bench can be killed midway.
here=$(cd "$(dirname "$0")" && pwd)
request=$(cat)
log=${BENCH_MODEL_LOG:-/dev/null}
hash=$(printf '%s' "$request" | sha256sum | cut -c1-16)
echo "start $hash" >>"$log"
task=$(grep -o '# Task [a-z_0-9]*' <<<"$request" | head -1 | cut -d' ' -f3)
round=$(grep -o '"round":[0-9]*' <<<"$request" | head -1 | cut -d: -f2)
sleep "${BENCH_MODEL_DELAY:-0}"
solution="$here/../../tasks/level1/$task/solution.ptx"
if [[ ! -f $solution ]]; then
  echo "model.sh: no solution for task '$task'" >&2
  exit 1
fi
if [[ $1 == learner && $round == 0 ]]; then
  printf 'First try:\n\n```ptx\n'
  sed '0,/ret;/s//mov.u32 %undeclared, 0; ret;/' "$solution"
  printf '```\n'
else
  printf 'Here is the kernel.\n\n```ptx\n'
  cat "$solution"
  printf '```\n'
fi
echo "end $hash" >>"$log"
