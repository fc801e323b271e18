#!/usr/bin/env bash
# Seed sweep for CAMEL-TD3: every condition x every seed of one environment, WORKERS runs at a time.
#
#   ENV_ID=Hopper-v4 LLM_POLICY=policies/hopper.py SEEDS="1 2 3" WORKERS=3 scripts/sweep.sh
#   scripts/hopper.sh                   # the same with Hopper's settings (also walker2d.sh, ant.sh)
#   scripts/sweep.sh --dry-run          # print the run matrix and what each run would do; run nothing
#   scripts/sweep.sh --print-matrix     # one "condition seed" line per run, in the Slurm array's order
#   scripts/sweep.sh --count            # the number of runs in the matrix
#   scripts/sweep.sh --task I           # run only run I of the matrix (0-based; one Slurm array task)
#
# Settings (environment variables):
#   ENV_ID           Gymnasium env id (default Hopper-v4)
#   SEEDS            seeds, space-separated (default "1 2 3")
#   CONDITIONS       conditions, space-separated (default: baseline random random_no_ma_em, then
#                    camel camel_no_ma_em if LLM_POLICY is set, then expert expert_no_ma_em if an expert is)
#   TOTAL_TIMESTEPS  environment steps per run (default 1000000)
#   WORKERS          runs at a time on this machine (default 1)
#   TORCH_THREADS    torch threads per run (default 1 when WORKERS > 1, else torch's default)
#   LLM_POLICY       guide file for the camel conditions, e.g. policies/hopper.py
#   EXPERT_MODEL     expert for the expert conditions: a .cleanrl_model file or a Hugging Face repo id such as
#                    cleanrl/Hopper-v4-td3_continuous_action-seed1 (default experts/{ENV_ID}.cleanrl_model if it
#                    exists; scripts/train_expert.sh makes one)
#   EXTRA_ARGS       more camel_td3.py flags for every new run, split on spaces (e.g. "--eval-frequency 10000")
#   RUNS_DIR         where run folders go (default <repo>/runs); its name must be "runs", because camel_td3.py
#                    writes to ./runs: runs are started from the folder that holds it
#   PYTHON           the interpreter (default <repo>/.venv/bin/python if it exists, else python)
#   DRY_RUN=1        the same as --dry-run
#
# Conditions (each run's --exp-name is its condition):
#   baseline         TD3 with no guide
#   camel            --llm-policy $LLM_POLICY
#   random           --random-guide
#   expert           --expert-model $EXPERT_MODEL
#   *_no_ma_em       the same guide with --no-masking-aware --no-epsilon-masking (the paper's "w/o MA EM")
#
# Each run is RUNS_DIR/{ENV_ID}__{condition}__{seed}, with its output in log.txt there. A run with finished.json
# is skipped, one with checkpoint.pt is resumed (--resume), any other is started fresh: re-running the same
# command after an interruption continues the sweep. A run that fails is reported at the end with the last line
# of its log, and the other runs go on; the sweep then exits 1. A resumed or finished run keeps its own settings
# (changing TOTAL_TIMESTEPS does not extend it). Ctrl-C, or SIGTERM to the sweep's process group (`kill -- -PGID`,
# Slurm, timeout), stops it: each running run saves a checkpoint, and the sweep reports them and exits 130.
set -euo pipefail

SWEEP_SH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
REPO="$(cd "$(dirname "$SWEEP_SH")/.." && pwd)"

die() { echo "error: $*" >&2; exit 2; }
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }

# ---- Settings: environment variables with defaults; paths are made absolute here, before anything changes folder
ENV_ID="${ENV_ID:-Hopper-v4}"
SEEDS="${SEEDS:-1 2 3}"
TOTAL_TIMESTEPS="${TOTAL_TIMESTEPS:-1000000}"
WORKERS="${WORKERS:-1}"
LLM_POLICY="${LLM_POLICY:-}"
EXPERT_MODEL="${EXPERT_MODEL:-}"
EXTRA_ARGS="${EXTRA_ARGS:-}"
RUNS_DIR="$(absolute "${RUNS_DIR:-$REPO/runs}")"
DRY_RUN="${DRY_RUN:-0}"
if [[ -z "${PYTHON:-}" ]]; then
    if [[ -x "$REPO/.venv/bin/python" ]]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python; fi
fi
[[ -n "$LLM_POLICY" ]] && LLM_POLICY="$(absolute "$LLM_POLICY")"
if [[ -z "$EXPERT_MODEL" && -f "$REPO/experts/$ENV_ID.cleanrl_model" ]]; then
    EXPERT_MODEL="$REPO/experts/$ENV_ID.cleanrl_model"
