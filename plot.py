"""Plot CAMEL seed sweeps the way the paper does, measure what they say, and export runs as small files to commit.

    python plot.py runs/                                    # every condition under runs/, every env
    python plot.py runs/ --envs Ant-v4 --conditions baseline random camel --name ant --output-dir docs/results
    python plot.py runs/ --conditions baseline camel mine --label "mine=paper's CAMEL, my guide"
    python plot.py export runs/ --to docs/results/runs      # one small JSON file per finished run not yet exported
    python plot.py docs/results/experiments/L100                   # a registered experiment, from its committed files alone
    python plot.py budget docs/results/experiments/B1M --speeds benchmarks/results/three_trainers_pinned_amd_avx2.json
                                                            # B1M's report: 1M curves, estimates at 100k/300k/1M, hours to TD3's return
    scripts/figures.sh                                      # every figure and table of docs/results.md again

Plotting reads `eval/episodic_return` (the trainers' unmasked evaluation; --tag for another scalar) of every finished
run under the folders given (--include-unfinished: runs under way too, with their curves so far), run folders with
TensorBoard event files and exported run files alike, groups the runs by env, condition (exp_name) and guide file,
and writes to --output-dir, named by --name:
  - {name}.png (for a README), {name}.svg and {name}.pdf (for a paper): one panel per env, one line per condition
    (the mean over seeds, with the range over seeds shaded: lowest to highest seed, as the legend's title says)
    against environment steps, each condition under its label and in its own colour in every figure, and a dashed
    line at each guide's own return where --guide-returns knows it;
  - {name}.md (also printed): the interval estimates of docs/preregistration.md (IQM and mean of the normalised
    score with 95% CIs (--confidence), P(X > baseline) with its CI, per env and aggregated over envs:
    camel_utils/results/intervals.py),
    then for each env the return at --steps, each seed's final return, its difference from the baseline's (with a
    permutation test's p under --permutation-test), and two sample-efficiency measures against the baseline;
  - {name}_intervals.png and {name}_profile.png: rliable's interval estimates and performance profiles of the
    conditions aggregated over the envs (those with runs in every env shown).

Which runs: every condition found (a run under an --exp-name of your own too), or those --conditions
names, in its order. A condition is what a run's name says (camel_utils/conditions.py: today's trainers name a run
after the script, camel_plus_td3; the committed runs keep their historical names, camel_tuned_ls25k); its label is its
method's short name and its guide, named from the guide file the run recorded (finished.json's path and sha256:
"LLM-written guide" only where the file's provenance says so, camel_utils/results/provenance.py), and --label
NAME=TEXT names any condition (and its _no_ma_em and _ls{N}k variants). Runs of one name with guides of different
kinds are shown as conditions of their own, the name and the guide's tag (camel_plus_td3@llm, camel_plus_td3@tuned);
runs of one condition and env whose guide files differ under one label are refused, with one line naming the files
and seeds (--seeds keeps one file's seeds, --label NAME@FILE=TEXT labels a file apart), as are runs that differ in an
algorithm setting.

Definitions
  - Alignment on steps: a run's value at step t is its most recent evaluation at or before t. A run whose last
    evaluation is before t has not reached t and is left out at t (the cell's n says how many seeds are in it),
    so runs of different lengths or evaluation frequencies are compared at the same steps, never by index.
  - L, an env's common last step: the last step that every plotted run of that env reached (the shortest
    condition's last step common to all its seeds). The table's default steps are 25%, 50%, 75% and 100% of L,
    each moved to the nearest evaluation step (the earlier one on a tie).
  - Spread: the range over seeds, [lowest, highest] of the seeds' values, in the tables and shaded in the figures.
    It describes the seeds and claims no confidence (the interval estimates are the confidence intervals).
  - Which baseline: a condition is compared only with baseline runs at its training settings (runs.TRAINING_SETTINGS:
    --learning-starts, --total-timesteps, learning rates, ...; each setting that both logged must agree). That is
    --baseline when it matches; else another condition of the same kind in the data that does (baseline_ls25k for
    a *_ls25k condition against baseline), marked in the table with a footnote; else no comparison ("—"), with a
    footnote naming the settings that differ.
  - Steps to the baseline's final return: the baseline's final return R is its mean return at T, the last step
    all its seeds reached. A condition's mean curve m is its mean over seeds at each evaluation step that all its
    seeds reached. S is the first of those steps from which m stays at or above R at every later step to the end
    of the curve; the table gives S and S / T (below 1: it settles at the baseline's final return sooner), or
    "not reached" when the curve ends below R. A curve that starts high and dips (on Ant-v4 an untrained agent
    that stands still scores about 980, and TD3 falls below that before it learns) or that crosses R and falls
    back is counted from where it last rose to R, not from where it first touched it.
  - Mean return over training (the normalised area under the curve): on the env's evaluation steps
    t_0 < ... < t_k from the first step every plotted run has evaluated (camel_td3.py's first evaluation is at
    --eval-frequency, not at step 0, so there is no return at 0 to start from) to L, a seed's value is the area under its
    return curve by the trapezoid rule, divided by t_k - t_0: its return averaged over training (its return at t_0
    when t_k = t_0). A condition's value is the mean over its seeds, which is the same average of its mean curve,
    with the range over seeds.
  - Interval estimates: camel_utils/results/intervals.py (rliable's stratified bootstrap, --bootstrap-resamples,
    --seed), of each run's score at its env's final step (the table's last step); a condition's P(X > Y) is against
    the baseline run at its training settings, as in the env tables.
  - Final return against the baseline's: the difference of the means over seeds of the return at the table's last
    step, and with --permutation-test the two-sided p-value of a permutation test (SciPy's permutation_test): over
    all the ways to split the two conditions' pooled seeds into groups of their sizes (equal or not), twice the smaller of the shares
    whose difference of means is at least, and at most, the one observed (at most 1). It is exact up to 100,000
    splits (9 seeds against 9) and above that uses 100,000 random splits (generator seeded by --seed). It assumes
    nothing about the returns' distribution, and its smallest possible value is set by the seeds: 2 / C(n + m, n)
    for n seeds against m, 0.1 with 3 seeds each, 0.008 with 5 each; the table's footnote gives it for its sizes.

Export (`python plot.py export RUNS_DIR --to FOLDER`): for each finished run folder (finished.json present) whose
file is not in FOLDER yet, writes FOLDER/{run_name}.json (about 25 kB for 100k steps), which plotting reads like the run folder:
    {"format": "camel-run/1", "run_name": ..., "env_id": ..., "condition": exp_name, "seed": ...,
     "total_timesteps": ..., "finished": finished.json's content,
     "running": {"seconds": ..., "steps": ..., "cpu": ..., "cpu_kind": ...}, "hyperparameters": {name: value as logged},
     "binned": {tag: bin width in steps, for each thinned curve},
     "curves": {tag: [[step, value], ...]}}
"running" is how long the curve took to run: the wall-clock gaps between its charts/epsilon points (one per 100
steps, evaluations included) of 120 s at most (a longer one is a pause or a restart), the steps they cover, and the
CPU's model name and kind (finished.json's; scripts/queue.py's exports, made as its runs grow, name its machine).
A hyperparameter that is an absolute path inside this repository (--llm-policy, --expert-model) is written relative
to it (policies/hopper.py). The curves are eval/episodic_return and eval/episodic_length, whole, and
charts/episodic_return, charts/epsilon, charts/masked_fraction, losses/qf1_values, losses/qf_loss, losses/actor_loss
and charts/guide_bc_rows (those a run logs) thinned to at most --max-points points: each point
[s, v] is the mean v of the values logged at steps in (s - bin, s]. Values are TensorBoard's float32 numbers,
written in their shortest exact form.

Budget (`python plot.py budget RUNS_DIR... [--speeds BENCHMARK.json]`, experiment B1M of docs/preregistration.md):
reads the runs as plotting does and writes {name}.png, .svg and .pdf (the return without the mask to 1M steps, a panel
per env, the mean and range over seeds, MR.Q's and TD7's published 1M returns marked) and {name}.md: the interval
estimates above at each of --steps (100k, 300k, 1M) where every run of the env reached it (else how many seeds did),
the mean return there, the published returns (MR.Q, TD7, DR.Q, CleanRL's TD3) with their sources, and with --speeds
the time to a return: the first step each method's mean curve reaches the --reference's mean return at each of
--target-steps, and the hours that takes at its trainer's steps/s in that benchmarks/benchmark.py file
(camel_utils/results/budget.py).

The work is done in camel_utils/results/ (runs.py reads runs, provenance.py names their guides, export.py writes them,
stats.py and intervals.py compute, tables.py, figures.py and budget.py write the outputs); this file is the command line.
"""

