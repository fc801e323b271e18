"""The statistics docs/preregistration.md fixes ("Shared by every entry"), computed with rliable (Agarwal et al. 2021,
"Deep Reinforcement Learning at the Edge of the Statistical Precipice"): from the final return of each run, the
normalised score (R - R_random) / (R_ref - R_random); per env and aggregated over envs, the interquartile mean (IQM)
and the mean with stratified bootstrap confidence intervals (95%, or 98.3% for an entry's three primary comparisons);
the probability of improvement P(X > Y) of one method over another with its CI; and the performance profile (the share
of runs above each score).

The resampling and the percentile intervals are rliable's (library.get_interval_estimates with StratifiedBootstrap,
runs resampled with replacement within each env, or StratifiedIndependentBootstrap for two groups;
create_performance_profile). rliable calls the statistic once a resample, about 0.25 ms each with arch's loop: 12 s
for 50,000 resamples, minutes for a table. bootstrap_by_env gives the same numbers a block of resamples at a time:
rliable's draws (np.random.choice of each group's run indices per resample, from NumPy's global generator seeded by
the bootstrap's seed, which drawn for a block at once give the same indices), the statistic on the whole block, and
arch's percentile interval; tests/test_results_stats.py checks each estimate equals rliable's. The scores of a
resample are those of iqm, mean and probability_of_improvement below: the same numbers as rliable.metrics.aggregate_iqm,
aggregate_mean and probability_of_improvement (checked there too), written with NumPy alone because rliable's go
through SciPy's wrappers (about 1 ms a call). Each estimate seeds the global generator and restores it after."""

from typing import NamedTuple

import numpy as np

RESAMPLES = 50_000  # docs/preregistration.md: 50,000 resamples, seed 0
SEED = 0
CONFIDENCE = 0.95
PROFILE_RESAMPLES = 2_000  # rliable's default for the performance profile's bands
BLOCK = 5_000  # resamples computed at once (memory: a block of P(X > Y)'s run pairs)
# R_random: the mean return of uniform random actions over 100 episodes (reset seeds 0-99, action-space seeds 0-99),
# measured at commit d01680c (docs/preregistration.md)
RANDOM_RETURN = {"Hopper-v4": 18.0, "Walker2d-v4": 3.0, "Ant-v4": -46.4}
# R_ref: MR.Q's published mean return at 1M steps (Fujimoto et al. 2025, "Towards General-Purpose Model-Free
# Reinforcement Learning", arXiv 2501.16142, 10 seeds: results/gym_results.txt of the MR.Q repository)
REFERENCE_RETURN = {"Hopper-v4": 2693.0, "Walker2d-v4": 6040.0, "Ant-v4": 6902.0}


def normalised(env_id, returns):
    """(R - R_random) / (R_ref - R_random) for each return of env_id: 0 is random actions, 1 MR.Q at 1M steps;
    None for an env without the two numbers."""
    if env_id not in RANDOM_RETURN or env_id not in REFERENCE_RETURN:
        return None
    low, high = RANDOM_RETURN[env_id], REFERENCE_RETURN[env_id]
    return (np.asarray(returns, dtype=float) - low) / (high - low)


def interquartile_mean(values):
    """The mean along the last axis of the values left when the lowest and the highest quarter (floor(n / 4) each)
    are cut, as SciPy's trim_mean(values, 0.25, axis=-1)."""
    ordered = np.sort(values, axis=-1)
    cut = int(0.25 * ordered.shape[-1])
    return ordered[..., cut : ordered.shape[-1] - cut].mean(axis=-1)


# ---- The scores of one resample: scores is (runs x envs)
def iqm(scores):
    """The interquartile mean of all the scores, runs and envs pooled."""
    return float(interquartile_mean(np.asarray(scores, dtype=float).ravel()))


def mean(scores):
    """The mean over envs of each env's mean score."""
    return float(np.asarray(scores, dtype=float).mean(axis=0).mean())


def probability_of_improvement(scores_x, scores_y):
    """P(X > Y): for each env, the chance that a run of X scores above a run of Y (a tie counts a half: the
    Mann-Whitney U statistic over the n_x * n_y pairs), averaged over envs."""
    return float(improvement_per_env(np.asarray(scores_x, dtype=float)[None], np.asarray(scores_y, dtype=float)[None]).mean())


def improvement_per_env(x, y):
    """Each env's P(X > Y) in each resample, the terms probability_of_improvement averages: from X's (resamples x runs
    x envs) and Y's (resamples x runs x envs) scores, (resamples x envs)."""
    pairs = x[:, :, None, :] - y[:, None, :, :]
    return (pairs > 0).mean(axis=(1, 2)) + 0.5 * (pairs == 0).mean(axis=(1, 2))


class Estimate(NamedTuple):
    point: float
    low: float  # the CI's ends
    high: float


class Bootstrap(NamedTuple):
    resamples: int = RESAMPLES
    seed: int = SEED
    confidence: float = CONFIDENCE  # docs/preregistration.md: 0.95; 0.983 for an entry's three primary comparisons