elif [[ -n "$EXPERT_MODEL" && -e "$EXPERT_MODEL" ]]; then
    EXPERT_MODEL="$(absolute "$EXPERT_MODEL")"  # else it is a Hugging Face repo id, passed on as it is
fi
if [[ -z "${CONDITIONS:-}" ]]; then
    CONDITIONS="baseline random random_no_ma_em"
    [[ -n "$LLM_POLICY" ]] && CONDITIONS="$CONDITIONS camel camel_no_ma_em"
    [[ -n "$EXPERT_MODEL" ]] && CONDITIONS="$CONDITIONS expert expert_no_ma_em"
fi
if [[ -z "${TORCH_THREADS:-}" ]]; then
    if [[ "$WORKERS" =~ ^[0-9]+$ && "$WORKERS" -gt 1 ]]; then TORCH_THREADS=1; else TORCH_THREADS=0; fi
fi
WORKDIR="$(dirname "$RUNS_DIR")"
export ENV_ID SEEDS CONDITIONS TOTAL_TIMESTEPS WORKERS TORCH_THREADS LLM_POLICY EXPERT_MODEL EXTRA_ARGS RUNS_DIR PYTHON
if [[ "$TORCH_THREADS" != 0 ]]; then
    export OMP_NUM_THREADS="$TORCH_THREADS" MKL_NUM_THREADS="$TORCH_THREADS"  # also holds for resumed runs
fi

# ---- The run matrix: one "condition seed" line per run, seeds outermost (so seed 1 of every condition comes first)
matrix() {
    local seed cond
    for seed in $SEEDS; do
        for cond in $CONDITIONS; do echo "$cond $seed"; done
    done
}

# The guide flags of a condition, in the array FLAGS
condition_flags() {
    FLAGS=()
    case "$1" in
        baseline) ;;
        camel | camel_no_ma_em) FLAGS=(--llm-policy "$LLM_POLICY") ;;
        random | random_no_ma_em) FLAGS=(--random-guide) ;;
        expert | expert_no_ma_em) FLAGS=(--expert-model "$EXPERT_MODEL") ;;
        *) die "unknown condition '$1' (known: baseline camel random expert, and each guided one with _no_ma_em)" ;;
    esac
    case "$1" in *_no_ma_em) FLAGS+=(--no-masking-aware --no-epsilon-masking) ;; esac
    return 0
}

check_settings() {
    [[ "$(basename "$RUNS_DIR")" == runs ]] ||
        die "RUNS_DIR=$RUNS_DIR must be a folder named 'runs' (camel_td3.py writes to ./runs); e.g. RUNS_DIR=/scratch/me/runs"
    [[ "$WORKERS" =~ ^[1-9][0-9]*$ ]] || die "WORKERS must be a positive integer, got '$WORKERS'"
    [[ "$TORCH_THREADS" =~ ^[0-9]+$ ]] || die "TORCH_THREADS must be a non-negative integer, got '$TORCH_THREADS'"
    [[ "$TOTAL_TIMESTEPS" =~ ^[1-9][0-9]*$ ]] || die "TOTAL_TIMESTEPS must be a positive integer, got '$TOTAL_TIMESTEPS'"
    [[ -n "${SEEDS// /}" ]] || die "SEEDS is empty"
    [[ -n "${CONDITIONS// /}" ]] || die "CONDITIONS is empty"
    local seed cond
    for seed in $SEEDS; do [[ "$seed" =~ ^[0-9]+$ ]] || die "SEEDS must be integers, got '$seed'"; done
    for cond in $CONDITIONS; do
        condition_flags "$cond"
        case "$cond" in
            camel*)
                [[ -n "$LLM_POLICY" ]] || die "condition $cond needs LLM_POLICY, a guide file such as policies/hopper.py"
                [[ -f "$LLM_POLICY" ]] || die "condition $cond: LLM_POLICY $LLM_POLICY does not exist" ;;
            expert*)
                [[ -n "$EXPERT_MODEL" ]] || die "condition $cond needs EXPERT_MODEL: a .cleanrl_model file (scripts/train_expert.sh $ENV_ID makes experts/$ENV_ID.cleanrl_model) or a Hugging Face repo id such as cleanrl/$ENV_ID-td3_continuous_action-seed1"
                [[ -e "$EXPERT_MODEL" || "$EXPERT_MODEL" =~ ^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$ ]] ||
                    die "condition $cond: EXPERT_MODEL $EXPERT_MODEL is neither a file nor a Hugging Face repo id" ;;
        esac
    done
}

