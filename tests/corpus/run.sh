#!/usr/bin/env bash
# Corpus test: compiles every tests/corpus/*.cu with nvcc (sm_80, sm_90, sm_90a at -O3, and
# sm_90a with -G, or the archs its "// corpus-archs:" line names), then checks each module:
# zero front-end diagnostics, print/parse round trip to an equal AST, and the printed module
# assembled by ptxas with the same resource usage as the original. tests/handwritten/*.ptx
# (PTX written by hand, as a model would) goes through the same checks.
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
  archs=${archs:-sm_80 sm_90 sm_90a}
  for arch in $archs; do jobs+=("$src $arch -O3 $out/${name}_${arch}.ptx"); done
  last=${archs##* }
  jobs+=("$src $last -G $out/${name}_${last}_G.ptx")
done
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -L 1 bash -c \
  '"$0" -arch="$2" "$3" -ptx "$1" -o "$4" 2>"$4.log" || { echo "nvcc failed: $1 $2 $3"; cat "$4.log"; exit 255; }' "$nvcc"
# Hand-written modules in the style models write are held to the same standard.
exec "$checker" "$out"/*.ptx "$here"/../handwritten/*.ptx
