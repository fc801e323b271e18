"""The user's budget (experiment B1M of docs/preregistration.md): the return without the mask against steps to 1M as the
paper draws it (a panel per env, the mean and the range over seeds, published 1M returns marked), the interval
estimates and the mean return at the steps asked, the published returns it is read against, and the time each method
needs to reach a return: the first step its mean curve reaches TD3's mean return at a step, times the seconds per step
of its trainer (benchmarks/benchmark.py). `python plot.py budget` writes them."""

import json
from typing import NamedTuple

import numpy as np

from camel_utils.conditions import format_steps
from camel_utils.results.figures import condition_colors, condition_of, undated
from camel_utils.results.runs import guided
from camel_utils.results.stats import evaluation_grid, final_values, mean_over_training, summarize, values_at
from camel_utils.results.tables import format_cell, interval_markdown, joined, three_digits


class Reference(NamedTuple):
    returns: dict  # {env_id: mean return}
    step: int  # the environment step the returns are at
    source: str


# Published mean returns of methods without a guide on Gym's v4 MuJoCo envs, each with its source; the figure marks
# REFERENCES_1M's
REFERENCES = {
    "MR.Q": Reference({"Hopper-v4": 2693, "Walker2d-v4": 6040, "Ant-v4": 6902}, 1_000_000,
                      "Fujimoto et al. 2025, arXiv 2501.16142, 10 seeds (results/gym_results.txt of the MR.Q repository)"),
    "TD7": Reference({"Hopper-v4": 3512, "Walker2d-v4": 6097, "Ant-v4": 8509}, 1_000_000, "Fujimoto et al. 2023, arXiv 2306.02451"),
    "DR.Q": Reference({"Hopper-v4": 2504, "Walker2d-v4": 6422, "Ant-v4": 8138}, 1_000_000,
                      "results/drq.csv of the DR.Q repository (github.com/dmksjfl/DR.Q), 10 seeds"),
    "CleanRL's TD3": Reference({"Hopper-v4": 3135, "Walker2d-v4": 4058}, 1_000_000,
                               "CleanRL's documentation of td3_continuous_action.py (docs.cleanrl.dev), 3 seeds, returns of "
                               "training episodes (with exploration noise), not a deterministic evaluation; Ant-v4 not run"),
}  # fmt: skip
REFERENCES_1M = {name: (REFERENCES[name].returns, REFERENCES[name].source) for name in ("MR.Q", "TD7")}

# Each method's variant in a benchmarks/benchmark.py file (its "summary" rows), named explicitly
SPEED_VARIANTS = {"td3": "td3", "camel_td3": "camel", "camel_plus_td3": "camel-plus"}


def mean_curve(runs):
    """(steps, mean over the runs) on the evaluation steps every run reached."""
    steps = np.unique(np.concatenate([run.steps for run in runs]))
    steps = steps[steps <= min(run.steps[-1] for run in runs)]
    return steps, np.stack([values_at(run, steps) for run in runs]).mean(axis=0)


def first_step_reaching(steps, mean, target):
    """The first step at which the mean curve is at or above `target`; None if it never is."""
    reached = np.flatnonzero(np.asarray(mean) >= target)
    return int(steps[reached[0]]) if len(reached) else None


def time_to_return(runs_by_method, reference, at_step, steps_per_second):
    """For each method {name: runs of one env}: (the first step its mean curve reaches the reference method's mean
    return at `at_step`, the hours that takes at its steps per second), None where it does not reach it. Returns
    (the target return, {method: (step, hours) or None})."""
    ref_steps, ref_mean = mean_curve(runs_by_method[reference])
    if ref_steps[-1] < at_step:
        raise ValueError(f"{reference}'s runs end at step {ref_steps[-1]}, before {at_step}")
    target = float(ref_mean[np.searchsorted(ref_steps, at_step, side="right") - 1])
    result = {}
    for method, runs in runs_by_method.items():
        step = first_step_reaching(*mean_curve(runs), target)
        result[method] = None if step is None else (step, step / steps_per_second[method] / 3600)
    return target, result


