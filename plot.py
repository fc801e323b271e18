"""Plot CAMEL seed sweeps the way the paper does, measure what they say, and export runs as small files to commit.

    python plot.py runs/                                    # every condition under runs/, every env
    python plot.py runs/ --envs Ant-v4 --conditions baseline random camel --name ant --output-dir docs/results
    python plot.py runs/ --conditions baseline camel mine --label "mine=paper's CAMEL, my guide"
    python plot.py export runs/ --to docs/results/runs      # one small JSON file per finished run not yet exported
    python plot.py docs/results/runs                        # every figure and table again, from those files alone

Plotting reads `eval/episodic_return` (camel_td3.py's unmasked evaluation; --tag for another scalar) of every run
under the folders given, run folders with TensorBoard event files and exported run files alike, groups the runs by
(env_id, condition = exp_name), and writes to --output-dir, named by --name:
  - {name}.png (for a README), {name}.svg and {name}.pdf (for a paper): one panel per env, one line per condition
    (the mean over seeds, with the range over seeds shaded: lowest to highest seed, as the legend's title says)
    against environment steps, each condition under its label and in its own colour in every figure, and a dashed
    line at each guide's own return where --guide-returns knows it;
  - {name}.md (also printed): for each env, the return at --steps, each seed's final return, a test of the final
    return against the baseline's, and two sample-efficiency measures against the baseline.

Which runs: every condition found (a run under an --exp-name of your own too), or those --conditions
names, in its order. Conditions are named by camel_utils/conditions.py: what guided the run, then the settings where it
differs from today's defaults (camel_tuned_ls25k: CAMEL with the tuned guide, learning from 25k); their labels
("paper's CAMEL, tuned guide, learning from 25k") come from there, a name it does not know stands for itself, and
--label NAME=TEXT names any condition (and its _no_ma_em and _ls{N}k variants).

Definitions
  - Alignment on steps: a run's value at step t is its most recent evaluation at or before t. A run whose last
    evaluation is before t has not reached t and is left out at t (the cell's n says how many seeds are in it),
    so runs of different lengths or evaluation frequencies are compared at the same steps, never by index.
  - L, an env's common last step: the last step that every plotted run of that env reached (the shortest
    condition's last step common to all its seeds). The table's default steps are 25%, 50%, 75% and 100% of L,
    each moved to the nearest evaluation step (the earlier one on a tie).
  - Spread: the range over seeds, [lowest, highest] of the seeds' values, in the tables and shaded in the figures.
    It describes the seeds and claims no confidence: with 3 or 5 seeds a percentile bootstrap "95% interval" of the
    mean is little more than this range (with 3 seeds exactly it), so none is computed.
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
  - Final return against the baseline's: the difference of the means over seeds of the return at the table's last
    step, and the two-sided p-value of a permutation test (SciPy's permutation_test): over all the ways to split
    the two conditions' pooled seeds into groups of their sizes (equal or not), twice the smaller of the shares
    whose difference of means is at least, and at most, the one observed (at most 1). It is exact up to 100,000
    splits (9 seeds against 9) and above that uses 100,000 random splits (generator seeded by --seed). It assumes
    nothing about the returns' distribution, and its smallest possible value is set by the seeds: 2 / C(n + m, n)
    for n seeds against m, 0.1 with 3 seeds each, 0.008 with 5 each; the table's footnote gives it for its sizes.

Export (`python plot.py export RUNS_DIR --to FOLDER`): for each finished run folder (finished.json present) whose
file is not in FOLDER yet, writes FOLDER/{run_name}.json (about 10 kB for 100k steps), which plotting reads like the run folder:
    {"format": "camel-run/1", "run_name": ..., "env_id": ..., "condition": exp_name, "seed": ...,
     "total_timesteps": ..., "finished": finished.json's content, "hyperparameters": {name: value as logged},
     "binned": {tag: bin width in steps, for each thinned curve},
     "curves": {tag: [[step, value], ...]}}
A hyperparameter that is an absolute path inside this repository (--llm-policy, --expert-model) is written relative
to it (policies/hopper.py). The curves are eval/episodic_return and eval/episodic_length, whole, and
charts/episodic_return, charts/epsilon and charts/masked_fraction thinned to at most --max-points points: each point
[s, v] is the mean v of the values logged at steps in (s - bin, s]. Values are TensorBoard's float32 numbers,
written in their shortest exact form.

The work is done in camel_utils/results/ (runs.py reads runs, export.py writes them, stats.py computes, tables.py and
figures.py write the outputs); this file is the command line.
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
from camel_utils.results.export import export_runs, listing, plural
from camel_utils.results.figures import draw_figure
from camel_utils.results.guides import other_guides, read_guide_returns
from camel_utils.results.runs import exported_runs, load_runs, mixed_settings
from camel_utils.results.tables import format_steps, results_markdown, run_list, summary_markdown

PAPER_ENVS = ["Hopper-v4", "Walker2d-v4", "Ant-v4"]  # the paper's envs in the order its figures use; others follow
DEFAULT_GUIDE_RETURNS = "docs/results/guides.json"


def hint(default):
    """--help's note on a default that the empty value stands for."""
    return tyro.conf.arg(help_behavior_hint=f"(default: {default})")