import os
import sys
from dataclasses import dataclass, field
from typing import Annotated, Optional

# Plotting needs no parallel maths: NumPy's BLAS on one thread, beside training runs that use every core.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import tyro

from camel_utils.conditions import condition_label, order_key
from camel_utils.results import intervals
from camel_utils.results.budget import budget_markdown, draw_budget_figure, method_speeds, read_speeds
from camel_utils.results.export import export_runs, listing, plural
from camel_utils.results.figures import condition_of, draw_figure, draw_interval_figures
from camel_utils.results.guides import guide_entries, read_guide_returns
from camel_utils.results.provenance import guide_kind
from camel_utils.results.runs import exported_runs, guide_key, load_runs, mixed_settings
from camel_utils.results.tables import format_steps, interval_markdown, is_return, results_markdown, run_list, summary_markdown

PAPER_ENVS = ["Hopper-v4", "Walker2d-v4", "Ant-v4"]  # the paper's envs in the order its figures use; others follow
DEFAULT_GUIDE_RETURNS = "docs/results/guides.json"
FIGURE_FORMATS = ("png", "svg", "pdf")
NO_FIGURE = "none"  # --formats none: the tables alone, in seconds (no Matplotlib, no figure)
DEFAULT_BASELINES = ("baseline", "td3", "sac_baseline", "sac")  # TD3 by its committed runs' name and by today's, then SAC
BUDGET_TAG = "eval/episodic_return"  # the budget's metric: the return without the mask


