#!/usr/bin/env bash
# The open probe of CAMEL+ (docs/design.md, "The open probe"): two critic updates per step (cu2) and critic layer norm
# (ln), apart and together, added to CAMEL+ with the LLM-written guides, 100k steps:
#   camel_qbc_gwarm_noboot_cu2, _ln and _cu2_ln on seeds 11-13 (the screen: CAMEL+'s own runs on those seeds,
#   camel_qbc_gwarm_noboot, are the ablation's), then the best on fresh seeds with CAMEL+ beside it:
#   scripts/probe.sh                                   # the screen: seeds 11-13, Walker2d-v4, Ant-v4, Hopper-v4
#   CONFIRM=qbc_gwarm_noboot_cu2_ln scripts/probe.sh    # the confirmation of one variant: seeds 16-20
# Every setting of scripts/sweep.sh applies (WORKERS, RUNS_DIR, ...). Re-running it skips finished runs and resumes
# stopped ones. Then: python plot.py export runs/ --to docs/results/runs && scripts/figures.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -gt 0 ]]; then
  if [[ "$1" == -h || "$1" == --help ]]; then awk 'NR > 1 && !/^#/ {exit} NR > 1 {print substr($0, 3)}' "$0"; exit 0; fi
  echo "error: scripts/probe.sh takes no arguments: its settings are SEEDS, ENVS, CONFIRM and those of scripts/sweep.sh (see --help)" >&2
  exit 2
fi
variants="qbc_gwarm_noboot_cu2 qbc_gwarm_noboot_ln qbc_gwarm_noboot_cu2_ln"
seeds="11 12 13"
if [[ -n "${CONFIRM:-}" ]]; then
  if [[ " $variants " != *" $CONFIRM "* ]]; then
    echo "error: CONFIRM=$CONFIRM is not one of the probe's variants: $variants" >&2
    exit 2
  fi
  variants="qbc_gwarm_noboot $CONFIRM" seeds="16 17 18 19 20"
fi
export SEEDS="${SEEDS:-$seeds}" TOTAL_TIMESTEPS="${TOTAL_TIMESTEPS:-100000}" WORKERS="${WORKERS:-2}" CONDITIONS=camel
for env in ${ENVS:-walker2d ant hopper}; do  # each env's variants in one pool, seed by seed
  VARIANT="$variants" bash "$here/$env.sh"
done
