#!/usr/bin/env bash
# Redraw every results figure and table in docs/results/ from the committed run data (docs/results/runs/), with no
# training: one plot.py call per question of docs/results.md, whose quoted tables it then updates. A figure whose
# runs are not in the data yet is reported and skipped.
#   scripts/figures.sh                      # all figures
#   RUNS=runs/ OUT=plots scripts/figures.sh # the same figures from your own runs
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
cd "$repo"
python="${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}"
runs="${RUNS:-docs/results/runs}"
out="${OUT:-docs/results}"
missing=()

figure() {  # figure NAME "CONDITIONS IT IS ABOUT" PLOT_ARGS...: draw it if any run of those conditions exists
  local name="$1" about="$2" condition; shift 2
  echo "== $name"
  for condition in $about; do
    if compgen -G "$runs/*__${condition}__*" > /dev/null; then
      "$python" plot.py "$runs" --output-dir "$out" --name "$name" "$@" || missing+=("$name")
      return
    fi
  done
  echo "no runs of $about yet"
  missing+=("$name")
}

# the headline at today's default (learning from 5k: runs named *_early), then at CleanRL's 25k
figure headline   "camel_early" --envs Hopper-v4 Walker2d-v4 Ant-v4 --conditions baseline_early camel_early \
                  --baseline baseline_early --label "baseline_early=TD3" --label "camel_early=CAMEL (LLM masking)"
figure headline_25k "camel" --envs Hopper-v4 Walker2d-v4 Ant-v4 --conditions baseline camel
figure ant        "random expert" --envs Ant-v4 --conditions baseline random expert camel
figure expert     "expert" --envs Hopper-v4 Ant-v4 --conditions baseline random expert camel
figure controls   "camel_no_ma_em expert_no_ma_em random_no_ma_em" --envs Hopper-v4 \
                  --conditions baseline camel camel_no_ma_em expert expert_no_ma_em random random_no_ma_em
# poor guides: Hopper-v4 learning from 25k (beside the 25k TD3 and CAMEL runs), Walker2d-v4 at the default
figure poor_guide "standstill lean" --envs Hopper-v4 --conditions baseline camel standstill lean \
                  --label "standstill=CAMEL, stand-still guide" --label "lean=CAMEL, leaning guide"
figure poor_guide_walker2d "standstill_early lean_early" --envs Walker2d-v4 \
                  --conditions baseline_early camel_early standstill_early lean_early --baseline baseline_early \
                  --label "baseline_early=TD3" --label "camel_early=CAMEL (LLM masking)" \
                  --label "standstill_early=CAMEL, stand-still guide" --label "lean_early=CAMEL, leaning guide"
figure unmasked_gain "camel_fullactor camel_fulltarget camel_distill camel_early" --envs Hopper-v4 Ant-v4 \
                  --conditions baseline baseline_early camel camel_early camel_fullactor camel_fulltarget camel_distill \
                  --label "baseline_early=TD3, learning from 5k" --label "camel_early=CAMEL, learning from 5k" \
                  --label "camel_fullactor=CAMEL + actor under full bounds" \
                  --label "camel_fulltarget=CAMEL + target under full bounds" \
                  --label "camel_distill=CAMEL + Q-filtered distillation"
figure sac        "sac_baseline sac_camel" --envs Hopper-v4 Ant-v4 --conditions sac_baseline sac_camel --baseline sac_baseline

# docs/results.md quotes each table between <!-- table:NAME --> and <!-- /table:NAME -->: bring the quotes up to date
if [ "$out" = docs/results ]; then
  "$python" -c 'import pathlib, plot; doc = pathlib.Path("docs/results.md"); doc.write_text(plot.quote_tables(doc.read_text(), "docs/results"))'
  echo "updated the tables quoted in docs/results.md"
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "not drawn (no runs for them in $runs yet): ${missing[*]}"
fi
