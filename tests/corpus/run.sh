#!/usr/bin/env bash
# Corpus test: compiles every tests/corpus/*.cu with nvcc at -O3 for sm_80, sm_90, sm_90a and
# sm_100a (or the archs its "// corpus-archs:" line names), and once with -G, then checks each
# module: no front-end error, warnings within tests/corpus/warning_budget.txt, print/parse
# round trip to an equal AST, and the printed module assembled by ptxas with the same resource
# usage as the original. -G output (unoptimised, with debug sections) is the slowest to make,
# so each file gets it for one of its archs, picked by a checksum of the file's name: every
# arch is covered at -G without compiling everything twice, and adding a file does not move
# the others' -G arch (which would shift the warning counts the budget holds). tests/handwritten/*.ptx (PTX written by
# hand, as a model would) goes through the same checks.
set -euo pipefail
checker=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
nvcc=${PTXFORGE_CUDA_HOME:-/usr/local/cuda}/bin/nvcc
if [[ ! -x $nvcc ]]; then
  echo "SKIP: nvcc not found at $nvcc"
  exit 77
fi
mkdir -p "$out"
jobs=()
for src in "$here"/*.cu; do
  name=$(basename "$src" .cu)
  archs=$(sed -n 's|^// corpus-archs: *||p' "$src")
  archs=${archs:-sm_80 sm_90 sm_90a sm_100a}
  read -ra list <<< "$archs"
  for arch in "${list[@]}"; do jobs+=("$src $arch -O3 $out/${name}_${arch}.ptx"); done
  sum=$(printf '%s' "$name" | cksum)
  debug=${list[$((${sum%% *} % ${#list[@]}))]}
  jobs+=("$src $debug -G $out/${name}_${debug}_G.ptx")
done
start=$SECONDS
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -L 1 bash -c \
  '"$0" -arch="$2" "$3" -ptx "$1" -o "$4" 2>"$4.log" || { echo "nvcc failed: $1 $2 $3"; cat "$4.log"; exit 255; }' "$nvcc"
echo "nvcc: ${#jobs[@]} modules in $((SECONDS - start)) s"
# Hand-written modules in the style models write are held to the same standard.
exec "$checker" --warning-budget "$here/warning_budget.txt" "$out"/*.ptx "$here"/../handwritten/*.ptx
