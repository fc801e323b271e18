#!/usr/bin/env bash
# Ant-v4 seed sweep: the conditions of the paper's figure over SEEDS, with the guide policies/ant.py
# (camel; camel_tuned, when named in CONDITIONS, uses the tuned guide policies/tuned/ant.py).
# Every setting of scripts/sweep.sh applies (SEEDS, CONDITIONS, TOTAL_TIMESTEPS, WORKERS, EXPERT_MODEL, ...):
#   scripts/ant.sh --dry-run                                  # show the run matrix
#   SEEDS="1 2 3" TOTAL_TIMESTEPS=300000 WORKERS=3 scripts/ant.sh
#   CONDITIONS="baseline random camel camel_tuned" scripts/ant.sh   # a subset of the conditions
#   EXPERT_MODEL=cleanrl/Ant-v4-td3_continuous_action-seed1 scripts/ant.sh   # adds the expert conditions
# Re-running the same command skips finished runs and resumes interrupted ones.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
export ENV_ID=Ant-v4
export LLM_POLICY="${LLM_POLICY:-$repo/policies/ant.py}"
export TUNED_POLICY="${TUNED_POLICY:-$repo/policies/tuned/ant.py}"
exec bash "$here/sweep.sh" "$@"