def resampled_estimates(matrices, statistic, bootstrap=Bootstrap()):
    """[Estimate of each value statistic gives] for the groups' (runs x envs) score matrices: the point from the runs,
    the CI from bootstrap.resamples stratified resamples, the same numbers as rliable's get_interval_estimates with the
    per-resample statistic (StratifiedBootstrap for one group, StratifiedIndependentBootstrap for more).
    statistic(*blocks) takes each group's (resamples x runs x envs) block and gives (resamples x values)."""
    point = statistic(*(m[None] for m in matrices))[0]
    sizes = [len(m) for m in matrices]
    if set(sizes) == {1}:  # one run per env: every resample is the runs themselves
        return [Estimate(float(p), float(p), float(p)) for p in point]
    envs = np.arange(matrices[0].shape[1])
    state = np.random.get_state()
    np.random.seed(bootstrap.seed)
    try:
        values = []
        for start in range(0, bootstrap.resamples, BLOCK):
            block = min(BLOCK, bootstrap.resamples - start)
            if len(set(sizes)) == 1:  # rliable's draws, group after group in each resample, drawn for the block at once
                index = np.random.choice(sizes[0], (block, len(matrices), sizes[0], len(envs)), replace=True)
                indices = [index[:, group] for group in range(len(matrices))]
            else:  # groups of different sizes: one resample at a time, group after group, as rliable draws them
                drawn = [[np.random.choice(size, (size, len(envs)), replace=True) for size in sizes] for _ in range(block)]
                indices = [np.stack([resample[group] for resample in drawn]) for group in range(len(matrices))]
            values.append(statistic(*(m[i, envs] for m, i in zip(matrices, indices))))
    finally:
        np.random.set_state(state)
    values = np.concatenate(values)
    alpha = (1.0 - bootstrap.confidence) / 2  # arch's percentile interval, value by value
    ends = [np.percentile(values[:, i], [100 * alpha, 100 * (1.0 - alpha)]) for i in range(values.shape[1])]
    return [Estimate(float(p), float(low), float(high)) for p, (low, high) in zip(point, ends)]


def bootstrap_by_env(groups, statistic, bootstrap=Bootstrap()):
    """statistic's estimates (resampled_estimates) from the runs of one or more groups, each given as one column of
    scores per env. Where every env has as many runs of each group: (the estimates of one bootstrap of the groups'
    (runs x envs) matrices, None); else (None, [each env's estimates from its own bootstrap]), since rliable's
    stratified bootstrap needs a matrix."""
    groups = [[np.asarray(column, dtype=float) for column in columns] for columns in groups]
    if all(len({len(column) for column in columns}) == 1 for columns in groups):
        return resampled_estimates([np.stack(columns, axis=1) for columns in groups], statistic, bootstrap), None
    envs = range(len(groups[0]))
    return None, [resampled_estimates([columns[env][:, None] for columns in groups], statistic, bootstrap) for env in envs]


class Scores(NamedTuple):
    iqm: Estimate
    mean: Estimate


def score_estimates(columns, bootstrap=Bootstrap()):
    """(the aggregate over the columns or None, [each column's]) IQM and mean with their CIs, from one column of
    scores per env (bootstrap_by_env: an env's estimate comes from its column of the aggregate's resamples where the
    envs have as many runs, else from its own bootstrap, with no aggregate)."""

    def every_estimate(scores):  # of each resample: the aggregate's IQM and mean, then each env's IQM and mean
        resamples = len(scores)
        env_iqm, env_mean = interquartile_mean(np.moveaxis(scores, 1, -1)), scores.mean(axis=1)
        aggregate = [interquartile_mean(scores.reshape(resamples, -1)), env_mean.mean(axis=1)]  # iqm: every run of every env
        return np.concatenate([np.stack(aggregate, axis=1), np.stack([env_iqm, env_mean], axis=2).reshape(resamples, -1)], axis=1)

    stacked, alone = bootstrap_by_env([columns], every_estimate, bootstrap)
    if stacked is None:
        return None, [Scores(*found[:2]) for found in alone]
    return Scores(*stacked[:2]), [Scores(*stacked[2 + 2 * env : 4 + 2 * env]) for env in range(len(columns))]


def improvement_estimates(columns_x, columns_y, bootstrap=Bootstrap()):
    """(the aggregate or None, [each env's]) P(X > Y) with its CI, from one column of scores per env for each of X
    and Y, X's and Y's runs resampled independently within each env (bootstrap_by_env)."""

    def every_probability(x, y):  # of each resample: the aggregate, then each env's (probability_of_improvement)
        per_env = improvement_per_env(x, y)
        return np.concatenate([per_env.mean(axis=1)[:, None], per_env], axis=1)

    stacked, alone = bootstrap_by_env([columns_x, columns_y], every_probability, bootstrap)
    if stacked is None:
        return None, [found[0] for found in alone]
    return stacked[0], stacked[1:]


def score_distribution(scores, taus):
    """The share of all the scores (runs and envs pooled) above each tau: rliable's run_score_deviation at every tau
    at once (its np.vectorize over the taus takes 5 ms a resample)."""
    return (np.asarray(scores, dtype=float).reshape(-1, 1) > np.asarray(taus)[None, :]).mean(axis=0)


def performance_profiles(score_dict, taus, bootstrap=Bootstrap()):
    """({key: the share of runs (of every env) scoring above each tau}, {key: its band}) by rliable's
    create_performance_profile, score_dict holding one (runs x envs) matrix per key; at most PROFILE_RESAMPLES."""
    from rliable import library

    state = np.random.get_state()
    np.random.seed(bootstrap.seed)
    try:
        return library.create_performance_profile(score_dict, taus, custom_profile_func=score_distribution,
                                                  reps=min(bootstrap.resamples, PROFILE_RESAMPLES),
                                                  confidence_interval_size=bootstrap.confidence)  # fmt: skip
    finally:
        np.random.set_state(state)