def figure_formats(formats):
    """The figure's file formats from --formats ([] for `none`); None, with one error line, for anything else."""
    if tuple(formats) == (NO_FIGURE,):
        return []
    if formats and all(f in FIGURE_FORMATS for f in formats):
        return list(formats)
    print(f"error: --formats {' '.join(formats)}: each of {', '.join(FIGURE_FORMATS)}, at least one, or {NO_FIGURE} alone for "
          "the tables without a figure", file=sys.stderr)  # fmt: skip
    return None


def and_list(paths):
    """'a, b and c' ('c' alone for one path)."""
    return " and ".join(filter(None, [", ".join(paths[:-1]), paths[-1]]))


def hint(default):
    """--help's note on a default that the empty value stands for."""
    return tyro.conf.arg(help_behavior_hint=f"(default: {default})")


@dataclass
class Args:
    """Draw the paper's figure and results table from run folders and exported runs.
    `python plot.py export RUNS_DIR --to FOLDER` exports finished runs as small files, `python plot.py runlist`
    lists the exported runs in Markdown, `python plot.py budget` reports experiment B1M (see their --help)."""

    runs_dirs: Annotated[tuple[str, ...], tyro.conf.Positional, tyro.conf.arg(metavar="RUNS_DIR...")] = ("runs",)
    """folders that hold run folders and exported run files (searched recursively)"""
    output_dir: str = "plots"
    """where the figure and the table are written"""
    name: str = "results"
    """file name of the outputs, without extension: {name}.png, {name}.svg, {name}.pdf and {name}.md, and {name}_intervals.png and {name}_profile.png"""
    formats: tuple[str, ...] = FIGURE_FORMATS
    """file formats of the figure: png for a README, svg and pdf for a paper; none: the tables alone, no figure (seconds instead of ten)"""
    conditions: Annotated[tuple[str, ...], hint("every condition found, the baseline first")] = ()
    """conditions to show, in this order"""
    label: Annotated[list[str], tyro.conf.UseAppendAction] = field(default_factory=list)
    """NAME=TEXT: show condition NAME as TEXT (and NAME_no_ma_em, NAME_ls25k as TEXT w/o MA EM, TEXT, learning from 25k);
    NAME@FILE=TEXT: only NAME's runs with that guide file (its path as the run recorded it, or the start of its sha256), so that two guides of one name are told apart"""
    seeds: Annotated[list[str], tyro.conf.UseAppendAction] = field(default_factory=list)
    """NAME=SEEDS: only these seeds of condition NAME (e.g. camel_tuned_qbc_gwarm=6-10, or 1,3,5),
    as when a method chosen on some seeds is confirmed on others; repeatable, one per condition"""
    envs: Annotated[tuple[str, ...], hint("all found")] = ()
    """envs to show, one panel each, in this order"""
    steps: Annotated[tuple[int, ...], hint("25, 50, 75 and 100% of each env's common last step")] = ()
    """environment steps at which the table reports the return"""
    guide_returns: Optional[str] = DEFAULT_GUIDE_RETURNS
    """JSON file {env_id: {condition: return}}: a dashed line at each guide's own return (the default file only if it exists; None: no lines); a condition without an entry uses that of the one it varies (camel_tuned's for camel_tuned_ls25k, camel_tuned_no_ma_em, sac_camel_tuned);
    an entry {"return": R, "guide": FILE} is drawn only for runs that logged that --llm-policy file, and for every run that did, whatever its condition (camel_utils/results/guides.py)"""
    baseline: Annotated[str, hint("baseline if found, else td3, sac_baseline or sac")] = ""
    """the condition P(X > baseline), the difference of final returns and the sample-efficiency measures compare against; a condition run at other training settings is compared with the baseline's run at its settings where there is one (baseline_ls25k for camel_tuned_ls25k)"""
    tag: str = "eval/episodic_return"
    """the TensorBoard scalar to plot; one that is not a return (losses/qf1_values, charts/guide_bc_rows) is shown as its values alone: no interval estimates, comparisons or guide lines"""
    seed: int = intervals.SEED
    """seed of the stratified bootstrap (and of a sampled permutation test, more than 100,000 splits)"""
    bootstrap_resamples: int = intervals.RESAMPLES
    """resamples of the stratified bootstrap behind every CI (docs/preregistration.md: 50,000; fewer is faster and rougher)"""
    confidence: float = intervals.CONFIDENCE
    """coverage of every CI (docs/preregistration.md: 0.95; 0.983 for an entry's three primary comparisons)"""
    permutation_test: bool = False
    """also give the two-sided p of a permutation test of each condition's final return against the baseline's (beside the difference of the means)"""
    include_unfinished: bool = False
    """also show runs under way (no finished.json; exported with "finished": null), with their curves so far"""
    summary: bool = False
    """also put one table of every env's final return at the head of {name}.md,
    a row per condition and a column per env, with the difference from the baseline (a question asked of several envs at once)"""


