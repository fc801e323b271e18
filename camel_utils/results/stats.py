"""The numbers of the figures and tables (each defined in plot.py's docstring): a run's value at a step, the mean
and range over seeds, the permutation test of final returns, the sample-efficiency measures, the table's steps."""

from math import comb
from typing import NamedTuple

import numpy as np

PERMUTATION_SPLITS = 100_000  # the permutation test is exact up to this many splits (9 seeds against 9), else sampled


def values_at(run, steps):
    """The run's value at each step: its most recent evaluation at or before the step; NaN before its first
    evaluation and after its last one (a step it has not reached)."""
    steps = np.asarray(steps)
    index = np.searchsorted(run.steps, steps, side="right") - 1
    reached = (index >= 0) & (steps <= run.steps[-1])
    return np.where(reached, run.values[np.clip(index, 0, None)], np.nan)


class Cell(NamedTuple):
    mean: float  # over the seeds that reached the step
    low: float  # the lowest seed's value: the range over seeds is [low, high]
    high: float  # the highest seed's value
    n: int  # seeds that reached the step


def summarize(runs, steps):
    """Mean, range over seeds and number of seeds of the runs at each step (None where no run reached it)."""
    table = np.stack([values_at(run, steps) for run in runs])
    cells = []
    for column in table.T:
        reached = column[~np.isnan(column)]
        cells.append(Cell(float(reached.mean()), float(reached.min()), float(reached.max()), len(reached)) if len(reached) else None)
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


def permutation_p_value(values, baseline_values, seed=0):
    """Two-sided p-value of a permutation test of the difference of the means over seeds: over the ways to split
    the pooled seeds into groups of the two sizes (equal or not), twice the smaller of the shares whose difference
    is at least, and at most, the observed one (at most 1). Every split when there are at most PERMUTATION_SPLITS,
    else that many random ones (seeded)."""
    from scipy import stats  # here: SciPy's statistics take a second to import, and only this test needs them

    def difference(x, y, axis):
        return np.mean(x, axis=axis) - np.mean(y, axis=axis)

    test = stats.permutation_test((values, baseline_values), difference, permutation_type="independent",
                                  n_resamples=PERMUTATION_SPLITS, vectorized=True, rng=np.random.default_rng(seed))  # fmt: skip
    return float(test.pvalue)


def smallest_p_value(n, m):
    """The smallest p the exact test can give with n seeds against m: 2 / C(n + m, n), the observed split alone
    being the most extreme one."""
    return min(1.0, 2 / comb(n + m, n))


def final_values(runs, step):
    """Each run's value at `step`, the seeds that did not reach it left out."""
    values = [values_at(run, [step])[0] for run in runs]
    return [float(v) for v in values if not np.isnan(v)]


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
