"""The user's budget (experiment B1M of docs/preregistration.md): the return without the mask against steps to 1M as the
paper draws it (a panel per env, the mean and the range over seeds, published 1M returns marked), and the time each
method needs to reach a return: the first step its mean curve reaches TD3's mean return at a step, times the seconds
per step of its trainer."""

import numpy as np

from camel_utils.results.stats import values_at

# Published mean returns at 1M steps, Gym's v4 MuJoCo envs, without a guide: each with its source
REFERENCES_1M = {
    "MR.Q": ({"Hopper-v4": 2693, "Walker2d-v4": 6040, "Ant-v4": 6902},
             "Fujimoto et al. 2025, arXiv 2501.16142, 10 seeds (results/gym_results.txt of the MR.Q repository)"),
    "TD7": ({"Hopper-v4": 3512, "Walker2d-v4": 6097, "Ant-v4": 8509}, "Fujimoto et al. 2023, arXiv 2306.02451"),
}  # fmt: skip


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


def draw_budget_figure(groups, envs, methods, labels, path, references=REFERENCES_1M):
    """groups: {(env, method): runs}. One panel per env: each method's mean over seeds with the range shaded, and each
    published 1M return a marker at 1M, named in the legend; written to `path` (.png, .svg or .pdf)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(envs), figsize=(4.2 * len(envs), 3.4), squeeze=False)
    for axis, env_id in zip(axes[0], envs):
        for method in methods:
            runs = groups.get((env_id, method))
            if not runs:
                continue
            steps = np.unique(np.concatenate([run.steps for run in runs]))
            table = np.stack([values_at(run, steps) for run in runs])
            mean = np.nanmean(table, axis=0)
            line = axis.plot(steps, mean, label=f"{labels[method]} ({len(runs)} seeds)")[0]
            axis.fill_between(steps, np.nanmin(table, axis=0), np.nanmax(table, axis=0), color=line.get_color(), alpha=0.2)
        for marker, (name, (returns, _)) in zip("o^sD", references.items()):
            if env_id in returns:
                axis.plot([1_000_000], [returns[env_id]], marker=marker, color="black", linestyle="none", label=f"{name} at 1M, published")
        axis.set_title(env_id)
        axis.set_xlabel("environment steps")
        axis.set_xlim(0, 1_050_000)
        axis.grid(alpha=0.3)
    axes[0][0].set_ylabel("return without the mask")
    handles, names = axes[0][0].get_legend_handles_labels()
    figure.legend(handles, names, loc="lower center", ncol=min(len(names), 5), frameon=False, fontsize=8)
    figure.tight_layout(rect=(0, 0.1, 1, 1))
    figure.savefig(path, dpi=120)
    plt.close(figure)
