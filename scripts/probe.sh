#!/usr/bin/env bash
# The probe of CAMEL+ (docs/design.md, "The probe"), its confirmation: two critic updates per step (cu2), which passed
# the screen (seeds 11-13, beside critic layer norm, which failed it and left the trainer after commit 95415d5), and
# CAMEL+ as it then was, with 1 critic update per step, side by side on fresh seeds with the LLM-written guides, 100k
# steps; cu2 won and joined the default, so camel_qbc_gwarm_noboot_cu2 is CAMEL+ now:
#   scripts/probe.sh     # camel_qbc_gwarm_noboot and camel_qbc_gwarm_noboot_cu2, seeds 16-20, Walker2d-v4, Ant-v4, Hopper-v4
# Every setting of scripts/sweep.sh applies (SEEDS, ENVS, WORKERS, RUNS_DIR, ...). Re-running it skips finished runs
# and resumes stopped ones. Then: python plot.py export runs/ --to docs/results/runs && scripts/figures.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -gt 0 ]]; then
  if [[ "$1" == -h || "$1" == --help ]]; then awk 'NR > 1 && !/^#/ {exit} NR > 1 {print substr($0, 3)}' "$0"; exit 0; fi
  echo "error: scripts/probe.sh takes no arguments: its settings are SEEDS, ENVS and those of scripts/sweep.sh (see --help)" >&2
  exit 2
fi
export SEEDS="${SEEDS:-16 17 18 19 20}" TOTAL_TIMESTEPS="${TOTAL_TIMESTEPS:-100000}" WORKERS="${WORKERS:-2}" CONDITIONS=camel
for env in ${ENVS:-walker2d ant hopper}; do  # each env's two conditions in one pool, seed by seed
  VARIANT="qbc_gwarm_noboot qbc_gwarm_noboot_cu2" bash "$here/$env.sh"
done