# ---- The speed of each method's trainer, from a benchmarks/benchmark.py file
class Speeds(NamedTuple):
    path: str
    cpu: str  # the machine's CPU, as the benchmark recorded it
    date: str
    rows: dict  # {variant: its rows of the file's "summary" (one per thread count measured)}


def read_speeds(path):
    """The speeds a benchmarks/benchmark.py JSON file measured; ValueError in one line where it is not one."""
    try:
        with open(path) as f:
            record = json.load(f)
        machine, rows = record.get("machine") or {}, {}
        for row in record["summary"]:
            rows.setdefault(str(row["variant"]), []).append(row)
    except FileNotFoundError:
        raise ValueError(f"--speeds {path}: no such file") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"--speeds {path}: not a benchmarks/benchmark.py result ({type(e).__name__}: {e})") from None
    return Speeds(path, str(machine.get("cpu") or "a CPU it did not name"), str(machine.get("date") or "undated"), rows)


def method_speeds(speeds, methods):
    """{method: steps per second}: the median of its variant's repeats (SPEED_VARIANTS; the one-thread row where the file
    measured several thread counts, as the queue runs one thread a run); ValueError in one line for the first method
    that has no variant, or whose variant the file lacks or did not measure."""
    found = {}
    for method in methods:
        variant = SPEED_VARIANTS.get(condition_of(method))
        if variant is None:
            known = ", ".join(f"{m} as {v}" for m, v in SPEED_VARIANTS.items())
            raise ValueError(f"--speeds {speeds.path}: no benchmark variant stands for method '{method}' (known: {known})")
        rows = speeds.rows.get(variant, [])
        rows = [row for row in rows if row.get("threads") == 1] if len(rows) > 1 else rows
        if len(rows) != 1:
            measured = f"it measured {', '.join(speeds.rows)}" if not speeds.rows.get(variant) else "it measured it at several thread counts, none at 1"
            raise ValueError(f"--speeds {speeds.path}: no one speed of variant '{variant}' ({method}): {measured}")
        if not rows[0].get("median"):
            raise ValueError(f"--speeds {speeds.path}: variant '{variant}' ({method}) has no measured speed: {rows[0].get('errors')}")
        found[method] = float(rows[0]["median"])
    return found


# ---- {name}.md
def budget_markdown(groups, envs, methods, label, reference, steps, target_steps, bootstrap, speeds=None, steps_per_second=None,
                    figure_name="budget"):  # fmt: skip
    """The report: the interval estimates at each of `steps` (tables.interval_markdown), the mean return there, the
    published returns with their sources, and with `steps_per_second` {method: steps/s} (read from `speeds`) the time
    each method takes to reach the reference method's mean return at each of `target_steps`."""
    marked = joined([f"{name}'s" for name in REFERENCES_1M])
    lines = [f"Return without the mask (unmasked evaluation, eval/episodic_return) at {joined([format_steps(s) for s in steps])} "
             f"steps: the interval estimates of the normalised score, the mean return, the published returns it is read "
             f"against" + (f" and the time each method takes to reach {label(reference)}'s return." if steps_per_second else "."), "",
             f"Figure ({figure_name}.png, .svg, .pdf): the return without the mask against environment steps to 1M, a panel per "
             f"env, the mean over seeds with the range over seeds (lowest to highest) shaded; marked at 1M: {marked} published "
             f"mean returns (sources below).", ""]  # fmt: skip
    lines.append(interval_markdown(groups, envs, methods, label, reference, bootstrap=bootstrap, at_steps=steps)[0])

    # ---- The mean return at each step
    lines += ["### Mean return", "", f"| condition | env | {' | '.join(format_steps(s) for s in steps)} |", "|---|---|" + "---|" * len(steps)]
    for method in methods:
        for env_id in [e for e in envs if (e, method) in groups]:
            cells = summarize(sorted(groups[(env_id, method)], key=lambda r: r.seed), steps)
            lines.append(f"| {label(method)} | {env_id} | {' | '.join(format_cell(c) for c in cells)} |")
    lines += ["", "Mean over seeds [range over seeds: lowest, highest] (n = seeds that reached the step); a run's return at a step "
                  "is its latest evaluation at or before it; —: no seed has reached it.", ""]  # fmt: skip

    # ---- Where each run was made (a checkpoint resumes only on the machine that wrote it: one machine per run)
    lines += ["### Machines", "", "| condition | env | CPU model per seed |", "|---|---|---|"]
    for method in methods:
        for env_id in [e for e in envs if (e, method) in groups]:
            cells = [f"{r.seed}: {r.cpu or 'not recorded'}" if r.finished else f"{r.seed}: under way"
                     for r in sorted(groups[(env_id, method)], key=lambda r: r.seed)]  # fmt: skip
            lines.append(f"| {label(method)} | {env_id} | {', '.join(cells)} |")
    lines += ["", "Each run was made on one machine, whose CPU model its finished.json records. One seed on two CPUs takes the "
                  "same steps until learning starts and different ones from the first updates on (floating-point rounding; "
                  "docs/design.md), as a second seed would.", ""]  # fmt: skip

    # ---- What it is read against
    lines += ["### Published returns", "", f"| method | {' | '.join(envs)} | at | source |", "|---|" + "---|" * (len(envs) + 2)]
    for name, (returns, step, source) in REFERENCES.items():
        cells = " | ".join(f"{returns[e]:g}" if e in returns else "not run" for e in envs)
        lines.append(f"| {name} | {cells} | {format_steps(step)} | {source} |")
    lines += ["", "Mean returns over the seeds each source names, without a guide; MR.Q's are also R_ref of the normalised score.", ""]

    # ---- The time to the reference's return
    if steps_per_second:
        lines += time_to_return_markdown(groups, envs, methods, label, reference, target_steps, speeds, steps_per_second)
    return "\n".join(lines)



