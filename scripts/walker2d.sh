#!/usr/bin/env bash
# Walker2d-v4 seed sweep over SEEDS, with the LLM-written guide policies/walker2d.py (LLM_POLICY=FILE: another guide;
# camel_tuned, when named in CONDITIONS, uses the hand-written guide policies/tuned/walker2d.py). Every run is the
# paper's method (the sweep passes --paper); VARIANT=qbc_gwarm_noboot_cu2 gives CAMEL+, camel_td3.py's default. At the
# defaults (1M steps, WORKERS=1) each run takes 1.5-4 hours on one core (CAMEL+ the longest): set TOTAL_TIMESTEPS and
# WORKERS (one per core).
# Every setting of scripts/sweep.sh applies (SEEDS, CONDITIONS, TOTAL_TIMESTEPS, WORKERS, VARIANT, EXPERT_MODEL, ...):
#   scripts/walker2d.sh --dry-run                                  # show the run matrix
#   SEEDS="1 2 3" TOTAL_TIMESTEPS=100000 WORKERS=2 scripts/walker2d.sh
#   CONDITIONS="baseline camel" VARIANT="plain qbc_gwarm_noboot_cu2" scripts/walker2d.sh   # TD3, the paper's CAMEL and CAMEL+
#   EXPERT_MODEL=cleanrl/Walker2d-v4-td3_continuous_action-seed1 scripts/walker2d.sh   # adds the expert conditions
# Re-running the same command skips finished runs and resumes interrupted ones.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
export ENV_ID=Walker2d-v4
export LLM_POLICY="${LLM_POLICY:-$repo/policies/walker2d.py}"
export TUNED_POLICY="${TUNED_POLICY:-$repo/policies/tuned/walker2d.py}"
exec bash "$here/sweep.sh" "$@"