# What a run would do now, in ACTION (skip, resume or start) and CMD (the command, run from WORKDIR)
plan_run() {
    local cond="$1" seed="$2" name="${ENV_ID}__$1__$2"
    RUN_DIR="$RUNS_DIR/$name"
    CMD=()
    if [[ -f "$RUN_DIR/finished.json" ]]; then
        ACTION=skip
    elif [[ -f "$RUN_DIR/checkpoint.pt" ]]; then
        ACTION=resume
        CMD=("$PYTHON" "$REPO/camel_td3.py" --resume "runs/$name")
    else
        ACTION=start
        condition_flags "$cond"
        local extra=()
        read -r -a extra <<<"$EXTRA_ARGS" || true
        CMD=("$PYTHON" "$REPO/camel_td3.py" --env-id "$ENV_ID" --seed "$seed" --exp-name "$cond" --run-name "$name"
             --total-timesteps "$TOTAL_TIMESTEPS" ${FLAGS[@]+"${FLAGS[@]}"})
        [[ "$TORCH_THREADS" != 0 ]] && CMD+=(--torch-threads "$TORCH_THREADS")
        CMD+=(${extra[@]+"${extra[@]}"})
    fi
    return 0
}

print_plan() {
    plan_run "$1" "$2"
    if [[ "$ACTION" == skip ]]; then
        printf '%-7s %-16s seed %-4s %s\n' skip "$1" "$2" "(finished: $RUN_DIR/finished.json)"
    else
        local shown
        shown="$(printf '%q ' "${CMD[@]}")"
        [[ "$WORKDIR" == "$REPO" ]] && shown="${shown//$REPO\//}"  # runs start in the repo: show its paths relative
        printf '%-7s %-16s seed %-4s %s\n' "$ACTION" "$1" "$2" "${shown% }"
    fi
}

# Why a run failed, from its log: its last "error: ..." line, else its last line (a traceback's ends in the exception)
failure_reason() {
    local attempt line  # only this attempt's output: the lines after the log's last "===" header
    attempt="$(awk '/^=== / { n = 0; next } { lines[++n] = $0 } END { for (i = 1; i <= n; i++) print lines[i] }' "$1")"
    line="$(grep '^error: ' <<<"$attempt" | tail -n 1 || true)"
    [[ -n "$line" ]] || line="$(grep -v '^[[:space:]]*$' <<<"$attempt" | tail -n 1 || true)"
    echo "${line:0:300}"
}

# Run one (condition, seed) and write its outcome to STATUS_DIR: "<status> <cond> <seed> <seconds> <reason>".
# A Ctrl-C or SIGTERM reaches the run too (its process group), which then saves a checkpoint; the trap only notes it,
# and bash runs it once the run has exited, so the outcome is still recorded (and a Slurm step does not end early).
run_one() {
    local cond="$1" seed="$2" status reason="" rc=0 started=$SECONDS stopped=0
    plan_run "$cond" "$seed"
    if [[ "$ACTION" == skip ]]; then
        status=skipped
    else
        mkdir -p "$RUN_DIR" "$STATUS_DIR/running"
        touch "$STATUS_DIR/running/$cond.$seed"
        echo "=== $(date '+%F %T') $ACTION on $(hostname): ${CMD[*]}" >>"$RUN_DIR/log.txt"
        echo "[sweep] $ACTION $cond seed $seed -> $RUN_DIR/log.txt"
        trap 'stopped=1' INT TERM
        (cd "$WORKDIR" && exec "${CMD[@]}") >>"$RUN_DIR/log.txt" 2>&1 </dev/null || rc=$?
        trap - INT TERM
        if [[ $rc == 0 && -f "$RUN_DIR/finished.json" ]]; then
            status=finished
        elif [[ $rc == 130 || $stopped == 1 ]]; then
            status=interrupted
            if [[ -f "$RUN_DIR/checkpoint.pt" ]]; then reason="checkpoint saved; run the sweep again to resume it"
            else reason="stopped before its first checkpoint; run the sweep again to start it over"; fi
        else
            status=failed reason="exit $rc: $(failure_reason "$RUN_DIR/log.txt")"
        fi
    fi
    echo "[sweep] $status $cond seed $seed ($((SECONDS - started)) s)${reason:+: $reason}"
    echo "$status $cond $seed $((SECONDS - started)) $reason" >"$STATUS_DIR/$cond.$seed"
    rm -f "$STATUS_DIR/running/$cond.$seed"
}

