#!/usr/bin/env bash
# The adversarial set (tests/adversarial/<name>/kernel.ptx + expect.toml): cheating and broken
# kernels, each of which must fail at the stage and for the reason its expect.toml gives, then
# every tasks/level1 solution, each of which must pass. Prints a table (name | stage | ok |
# reason) and exits 1 on any mismatch or any kernel that passed, 77 (skip) without a GPU.
#   run.sh <ptxforge> [name...]            on a GPU (ctest gpu.adversarial, scripts/gpu-test)
#   run.sh --static <ptxforge> [name...]   without one: ptxas and the check/assemble verdicts
#   run.sh --cpu <ptxforge> [name...]      without one: the verdicts of the CPU engine (--device cpu)
#   run.sh --judge <run.json> <candidate=name>...   judge saved `ptxforge run --json` output
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null || { echo "python3 is needed to read the expectations: skipping"; exit 77; }
case "${1:-}" in
  --static) shift; exec python3 "$here/adversarial.py" static "$@" ;;
  --judge) shift; exec python3 "$here/adversarial.py" judge "$@" ;;
  --cpu) shift; exec python3 "$here/adversarial.py" cpu "$@" ;;
  ""|-h|--help) sed -n '2,10p' "$0"; exit 2 ;;
  *) exec python3 "$here/adversarial.py" gpu "$@" ;;
esac
