#!/usr/bin/env bash
# The first command: TD3, the paper's CAMEL and CAMEL+ on one env, then their curves in figures.
#   scripts/quickstart.sh                          # Hopper-v4, 30k steps, seed 1
#   ENV_ID=Walker2d-v4 STEPS=50000 SEED=2 scripts/quickstart.sh
# Two runs at a time, each on its own core: CAMEL+, the slowest, beside TD3, then the paper's CAMEL where TD3 ends.
# Its length is CAMEL+'s run: on an idle 2-core AMD EPYC VM with AVX2 only (family 25, model 1), 11 min 25 s in all
# (CAMEL+ 10 min 53 s on one core; TD3 5 min 39 s, then the paper's CAMEL 5 min 31 s, on the other; then the figures).
# CAMEL+ alone took 5 min 42 s to 6 min 11 s on one core of an AMD EPYC with AVX-512 (docs/benchmark.md).
# While they run, each run's progress (its step, steps/s, last returns) is printed every 30 s (PROGRESS_EVERY=N: N s).
# Writes quickstart/{ENV_ID}/: runs/ (TensorBoard logs; each run's output in its log.txt), eval.png (the agents
# without the mask: what each has learned) and train.png (the return of the training episodes: the CAMELs' are masked
# around the guide while epsilon > 0, so they start near the guide's competence), with their tables eval.md, train.md.
# Re-running it skips finished runs and resumes stopped ones (it is a scripts/sweep.sh sweep); OUT=DIR writes elsewhere.
set -euo pipefail
if [[ $# -gt 0 ]]; then
  if [[ "$1" == -h || "$1" == --help ]]; then awk 'NR > 1 && !/^#/ {exit} NR > 1 {print substr($0, 3)}' "$0"; exit 0; fi
  echo "error: scripts/quickstart.sh takes no arguments: its settings are ENV_ID, STEPS, SEED, EVAL_FREQUENCY, OUT, PROGRESS_EVERY (see --help)" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
env_id="${ENV_ID:-Hopper-v4}"
case "$env_id" in
  Hopper-v4) guide=hopper ;; Walker2d-v4) guide=walker2d ;; Ant-v4) guide=ant ;;
  *) echo "error: ENV_ID must be Hopper-v4, Walker2d-v4 or Ant-v4 (the envs with a shipped guide), got '$env_id'" >&2; exit 2 ;;
esac
steps="${STEPS:-30000}"
eval_every="${EVAL_FREQUENCY:-2500}"
out="${OUT:-$repo/quickstart/$env_id}"
python="$repo/.venv/bin/python"; [[ -x "$python" ]] || python=python3

# CAMEL+ first: with two workers it runs on one core while TD3 and then the paper's CAMEL share the other
ENV_ID="$env_id" METHODS="camel_plus_td3 td3 camel_td3" GUIDES=llm LLM_POLICY="$repo/policies/$guide.py" SEEDS="${SEED:-1}" \
  TOTAL_TIMESTEPS="$steps" WORKERS=2 RUNS_DIR="$out/runs" PROGRESS_EVERY="${PROGRESS_EVERY:-30}" \
  EXTRA_ARGS="--eval-frequency $eval_every --checkpoint-frequency 0" bash "$here/sweep.sh"
cd "$repo"
"$python" plot.py "$out/runs" --output-dir "$out" --name eval > /dev/null
"$python" plot.py "$out/runs" --output-dir "$out" --name train --tag charts/episodic_return > /dev/null
echo
cat "$out/eval.md"
echo
echo "figures: $out/eval.png (the agents without the mask) and $out/train.png (the training episodes)"
