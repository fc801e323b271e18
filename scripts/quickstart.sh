#!/usr/bin/env bash
# The first command: CAMEL+ (camel_td3.py's default) and plain TD3 side by side on one env, one run per core,
# then both curves in figures.
#   scripts/quickstart.sh                          # Hopper-v4, 30k steps, seed 1: about 6.5 minutes on 2 cores
#   ENV_ID=Walker2d-v4 STEPS=50000 SEED=2 scripts/quickstart.sh
# Writes quickstart/{ENV_ID}/: runs/ (TensorBoard logs), eval.png (the agents without the mask: what each has
# learned) and train.png (the return of the training episodes: CAMEL+'s are masked around the guide while epsilon > 0,
# so they start near the guide's competence), with their tables eval.md and train.md.
# Re-running it skips finished runs and resumes stopped ones (it is a scripts/sweep.sh sweep); OUT=DIR writes elsewhere.
set -euo pipefail
if [[ $# -gt 0 ]]; then
  if [[ "$1" == -h || "$1" == --help ]]; then awk 'NR > 1 && !/^#/ {exit} NR > 1 {print substr($0, 3)}' "$0"; exit 0; fi
  echo "error: scripts/quickstart.sh takes no arguments: its settings are ENV_ID, STEPS, SEED, EVAL_FREQUENCY (see --help)" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
env_id="${ENV_ID:-Hopper-v4}"
case "$env_id" in
  Hopper-v4) script=hopper ;; Walker2d-v4) script=walker2d ;; Ant-v4) script=ant ;;
  *) echo "error: ENV_ID must be Hopper-v4, Walker2d-v4 or Ant-v4 (the envs with a shipped guide), got '$env_id'" >&2; exit 2 ;;
esac
steps="${STEPS:-30000}"
eval_every="${EVAL_FREQUENCY:-2500}"
out="${OUT:-$repo/quickstart/$env_id}"
python="$repo/.venv/bin/python"; [[ -x "$python" ]] || python=python3

RUNS_DIR="$out/runs" SEEDS="${SEED:-1}" CONDITIONS="baseline camel" VARIANT=qbc_gwarm_noboot_cu2 TOTAL_TIMESTEPS="$steps" WORKERS=2 \
  EXTRA_ARGS="--eval-frequency $eval_every --checkpoint-frequency 0" bash "$here/$script.sh"
cd "$repo"
"$python" plot.py "$out/runs" --output-dir "$out" --name eval > /dev/null
"$python" plot.py "$out/runs" --output-dir "$out" --name train --tag charts/episodic_return > /dev/null
echo
cat "$out/eval.md"
echo
echo "figures: $out/eval.png (the agents without the mask) and $out/train.png (the training episodes)"
