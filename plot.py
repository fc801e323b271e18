"""Plot CAMEL seed sweeps the way the paper does, and measure what they say.

    python plot.py runs/                                    # every env and condition found under runs/
    python plot.py runs/ --conditions baseline random camel --steps 50000 100000

Reads `eval/episodic_return` (camel_td3.py's unmasked evaluation) from the TensorBoard event files of each run
folder under the runs folder, groups the runs by (env_id, condition = exp_name), and writes to --output-dir:
  - returns.png and returns.svg: one panel per env, one line per condition, the mean over seeds with a shaded
    95% bootstrap confidence band, against environment steps;
  - results.md (also printed): for each env, the return at the chosen --steps as "mean [CI low, CI high] (n=seeds)",
    and the sample-efficiency ratio of each condition against the baseline.

Definitions
  - Alignment on steps: a run's value at step t is its most recent evaluation at or before t. A run whose last
    evaluation is before t has not reached t and is left out at t (the cell's n says how many seeds are in it),
    so runs of different lengths or evaluation frequencies are compared at the same steps, never by index.
  - Confidence interval: percentile bootstrap of the mean over seeds: resample the seeds with replacement
    --bootstrap-samples times, take the mean of each resample, and report the 2.5th and 97.5th percentiles
    (NumPy, with a generator seeded by --seed for every interval, so the numbers are reproducible).
  - Sample-efficiency ratio: the baseline's final return R is its mean return at the last step T that all
    baseline seeds reached; a condition's ratio is S / T, where S is the first step at which that condition's
    mean return (over its seeds, at steps all of them reached) is at least R. Below 1: it reaches the baseline's
    final return in fewer steps. "not reached" when its mean never gets there.
"""

import logging
import os
import sys
from dataclasses import dataclass, field
from typing import Annotated, NamedTuple

import numpy as np
import tyro

EVENT_FILE_PREFIX = "events.out.tfevents."
# The paper's envs and conditions in the order its figures use; others follow alphabetically.
PAPER_ENVS = ["Hopper-v4", "Walker2d-v4", "Ant-v4"]
PAPER_CONDITIONS = ["baseline", "expert", "expert_no_ma_em", "random", "random_no_ma_em", "camel", "camel_no_ma_em"]


@dataclass
class Args:
    runs_dir: Annotated[str, tyro.conf.Positional, tyro.conf.arg(metavar="RUNS_DIR")] = "runs"
    """folder that holds the run folders (searched recursively)"""
    steps: list[int] = field(default_factory=lambda: [50_000, 100_000, 300_000, 1_000_000])
    """environment steps at which the table reports the return"""
    output_dir: str = "plots"
    """where returns.png, returns.svg and results.md are written"""
    baseline: str = "baseline"
    """the condition the sample-efficiency ratio compares against"""
    conditions: tuple[str, ...] = ()
    """conditions to show, in this order (default: all found, the baseline first)"""
    envs: tuple[str, ...] = ()
    """envs to show, one panel each, in this order (default: all found)"""
    tag: str = "eval/episodic_return"
    """the TensorBoard scalar to plot"""
    bootstrap_samples: int = 10_000
    """resamples for each bootstrap confidence interval"""
    confidence: float = 0.95
    """confidence level of the intervals"""
    seed: int = 0
    """seed of the bootstrap's random generator"""


class Run(NamedTuple):
    env_id: str
    condition: str
    seed: int
    path: str
    steps: np.ndarray  # evaluation steps, increasing
    values: np.ndarray  # the tag's value at those steps


# ---- Reading runs
def run_folders(runs_dir):
    """Folders under runs_dir that hold a run: TensorBoard event files, or camel_td3.py's or the sweep's files."""
    markers = ("finished.json", "checkpoint.pt", "log.txt")
    for path, dirs, files in sorted(os.walk(runs_dir)):
        dirs.sort()
        if any(f.startswith(EVENT_FILE_PREFIX) for f in files) or any(m in files for m in markers):
            yield path


def run_identity(path, hyperparameters):
    """(env_id, condition, seed) of a run: from the hyperparameters camel_td3.py logs, else from the folder name
    {env_id}__{exp_name}__{seed}[__{time}]; None when neither gives it."""
    if {"env_id", "exp_name", "seed"} <= hyperparameters.keys() and hyperparameters["seed"].isdigit():
        return hyperparameters["env_id"], hyperparameters["exp_name"], int(hyperparameters["seed"])
    parts = os.path.basename(path).split("__")
    if len(parts) in (3, 4) and all(parts[:2]) and all(p.isdigit() for p in parts[2:]):
        return parts[0], parts[1], int(parts[2])
    return None


