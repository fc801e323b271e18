"""Plot CAMEL seed sweeps the way the paper does, measure what they say, and export runs as small files to commit.

    python plot.py runs/                                    # the sweep's conditions under runs/, every env
    python plot.py runs/ --envs Ant-v4 --conditions baseline random camel --name ant --output-dir docs/results
    python plot.py runs/ --conditions baseline camel camel_standstill --label "camel_standstill=CAMEL, stand-still guide"
    python plot.py export runs/ --to docs/results/runs      # one small JSON file per finished run not yet exported
    python plot.py docs/results/runs                        # every figure and table again, from those files alone

Plotting reads `eval/episodic_return` (camel_td3.py's unmasked evaluation; --tag for another scalar) of every run
under the folders given, run folders with TensorBoard event files and exported run files alike, groups the runs by
(env_id, condition = exp_name), and writes to --output-dir, named by --name:
  - {name}.png (for a README), {name}.svg and {name}.pdf (for a paper): one panel per env, one line per condition
    (the mean over seeds, with a shaded bootstrap confidence band) against environment steps, each condition under
    its paper name and in its own colour in every figure, and a dashed line at each guide's own return where
    --guide-returns knows it;
  - {name}.md (also printed): for each env, the return at --steps, each seed's final return, a test of the final
    return against the baseline's, and two sample-efficiency measures against the baseline.

Which runs: by default the sweep's conditions (baseline, camel, random, expert, each also _no_ma_em; with
TRAINER=sac the same with a sac_ prefix) and those named by --label; --conditions chooses the conditions, in its order. Runs of any other exp_name (camel_td3.py's
default, camel_td3, for one) are left out with one note that names them.

Definitions
  - Alignment on steps: a run's value at step t is its most recent evaluation at or before t. A run whose last
    evaluation is before t has not reached t and is left out at t (the cell's n says how many seeds are in it),
    so runs of different lengths or evaluation frequencies are compared at the same steps, never by index.
  - L, an env's common last step: the last step that every plotted run of that env reached (the shortest
    condition's last step common to all its seeds). The table's default steps are 25%, 50%, 75% and 100% of L,
    each moved to the nearest evaluation step (the earlier one on a tie).
  - Confidence interval: percentile bootstrap of the mean over seeds: resample the seeds with replacement
    --bootstrap-samples times, take the mean of each resample, and report the 2.5th and 97.5th percentiles
    (NumPy, with a generator seeded by --seed for every interval, so the numbers are reproducible).
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
    with a bootstrap confidence interval over seeds as above. It credits learning early and counts every dip.
  - Final return against the baseline's: the difference of the means over seeds of the return at the table's last
    step, and the two-sided p-value of a permutation test (SciPy's permutation_test): over all the ways to split
    the two conditions' pooled seeds into groups of their sizes, twice the smaller of the shares whose difference
    of means is at least, and at most, the one observed (at most 1). It is exact up to 100,000 splits (9 seeds
    against 9) and above that uses 100,000 random splits (generator seeded by --seed). It assumes nothing about
    the returns' distribution, and its smallest possible value is set by the seeds: 0.1 with 3 seeds each, 0.008
    with 5 each.

Export (`python plot.py export RUNS_DIR --to FOLDER`): for each finished run folder (finished.json present) whose
file is not in FOLDER yet, writes FOLDER/{run_name}.json (about 10 kB for 100k steps), which plotting reads like the run folder:
    {"format": "camel-run/1", "run_name": ..., "env_id": ..., "condition": exp_name, "seed": ...,
     "total_timesteps": ..., "finished": finished.json's content, "hyperparameters": {name: value as logged},
     "binned": {tag: bin width in steps, for each thinned curve},
     "curves": {tag: [[step, value], ...]}}
The curves are eval/episodic_return and eval/episodic_length, whole, and charts/episodic_return, charts/epsilon and
charts/masked_fraction thinned to at most --max-points points: each point [s, v] is the mean v of the values logged
at steps in (s - bin, s]. Values are TensorBoard's float32 numbers, written in their shortest exact form.
"""

import json
import logging
import os
import re
import sys
import zlib
from dataclasses import dataclass, field
from typing import Annotated, NamedTuple, Optional

# Plotting needs no parallel maths: NumPy's BLAS on one thread, beside training runs that use every core.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np
import tyro
from scipy import stats

EVENT_FILE_PREFIX = "events.out.tfevents."
EXPORT_FORMAT = "camel-run/1"
EXPORT_WHOLE = ("eval/episodic_return", "eval/episodic_length")  # exported point by point
EXPORT_THINNED = ("charts/episodic_return", "charts/epsilon", "charts/masked_fraction")  # exported as bin means
# The paper's envs and conditions in the order its figures use; others follow alphabetically.
PAPER_ENVS = ["Hopper-v4", "Walker2d-v4", "Ant-v4"]
PAPER_CONDITIONS = ["baseline", "expert", "expert_no_ma_em", "random", "random_no_ma_em", "camel", "camel_no_ma_em"]
NO_MA_EM = "_no_ma_em"  # the control without the masking-aware actor and epsilon masking
SAC = "sac_"  # the sweep's prefix for runs of camel_sac.py (TRAINER=sac)
SWEEP_CONDITIONS = PAPER_CONDITIONS + [SAC + c for c in PAPER_CONDITIONS]
# Each built-in condition's name in the paper and its colour in every figure (its _no_ma_em control: the same
# colour, dash-dotted); other conditions take colours from OTHER_COLORS, chosen by name.
LABELS = {"baseline": "TD3", "camel": "CAMEL (LLM masking)", "expert": "Expert masking", "random": "Random masking",
          "sac_baseline": "SAC", "sac_camel": "CAMEL-SAC (LLM masking)", "sac_expert": "Expert masking (SAC)",
          "sac_random": "Random masking (SAC)"}  # fmt: skip