@dataclass
class ExportArgs:
    """Write each finished run (finished.json present) that is not exported yet as one small JSON file that
    `python plot.py FOLDER` reads like its run folder: its identity, hyperparameters, finished.json and curves."""

    runs_dir: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="RUNS_DIR")] = "runs"
    """folder that holds the run folders (searched recursively)"""
    to: str = "docs/results/runs"
    """folder the files are written to, one {run_name}.json per run"""
    max_points: int = 200
    """most points kept of each training curve (charts/*); the evaluation curves are kept whole"""


def parse_labels(flags):
    """{condition: text} from --label NAME=TEXT flags (NAME may be NAME@FILE: the runs of NAME with that guide file);
    ValueError naming the flag that is not NAME=TEXT."""
    labels = {}
    for flag in flags:
        name, sep, text = flag.partition("=")
        if not sep or not name.strip() or not text.strip():
            raise ValueError(f"--label {flag}: expected NAME=TEXT, e.g. --label 'mine=CAMEL, my guide'")
        labels[name.strip()] = text.strip()
    return labels


def parse_seeds(flags):
    """{condition: set of seeds} from --seeds NAME=SEEDS flags (SEEDS: numbers and ranges, e.g. 6-10 or 1,3,5-7);
    ValueError naming the flag that is not of that form."""
    chosen = {}
    for flag in flags:
        name, sep, spec = flag.partition("=")
        seeds = set()
        try:
            for part in spec.split(","):
                first, dash, last = part.strip().partition("-")
                seeds.update(range(int(first), int(last if dash else first) + 1))
        except ValueError:
            seeds = set()
        if not sep or not name.strip() or not seeds or name.strip() in chosen:
            raise ValueError(f"--seeds {flag}: expected NAME=SEEDS, once per condition, e.g. --seeds camel_tuned_qbc_gwarm=6-10")
        chosen[name.strip()] = seeds
    return chosen


def ordered_envs(found, chosen):
    """The chosen envs that were found, in the chosen order; by default all found, the paper's first."""
    if chosen:
        return [e for e in chosen if e in found]
    return sorted(found, key=lambda e: (PAPER_ENVS.index(e) if e in PAPER_ENVS else len(PAPER_ENVS), e))


GUIDE_TAG_ORDER = ("none", "llm", "tuned")  # one name's conditions: without a guide, the LLM-written one, tuned, then by tag


def ordered_conditions(found, chosen, baseline):
    """The chosen conditions that were found, in the chosen order; by default all found, the baseline first, then
    in camel_utils.conditions' order (one name's guides as GUIDE_TAG_ORDER)."""
    if chosen:
        return [c for c in chosen if c in found]

    def key(series):
        tag = series.partition("@")[2]
        return (series != baseline, order_key(condition_of(series)), tag != "",
                GUIDE_TAG_ORDER.index(tag) if tag in GUIDE_TAG_ORDER else len(GUIDE_TAG_ORDER), series)  # fmt: skip

    return sorted(found, key=key)


def resolve_name(name, found):
    """The conditions a name given on the command line means: itself, or each condition of that run name
    (camel_plus_td3@llm and camel_plus_td3@tuned for camel_plus_td3)."""
    if name in found:
        return [name]
    return ordered_conditions([c for c in found if condition_of(c) == name], (), None)


def names_file(given, guide):
    """Whether a --label's GUIDE (a path, or the start of a sha256) names the guide file a run recorded."""
    if os.path.normpath(given) == os.path.normpath(guide.path):
        return True
    return len(given) >= 6 and guide.sha256 is not None and guide.sha256.startswith(given.lower())


def name_series(runs, custom_labels):
    """([(condition, run)], {condition: label}): each run under its run name (exp_name) and a label that names its
    method and its guide (from the guide file the run recorded: camel_utils/results/provenance.py), or its --label.
    Where one name's runs carry more than one label (one method with two kinds of guide, or two files labelled
    apart with NAME@FILE=TEXT), each label is a condition of its own, the name and the guide's tag: camel_plus_td3@llm
    and camel_plus_td3@tuned, never averaged together."""
    by_name = {key: text for key, text in custom_labels.items() if "@" not in key}
    by_file = {tuple(key.split("@", 1)): text for key, text in custom_labels.items() if "@" in key}
    described = []
    for run in runs:
        kind = guide_kind(run.guide) if run.guide else None
        text = next((text for (name, given), text in by_file.items()
                     if name == run.condition and run.guide is not None and names_file(given, run.guide)), None)  # fmt: skip
        text = text or condition_label(run.condition, by_name, guide=kind.label if kind else None)
        described.append((run, text, kind.tag if kind else "none"))
    tags = {}  # {run name: {label: tag}}
    for run, text, tag in described:
        tags.setdefault(run.condition, {}).setdefault(text, tag)
    condition_of_label, labels = {}, {}
    for name, by_label in tags.items():
        if len(by_label) == 1:
            condition_of_label[(name, *by_label)] = name
            labels[name] = next(iter(by_label))
            continue
        for text, tag in by_label.items():
            condition, number = f"{name}@{tag}", 2
            while condition in labels:  # two labels of one kind of guide (--label NAME@FILE=TEXT)
                condition, number = f"{name}@{tag}{number}", number + 1
            condition_of_label[(name, text)] = condition
            labels[condition] = text
    return [(condition_of_label[(run.condition, text)], run) for run, text, _ in described], labels


