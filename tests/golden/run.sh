#!/usr/bin/env bash
# Runs one golden test: each "// RUN: <cmd>" line of the file, with %ptxforge, %s and
# %FileCheck substituted, through a shell. Lines marked "// REQUIRES: ptxas" skip (77)
# where ptxas is absent.
set -eu
ptxforge=$1; filecheck=$2; file=$3
if grep -q '^// REQUIRES: ptxas' "$file"; then
  ptxas=${PTXFORGE_CUDA_HOME:-/usr/local/cuda}/bin/ptxas
  [[ -x $ptxas ]] || command -v ptxas >/dev/null || { echo "SKIP: needs ptxas"; exit 77; }
fi
grep '^// RUN: ' "$file" | sed 's|^// RUN: ||' | while IFS= read -r cmd; do
  cmd=${cmd//%ptxforge/$ptxforge}
  cmd=${cmd//%FileCheck/$filecheck}
  cmd=${cmd//%s/$file}
  echo "+ $cmd"
  bash -c "$cmd"
done