COLORS = {"baseline": "#4d4d4d", "camel": "#1f77b4", "expert": "#2ca02c", "random": "#ff7f0e"}
OTHER_COLORS = ["#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf"]
AXIS_LABELS = {
    "eval/episodic_return": "Episodic return (unmasked evaluation)",
    "eval/episodic_length": "Episode length in steps (unmasked evaluation)",
    "charts/episodic_return": "Episodic return (training episodes)",
    "charts/epsilon": "Epsilon (probability a step is masked)",
    "charts/masked_fraction": "Share of steps masked",
}
DEFAULT_GUIDE_RETURNS = "docs/results/guides.json"


def hint(default):
    """--help's note on a default that the empty value stands for."""
    return tyro.conf.arg(help_behavior_hint=f"(default: {default})")


@dataclass
class Args:
    """Draw the paper's figure and results table from run folders and exported runs.
    `python plot.py export RUNS_DIR --to FOLDER` exports finished runs as small files (see its --help)."""

    runs_dirs: Annotated[tuple[str, ...], tyro.conf.Positional, tyro.conf.arg(metavar="RUNS_DIR...")] = ("runs",)
    """folders that hold run folders and exported run files (searched recursively)"""
    output_dir: str = "plots"
    """where the figure and the table are written"""
    name: str = "results"
    """file name of the outputs, without extension: {name}.png, {name}.svg, {name}.pdf and {name}.md"""
    conditions: Annotated[tuple[str, ...], hint("the sweep's conditions found and the labelled ones, the baseline first")] = ()
    """conditions to show, in this order"""
    label: Annotated[list[str], tyro.conf.UseAppendAction] = field(default_factory=list)
    """NAME=TEXT: show condition NAME as TEXT; a labelled condition is shown by default"""
    envs: Annotated[tuple[str, ...], hint("all found")] = ()
    """envs to show, one panel each, in this order"""
    steps: Annotated[tuple[int, ...], hint("25, 50, 75 and 100% of each env's common last step")] = ()
    """environment steps at which the table reports the return"""
    guide_returns: Optional[str] = DEFAULT_GUIDE_RETURNS
    """JSON file {env_id: {condition: return}}: a dashed line at each guide's own return (the default file only if it exists; None: no lines); a condition without an entry uses that of the one it varies (camel's for camel_early, camel_no_ma_em, sac_camel)"""
    baseline: str = "baseline"
    """the condition the permutation test and the sample-efficiency measures compare against"""
    tag: str = "eval/episodic_return"
    """the TensorBoard scalar to plot"""
    bootstrap_samples: int = 10_000
    """resamples for each bootstrap confidence interval"""
    confidence: float = 0.95
    """confidence level of the intervals"""
    seed: int = 0
    """seed of the random generators of the bootstrap and of a sampled permutation test"""


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


class Run(NamedTuple):
    env_id: str
    condition: str
    seed: int
    path: str
    steps: np.ndarray  # evaluation steps, increasing
    values: np.ndarray  # the tag's value at those steps
    settings: dict = {}  # the run's logged hyperparameters {name: text}


# Settings that change what a run learns: the seeds of one condition must agree on each of these that they logged
# (a run from before a setting existed did not log it, and is not compared on it). Bookkeeping (threads, speed
# paths, checkpoints, paths) may differ.
ALGORITHM_SETTINGS = (
    "total_timesteps", "learning_rate", "policy_lr", "q_lr", "buffer_size", "gamma", "tau", "batch_size", "policy_noise",
    "exploration_noise", "learning_starts", "policy_frequency", "target_network_frequency", "noise_clip", "alpha",
    "autotune", "mask_width", "epsilon_fraction", "masking_aware", "epsilon_masking", "random_guide",
    "actor_full_bounds_share", "target_full_bounds", "distill_coef",
)  # fmt: skip


def mixed_settings(runs):
    """For runs of one env and condition: one line per algorithm setting on which their seeds differ, naming the
    values and the seeds with each (empty when they agree)."""
    lines, by_seed = [], sorted(runs, key=lambda r: r.seed)
    for name in ALGORITHM_SETTINGS:
        values = {}
        for run in by_seed:
            if name in run.settings:
                values.setdefault(run.settings[name], []).append(str(run.seed))
        if len(values) > 1:
            lines.append(f"--{name.replace('_', '-')} " + ", ".join(f"{v} (seed {' '.join(seeds)})" for v, seeds in values.items()))
    return lines


# ---- Reading run folders and exported runs
def run_folders(runs_dir):
    """Folders under runs_dir that hold a run: TensorBoard event files, or camel_td3.py's or the sweep's files."""
    markers = ("finished.json", "checkpoint.pt", "log.txt")
    for path, dirs, files in sorted(os.walk(runs_dir)):
        dirs.sort()
        if any(f.startswith(EVENT_FILE_PREFIX) for f in files) or any(m in files for m in markers):
            yield path


