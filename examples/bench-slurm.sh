#!/usr/bin/env bash
# A bench on a Slurm cluster: one array task per shard, each on one GPU node, then one job
# that merges the shards and writes the reports. The definition must list its seeds
# (sharding needs them). Submit from a checkout on a shared filesystem:
#   sbatch --array=0-7 examples/bench-slurm.sh my-bench.toml results/my-bench
# and, when the array is done, the merge (or chain it with --dependency=afterok:<array id>),
# which needs no GPU (the command line overrides the #SBATCH lines below):
#   MERGE=1 sbatch --array=0 --gpus-per-node=0 --cpus-per-task=1 examples/bench-slurm.sh my-bench.toml results/my-bench
#SBATCH --job-name=ptxforge-bench
#SBATCH --gpus-per-node=8
#SBATCH --cpus-per-task=32
#SBATCH --time=12:00:00
#SBATCH --output=ptxforge-bench-%A-%a.log
set -euo pipefail
config=$1; out=$2
ptxforge=${PTXFORGE:-build/release/tools/ptxforge/ptxforge}
shards=${SLURM_ARRAY_TASK_COUNT:?run as an array job: sbatch --array=0-N}

if [[ ${MERGE:-0} == 1 ]]; then
  "$ptxforge" bench merge --out "$out/merged" "$out"/shard-*
  for f in md json html; do "$ptxforge" bench report "$out/merged" --format "$f" -o "$out/report.$f"; done
  exit 0
fi
# Each shard has its own folder (its own store); every GPU of the node takes candidates; 4
# cells at once keep the GPUs busy while models think. Rerunning the array resumes.
"$ptxforge" bench "$config" --out "$out/shard-$SLURM_ARRAY_TASK_ID" \
  --shard "$SLURM_ARRAY_TASK_ID/$shards" --gpus all --jobs 4