@dataclass
class Args:
    """Draw the paper's figure and results table from run folders and exported runs.
    `python plot.py export RUNS_DIR --to FOLDER` exports finished runs as small files, `python plot.py runlist`
    lists the exported runs in Markdown (see their --help)."""

    runs_dirs: Annotated[tuple[str, ...], tyro.conf.Positional, tyro.conf.arg(metavar="RUNS_DIR...")] = ("runs",)
    """folders that hold run folders and exported run files (searched recursively)"""
    output_dir: str = "plots"
    """where the figure and the table are written"""
    name: str = "results"
    """file name of the outputs, without extension: {name}.png, {name}.svg, {name}.pdf and {name}.md"""
    conditions: Annotated[tuple[str, ...], hint("every condition found, the baseline first")] = ()
    """conditions to show, in this order"""
    label: Annotated[list[str], tyro.conf.UseAppendAction] = field(default_factory=list)
    """NAME=TEXT: show condition NAME as TEXT (and NAME_no_ma_em, NAME_ls25k as TEXT w/o MA EM, TEXT, learning from 25k)"""
    seeds: Annotated[list[str], tyro.conf.UseAppendAction] = field(default_factory=list)
    """NAME=SEEDS: only these seeds of condition NAME (e.g. camel_tuned_qbc_gwarm=6-10, or 1,3,5),
    as when a method chosen on some seeds is confirmed on others; repeatable, one per condition"""
    envs: Annotated[tuple[str, ...], hint("all found")] = ()
    """envs to show, one panel each, in this order"""
    steps: Annotated[tuple[int, ...], hint("25, 50, 75 and 100% of each env's common last step")] = ()
    """environment steps at which the table reports the return"""
    guide_returns: Optional[str] = DEFAULT_GUIDE_RETURNS
    """JSON file {env_id: {condition: return}}: a dashed line at each guide's own return (the default file only if it exists; None: no lines); a condition without an entry uses that of the one it varies (camel_tuned's for camel_tuned_ls25k, camel_tuned_no_ma_em, sac_camel_tuned);
    an entry {"return": R, "guide": FILE} is drawn only for runs that logged that --llm-policy file (camel_utils/results/guides.py)"""
    baseline: str = "baseline"
    """the condition the permutation test and the sample-efficiency measures compare against; a condition run at other training settings is compared with the baseline's run at its settings where there is one (baseline_ls25k for camel_tuned_ls25k)"""
    tag: str = "eval/episodic_return"
    """the TensorBoard scalar to plot"""
    seed: int = 0
    """seed of the random generator of a sampled permutation test (more than 100,000 splits)"""
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
    """{condition: text} from --label NAME=TEXT flags; ValueError naming the flag that is not NAME=TEXT."""
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