def exported_runs(runs_dir):
    """(path, record) of each exported run file under runs_dir (runs_dir may be one such file); other JSON files
    (finished.json, a guide-returns file) are passed over."""
    if os.path.isfile(runs_dir):
        candidates = [runs_dir]
    else:
        candidates = [os.path.join(path, f) for path, _, files in sorted(os.walk(runs_dir)) for f in sorted(files)]
    for path in candidates:
        record = read_export(path) if path.endswith(".json") and os.path.basename(path) != "finished.json" else None
        if record is not None:
            yield path, record


def run_identity(path, hyperparameters, finished=None):
    """(env_id, condition, seed) of a run: from its finished.json or the hyperparameters camel_td3.py logs, else from
    the folder name {env_id}__{exp_name}__{seed}[__{time}]; None when none of them gives it."""
    for record in (finished or {}, hyperparameters):
        if {"env_id", "exp_name", "seed"} <= record.keys() and str(record["seed"]).isdigit():
            return record["env_id"], record["exp_name"], int(record["seed"])
    parts = os.path.basename(os.path.normpath(path)).split("__")
    if len(parts) in (3, 4) and all(parts[:2]) and all(p.isdigit() for p in parts[2:]):
        return parts[0], parts[1], int(parts[2])
    return None


def as_curve(points):
    """(steps, values) arrays from [(step, value)], the values as the float32 numbers TensorBoard stores."""
    steps = np.array([s for s, _ in points], dtype=np.int64)
    values = np.array([v for _, v in points], dtype=np.float32).astype(np.float64)
    return steps, values


def read_events(path):
    """Every scalar curve {tag: (steps, values)} and the logged hyperparameters {name: text} of one run folder,
    with TensorBoard's own reader. TensorBoard drops the points a resumed run purged; a run restarted from scratch
    in the same folder (steps going back without a purge) keeps only its newest points for each step, as
    TensorBoard's display does."""
    from tensorboard.backend.event_processing import event_accumulator

    logging.getLogger("tensorboard").setLevel(logging.ERROR)  # its notes on purged steps are expected here
    accumulator = event_accumulator.EventAccumulator(
        path, size_guidance={event_accumulator.SCALARS: 0, event_accumulator.TENSORS: 0}
    )
    accumulator.Reload()
    tags = accumulator.Tags()
    hyperparameters = {}
    if "hyperparameters/text_summary" in tags["tensors"]:
        text = accumulator.Tensors("hyperparameters/text_summary")[0].tensor_proto.string_val[0].decode()
        for line in text.splitlines()[2:]:  # after the header |param|value| and |-|-|
            cells = line.strip().strip("|").split("|")
            if len(cells) == 2:
                hyperparameters[cells[0]] = cells[1]
    curves = {}
    for tag in tags["scalars"]:
        points = []
        for event in accumulator.Scalars(tag):
            while points and points[-1][0] >= event.step:
                points.pop()
            points.append((event.step, event.value))
        curves[tag] = as_curve(points)
    return curves, hyperparameters


def read_export(path):
    """The record of an exported run file, or None when the file is not one."""
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) and record.get("format") == EXPORT_FORMAT else None


class Found(NamedTuple):
    runs: list  # of Run, each with at least one point of the tag
    unidentified: list  # folders that do not say which run they are
    empty: list  # (path, finished) of runs with no point of the tag yet
    notes: list  # runs found twice with different lengths


def load_runs(runs_dirs, tag):
    """Every run under the folders, from its event files or its exported file, one per (env, condition, seed)."""
    runs, unidentified, empty, notes = {}, [], [], []
    sources = [(path, None) for d in runs_dirs for path in run_folders(d)]
    sources += [(path, record) for d in runs_dirs for path, record in exported_runs(d)]
    for path, record in sources:
        if record is None:  # a run folder
            curves, hyperparameters = read_events(path)
            finished = os.path.exists(os.path.join(path, "finished.json"))
            identity = run_identity(path, hyperparameters)
        else:
            try:
                curves = {name: as_curve(points) for name, points in record["curves"].items()}
                identity = str(record["env_id"]), str(record["condition"]), int(record["seed"])
                hyperparameters = dict(record.get("hyperparameters") or {})
            except (KeyError, TypeError, ValueError, AttributeError) as e:
                notes.append(f"{path}: left out: not a complete exported run ({type(e).__name__}: {e}); export it again")
                continue
            finished = True
        if identity is None:
            unidentified.append(path)
            continue
        steps, values = curves.get(tag, as_curve([]))
        if len(steps) == 0:
            empty.append((path, finished))
            continue
        run = Run(*identity, path, steps, values, hyperparameters)
        previous = runs.get(identity)
        if previous is not None:  # the same seed twice: a folder and its export, or CleanRL's names with a time
            kept, dropped = (run, previous) if run.steps[-1] > previous.steps[-1] else (previous, run)
            if kept.steps[-1] != dropped.steps[-1]:
                notes.append(f"{dropped.path}: left out: {kept.path} is the same env, condition and seed and ran longer")
            run = kept
        runs[identity] = run
    return Found(list(runs.values()), unidentified, empty, notes)