def read_events(path, tag):
    """The tag's (steps, values) and the logged hyperparameters of one run folder, with TensorBoard's own reader.
    TensorBoard drops the points a resumed run purged; a run restarted from scratch in the same folder (steps going
    back without a purge) keeps only its newest points for each step, as TensorBoard's display does."""
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
        for line in text.splitlines():
            cells = line.strip().strip("|").split("|")
            if len(cells) == 2:
                hyperparameters[cells[0]] = cells[1]
    points = []
    for event in accumulator.Scalars(tag) if tag in tags["scalars"] else []:
        while points and points[-1][0] >= event.step:
            points.pop()
        points.append((event.step, event.value))
    steps = np.array([s for s, _ in points], dtype=np.int64)
    values = np.array([v for _, v in points], dtype=np.float64)
    return steps, values, hyperparameters


def load_runs(runs_dir, tag):
    """Every run under runs_dir with at least one point of `tag`, and notes on the folders left out."""
    runs, notes = {}, []
    for path in run_folders(runs_dir):
        steps, values, hyperparameters = read_events(path, tag)
        identity = run_identity(path, hyperparameters)
        if identity is None:
            notes.append(f"{path}: left out: its folder name is not {{env_id}}__{{exp_name}}__{{seed}} and it logged no hyperparameters")
            continue
        if len(steps) == 0:
            state = "finished" if os.path.exists(os.path.join(path, "finished.json")) else "not finished"
            notes.append(f"{path}: no {tag} yet ({state}; see its log.txt if it failed)")
            continue
        run = Run(*identity, path, steps, values)
        previous = runs.get(identity)
        if previous is not None:  # the same seed twice (e.g. CleanRL's default names with a time): keep the longer
            kept, dropped = (run, previous) if run.steps[-1] > previous.steps[-1] else (previous, run)
            notes.append(f"{dropped.path}: left out: {kept.path} is the same env, condition and seed and ran longer")
            run = kept
        runs[identity] = run
    return list(runs.values()), notes


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


def common_curve(runs):
    """The mean return over all the runs at each evaluation step that every one of them reached."""
    last = min(run.steps[-1] for run in runs)
    grid = np.unique(np.concatenate([run.steps for run in runs]))
    grid = grid[(grid >= max(run.steps[0] for run in runs)) & (grid <= last)]
    return grid, np.stack([values_at(run, grid) for run in runs]).mean(axis=0)


def sample_efficiency(baseline_runs, runs):
    """(S, T, R): the first step S at which the condition's mean return reaches the baseline's final mean return R
    (S is None when it never does), and T, the last step all baseline seeds reached (None when they share none)."""
    baseline_steps, baseline_mean = common_curve(baseline_runs)
    if len(baseline_steps) == 0:
        return None, None, None
    final_step, final_return = int(baseline_steps[-1]), float(baseline_mean[-1])
    steps, mean = common_curve(runs)
    reached = np.flatnonzero(mean >= final_return)
    return (int(steps[reached[0]]) if len(reached) else None), final_step, final_return


# ---- Output
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


def draw_figure(groups, envs, conditions, args, output_dir):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    colors = {c: plt.get_cmap("tab10")(i % 10) for i, c in enumerate(conditions)}
    fig, axes = plt.subplots(1, len(envs), figsize=(5.5 * len(envs), 4.2), squeeze=False)
    for ax, env_id in zip(axes[0], envs):
        for condition in conditions:
            runs = groups.get((env_id, condition))
            if not runs:
                continue
            grid = np.unique(np.concatenate([run.steps for run in runs]))
            cells = summarize(runs, grid, args)
            keep = [i for i, cell in enumerate(cells) if cell is not None]
            x = grid[keep]
            mean, low, high = (np.array([getattr(cells[i], f) for i in keep]) for f in ("mean", "low", "high"))
            ax.plot(x, mean, color=colors[condition], label=f"{condition} (n={len(runs)})", linewidth=1.6)
            ax.fill_between(x, low, high, color=colors[condition], alpha=0.2, linewidth=0)
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: format_steps(int(x))))
        ax.set_title(env_id)
        ax.set_xlabel("environment steps")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    axes[0][0].set_ylabel(f"{args.tag}\nmean over seeds, {args.confidence:.0%} bootstrap CI")
    fig.tight_layout()
    paths = [os.path.join(output_dir, f"returns.{ext}") for ext in ("png", "svg")]
    for path in paths:
        fig.savefig(path, dpi=150)
    plt.close(fig)
    return paths


