#!/usr/bin/env bash
# The ablation of CAMEL+ (docs/results.md, "The ablation"): on each env, with its LLM-written guide, CAMEL+ and CAMEL+
# with each of its three parts removed, and the paper's CAMEL, 100k steps, on fresh seeds:
#   camel_qbc_gwarm (CAMEL+), camel_qbc_gwarm_noboot (w/o the guide bootstrap), camel_boot_gwarm (w/o guide BC),
#   camel_qbc (w/o the guide warm-up), camel (the paper's CAMEL)
#   scripts/ablation.sh                          # seeds 11-15, Walker2d-v4, Ant-v4, Hopper-v4, two runs at a time
#                                                # (each env's 25 runs in one pool, seed 11 of every cell first)
#   SEEDS="11 12 13" ENVS="ant" scripts/ablation.sh
# Every setting of scripts/sweep.sh applies (WORKERS, RUNS_DIR, ...). Re-running it skips finished runs and resumes
# stopped ones. Then: python plot.py export runs/ --to docs/results/runs && scripts/figures.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -gt 0 ]]; then
  if [[ "$1" == -h || "$1" == --help ]]; then awk 'NR > 1 && !/^#/ {exit} NR > 1 {print substr($0, 3)}' "$0"; exit 0; fi
  echo "error: scripts/ablation.sh takes no arguments: its settings are SEEDS, ENVS and those of scripts/sweep.sh (see --help)" >&2
  exit 2
fi
export SEEDS="${SEEDS:-11 12 13 14 15}" TOTAL_TIMESTEPS="${TOTAL_TIMESTEPS:-100000}" WORKERS="${WORKERS:-2}" CONDITIONS=camel
for env in ${ENVS:-walker2d ant hopper}; do  # each env's cells in one pool, seed by seed; plain: the paper's CAMEL
  VARIANT="qbc_gwarm qbc_gwarm_noboot boot_gwarm qbc plain" bash "$here/$env.sh"
done