def time_to_return_markdown(groups, envs, methods, label, reference, target_steps, speeds, steps_per_second):
    """The lines of the time-to-return table: for each env and each of `target_steps`, the first step each method's
    mean curve reaches the reference method's mean return there, and the hours that takes at its steps per second."""
    lines = []
    reference_name = label(reference)
    lines += [f"### Time to {reference_name}'s return", "",
              "| env | target | return | " + " | ".join(f"{label(m)} ({steps_per_second[m]:.1f} steps/s)" for m in methods) + " |",
              "|---|---|---|" + "---|" * len(methods)]  # fmt: skip
    for env_id in envs:
        runs_by_method = {m: groups[(env_id, m)] for m in methods if (env_id, m) in groups}
        for step in target_steps:
            target = f"{reference_name} at {format_steps(step)}"
            if reference not in runs_by_method:
                lines.append(f"| {env_id} | {target} | — | no {reference_name} runs in {env_id} |" + " |" * (len(methods) - 1))
                continue
            last = int(mean_curve(runs_by_method[reference])[0][-1])
            if last < step:
                lines.append(f"| {env_id} | {target} | — | not every {reference_name} seed has reached {format_steps(step)} "
                             f"(all have reached {format_steps(last)}) |" + " |" * (len(methods) - 1))  # fmt: skip
                continue
            value, times = time_to_return(runs_by_method, reference, step, steps_per_second)
            cells = []
            for method in methods:
                if method not in times:
                    cells.append("—")
                elif times[method] is None:
                    cells.append(f"not reached by {format_steps(int(mean_curve(runs_by_method[method])[0][-1]))}")
                else:
                    cells.append(f"{format_steps(times[method][0])} steps, {times[method][1]:.2f} h")
            lines.append(f"| {env_id} | {target} | {value:.1f} | {' | '.join(cells)} |")
    lines += ["", f"Target: {reference_name}'s mean return over its seeds at the step named (each seed's latest evaluation "
                  "at or before it). A method's cell: the first evaluation step at which its mean return over seeds (on the "
                  "steps every one of its seeds has reached) is at or above the target, and the hours of training that takes "
                  "at its speed, step / (steps per second) / 3600; not reached by S: its mean curve stays below the target "
                  "to S, the last step all its seeds have reached.",
              f"Steps per second: the median over the repeats of each trainer's variant ({', '.join(SPEED_VARIANTS.values())}) "
              f"in {speeds.path} (benchmarks/benchmark.py, measured side by side on {speeds.cpu}, {speeds.date}). It times the "
              "training loop alone, so the hours leave out the warm-up and the evaluations.", ""]  # fmt: skip
    return lines