def guide_files_of(runs):
    """One entry per guide file among the runs, 'PATH (sha256 ABCDEF12, seed 1 2)', sorted by path."""
    files = {}
    for run in sorted(runs, key=lambda r: r.seed):
        if run.guide is not None:
            files.setdefault(guide_key(run.guide), (run.guide, []))[1].append(str(run.seed))
    return sorted(f"{guide.path} (sha256 {(guide.sha256 or 'not recorded')[:8]}, seed {' '.join(seeds)})"
                  for guide, seeds in files.values())  # fmt: skip


class InputError(Exception):
    """What is wrong with a command's input, in one line: printed as `error: ...`, and the command exits 1."""


def read_groups(runs_dirs, tag, include_unfinished, custom_labels=None, chosen_seeds=None,
                absent_hint="run a sweep first (e.g. scripts/hopper.sh)"):  # fmt: skip
    """({(env_id, condition): runs}, {condition: label}) of every run with `tag` under the folders (finished ones, and
    runs under way with include_unfinished; only the --seeds chosen of a condition), each under its run name or,
    where one name's runs had guides of more than one kind, its name and the guide's tag (name_series). Says in one
    line each what it passed over; InputError for a folder that is not there, two methods under one name, or no runs."""
    where = ", ".join(runs_dirs)
    absent = [d for d in runs_dirs if not os.path.exists(d)]
    if absent:
        raise InputError(f"{', '.join(absent)}: no such folder; {absent_hint}")
    found = load_runs(runs_dirs, tag)
    if found.conflicts:  # averaging them, or keeping one, would put one method's curve under another's name
        raise InputError(f"{found.conflicts[0]}. Give each its own --exp-name, or plot the folders apart")
    for note in found.notes:
        print(f"note: {note}")
    if found.unidentified:
        print(f"note: left out {plural(len(found.unidentified), 'folder')} whose names are not {{env_id}}__{{exp_name}}__{{seed}} "
              f"and that logged no hyperparameters: {listing(found.unidentified)}")  # fmt: skip
    if found.empty:
        done = sum(finished for _, finished in found.empty)
        print(f"note: skipped {plural(len(found.empty), 'run')} with no {tag} yet ({len(found.empty) - done} not finished, "
              f"{done} finished; a failed start says why in its log.txt): {listing([p for p, _ in found.empty])}")  # fmt: skip
    unfinished = [run.path for run in found.runs if not run.finished]
    if unfinished and not include_unfinished:
        print(f"note: left out {plural(len(unfinished), 'run')} not finished (no finished.json; exported with \"finished\": null): "
              f"{listing(unfinished)}; --include-unfinished shows them")  # fmt: skip
    shown_runs = [run for run in found.runs if run.finished or include_unfinished]
    if not shown_runs:
        under_way = f" ({plural(len(unfinished), 'run')} under way: --include-unfinished)" if unfinished else ""
        raise InputError(f"no runs with {tag} under {where}{under_way}; nothing to plot")
    chosen_seeds = chosen_seeds or {}
    for condition, seeds in chosen_seeds.items():
        left_out = sorted({run.seed for run in shown_runs if run.condition == condition} - seeds)
        print(f"note: '{condition}': only seeds {' '.join(map(str, sorted(seeds)))} (--seeds)"
              + (f"; left out seed {' '.join(map(str, left_out))}" if left_out else ""))  # fmt: skip
    shown_runs = [run for run in shown_runs if run.condition not in chosen_seeds or run.seed in chosen_seeds[run.condition]]
    # one condition per name, or per name and guide where one name's runs had guides of more than one kind
    named, labels = name_series(shown_runs, custom_labels or {})
    groups = {}  # every run found: the shown conditions, and any other a condition may be compared with
    for series, run in named:
        groups.setdefault((run.env_id, series), []).append(run)
    return groups, labels


def refuse_mixed(groups, conditions, labels):
    """InputError for the first env and condition of `conditions` whose seeds differ in an algorithm setting or ran
    with different guide files under one label: averaging them would mix two experiments under one name."""
    for (env_id, condition), group in groups.items():
        if condition not in conditions:
            continue
        mixed = mixed_settings(group)
        if mixed:
            raise InputError(f"the {env_id} runs of '{condition}' were run with different settings: {'; '.join(mixed)}. "
                             "Give each setting its own condition name (the sweep's VARIANT), keep one setting's seeds with "
                             f"--seeds {condition_of(condition)}=A-B, or plot the folders apart")  # fmt: skip
        files = guide_files_of(group)
        if len(files) > 1:  # two guides under one label: neither averaged together nor one kept
            raise InputError(f"the {env_id} runs of '{condition}' ({labels[condition]}) ran with different guide files: "
                             f"{', '.join(files)}. Keep one file's seeds with --seeds {condition_of(condition)}=A-B, label each file apart "
                             f"with --label '{condition_of(condition)}@FILE=TEXT', or plot the folders apart")  # fmt: skip