summarize() {
    local total finished skipped failed interrupted
    total=$(matrix | wc -l | tr -d ' ')
    finished=$(cat "$STATUS_DIR"/*.* 2>/dev/null | grep -c '^finished ' || true)
    skipped=$(cat "$STATUS_DIR"/*.* 2>/dev/null | grep -c '^skipped ' || true)
    failed=$(cat "$STATUS_DIR"/*.* 2>/dev/null | grep -c '^failed ' || true)
    interrupted=$(cat "$STATUS_DIR"/*.* 2>/dev/null | grep -c '^interrupted ' || true)
    echo "== sweep $ENV_ID: $total runs: $finished finished, $skipped skipped (already finished), $failed failed, $interrupted interrupted, $((total - finished - skipped - failed - interrupted)) not run"
    local line status cond seed secs reason
    while read -r cond seed; do
        line="$(cat "$STATUS_DIR/$cond.$seed" 2>/dev/null || true)"
        read -r status _ _ secs reason <<<"$line" || true
        case "$status" in
            failed | interrupted) echo "$status: $cond seed $seed ($RUNS_DIR/${ENV_ID}__${cond}__${seed}/log.txt): $reason" ;;
            "") echo "not run: $cond seed $seed" ;;
        esac
    done < <(matrix)
    [[ $((finished + skipped)) == "$total" ]]
}

# ---- Main: pick the mode, check the settings, then run the matrix
MODE="${1:-run}"
case "$MODE" in
    -h | --help) sed -n '2,/^set -euo/p' "$SWEEP_SH" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --print-matrix) check_settings; matrix; exit 0 ;;
    --count) check_settings; matrix | wc -l | tr -d ' '; exit 0 ;;
    --dry-run) DRY_RUN=1 ;;
    --task) [[ "${2:-}" =~ ^[0-9]+$ ]] || die "--task needs a run index (0-based), got '${2:-}'" ;;
    --run-one) run_one "$2" "$3"; exit 0 ;;  # one worker's job (internal; STATUS_DIR is set by the parent)
    run) ;;
    *) die "unknown argument '$MODE' (see scripts/sweep.sh --help)" ;;
esac
check_settings

if [[ "$MODE" == --task ]]; then
    total=$(matrix | wc -l | tr -d ' ')
    (($2 < total)) || die "task $2 is outside the run matrix (0..$((total - 1)): $total runs)"
    read -r cond seed <<<"$(matrix | sed -n "$(($2 + 1))p")"
    if [[ "$DRY_RUN" == 1 ]]; then print_plan "$cond" "$seed"; exit 0; fi
    STATUS_DIR="$(mktemp -d)"
    trap 'rm -rf "$STATUS_DIR"' EXIT
    export STATUS_DIR
    run_one "$cond" "$seed"
    read -r status _ <"$STATUS_DIR/$cond.$seed"
    [[ "$status" == finished || "$status" == skipped ]]
    exit
fi

n_conditions=$(echo $CONDITIONS | wc -w | tr -d ' ')
n_seeds=$(echo $SEEDS | wc -w | tr -d ' ')
echo "== sweep $ENV_ID: $n_conditions conditions x $n_seeds seeds, $TOTAL_TIMESTEPS steps each, $WORKERS at a time, into $RUNS_DIR"
if [[ "$DRY_RUN" == 1 ]]; then
    while read -r cond seed; do print_plan "$cond" "$seed"; done < <(matrix)
    exit 0
fi

mkdir -p "$RUNS_DIR"
STATUS_DIR="$(mktemp -d)"
trap 'rm -rf "$STATUS_DIR"' EXIT
stopped=0
trap 'stopped=1' INT TERM  # Ctrl-C: the runs save checkpoints; xargs stops starting new ones
export STATUS_DIR
matrix | xargs -P "$WORKERS" -n 2 bash "$SWEEP_SH" --run-one || true
if [[ $stopped == 1 ]]; then
    echo "[sweep] stopping: waiting for the runs to save their checkpoints"
    while [[ -n "$(ls -A "$STATUS_DIR/running" 2>/dev/null)" ]]; do sleep 1; done
fi
if ! summarize; then
    [[ $stopped == 1 ]] && { echo "stopped: run the same command again to continue"; exit 130; }
    exit 1
fi