# ---- The runs' own scalars where a method ends below the reference (docs/design.md's diagnosis of B1M)
SCALAR_TAGS = ("eval/episodic_return", "eval/episodic_length", "charts/episodic_return", "losses/qf1_values",
               "charts/masked_fraction", "charts/guide_bc_rows")  # fmt: skip
LAST_EVALUATIONS = 10  # the end of a run is read over its last evaluations too: one evaluation lands where it lands


def masking_end(runs):
    """The step at which the guided runs' epsilon reaches 0: epsilon_fraction × total_timesteps, as they ran."""
    ends = {int(float(r.settings["epsilon_fraction"]) * int(r.settings["total_timesteps"])) for r in runs}
    if not ends:
        raise ValueError("none of the runs has a guide, so none ends masking (the falls are counted after it ends)")
    if len(ends) != 1:
        raise ValueError(f"the runs end their masking at different steps: {sorted(ends)}")
    return ends.pop()


def scalars_markdown(env_id, runs, methods, label, steps, episode_steps):
    """A table of what the runs of `methods` logged on one env, a column per method (the reference first, then the
    methods below it): `runs` is {tag: {method: [Run]}} for SCALAR_TAGS (a method that does not log a tag has none).
    Rows: the mean at each of `steps` of the return without the mask, of the training episodes' return, of the critics'
    Q, of the masked share and of the share of guide BC rows; the return at the last step and over the last
    LAST_EVALUATIONS evaluations per seed; each seed's evaluation episode length at the last step and its evaluations,
    after masking ends, with an episode shorter than `episode_steps` (a fall); the return averaged over training."""
    guided_runs = [r for m in methods for r in runs["eval/episodic_return"][m] if guided(r.settings) == "yes"]
    end, last = masking_end(guided_runs), steps[-1]
    reference_runs = sorted(runs["eval/episodic_return"][methods[0]], key=lambda r: r.seed)
    at_steps = " / ".join(format_steps(s) for s in steps)

    def by_seed(tag, method):
        return sorted(runs[tag].get(method, []), key=lambda r: r.seed)

    def means(tag, number=lambda v: f"{v:.0f}"):
        def cell(method):
            found = by_seed(tag, method)
            return " / ".join(number(float(np.mean(final_values(found, s)))) for s in steps) if found else "not logged"
        return cell

    def mean_and_seeds(values):
        return f"{np.mean(values):.0f} ({', '.join(f'{v:.0f}' for v in values)})"

    def falls(method):
        counts, latest = [], None
        for run in by_seed("eval/episodic_length", method):
            short = run.steps[(run.steps > end) & (run.values < episode_steps)]
            counts.append(str(len(short)))
            latest = max(latest or 0, int(short[-1])) if len(short) else latest
        return ", ".join(counts) + (f"; the last at {format_steps(latest)}" if latest else "")

    def averaged(method):
        found = by_seed("eval/episodic_return", method)
        grid = evaluation_grid(found)
        values = [mean_over_training(r, grid) for r in found]
        return f"{np.mean(values):.0f} [{min(values):.0f}, {max(values):.0f}]"

    window = f"{format_steps(int(reference_runs[0].steps[-min(LAST_EVALUATIONS, len(reference_runs[0].steps))]))}-{format_steps(last)}"
    evaluations_after = int(np.sum((reference_runs[0].steps > end) & (reference_runs[0].steps <= last)))
    span = f"{format_steps(int(evaluation_grid(reference_runs)[0]))}-{format_steps(last)}"
    rows = [
        (f"return without the mask at {at_steps}", means("eval/episodic_return")),
        (f"return without the mask at {format_steps(last)} (per seed)",
         lambda m: mean_and_seeds(final_values(by_seed("eval/episodic_return", m), last))),
        (f"return without the mask over the last {LAST_EVALUATIONS} evaluations, {window} (per seed)",
         lambda m: mean_and_seeds([float(np.mean(r.values[-LAST_EVALUATIONS:])) for r in by_seed("eval/episodic_return", m)])),
        (f"steps per evaluation episode at {format_steps(last)}, of {episode_steps} (per seed)",
         lambda m: ", ".join(f"{v:.0f}" for v in final_values(by_seed("eval/episodic_length", m), last))),
        (f"evaluations after masking ends ({format_steps(end)}) with an episode cut short by a fall, of {evaluations_after} (per seed)", falls),
        (f"training episodes' return (`charts/episodic_return`) at {at_steps}", means("charts/episodic_return")),
        (f"the critics' Q (`losses/qf1_values`) at {at_steps}", means("losses/qf1_values")),
        (f"masked share (`charts/masked_fraction`) at {at_steps}", means("charts/masked_fraction", three_digits)),
        (f"share of a batch's rows in guide BC (`charts/guide_bc_rows`) at {at_steps}", means("charts/guide_bc_rows", three_digits)),
        (f"return without the mask averaged over training, {span} (area under the curve) [range]", averaged),
    ]  # fmt: skip
    seeds = ", ".join(str(r.seed) for r in reference_runs)
    lines = [f"| {env_id}, mean over seeds {seeds} | " + " | ".join(label(m) for m in methods) + " |", "|---|" + "---|" * len(methods)]
    for name, cell in rows:
        cells = [cell(m) for m in methods]
        if set(cells) != {"not logged"}:  # guide BC rows: CAMEL+ alone logs them
            lines.append(f"| {name} | {' | '.join(cells)} |")
    return "\n".join(lines) + "\n"