def found_report(groups, envs, conditions, label, baseline):
    """What was found, and what is missing: absent conditions, seeds that other conditions have, short runs."""
    lines, missing = [], []
    for env_id in envs:
        all_seeds = sorted({run.seed for c in conditions for run in groups.get((env_id, c), [])})
        longest = max(run.steps[-1] for c in conditions for run in groups.get((env_id, c), []))
        for condition in conditions:
            runs = sorted(groups.get((env_id, condition), []), key=lambda r: r.seed)
            if not runs:
                missing.append(f"{env_id} {condition}: no runs")
                continue
            lengths = sorted({format_steps(int(run.steps[-1])) for run in runs})
            files = sorted({run.guide.path for run in runs if run.guide is not None})
            lines.append(f"  {env_id:<14} {condition:<16} seeds {' '.join(str(r.seed) for r in runs):<12} "
                         f"evaluated to {', '.join(lengths)} steps  ({label(condition)}"
                         + (f"; guide {', '.join(files)}" if files else "") + ")")  # fmt: skip
            absent = sorted(set(all_seeds) - {run.seed for run in runs})
            if absent:
                missing.append(f"{env_id} {condition}: seed {' '.join(map(str, absent))} (other conditions have it)")
            for run in runs:
                if run.steps[-1] < longest:
                    missing.append(f"{env_id} {condition} seed {run.seed}: stops at {format_steps(int(run.steps[-1]))} steps, "
                                   f"others reach {format_steps(int(longest))}; it counts only where it has data")  # fmt: skip
        if not groups.get((env_id, baseline)):
            missing.append(f"{env_id}: no '{baseline}' runs, so no comparison with it")
    return lines, missing


def main(args):
    # ---- Check the options before reading any run
    where = ", ".join(args.runs_dirs)
    formats = figure_formats(args.formats)
    if formats is None:
        return 1
    try:
        custom_labels = parse_labels(args.label)
        chosen_seeds = parse_seeds(args.seeds)
        guides, guide_files = read_guide_returns(args.guide_returns, given=args.guide_returns != DEFAULT_GUIDE_RETURNS)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.bootstrap_resamples < 1 or not 0 < args.confidence < 1:
        print(f"error: --bootstrap-resamples {args.bootstrap_resamples} --confidence {args.confidence}: expected at least 1 resample "
              "and a coverage between 0 and 1 (0.95)", file=sys.stderr)  # fmt: skip
        return 1
    bootstrap = intervals.Bootstrap(args.bootstrap_resamples, args.seed, args.confidence)
    returns = is_return(args.tag)
    if not returns and (args.summary or args.permutation_test):
        print(f"error: --summary and --permutation-test compare returns; --tag {args.tag} is not one", file=sys.stderr)
        return 1
    if not returns:  # a guide's own return is a return: no line beside Q values or losses
        guides, guide_files = {}, {}

    # ---- Find the runs, say in one line each what was passed over, and group them by env and condition
    try:
        groups, labels = read_groups(args.runs_dirs, args.tag, args.include_unfinished, custom_labels, chosen_seeds)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    # ---- Choose the envs and conditions to show, refuse a mix of settings or guide files under one name, say what is there
    found_conditions = {series for _, series in groups}
    found_baselines = [name for name in DEFAULT_BASELINES if resolve_name(name, found_conditions)]
    baseline_name = args.baseline or (found_baselines + [DEFAULT_BASELINES[0]])[0]
    baseline = resolve_name(baseline_name, found_conditions)
    if len(baseline) > 1:
        print(f"error: --baseline {baseline_name}: its runs had guides of different kinds: {', '.join(baseline)}; name one of them",
              file=sys.stderr)  # fmt: skip
        return 1
    baseline = baseline[0] if baseline else baseline_name
    chosen = [series for name in args.conditions for series in resolve_name(name, found_conditions)]
    conditions = list(dict.fromkeys(chosen)) if args.conditions else ordered_conditions(found_conditions, (), baseline)
    if not conditions:
        print(f"error: no runs of the chosen conditions under {where} (found: {', '.join(sorted(found_conditions))})", file=sys.stderr)
        return 1
    for missing_name in [c for c in args.conditions if not resolve_name(c, found_conditions)]:
        print(f"note: no runs of condition '{missing_name}' under {where}")
    try:
        refuse_mixed(groups, conditions + [baseline], labels)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    shared = {}
    for condition in conditions:
        shared.setdefault(labels[condition], []).append(condition)
    for text, same in shared.items():  # one method under two names (the committed runs' and today's): told apart by name
        if len(same) > 1:
            labels.update({condition: f"{text} ({condition})" for condition in same})
            print(f"note: {' and '.join(same)} share the label '{text}': each is shown with its name after it "
                  "(--label NAME=TEXT to choose)")  # fmt: skip
    found_envs = {env for env, c in groups if c in conditions}
    for missing_name in [e for e in args.envs if e not in found_envs]:
        print(f"note: no runs of env '{missing_name}' under {where}")
    envs = ordered_envs(found_envs, args.envs)
    if not envs:
        print(f"error: none of the chosen envs have runs of the chosen conditions under {where} "
              f"(found: {', '.join(sorted(found_envs))})", file=sys.stderr)  # fmt: skip
        return 1

    def label(condition):
        return labels.get(condition) or condition_label(condition, custom_labels)

    report, missing = found_report(groups, envs, conditions, label, baseline)
    print(f"found {sum(len(groups.get((e, c), [])) for e in envs for c in conditions)} runs in {where}:")
    print("\n".join(report))
    if missing:
        print("missing:\n  " + "\n  ".join(missing))

    shown = {key: runs for key, runs in groups.items() if key[0] in envs and key[1] in conditions}
    entries, notes = guide_entries(guides, guide_files, shown)
    for note in notes:
        print(f"note: {note}")

    # ---- The interval estimates, the figure, and the table with the comparisons and the sample-efficiency measures
    os.makedirs(args.output_dir, exist_ok=True)
    figure_paths = [os.path.join(args.output_dir, f"{args.name}.{ext}") for ext in formats]
    if figure_paths:
        draw_figure(groups, envs, conditions, label, guides, args.tag, figure_paths, entries)
    estimates, aggregates = interval_markdown(groups, envs, conditions, label, baseline, args.steps, bootstrap) if returns else ("", None)
    markdown = results_markdown(groups, envs, conditions, label, guides, baseline, args.tag, args.steps, args.seed, entries,
                                args.permutation_test)  # fmt: skip
    head, rest = markdown.split("\n", 1)  # after the table's first line, which says what the numbers are
    if args.summary:
        rest = "\n" + summary_markdown(groups, envs, conditions, label, baseline, args.steps, args.seed, args.permutation_test) + rest
    markdown = head + "\n" + (f"\n{estimates}" if estimates else "") + rest
    table_path = os.path.join(args.output_dir, f"{args.name}.md")
    with open(table_path, "w") as f:
        f.write(markdown)
    written = figure_paths + [table_path]
    if aggregates and figure_paths:
        interval_paths = [os.path.join(args.output_dir, f"{args.name}_intervals.png")]
        profile_paths = [os.path.join(args.output_dir, f"{args.name}_profile.png")]
        written += draw_interval_figures(aggregates, label, interval_paths, profile_paths, bootstrap)
    print()
    print(markdown)
    print(f"wrote {and_list(written)}")
    return 0