# ---- Exporting finished runs
def bin_width(total_steps, max_points):
    """The smallest of 100, 200, 500, 1000, 2000, 5000, ... steps that cuts total_steps into at most max_points bins."""
    width = 100
    while -(-total_steps // width) > max_points:
        width = width * 5 // 2 if str(width).startswith("2") else width * 2
    return width


def thin(steps, values, width):
    """One point per bin of `width` steps that holds points: (the bin's end s, the mean of its values in (s - width, s])."""
    ends = -(-steps // width) * width
    bins, index = np.unique(ends, return_inverse=True)
    return bins, np.bincount(index, weights=values) / np.bincount(index)


def as_points(steps, values):
    """[[step, value], ...] with each value in the shortest form that is the same float32 number."""
    return [[int(s), float(str(np.float32(v)))] for s, v in zip(steps, values)]


def export_record(path, finished, curves, hyperparameters, max_points):
    """The exported file's content for one finished run folder (the format is in the module docstring)."""
    env_id, condition, seed = run_identity(path, hyperparameters, finished)
    logged_total = hyperparameters.get("total_timesteps", "")
    total = finished.get("total_timesteps") or (int(logged_total) if logged_total.isdigit() else 0)
    last = max([int(steps[-1]) for steps, _ in curves.values() if len(steps)] or [0])
    width = bin_width(max(total, last, 1), max_points)
    record = {"format": EXPORT_FORMAT, "run_name": finished.get("run_name") or os.path.basename(os.path.normpath(path)),
              "env_id": env_id, "condition": condition, "seed": seed, "total_timesteps": total or None,
              "finished": finished, "hyperparameters": hyperparameters, "binned": {}, "curves": {}}  # fmt: skip
    for tag in EXPORT_WHOLE + EXPORT_THINNED:
        if tag not in curves or len(curves[tag][0]) == 0:
            continue
        steps, values = curves[tag]
        if tag in EXPORT_THINNED:
            steps, values = thin(steps, values, width)
            record["binned"][tag] = width
        record["curves"][tag] = as_points(steps, values)
    return record


def export_text(record):
    """The record as JSON: its fields one per line, each curve on one line."""
    head = json.dumps({k: v for k, v in record.items() if k != "curves"}, indent=1)
    curves = ",\n".join(f"  {json.dumps(tag)}: {json.dumps(points, separators=(',', ':'))}" for tag, points in record["curves"].items())
    return f'{head[:-2]},\n "curves": {{\n{curves}\n }}\n}}\n'


def plural(n, word):
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def listing(names, at_most=6):
    names = [os.path.basename(os.path.normpath(n)) for n in names]
    return ", ".join(names[:at_most]) + (f" and {len(names) - at_most} more" if len(names) > at_most else "")


def export(args):
    if not os.path.isdir(args.runs_dir):
        print(f"error: {args.runs_dir} is not a folder", file=sys.stderr)
        return 1
    exported, already, unfinished, unidentified = [], [], [], []
    for path in run_folders(args.runs_dir):
        finished_path = os.path.join(path, "finished.json")
        if not os.path.exists(finished_path):
            unfinished.append(path)
            continue
        with open(finished_path) as f:
            finished = json.load(f)
        target = os.path.join(args.to, f"{finished.get('run_name') or os.path.basename(os.path.normpath(path))}.json")
        if os.path.exists(target):
            already.append(target)
            continue
        curves, hyperparameters = read_events(path)
        if run_identity(path, hyperparameters, finished) is None:
            unidentified.append(path)
            continue
        os.makedirs(args.to, exist_ok=True)
        with open(target + ".tmp", "w") as f:  # written whole, then renamed: a reader never sees half a file
            f.write(export_text(export_record(path, finished, curves, hyperparameters, args.max_points)))
        os.replace(target + ".tmp", target)
        exported.append(target)
    if exported:
        sizes = [os.path.getsize(p) / 1000 for p in exported]
        print(f"exported {plural(len(exported), 'run')} to {args.to} ({min(sizes):.0f}-{max(sizes):.0f} kB each): {listing(exported)}")
    if already:
        print(f"already in {args.to}: {plural(len(already), 'run')}")
    if unfinished:
        print(f"not finished, so not exported: {plural(len(unfinished), 'run')}: {listing(unfinished)}")
    if unidentified:
        print(f"left out {plural(len(unidentified), 'run')} that do not say their env, exp_name and seed: {listing(unidentified)}")
    if not (exported or already or unfinished):
        print(f"error: no run folders under {args.runs_dir}", file=sys.stderr)
        return 1
    return 0


# ---- Statistics
def values_at(run, steps):
    """The run's value at each step: its most recent evaluation at or before the step; NaN before its first
    evaluation and after its last one (a step it has not reached)."""
    steps = np.asarray(steps)
    index = np.searchsorted(run.steps, steps, side="right") - 1
    reached = (index >= 0) & (steps <= run.steps[-1])
    return np.where(reached, run.values[np.clip(index, 0, None)], np.nan)


def bootstrap_ci(values, samples, confidence, seed):
    """Percentile bootstrap confidence interval of the mean of `values` (one value per seed)."""
    values = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(samples, len(values)))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


class Cell(NamedTuple):
    mean: float
    low: float
    high: float
    n: int


def summarize(runs, steps, args):
    """Mean, confidence interval and number of seeds of the runs at each step (None where no run reached it)."""
    table = np.stack([values_at(run, steps) for run in runs])
    cells = []
    for column in table.T:
        reached = column[~np.isnan(column)]
        if len(reached) == 0:
            cells.append(None)
            continue
        low, high = bootstrap_ci(reached, args.bootstrap_samples, args.confidence, args.seed)
        cells.append(Cell(float(reached.mean()), low, high, len(reached)))
    return cells


def evaluation_grid(runs, start=None, end=None):
    """The evaluation steps of the runs, from `start` (default: the first step every run has evaluated) to `end`
    (default: the last step every run reached)."""
    start = max(run.steps[0] for run in runs) if start is None else start
    end = min(run.steps[-1] for run in runs) if end is None else end
    grid = np.unique(np.concatenate([run.steps for run in runs]))
    return grid[(grid >= start) & (grid <= end)]


def common_curve(runs):
    """The mean return over all the runs at each evaluation step that every one of them reached."""
    grid = evaluation_grid(runs)
    return grid, np.stack([values_at(run, grid) for run in runs]).mean(axis=0)


def settled_step(steps, mean, target):
    """The first of `steps` from which `mean` stays at or above `target` to the end; None if it ends below."""
    below = np.flatnonzero(np.asarray(mean) < target)
    if len(steps) == 0 or (len(below) and below[-1] == len(steps) - 1):
        return None
    return int(steps[below[-1] + 1]) if len(below) else int(steps[0])


def sample_efficiency(baseline_runs, runs):
    """(S, T, R): the step S from which the condition's mean return stays at or above the baseline's final mean
    return R (None when it ends below R), and T, the last step all baseline seeds reached (all None when the
    baseline's seeds share no evaluation step)."""
    baseline_steps, baseline_mean = common_curve(baseline_runs)
    if len(baseline_steps) == 0:
        return None, None, None
    final_step, final_return = int(baseline_steps[-1]), float(baseline_mean[-1])
    return settled_step(*common_curve(runs), final_return), final_step, final_return


PERMUTATION_SPLITS = 100_000  # the permutation test is exact up to this many splits (9 seeds against 9), else sampled


def permutation_p_value(values, baseline_values, seed=0):
    """Two-sided p-value of a permutation test of the difference of the means over seeds: over the ways to split
    the pooled seeds into groups of the two sizes, twice the smaller of the shares whose difference is at least,
    and at most, the observed one (at most 1). Every split when there are at most PERMUTATION_SPLITS, else that
    many random ones (seeded)."""
    def difference(x, y, axis):
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    test = stats.permutation_test((values, baseline_values), difference, permutation_type="independent",
                                  n_resamples=PERMUTATION_SPLITS, vectorized=True, rng=np.random.default_rng(seed))  # fmt: skip
    return float(test.pvalue)


def against_baseline(finals, baseline_finals, seed=0):
    """The table's cell comparing a condition's final returns with the baseline's: the difference of the means
    and the permutation test's p; "—" with fewer than 2 seeds on either side."""
    finals, baseline_finals = [v for v in finals if not np.isnan(v)], [v for v in baseline_finals if not np.isnan(v)]
    if len(finals) < 2 or len(baseline_finals) < 2:
        return "—"
    p_value = permutation_p_value(finals, baseline_finals, seed)
    return f"{np.mean(finals) - np.mean(baseline_finals):+.1f}, p={p_value:.3f}"


def mean_over_training(run, grid):
    """The run's return averaged over grid[0]..grid[-1]: the trapezoid-rule area under its curve on the grid,
    divided by the grid's span (its return at grid[0] when the grid is one step)."""
    values = values_at(run, grid)
    if len(grid) == 1:
        return float(values[0])
    return float(np.trapezoid(values, grid) / (grid[-1] - grid[0]))


def default_steps(runs):
    """25%, 50%, 75% and 100% of the last step every run reached, each moved to the nearest evaluation step."""
    last = min(run.steps[-1] for run in runs)
    grid = evaluation_grid(runs, start=0, end=last)
    return sorted({int(grid[np.argmin(np.abs(grid - fraction * last))]) for fraction in (0.25, 0.5, 0.75, 1.0)})


# ---- Names, colours and guide returns
def base_condition(condition):
    return condition[: -len(NO_MA_EM)] if condition.endswith(NO_MA_EM) else condition


def parse_labels(flags):
    """{condition: text} from --label NAME=TEXT flags; ValueError naming the flag that is not NAME=TEXT."""
    labels = {}
    for flag in flags:
        name, sep, text = flag.partition("=")
        if not sep or not name.strip() or not text.strip():
            raise ValueError(f"--label {flag}: expected NAME=TEXT, e.g. --label 'camel_standstill=CAMEL, stand-still guide'")
        labels[name.strip()] = text.strip()
    return labels


def condition_label(condition, custom):
    """The condition's name in figures and tables: --label's, the paper's, or the condition itself."""
    if condition in custom:
        return custom[condition]
    if condition in LABELS:
        return LABELS[condition]
    base = base_condition(condition)
    if base != condition and (base in custom or base in LABELS):
        return f"{condition_label(base, custom)} w/o MA EM"
    return condition


def condition_colors(conditions):
    """A colour per condition: the fixed colour of a built-in condition, and for others one chosen by name from
    OTHER_COLORS (the next free one when two names in the same figure would share it); X_no_ma_em takes X's."""
    colors, taken = {}, set()
    for condition in sorted(conditions, key=lambda c: (base_condition(c) not in COLORS, c)):
        base = base_condition(condition)
        if base in COLORS:
            colors[condition] = COLORS[base]
            continue
        same_base = [colors[c] for c in colors if base_condition(c) == base]
        if same_base:
            colors[condition] = same_base[0]
            continue
        slot = zlib.crc32(base.encode()) % len(OTHER_COLORS)
        for i in range(len(OTHER_COLORS)):
            if OTHER_COLORS[(slot + i) % len(OTHER_COLORS)] not in taken:
                slot = (slot + i) % len(OTHER_COLORS)
                break
        colors[condition] = OTHER_COLORS[slot]
        taken.add(colors[condition])
    return colors


def read_guide_returns(path, given):
    """{env_id: {condition: return}} from a JSON file; {} when path is None or is the default and does not exist.
    ValueError saying what is wrong with a file that is given and missing, or not of that shape."""
    if path is None or (not given and not os.path.exists(path)):
        return {}
    try:
        with open(path) as f:
            guides = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"--guide-returns {path}: no such file") from None
    except OSError as e:
        raise ValueError(f"--guide-returns {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"--guide-returns {path}: not JSON ({e})") from None
    shape_ok = isinstance(guides, dict) and all(
        isinstance(returns, dict) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in returns.values())
        for returns in guides.values()
    )
    if not shape_ok:
        raise ValueError(f'--guide-returns {path}: expected {{env_id: {{condition: return}}}}, e.g. {{"Hopper-v4": {{"camel": 2542.0}}}}')
    return guides


