#!/usr/bin/env bash
# Train a TD3 expert for expert masking on this machine, so expert masking needs no network:
#   scripts/train_expert.sh Hopper-v4 [STEPS]     # STEPS defaults to 1000000, as CleanRL's Hub experts
# trains plain TD3 (camel_td3.py with no guide, --save-model) in EXPERTS_DIR/runs/{ENV_ID}__td3_expert__{SEED},
# then copies its actor to EXPERTS_DIR/{ENV_ID}.cleanrl_model (CleanRL's format), where the sweep scripts find it:
#   METHODS=camel_td3 GUIDES=expert scripts/hopper.sh   # the paper's CAMEL with expert masking
#   python camel_td3.py --expert-model experts/Hopper-v4.cleanrl_model
# Settings (environment variables): SEED (default 1), EXPERTS_DIR (default <repo>/experts; keep it out of git),
# EXTRA_ARGS (more camel_td3.py flags, split on spaces; e.g. "--llm-policy policies/hopper.py" trains the expert
# with the paper's CAMEL), PYTHON, TORCH_THREADS (default 1, as the sweeps; 0 is torch's default), FORCE=1 (train
# again even if the model exists). Like the sweeps, re-running after an interruption resumes the run from its checkpoint.
# (The sweeps also find an expert downloaded from the Hub with
# `hf download cleanrl/Hopper-v4-td3_continuous_action-seed1 td3_continuous_action.cleanrl_model --local-dir experts/Hopper-v4`.)
set -euo pipefail
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then awk 'NR > 1 && !/^#/ {exit} NR > 1 {print substr($0, 3)}' "$0"; exit 0; fi

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "error: $*" >&2; exit 2; }

# ---- Settings
ENV_ID="${1:-}"
[[ -n "$ENV_ID" && "$ENV_ID" != -* ]] || die "usage: scripts/train_expert.sh ENV_ID [STEPS], e.g. scripts/train_expert.sh Hopper-v4 1000000"
STEPS="${2:-1000000}"
[[ "$STEPS" =~ ^[1-9][0-9]*$ ]] || die "STEPS must be a positive integer, got '$STEPS'"
SEED="${SEED:-1}"
EXPERTS_DIR="${EXPERTS_DIR:-$REPO/experts}"
EXTRA_ARGS="${EXTRA_ARGS:-}"
FORCE="${FORCE:-0}"
TORCH_THREADS="${TORCH_THREADS:-1}"
[[ "$TORCH_THREADS" =~ ^[0-9]+$ ]] || die "TORCH_THREADS must be a non-negative integer, got '$TORCH_THREADS'"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "$REPO/.venv/bin/python" ]]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python; fi
fi
mkdir -p "$EXPERTS_DIR"
EXPERTS_DIR="$(cd "$EXPERTS_DIR" && pwd)"
NAME="${ENV_ID}__td3_expert__${SEED}"
RUN_DIR="$EXPERTS_DIR/runs/$NAME"
MODEL="$EXPERTS_DIR/$ENV_ID.cleanrl_model"

if [[ -f "$MODEL" && "$FORCE" != 1 ]]; then
    echo "$MODEL is already there (FORCE=1 trains a new one)"
    exit 0
fi

# ---- Train (or resume, or reuse a finished run), as the sweeps do; camel_td3.py writes to ./runs, so run in EXPERTS_DIR
if [[ -f "$RUN_DIR/finished.json" && "$FORCE" != 1 ]]; then
    echo "$RUN_DIR already finished; copying its model"
else
    if [[ -f "$RUN_DIR/checkpoint.pt" ]]; then
        CMD=("$PYTHON" "$REPO/camel_td3.py" --resume "runs/$NAME" --torch-threads "$TORCH_THREADS")
    else
        [[ -f "$RUN_DIR/finished.json" ]] && mv "$RUN_DIR" "$RUN_DIR.old.$(date +%s)"  # FORCE=1: keep the old run aside
        read -r -a extra <<<"$EXTRA_ARGS" || true
        # the run starts in EXPERTS_DIR: a relative path given here (e.g. --llm-policy policies/hopper.py, for an
        # expert trained with CAMEL) is made absolute, so it still names the file the caller meant
        for i in "${!extra[@]}"; do
            if [[ "${extra[$i]}" != /* && "${extra[$i]}" != -* && -e "${extra[$i]}" ]]; then extra[$i]="$PWD/${extra[$i]}"; fi
        done
        CMD=("$PYTHON" "$REPO/camel_td3.py" --env-id "$ENV_ID" --seed "$SEED" --exp-name td3_expert --run-name "$NAME"
             --total-timesteps "$STEPS" --save-model --torch-threads "$TORCH_THREADS" ${extra[@]+"${extra[@]}"})
    fi
    echo "training the $ENV_ID expert ($STEPS steps): ${CMD[*]}"
    (cd "$EXPERTS_DIR" && exec "${CMD[@]}")
fi

# ---- Copy the actor to where the sweeps look for it
[[ -f "$RUN_DIR/td3_expert.cleanrl_model" ]] || die "$RUN_DIR has no td3_expert.cleanrl_model (was it trained with --no-save-model?)"
cp "$RUN_DIR/td3_expert.cleanrl_model" "$MODEL.tmp" && mv "$MODEL.tmp" "$MODEL"
echo "expert saved to $MODEL (final eval return $(grep -o '"final_eval_return": [^,]*' "$RUN_DIR/finished.json" | cut -d' ' -f2))"