def export(args):
    if not os.path.isdir(args.runs_dir):
        print(f"error: {args.runs_dir} is not a folder", file=sys.stderr)
        return 1
    done = export_runs(args.runs_dir, args.to, args.max_points)
    if done.written:
        sizes = [os.path.getsize(p) / 1000 for p in done.written]
        print(f"exported {plural(len(done.written), 'run')} to {args.to} ({min(sizes):.0f}-{max(sizes):.0f} kB each): {listing(done.written)}")
    if done.already:
        print(f"already in {args.to}: {plural(len(done.already), 'run')}")
    if done.unfinished:
        print(f"not finished, so not exported: {plural(len(done.unfinished), 'run')}: {listing(done.unfinished)}")
    if done.unidentified:
        print(f"left out {plural(len(done.unidentified), 'run')} that do not say their env, exp_name and seed: {listing(done.unidentified)}")
    if not (done.written or done.already or done.unfinished):
        print(f"error: no run folders under {args.runs_dir}", file=sys.stderr)
        return 1
    return 0


@dataclass
class RunListArgs:
    """Write the list of the exported runs under a folder (env, condition, seeds, steps, final returns) as Markdown:
    docs/results/runs.md, which scripts/figures.sh keeps up to date."""

    runs_dir: tyro.conf.Positional[str] = "docs/results/runs"
    """folder of exported runs"""
    to: str = "docs/results/runs.md"
    """the Markdown file to write"""


def runlist(args):
    """The list of the exported runs under runs_dir, as Markdown (camel_utils.results.tables.run_list)."""
    records = [record for _, record in exported_runs(args.runs_dir)]
    if not records:
        print(f"error: no exported runs under {args.runs_dir} (python plot.py export runs/ --to {args.runs_dir})", file=sys.stderr)
        return 1
    with open(args.to, "w") as f:
        f.write(run_list(records))
    print(f"wrote {args.to}: {plural(len(records), 'run')}")
    return 0