def guide_entry(condition, returns):
    """The guide-returns entry a condition uses: its own, else that of the condition it varies, found by dropping
    a sac_ prefix and then trailing _words (camel for sac_camel, camel_early, camel_no_ma_em); None if none."""
    name = condition[len(SAC) :] if condition.startswith(SAC) and condition not in returns else condition
    parts = name.split("_")
    for end in range(len(parts), 0, -1):
        if "_".join(parts[:end]) in returns:
            return "_".join(parts[:end])
    return None


def guide_lines(guides, env_id, conditions):
    """(condition, return): one dashed line per guide that a shown condition uses (see guide_entry), named after
    the first shown condition that uses it; two guides with equal returns keep a line each."""
    returns = guides.get(env_id, {})
    lines = {}
    for condition in conditions:
        entry = guide_entry(condition, returns)
        if entry is not None and entry not in lines:
            lines[entry] = (condition, float(returns[entry]))
    return list(lines.values())


# ---- Output
QUOTED_TABLE = re.compile(r"<!-- table:(\w+) -->\n(.*?)\n<!-- /table:\1 -->", flags=re.S)  # a table a document quotes


def quote_tables(document, tables_dir):
    """The document with each table it quotes between <!-- table:NAME --> and <!-- /table:NAME --> replaced by
    tables_dir/NAME.md below its first line (the line that says what the numbers are, and the blank line after)."""
    def table(match):
        with open(os.path.join(tables_dir, f"{match.group(1)}.md")) as f:
            body = f.read().split("\n", 2)[2].strip()
        return f"<!-- table:{match.group(1)} -->\n{body}\n<!-- /table:{match.group(1)} -->"

    return QUOTED_TABLE.sub(table, document)


