#!/usr/bin/env bash
# Walker2d-v4 seed sweep: the conditions of the paper's figure over SEEDS, with the guide policies/walker2d.py
# (camel; camel_tuned, when named in CONDITIONS, uses the tuned guide policies/tuned/walker2d.py).
# Every setting of scripts/sweep.sh applies (SEEDS, CONDITIONS, TOTAL_TIMESTEPS, WORKERS, EXPERT_MODEL, ...):
#   scripts/walker2d.sh --dry-run                                  # show the run matrix
#   SEEDS="1 2 3" TOTAL_TIMESTEPS=300000 WORKERS=3 scripts/walker2d.sh
#   CONDITIONS="baseline random camel camel_tuned" scripts/walker2d.sh   # a subset of the conditions
#   EXPERT_MODEL=cleanrl/Walker2d-v4-td3_continuous_action-seed1 scripts/walker2d.sh   # adds the expert conditions
# Re-running the same command skips finished runs and resumes interrupted ones.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
export ENV_ID=Walker2d-v4
export LLM_POLICY="${LLM_POLICY:-$repo/policies/walker2d.py}"
export TUNED_POLICY="${TUNED_POLICY:-$repo/policies/tuned/walker2d.py}"
exec bash "$here/sweep.sh" "$@"