def results_markdown(groups, envs, conditions, args):
    lines = []
    for env_id in envs:
        env_conditions = [c for c in conditions if (env_id, c) in groups]
        longest = max(run.steps[-1] for c in env_conditions for run in groups[(env_id, c)])
        steps = [s for s in args.steps if s <= longest] or [int(longest)]
        baseline_runs = groups.get((env_id, args.baseline))
        lines += [f"### {env_id}", ""]
        lines.append(f"| condition | seeds | {' | '.join(format_steps(s) for s in steps)} | steps to the baseline's final return |")
        lines.append("|" + "---|" * (len(steps) + 3))
        for condition in env_conditions:
            runs = groups[(env_id, condition)]
            cells = summarize(runs, steps, args)
            if baseline_runs is None:
                ratio = "no baseline runs"
            else:
                reached, final_step, _ = sample_efficiency(baseline_runs, runs)
                last = min(run.steps[-1] for run in runs)
                ratio = ("the baseline's seeds share no evaluation step" if final_step is None
                         else f"{format_steps(reached)} ({reached / final_step:.2f}x)" if reached is not None
                         else f"not reached by {format_steps(int(last))}")  # fmt: skip
            seeds = " ".join(str(run.seed) for run in sorted(runs, key=lambda r: r.seed))
            lines.append(f"| {condition} | {seeds} | {' | '.join(format_cell(c) for c in cells)} | {ratio} |")
        lines.append("")
        lines.append(f"{args.tag}: mean over seeds [{args.confidence:.0%} percentile bootstrap CI] (n = seeds that reached the step).")
        _, final_step, final_return = sample_efficiency(baseline_runs, baseline_runs) if baseline_runs else (None,) * 3
        if final_step is not None:
            lines.append(f"The baseline's final return is {final_return:.1f} at {format_steps(final_step)} steps; the last column is the "
                         f"first step at which a condition's mean return reaches it, and that step over {format_steps(final_step)}.")  # fmt: skip
        skipped = [format_steps(s) for s in args.steps if s > longest]
        if skipped:
            lines.append(f"No run reached {', '.join(skipped)} steps (the longest reached {format_steps(int(longest))}).")
        lines.append("")
    return "\n".join(lines)


def found_report(groups, envs, conditions, args):
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
            lines.append(f"  {env_id:<14} {condition:<16} seeds {' '.join(str(r.seed) for r in runs):<12} evaluated to {', '.join(lengths)} steps")
            absent = sorted(set(all_seeds) - {run.seed for run in runs})
            if absent:
                missing.append(f"{env_id} {condition}: seed {' '.join(map(str, absent))} (other conditions have it)")
            for run in runs:
                if run.steps[-1] < longest:
                    missing.append(f"{env_id} {condition} seed {run.seed}: stops at {format_steps(int(run.steps[-1]))} steps, "
                                   f"others reach {format_steps(int(longest))}; it counts only where it has data")  # fmt: skip
        if args.baseline not in conditions or not groups.get((env_id, args.baseline)):
            missing.append(f"{env_id}: no '{args.baseline}' runs, so no sample-efficiency ratio")
    return lines, missing


def main(args):
    # ---- Find the runs and group them by (env, condition)
    if not os.path.isdir(args.runs_dir):
        print(f"error: {args.runs_dir} is not a folder; run a sweep first (e.g. scripts/hopper.sh)", file=sys.stderr)
        return 1
    runs, notes = load_runs(args.runs_dir, args.tag)
    for note in notes:
        print(f"note: {note}")
    groups = {}
    for run in runs:
        groups.setdefault((run.env_id, run.condition), []).append(run)
    if not groups:
        print(f"error: no runs with {args.tag} under {args.runs_dir}; nothing to plot", file=sys.stderr)
        return 1

    # ---- Choose the envs and conditions to show, and say what is there and what is missing
    found_envs = {env for env, _ in groups}
    found_conditions = {condition for _, condition in groups}
    envs = ordered(found_envs, args.envs, PAPER_ENVS)
    conditions = ordered(found_conditions, args.conditions, PAPER_CONDITIONS, first=args.baseline)
    for name, chosen, found in [("env", args.envs, found_envs), ("condition", args.conditions, found_conditions)]:
        for absent in [c for c in chosen if c not in found]:
            print(f"note: no runs of {name} '{absent}' under {args.runs_dir}")
    envs = [e for e in envs if any((e, c) in groups for c in conditions)]
    if not envs or not conditions:
        print(f"error: none of the chosen envs/conditions have runs under {args.runs_dir} "
              f"(found: {', '.join(sorted(found_envs))}; {', '.join(sorted(found_conditions))})", file=sys.stderr)  # fmt: skip
        return 1
    found, missing = found_report(groups, envs, conditions, args)
    print(f"found {sum(len(groups.get((e, c), [])) for e in envs for c in conditions)} runs in {args.runs_dir}:")
    print("\n".join(found))
    if missing:
        print("missing:\n  " + "\n  ".join(missing))

    # ---- The figure, and the table with the sample-efficiency ratio
    os.makedirs(args.output_dir, exist_ok=True)
    figure_paths = draw_figure(groups, envs, conditions, args, args.output_dir)
    markdown = results_markdown(groups, envs, conditions, args)
    table_path = os.path.join(args.output_dir, "results.md")
    with open(table_path, "w") as f:
        f.write(markdown)
    print()
    print(markdown)
    print(f"wrote {', '.join(figure_paths)} and {table_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(tyro.cli(Args)))
