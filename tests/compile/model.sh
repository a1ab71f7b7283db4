#!/usr/bin/env bash
# A scripted "model" for the cmd: provider: round 1 answers a vector_add whose index forgets
# the block offset (only the first block is right); round 2 answers the task's solution.
# The request arrives as JSON on stdin; its "round" field says which round it is.
here=$(cd "$(dirname "$0")" && pwd)
request=$(cat)
if grep -q '"round":0' <<<"$request"; then
  printf 'First attempt:\n\n```ptx\n'
  cat "$here/wrong_index.ptx"
  printf '```\n'
else
  printf 'Fixed: the index now includes the block offset.\n\n```ptx\n'
  cat "$here/../../tasks/level1/vector_add/solution.ptx"
  printf '```\n'
fi
