#!/usr/bin/env bash
# Redraw every results figure and table in docs/results/ from the committed run data (docs/results/runs/), with no
# training: one plot.py call per question of docs/results.md, whose quoted tables it then updates. A figure whose
# runs are not in the data yet is reported and skipped. These questions were asked before docs/preregistration.md:
# their tables keep the permutation tests their claims cite, beside the interval estimates (with 2,000 bootstrap
# resamples, to keep this script to minutes; a registered experiment's analysis takes plot.py's 50,000).
#   scripts/figures.sh                 # all figures, from the committed runs into docs/results/
#   RUNS=runs/ scripts/figures.sh      # the same figures from your own runs, into plots/ (OUT=DIR: elsewhere)
#   FORMATS=png scripts/figures.sh     # only the PNG of each figure (default: png svg pdf), the tables as ever
#   FORMATS=none scripts/figures.sh    # the tables alone, no figure: a third of the time
# Only the committed runs (RUNS unset) redraw docs/results/ and rewrite the tables quoted in docs/results.md; they also
# draw each registered experiment's figure from docs/results/experiments/<id>/ once all its runs are in.
set -uo pipefail
if [ $# -gt 0 ]; then
  if [ "$1" = -h ] || [ "$1" = --help ]; then awk 'NR > 1 && !/^#/ {exit} NR > 1 {print substr($0, 3)}' "$0"; exit 0; fi
  echo "error: scripts/figures.sh takes no arguments: its settings are RUNS, OUT, FORMATS and PYTHON (see --help)" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
python="${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}"
runs="${RUNS:-docs/results/runs}"
if [ -n "${RUNS:-}" ]; then out="${OUT:-plots}"; else out="${OUT:-docs/results}"; fi
missing=()
echo "figures of the runs in $runs, into $out/"

stats=(--permutation-test --bootstrap-resamples 2000 --formats ${FORMATS:-png svg pdf})

figure() {  # figure NAME "CONDITIONS IT IS ABOUT" PLOT_ARGS...: draw it if any run of those conditions exists
  local name="$1" about="$2" condition; shift 2
  echo "== $name"
  for condition in $about; do
    if compgen -G "$runs/*__${condition}__*" > /dev/null; then
      "$python" plot.py "$runs" --output-dir "$out" --name "$name" "${stats[@]}" "$@" || missing+=("$name")
      return
    fi
  done
  echo "no runs of $about yet"
  missing+=("$name")
}

# The committed runs' historical names say what guided the runs and the settings where they differ from the paper's
# CAMEL (camel_utils/conditions.py): camel_tuned is CAMEL with the hand-written, tuned guide (policies/tuned/), camel with
# the LLM-written guide (policies/{env}.py), and *_ls25k learned from 25k instead of 5k; figures label each by its
# method's short name and the guide file its runs recorded. Each table compares a condition only with a baseline at its
# settings.

# the README's earlier figure (L100's replaced it): TD3 and the paper's CAMEL (seeds 1-5), CAMEL+ and CAMEL+ with 1
# critic update per step, the default until the probe's confirmation, both on that confirmation's fresh seeds 16-20,
# with the LLM-written guides
figure earlier_readme "camel_qbc_gwarm_noboot_cu2 camel_qbc_gwarm_noboot" --envs Hopper-v4 Walker2d-v4 Ant-v4 \
                  --conditions baseline camel camel_qbc_gwarm_noboot_cu2 camel_qbc_gwarm_noboot \
                  --seeds camel=1-5 --seeds camel_qbc_gwarm_noboot_cu2=16-20 --seeds camel_qbc_gwarm_noboot=16-20 \
                  --label "camel_qbc_gwarm_noboot_cu2=CAMEL+, LLM-written guide, seeds 16-20" \
                  --label "camel_qbc_gwarm_noboot=CAMEL+ (1 critic update), LLM-written guide, seeds 16-20"
# the paper's CAMEL (learning from 5k): TD3 against CAMEL with the LLM-written guide (and, on Hopper-v4, whose
# default guide is a refined answer, with the best one-answer guide) and with the tuned guide
figure headline   "camel camel_tuned" --envs Hopper-v4 Walker2d-v4 Ant-v4 --conditions baseline camel camel_oneanswer camel_tuned \
                  --seeds camel=1-5
# the same learning from 25k, CleanRL's TD3 setting
figure headline_25k "camel_tuned_ls25k" --envs Hopper-v4 Walker2d-v4 Ant-v4 --conditions baseline_ls25k camel_tuned_ls25k \
                  --baseline baseline_ls25k
figure ant        "random_ls25k expert_ls25k" --envs Ant-v4 \
                  --conditions baseline_ls25k random_ls25k expert_ls25k camel_tuned_ls25k --baseline baseline_ls25k
figure expert     "expert_ls25k" --envs Hopper-v4 Ant-v4 \
                  --conditions baseline_ls25k random_ls25k expert_ls25k camel_tuned_ls25k --baseline baseline_ls25k
figure controls   "camel_tuned_ls25k_no_ma_em expert_ls25k_no_ma_em random_ls25k_no_ma_em" --envs Hopper-v4 \
                  --conditions baseline_ls25k camel_tuned_ls25k camel_tuned_ls25k_no_ma_em expert_ls25k expert_ls25k_no_ma_em \
                  random_ls25k random_ls25k_no_ma_em --baseline baseline_ls25k
# poor guides: Hopper-v4 learning from 25k (beside the 25k TD3 and CAMEL runs), Walker2d-v4 at the defaults
figure poor_guide "standstill_ls25k lean_ls25k" --envs Hopper-v4 \
                  --conditions baseline_ls25k camel_tuned_ls25k standstill_ls25k lean_ls25k --baseline baseline_ls25k
figure poor_guide_walker2d "standstill lean" --envs Walker2d-v4 --conditions baseline camel_tuned standstill lean
# the retired experiments that let the unmasked agent gain while masking is on (learning from 25k), beside learning from 5k;
# conditions.py calls them variants A, B and C (fullactor, fulltarget, distill: docs/design.md says what each was)
figure unmasked_gain "camel_tuned_fullactor_ls25k camel_tuned_fulltarget_ls25k camel_tuned_distill_ls25k" --envs Hopper-v4 Ant-v4 \
                  --conditions baseline_ls25k baseline camel_tuned_ls25k camel_tuned camel_tuned_fullactor_ls25k \
                  camel_tuned_fulltarget_ls25k camel_tuned_distill_ls25k --baseline baseline_ls25k
# CAMEL+ (docs/design.md): the levers for the agent to outgrow its guide, beside TD3 and the paper's CAMEL, tuned guides;
# the chosen lever with the LLM-written guides and with the poor guides; each the screen's seeds only (1-2, 1)
figure outgrow    "camel_tuned_prop_gwarm camel_tuned_bc_gwarm camel_tuned_qbc_gwarm" --envs Hopper-v4 Walker2d-v4 Ant-v4 \
                  --conditions baseline camel_tuned camel_tuned_prop_gwarm camel_tuned_bc_gwarm camel_tuned_qbc_gwarm \
                  --seeds camel_tuned_qbc_gwarm=1-2
figure outgrow_llm_guide "camel_qbc_gwarm" --envs Hopper-v4 Walker2d-v4 Ant-v4 --conditions baseline camel camel_qbc_gwarm \
                  --seeds camel=1-5 --seeds camel_qbc_gwarm=1
figure outgrow_poor_guide "standstill_qbc_gwarm lean_qbc_gwarm" --envs Hopper-v4 Walker2d-v4 \
                  --conditions baseline standstill standstill_qbc_gwarm lean lean_qbc_gwarm \
                  --seeds standstill_qbc_gwarm=1 --seeds lean_qbc_gwarm=1
# the chosen lever confirmed on seeds 6-10, not those it was chosen on (1-2), beside the 5-seed TD3 and paper's CAMEL
figure confirm    "camel_tuned_qbc_gwarm" --envs Hopper-v4 Walker2d-v4 Ant-v4 --conditions baseline camel_tuned camel_tuned_qbc_gwarm \
                  --seeds camel_tuned_qbc_gwarm=6-10 --label "camel_tuned_qbc_gwarm=CAMEL+ (early version, commit 4b0bd79), hand-written guide (tuned), seeds 6-10"
# the same lever with the LLM-written guides on seeds 6-10, beside TD3 and the paper's CAMEL with those guides
figure confirm_llm_guide "camel_qbc_gwarm" --envs Hopper-v4 Walker2d-v4 Ant-v4 --conditions baseline camel camel_qbc_gwarm \
                  --seeds camel=1-5 --seeds camel_qbc_gwarm=6-10 --label "camel_qbc_gwarm=CAMEL+ (early version, commit 4b0bd79), LLM-written guide, seeds 6-10"
# and with the poor guides on seeds 6-10 (the paper's CAMEL with them: Walker2d-v4 at these settings, seeds 1-3)
figure confirm_poor_guide "standstill_qbc_gwarm lean_qbc_gwarm" --envs Hopper-v4 Walker2d-v4 \
                  --conditions baseline standstill lean standstill_qbc_gwarm lean_qbc_gwarm \
                  --seeds standstill_qbc_gwarm=6-10 --seeds lean_qbc_gwarm=6-10
# the ablation (issue 36): each part of the default of then, CAMEL+ + guide bootstrap with 1 critic update per step,
# removed in turn (removing the bootstrap gave the next default), the LLM-written guides, fresh seeds 11-15 (the other
# figures take the paper's CAMEL's seeds 1-5, so that its ablation seeds stay in this one)
figure ablation   "camel_qbc_gwarm_noboot camel_boot_gwarm" --envs Hopper-v4 Walker2d-v4 Ant-v4 \
                  --conditions camel_qbc_gwarm camel_qbc_gwarm_noboot camel_boot_gwarm camel_qbc camel \
                  --seeds camel=11-15 --seeds camel_qbc_gwarm=11-15 --seeds camel_qbc_gwarm_noboot=11-15 \
                  --baseline camel_qbc_gwarm --summary
# the probe's screen (issue 36): two critic updates per step (cu2, CAMEL+ now), critic layer norm (ln) and both on the
# default of then (1 critic update per step), the LLM-written guides, seeds 11-13, beside that default's own runs on
# those seeds (the ablation's)
figure probe      "camel_qbc_gwarm_noboot_cu2 camel_qbc_gwarm_noboot_ln camel_qbc_gwarm_noboot_cu2_ln" --envs Hopper-v4 Walker2d-v4 Ant-v4 \
                  --conditions camel_qbc_gwarm_noboot camel_qbc_gwarm_noboot_cu2 camel_qbc_gwarm_noboot_ln \
                  camel_qbc_gwarm_noboot_cu2_ln --seeds camel_qbc_gwarm_noboot=11-13 --seeds camel_qbc_gwarm_noboot_cu2=11-13 \
                  --baseline camel_qbc_gwarm_noboot --summary
# its confirmation: cu2, which passed the screen, beside the default of then on fresh seeds 16-20 (scripts/probe.sh)
figure probe_confirm "camel_qbc_gwarm_noboot_cu2" --envs Hopper-v4 Walker2d-v4 Ant-v4 \
                  --conditions camel_qbc_gwarm_noboot camel_qbc_gwarm_noboot_cu2 --seeds camel_qbc_gwarm_noboot=16-20 \
                  --seeds camel_qbc_gwarm_noboot_cu2=16-20 --baseline camel_qbc_gwarm_noboot --summary
figure sac        "sac_baseline sac_camel_tuned" --envs Hopper-v4 Ant-v4 --conditions sac_baseline sac_camel_tuned \
                  --baseline sac_baseline

# The registered experiments' figures (docs/preregistration.md), from their own folders with the registered statistics
# (50,000 resamples), once every run of the experiment is in: before that a figure would be a partial look at a
# registered result. Each is a README figure.
waiting=() failed=()
registered() {  # registered NAME EXPERIMENT [budget] [--files "GLOB..."] PLOT_ARGS...: draw it from the run files of
  # docs/results/experiments/EXPERIMENT (those GLOB matches, else all) when all the experiment's runs are in
  local name="$1" experiment="$2" left sub=() files=() pattern; shift 2
  if [ "${1:-}" = budget ]; then sub=(budget); shift; fi
  if [ "${1:-}" = --files ]; then
    for pattern in $2; do files+=(docs/results/experiments/"$experiment"/$pattern); done
    shift 2
  fi
  echo "== $name"
  left="$("$python" -c 'import sys
from camel_utils.preregistration import unfinished_runs
try:
    print(len(unfinished_runs(sys.argv[1])))
except Exception as e:  # an unknown experiment, a half-written file: one line
    sys.exit(f"error: {sys.argv[1]}: {e}")' "$experiment")" || { failed+=("$name"); return; }
  if [ "$left" != 0 ]; then
    echo "$experiment: $left of its runs not in yet (scripts/queue.py status); drawn when all are"
    waiting+=("$name")
    return
  fi
  if [ ${#files[@]} -eq 0 ]; then files=("docs/results/experiments/$experiment"); fi
  "$python" plot.py ${sub[@]+"${sub[@]}"} "${files[@]}" --output-dir "$out" --name "$name" \
    --formats ${FORMATS:-png svg pdf} "$@" || failed+=("$name")
}
if [ -z "${RUNS:-}" ]; then
  # the README's figure: TD3, the paper's CAMEL and CAMEL+ with the LLM-written guides, seeds 24-28
  registered l100 L100 --files "*__td3__*.json *__camel_td3__*.json *__camel_plus_td3__*.json" --baseline td3
  # CAMEL+ with each poor guide against TD3 on seeds 24-26, as registered (3 runs against 3), CAMEL+ with the
  # LLM-written guide on those seeds beside them
  registered l100_poor_guides L100 --files "*__td3__2[456].json *__camel_plus_td3*__2[456].json" \
    --envs Hopper-v4 Walker2d-v4 --baseline td3
  registered budget B1M budget --speeds benchmarks/results/three_trainers_pinned_amd_avx2.json  # the 1M figure as the paper draws it
fi

# docs/results.md quotes each table between <!-- table:NAME --> and <!-- /table:NAME -->: bring the quotes up to date;
# and the list of committed runs, docs/results/runs.md
if [ "$out" = docs/results ] && [ "$runs" = docs/results/runs ]; then
  "$python" plot.py runlist "$runs" --to docs/results/runs.md
  "$python" -c 'import pathlib; from camel_utils.results.tables import quote_tables; doc = pathlib.Path("docs/results.md"); doc.write_text(quote_tables(doc.read_text(), "docs/results"))'
  echo "updated the tables quoted in docs/results.md"
  "$python" scripts/claims.py  # the claims table that opens docs/results.md, from docs/results/claims.toml
fi

if [ ${#waiting[@]} -gt 0 ]; then
  echo "waiting for their registered runs: ${waiting[*]}"
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "not drawn (no runs for them in $runs yet): ${missing[*]}"
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "not drawn (failed, said above): ${failed[*]}"
  exit 1
fi