def format_steps(step):
    if step >= 1_000_000 and step % 100_000 == 0:
        return f"{step / 1_000_000:g}M"
    if step >= 1_000 and step % 100 == 0:
        return f"{step / 1_000:g}k"
    return str(step)


def format_cell(cell):
    return "—" if cell is None else f"{cell.mean:.1f} [{cell.low:.1f}, {cell.high:.1f}] (n={cell.n})"


def ordered(found, chosen, preferred, first=None):
    """The chosen names that were found, in the chosen order; by default all found, `first` first, then the paper's."""
    if chosen:
        return [c for c in chosen if c in found]
    rank = {name: i for i, name in enumerate(preferred)}
    return sorted(found, key=lambda c: (c != first, rank.get(c, len(rank)), c))


def draw_figure(groups, envs, conditions, labels, guides, args):
    """The figure as PNG, SVG and PDF; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    colors = condition_colors(set(conditions) | {c for env_id in envs for c, _ in guide_lines(guides, env_id, conditions)})
    style = {"pdf.fonttype": 42, "svg.hashsalt": "camel", "font.size": 10}  # editable PDF text, reproducible SVG ids
    with plt.rc_context(style):
        width = max(4.6 * len(envs), 6.4)  # inches
        fig, axes = plt.subplots(1, len(envs), figsize=(width, 3.8), squeeze=False, layout="constrained")
        curves, guide_handles = {}, {}
        for ax, env_id in zip(axes[0], envs):
            for condition in conditions:
                runs = groups.get((env_id, condition))
                if not runs:
                    continue
                grid = np.unique(np.concatenate([run.steps for run in runs]))
                cells = summarize(runs, grid, args)
                keep = [i for i, cell in enumerate(cells) if cell is not None]
                mean, low, high = (np.array([getattr(cells[i], f) for i in keep]) for f in ("mean", "low", "high"))
                linestyle = "-." if condition.endswith(NO_MA_EM) else "-"
                (curves[condition],) = ax.plot(grid[keep], mean, color=colors[condition], linestyle=linestyle, linewidth=1.8)
                ax.fill_between(grid[keep], low, high, color=colors[condition], alpha=0.18, linewidth=0)
            for condition, value in guide_lines(guides, env_id, conditions):
                guide_handles[condition] = ax.axhline(value, color=colors[condition], linestyle="--", linewidth=1.2)
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: format_steps(int(x))))
            ax.set_xlim(left=0)
            ax.set_title(env_id)
            ax.set_xlabel("Environment steps")
            ax.set_ylabel(AXIS_LABELS.get(args.tag, args.tag))
            ax.grid(alpha=0.3)
        # one legend for the figure: the conditions in their order, then the guides' returns
        handles = [curves[c] for c in conditions if c in curves] + list(guide_handles.values())
        names = [labels[c] for c in conditions if c in curves]
        names += [f"Guide's own return: {labels[c]}" for c in guide_handles]
        entry_width = 0.6 + 0.075 * max(len(n) for n in names)  # inches: the line sample and the longest name
        columns = max(1, min(len(handles), int(width // entry_width)))
        fig.legend(handles, names, loc="outside lower center", ncol=columns, frameon=False)
        paths = [os.path.join(args.output_dir, f"{args.name}.{ext}") for ext in ("png", "svg", "pdf")]
        undated = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}  # the same data gives the same files
        for path in paths:
            fig.savefig(path, dpi=200, bbox_inches="tight", metadata=undated.get(path.rsplit(".", 1)[1]))
        plt.close(fig)
    return paths


def results_markdown(groups, envs, conditions, labels, guides, args):
    """The table of each env, with its footnotes."""
    baseline_name = labels[args.baseline]
    lines = [f"{AXIS_LABELS.get(args.tag, args.tag)}: mean over seeds [{args.confidence:.0%} percentile bootstrap CI "
             f"over seeds] (n = seeds that reached the step).", ""]  # fmt: skip
    for env_id in envs:
        env_conditions = [c for c in conditions if (env_id, c) in groups]
        env_runs = [run for c in env_conditions for run in groups[(env_id, c)]]
        longest = max(run.steps[-1] for run in env_runs)
        if args.steps:
            steps = [s for s in args.steps if s <= longest] or [int(longest)]
        else:
            steps = default_steps(env_runs)
        grid = evaluation_grid(env_runs)  # for the mean over training: every run's steps, to their common last
        baseline_runs = groups.get((env_id, args.baseline))
        lines += [f"### {env_id}", ""]
        lines.append(f"| condition | {' | '.join(format_steps(s) for s in steps)} | final return per seed ({format_steps(steps[-1])}) "
                     f"| final return against {baseline_name}'s | steps to {baseline_name}'s final return | mean return over training |")  # fmt: skip
        lines.append("|" + "---|" * (len(steps) + 5))
        baseline_finals = [values_at(run, [steps[-1]])[0] for run in baseline_runs or []]
        for condition in env_conditions:
            runs = sorted(groups[(env_id, condition)], key=lambda r: r.seed)
            cells = summarize(runs, steps, args)
            final_values = [values_at(run, [steps[-1]])[0] for run in runs]
            finals = ", ".join(f"{run.seed}: " + ("—" if np.isnan(v) else f"{v:.1f}") for run, v in zip(runs, final_values))
            versus = "—" if condition == args.baseline else against_baseline(final_values, baseline_finals, args.seed)
            if baseline_runs is None:
                settled = f"no {baseline_name} runs"
            else:
                reached, final_step, _ = sample_efficiency(baseline_runs, runs)
                settled = ("—" if final_step is None else "not reached" if reached is None
                           else f"{format_steps(reached)} ({reached / final_step:.2f}x)")  # fmt: skip
            if len(grid):
                per_seed = [mean_over_training(run, grid) for run in runs]
                low, high = bootstrap_ci(per_seed, args.bootstrap_samples, args.confidence, args.seed)
                area = f"{np.mean(per_seed):.1f} [{low:.1f}, {high:.1f}]"
            else:
                area = "—"
            lines.append(f"| {labels[condition]} | {' | '.join(format_cell(c) for c in cells)} | {finals} | {versus} | {settled} | {area} |")
        lines.append("")
        if baseline_runs is not None:
            lines.append(f"Final return against {baseline_name}'s: the difference of the mean final returns ({format_steps(steps[-1])}) "
                         f"and the two-sided p-value of a permutation test over the seeds (every split of the pooled seeds into "
                         f"groups of the two sizes, {PERMUTATION_SPLITS:,} random ones if there are more; with 3 seeds each p is at least 0.1, "
                         f"with 5 each 0.008).")  # fmt: skip
        _, final_step, final_return = sample_efficiency(baseline_runs, baseline_runs) if baseline_runs else (None,) * 3
        if final_step is not None:
            lines.append(f"Steps to {baseline_name}'s final return: {baseline_name}'s mean return at {format_steps(final_step)} steps is "
                         f"{final_return:.1f}; the column gives the first evaluation step from which a condition's mean return "
                         f"stays at or above it to the end of its run, and that step over {format_steps(final_step)}.")  # fmt: skip
        if len(grid):
            lines.append(f"Mean return over training: the return averaged over steps {format_steps(int(grid[0]))} to "
                         f"{format_steps(int(grid[-1]))} (the area under the curve by the trapezoid rule on the evaluation "
                         f"steps, over the steps), mean over seeds [{args.confidence:.0%} bootstrap CI].")  # fmt: skip
        known = guide_lines(guides, env_id, env_conditions)
        if known:
            lines.append("Guide's own return (dashed in the figure): "
                         + ", ".join(f"{labels[c]} {value:.1f}" for c, value in known) + ".")  # fmt: skip
        skipped = [format_steps(s) for s in args.steps if s > longest]
        if skipped:
            lines.append(f"No run reached {', '.join(skipped)} steps (the longest reached {format_steps(int(longest))}).")
        lines.append("")
    return "\n".join(lines)


def found_report(groups, envs, conditions, labels, args):
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
                         f"evaluated to {', '.join(lengths)} steps  ({labels[condition]})")  # fmt: skip
            absent = sorted(set(all_seeds) - {run.seed for run in runs})
            if absent:
                missing.append(f"{env_id} {condition}: seed {' '.join(map(str, absent))} (other conditions have it)")
            for run in runs:
                if run.steps[-1] < longest:
                    missing.append(f"{env_id} {condition} seed {run.seed}: stops at {format_steps(int(run.steps[-1]))} steps, "
                                   f"others reach {format_steps(int(longest))}; it counts only where it has data")  # fmt: skip
        if args.baseline not in conditions or not groups.get((env_id, args.baseline)):
            missing.append(f"{env_id}: no '{args.baseline}' runs, so no sample-efficiency measures against it")
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
        guides = read_guide_returns(args.guide_returns, given=args.guide_returns != DEFAULT_GUIDE_RETURNS)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1

    # ---- Find the runs; keep the sweep's conditions (or the chosen ones), and say in one line each what is left out
    found = load_runs(args.runs_dirs, args.tag)
    for note in found.notes:
        print(f"note: {note}")
    if found.unidentified:
        print(f"note: left out {plural(len(found.unidentified), 'folder')} whose names are not {{env_id}}__{{exp_name}}__{{seed}} "
              f"and that logged no hyperparameters: {listing(found.unidentified)}")  # fmt: skip
    if found.empty:
        done = sum(finished for _, finished in found.empty)
        print(f"note: skipped {plural(len(found.empty), 'run')} with no {args.tag} yet ({len(found.empty) - done} not finished, "
              f"{done} finished; a failed start says why in its log.txt): {listing([p for p, _ in found.empty])}")  # fmt: skip
    wanted = set(args.conditions) if args.conditions else set(SWEEP_CONDITIONS) | set(custom_labels)
    runs = [run for run in found.runs if run.condition in wanted]
    left_out = [run for run in found.runs if run.condition not in wanted]
    if left_out and not args.conditions:
        names = sorted({run.condition for run in left_out})
        counts = ", ".join(f"{name} ({sum(run.condition == name for run in left_out)})" for name in names)
        print(f"note: left out {plural(len(left_out), 'run')} not from a sweep: exp_name {counts}; name them with --conditions "
              f"(or --label NAME=TEXT) to show them")  # fmt: skip
    groups = {}
    for run in runs:
        groups.setdefault((run.env_id, run.condition), []).append(run)
    for (env_id, condition), group in groups.items():
        mixed = mixed_settings(group)
        if mixed:  # averaging over them would mix two experiments under one name
            print(f"error: the {env_id} runs of '{condition}' were run with different settings: {'; '.join(mixed)}. "
                  "Give each setting its own condition name (the sweep's VARIANT), or plot the folders apart", file=sys.stderr)  # fmt: skip
            return 1
    if not found.runs:
        print(f"error: no runs with {args.tag} under {where}; nothing to plot", file=sys.stderr)
        return 1
    if not groups:
        which = "the chosen conditions" if args.conditions else "the sweep's conditions"
        print(f"error: no runs of {which} under {where} "
              f"(found: {', '.join(sorted({run.condition for run in found.runs}))})", file=sys.stderr)  # fmt: skip
        return 1

    # ---- Choose the envs and conditions to show, and say what is there and what is missing
    found_envs = {env for env, _ in groups}
    found_conditions = {condition for _, condition in groups}
    envs = ordered(found_envs, args.envs, PAPER_ENVS)
    conditions = ordered(found_conditions, args.conditions, SWEEP_CONDITIONS, first=args.baseline)
    for name, chosen, present in [("env", args.envs, found_envs), ("condition", args.conditions, found_conditions)]:
        for missing_name in [c for c in chosen if c not in present]:
            print(f"note: no runs of {name} '{missing_name}' under {where}")
    envs = [e for e in envs if any((e, c) in groups for c in conditions)]
    if not envs or not conditions:
        print(f"error: none of the chosen envs/conditions have runs under {where} "
              f"(found: {', '.join(sorted(found_envs))}; {', '.join(sorted(found_conditions))})", file=sys.stderr)  # fmt: skip
        return 1
    labels = {c: condition_label(c, custom_labels) for c in {*conditions, args.baseline}}
    report, missing = found_report(groups, envs, conditions, labels, args)
    print(f"found {sum(len(groups.get((e, c), [])) for e in envs for c in conditions)} runs in {where}:")
    print("\n".join(report))
    if missing:
        print("missing:\n  " + "\n  ".join(missing))

    # ---- The figure, and the table with the sample-efficiency measures
    os.makedirs(args.output_dir, exist_ok=True)
    figure_paths = draw_figure(groups, envs, conditions, labels, guides, args)
    markdown = results_markdown(groups, envs, conditions, labels, guides, args)
    table_path = os.path.join(args.output_dir, f"{args.name}.md")
    with open(table_path, "w") as f:
        f.write(markdown)
    print()
    print(markdown)
    print(f"wrote {', '.join(figure_paths)} and {table_path}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["export"]:
        sys.exit(export(tyro.cli(ExportArgs, args=sys.argv[2:], prog="plot.py export")))
    sys.exit(main(tyro.cli(Args)))