def draw_budget_figure(groups, envs, methods, labels, paths, references=REFERENCES_1M):
    """groups: {(env, method): runs}. One panel per env: each method's mean over seeds with the range shaded, in its
    colour of every figure (figures.condition_colors), and each published 1M return a marker at 1M, named in the
    legend; written to each of `paths` (.png, .svg, .pdf)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    colors = condition_colors(methods)
    style = {"pdf.fonttype": 42, "svg.hashsalt": "camel"}  # editable PDF text, reproducible SVG ids
    with plt.rc_context(style):
        figure, axes = plt.subplots(1, len(envs), figsize=(4.2 * len(envs), 3.4), squeeze=False)
        legend = {}  # {name: handle}, every panel's entries once
        seeds = {m: sorted({len(groups[(e, m)]) for e in envs if groups.get((e, m))}) for m in methods}
        names = {m: f"{labels[m]} ({'-'.join(map(str, dict.fromkeys([n[0], n[-1]])))} seed{'s' if n[-1] > 1 else ''})"
                 for m, n in seeds.items() if n}  # fmt: skip
        for axis, env_id in zip(axes[0], envs):
            for method in methods:
                runs = groups.get((env_id, method))
                if not runs:
                    continue
                steps = np.unique(np.concatenate([run.steps for run in runs]))
                table = np.stack([values_at(run, steps) for run in runs])
                mean = np.nanmean(table, axis=0)
                line = axis.plot(steps, mean, color=colors[method])[0]
                axis.fill_between(steps, np.nanmin(table, axis=0), np.nanmax(table, axis=0), color=colors[method], alpha=0.2)
                legend.setdefault(names[method], line)
            for marker, (name, (returns, _)) in zip("o^sD", references.items()):
                if env_id in returns:
                    point = axis.plot([1_000_000], [returns[env_id]], marker=marker, color="black", linestyle="none")[0]
                    legend.setdefault(f"{name} at 1M, published", point)
            axis.set_title(env_id)
            axis.set_xlabel("Environment steps")
            axis.set_xlim(0, 1_050_000)
            axis.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda x, _: format_steps(int(x))))
            axis.grid(alpha=0.3)
        axes[0][0].set_ylabel("Return without the mask")  # shorter than plot.py's label: it fits the panel's height
        columns = 3 if len(envs) > 2 else 2  # as many as the panels' width holds
        rows = -(-len(legend) // columns)
        figure.legend(list(legend.values()), list(legend), loc="lower center", ncol=columns, frameon=False, fontsize=8)
        figure.tight_layout(rect=(0, 0.02 + 0.065 * rows, 1, 1))
        for path in paths:
            figure.savefig(path, dpi=120, metadata=undated(path))
        plt.close(figure)