@dataclass
class BudgetArgs:
    """The user's budget (experiment B1M of docs/preregistration.md): the return without the mask to 1M steps beside the
    published returns of MR.Q and TD7, the interval estimates and the mean return at --steps, the CPU model of each run,
    and with --speeds the time each method takes to reach the --reference method's return (camel_utils/results/budget.py)."""

    runs_dirs: Annotated[tuple[str, ...], tyro.conf.Positional, tyro.conf.arg(metavar="RUNS_DIR...")] = ("docs/results/experiments/B1M",)
    """folders that hold exported run files and run folders (searched recursively)"""
    speeds: Optional[str] = None
    """a benchmarks/benchmark.py JSON file (benchmarks/results/three_trainers_pinned_amd_avx2.json): with it, the time to a return in hours at each trainer's steps/s (its variants td3, camel and camel-plus)"""
    output_dir: str = "docs/results"
    """where the figure and the report are written"""
    name: str = "budget"
    """file name of the outputs, without extension: {name}.png, {name}.svg, {name}.pdf and {name}.md"""
    formats: tuple[str, ...] = FIGURE_FORMATS
    """file formats of the figure: png for a README, svg and pdf for a paper; none: the tables alone, no figure (seconds instead of ten)"""
    include_unfinished: bool = False
    """also count runs under way (exported with "finished": null), with their curves so far"""
    steps: tuple[int, ...] = (100_000, 300_000, 1_000_000)
    """environment steps of the interval estimates and the mean return (docs/preregistration.md: 100k, 300k and 1M)"""
    target_steps: tuple[int, ...] = (300_000, 1_000_000)
    """steps at which the reference's mean return is a target of the time to a return (docs/preregistration.md: 300k and 1M)"""
    reference: str = "td3"
    """the method P(X > reference) compares with, and whose mean return the time to a return aims at"""
    bootstrap_resamples: int = intervals.RESAMPLES
    """resamples of the stratified bootstrap behind every CI (docs/preregistration.md: 50,000; fewer is faster and rougher)"""
    seed: int = intervals.SEED
    """seed of the stratified bootstrap"""
    confidence: float = intervals.CONFIDENCE
    """coverage of every CI (docs/preregistration.md: 0.95; 0.983 for B1M's three primary comparisons)"""


def budget(args):
    """The report of the user's budget: {name}.png/.svg/.pdf (budget.draw_budget_figure) and {name}.md (budget.budget_markdown)."""
    # ---- Check the options, and read the trainers' speeds
    if args.bootstrap_resamples < 1 or not 0 < args.confidence < 1:
        print(f"error: --bootstrap-resamples {args.bootstrap_resamples} --confidence {args.confidence}: expected at least 1 resample "
              "and a coverage between 0 and 1 (0.95)", file=sys.stderr)  # fmt: skip
        return 1
    formats = figure_formats(args.formats)
    if formats is None:
        return 1
    if not args.steps or not args.target_steps or min(args.steps + args.target_steps) < 1:
        print(f"error: --steps {args.steps} --target-steps {args.target_steps}: expected positive steps", file=sys.stderr)
        return 1
    bootstrap = intervals.Bootstrap(args.bootstrap_resamples, args.seed, args.confidence)
    try:
        speeds = read_speeds(args.speeds) if args.speeds else None
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    # ---- Find the runs and group them as plotting does; the reference first, then every method found
    where = ", ".join(args.runs_dirs)
    try:
        groups, labels = read_groups(args.runs_dirs, BUDGET_TAG, args.include_unfinished,
                                     absent_hint="scripts/queue.py exports a registered experiment's runs there as they grow")  # fmt: skip
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    found_conditions = {condition for _, condition in groups}
    reference = resolve_name(args.reference, found_conditions)
    if len(reference) != 1:
        found = f"its runs had guides of different kinds: {', '.join(reference)}; name one of them" if reference else (
            f"no runs of it under {where} (found: {', '.join(sorted(found_conditions))})")  # fmt: skip
        print(f"error: --reference {args.reference}: {found}", file=sys.stderr)
        return 1
    reference = reference[0]
    methods = ordered_conditions(found_conditions, (), reference)
    envs = ordered_envs({env_id for env_id, _ in groups}, ())
    try:
        refuse_mixed(groups, methods, labels)
        steps_per_second = method_speeds(speeds, methods) if speeds else None
    except (InputError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    def label(condition):
        return labels[condition]

    report, missing = found_report(groups, envs, methods, label, reference)
    print(f"found {sum(len(groups.get((e, m), [])) for e in envs for m in methods)} runs in {where}:")
    print("\n".join(report))
    if missing:
        print("missing:\n  " + "\n  ".join(missing))

    # ---- The figure and the report
    os.makedirs(args.output_dir, exist_ok=True)
    figure_paths = [os.path.join(args.output_dir, f"{args.name}.{ext}") for ext in formats]
    if figure_paths:
        draw_budget_figure(groups, envs, methods, labels, figure_paths)
    markdown = budget_markdown(groups, envs, methods, label, reference, args.steps, args.target_steps, bootstrap, speeds,
                               steps_per_second, args.name)  # fmt: skip
    table_path = os.path.join(args.output_dir, f"{args.name}.md")
    with open(table_path, "w") as f:
        f.write(markdown)
    print()
    print(markdown)
    print(f"wrote {and_list(figure_paths + [table_path])}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["export"]:
        sys.exit(export(tyro.cli(ExportArgs, args=sys.argv[2:], prog="plot.py export")))
    if sys.argv[1:2] == ["runlist"]:
        sys.exit(runlist(tyro.cli(RunListArgs, args=sys.argv[2:], prog="plot.py runlist")))
    if sys.argv[1:2] == ["budget"]:
        sys.exit(budget(tyro.cli(BudgetArgs, args=sys.argv[2:], prog="plot.py budget")))
    sys.exit(main(tyro.cli(Args)))
