#!/usr/bin/env bash
# Ant-v4 seed sweep: scripts/sweep.sh with ENV_ID=Ant-v4, whose guided methods take the LLM-written guide
# policies/ant.py unless LLM_POLICY or GUIDES names another. At the defaults (TD3, the paper's CAMEL and CAMEL+,
# seeds 1-3, 1M steps, WORKERS=1) each run takes 1.5-4 hours on one core (CAMEL+ the longest): set TOTAL_TIMESTEPS
# and WORKERS (runs at a time, each on its own core).
# Every setting of scripts/sweep.sh applies (METHODS, GUIDES, SEEDS, TOTAL_TIMESTEPS, WORKERS, EXPERT_MODEL, ...):
#   scripts/ant.sh --dry-run                                  # show the run matrix
#   METHODS="td3 camel_td3 camel_plus_td3" SEEDS="1 2 3" TOTAL_TIMESTEPS=100000 WORKERS=2 scripts/ant.sh
#   METHODS=camel_plus_td3 GUIDES="llm tuned=policies/tuned/ant.py" scripts/ant.sh
#   METHODS="camel_td3 camel_td3_no_ma_em" GUIDES="random expert" EXPERT_MODEL=cleanrl/Ant-v4-td3_continuous_action-seed1 scripts/ant.sh
# Re-running the same command skips finished runs and resumes interrupted ones.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export ENV_ID=Ant-v4
exec bash "$here/sweep.sh" "$@"