def ordered_conditions(found, chosen, baseline):
    """The chosen conditions that were found, in the chosen order; by default all found, the baseline first, then
    in camel_utils.conditions' order."""
    if chosen:
        return [c for c in chosen if c in found]
    return sorted(found, key=lambda c: (c != baseline, order_key(c), c))


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
            lines.append(f"  {env_id:<14} {condition:<16} seeds {' '.join(str(r.seed) for r in runs):<12} "
                         f"evaluated to {', '.join(lengths)} steps  ({label(condition)})")  # fmt: skip
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
    absent = [d for d in args.runs_dirs if not os.path.exists(d)]
    if absent:
        print(f"error: {', '.join(absent)}: no such folder; run a sweep first (e.g. scripts/hopper.sh)", file=sys.stderr)
        return 1
    try:
        custom_labels = parse_labels(args.label)
        chosen_seeds = parse_seeds(args.seeds)
        guides, guide_files = read_guide_returns(args.guide_returns, given=args.guide_returns != DEFAULT_GUIDE_RETURNS)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    # ---- Find the runs, and say in one line each what was passed over
    found = load_runs(args.runs_dirs, args.tag)
    if found.conflicts:  # averaging them, or keeping one, would put one method's curve under another's name
        print(f"error: {found.conflicts[0]}. Give each its own --exp-name, or plot the folders apart", file=sys.stderr)
        return 1
    for note in found.notes:
        print(f"note: {note}")
    if found.unidentified:
        print(f"note: left out {plural(len(found.unidentified), 'folder')} whose names are not {{env_id}}__{{exp_name}}__{{seed}} "
              f"and that logged no hyperparameters: {listing(found.unidentified)}")  # fmt: skip
    if found.empty:
        done = sum(finished for _, finished in found.empty)
        print(f"note: skipped {plural(len(found.empty), 'run')} with no {args.tag} yet ({len(found.empty) - done} not finished, "
              f"{done} finished; a failed start says why in its log.txt): {listing([p for p, _ in found.empty])}")  # fmt: skip
    if not found.runs:
        print(f"error: no runs with {args.tag} under {where}; nothing to plot", file=sys.stderr)
        return 1
    groups = {}  # every run found: the shown conditions, and any other a condition may be compared with
    for run in found.runs:
        if run.condition not in chosen_seeds or run.seed in chosen_seeds[run.condition]:
            groups.setdefault((run.env_id, run.condition), []).append(run)
    for condition, seeds in chosen_seeds.items():
        left_out = sorted({run.seed for run in found.runs if run.condition == condition} - seeds)
        print(f"note: '{condition}': only seeds {' '.join(map(str, sorted(seeds)))} (--seeds)"
              + (f"; left out seed {' '.join(map(str, left_out))}" if left_out else ""))  # fmt: skip

    # ---- Choose the envs and conditions to show, refuse a mix of settings under one name, say what is there
    found_conditions = {condition for _, condition in groups}
    conditions = ordered_conditions(found_conditions, args.conditions, args.baseline)
    if not conditions:
        print(f"error: no runs of the chosen conditions under {where} (found: {', '.join(sorted(found_conditions))})", file=sys.stderr)
        return 1
    for missing_name in [c for c in args.conditions if c not in found_conditions]:
        print(f"note: no runs of condition '{missing_name}' under {where}")
    for (env_id, condition), group in groups.items():
        mixed = mixed_settings(group)
        if condition in conditions and mixed:  # averaging over them would mix two experiments under one name
            print(f"error: the {env_id} runs of '{condition}' were run with different settings: {'; '.join(mixed)}. "
                  f"Give each setting its own condition name (the sweep's VARIANT), keep one setting's seeds with --seeds {condition}=A-B, "
                  "or plot the folders apart", file=sys.stderr)  # fmt: skip
            return 1
    found_envs = {env for env, c in groups if c in conditions}
    for missing_name in [e for e in args.envs if e not in found_envs]:
        print(f"note: no runs of env '{missing_name}' under {where}")
    envs = ordered_envs(found_envs, args.envs)
    if not envs:
        print(f"error: none of the chosen envs have runs of the chosen conditions under {where} "
              f"(found: {', '.join(sorted(found_envs))})", file=sys.stderr)  # fmt: skip
        return 1

    def label(condition):
        return condition_label(condition, custom_labels)

    report, missing = found_report(groups, envs, conditions, label, args.baseline)
    print(f"found {sum(len(groups.get((e, c), [])) for e in envs for c in conditions)} runs in {where}:")
    print("\n".join(report))
    if missing:
        print("missing:\n  " + "\n  ".join(missing))

    shown = {key: runs for key, runs in groups.items() if key[0] in envs and key[1] in conditions}
    skip_guides, notes = other_guides(guides, guide_files, shown)
    for note in notes:
        print(f"note: {note}")

    # ---- The figure, and the table with the comparisons and the sample-efficiency measures
    os.makedirs(args.output_dir, exist_ok=True)
    figure_paths = [os.path.join(args.output_dir, f"{args.name}.{ext}") for ext in ("png", "svg", "pdf")]
    draw_figure(groups, envs, conditions, label, guides, args.tag, figure_paths, skip_guides)
    markdown = results_markdown(groups, envs, conditions, label, guides, args.baseline, args.tag, args.steps, args.seed, skip_guides)
    if args.summary:  # after the table's first line, which says what the numbers are
        head, rest = markdown.split("\n", 1)
        markdown = head + "\n\n" + summary_markdown(groups, envs, conditions, label, args.baseline, args.steps, args.seed) + rest
    table_path = os.path.join(args.output_dir, f"{args.name}.md")
    with open(table_path, "w") as f:
        f.write(markdown)
    print()
    print(markdown)
    print(f"wrote {', '.join(figure_paths)} and {table_path}")
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


if __name__ == "__main__":
    if sys.argv[1:2] == ["export"]:
        sys.exit(export(tyro.cli(ExportArgs, args=sys.argv[2:], prog="plot.py export")))
    if sys.argv[1:2] == ["runlist"]:
        sys.exit(runlist(tyro.cli(RunListArgs, args=sys.argv[2:], prog="plot.py runlist")))
    sys.exit(main(tyro.cli(Args)))
