"""camel_utils/results/stats.py: the permutation test of final returns follows its stated definition (every split of
the pooled seeds into groups of the two sizes, equal or not; p = min(1, 2 * the smaller of the shares at least
and at most as extreme as observed)), checked against splits enumerated by hand; the smallest p the seeds allow;
the range over seeds. camel_utils/results/intervals.py: the normalised score, the IQM and the mean, the probability
of improvement and the performance profile, by hand and against rliable's own metrics, with their bootstrap CIs: the
same numbers as rliable's get_interval_estimates."""

import numpy as np
import pytest
from rliable import library, metrics

from camel_utils.results import intervals
from camel_utils.results.runs import Run
from camel_utils.results.stats import permutation_p_value, smallest_p_value, summarize
from camel_utils.results.tables import against_baseline


def test_permutation_p_value_with_unequal_groups_follows_its_definition():
    # [1, 2] against [3, 4, 5]: observed difference of means 1.5 - 4 = -2.5. The C(5, 2) = 10 ways to pick the first
    # group from {1, 2, 3, 4, 5}, with the difference of its mean and the other three's:
    #   {1,2} -2.5, {1,3} -1.667, {1,4} -0.833, {2,3} -0.833, {1,5} 0, {2,4} 0, {2,5} 0.833, {3,4} 0.833, {3,5} 1.667, {4,5} 2.5
    # at least -2.5: 10 of 10; at most -2.5: 1 of 10; p = min(1, 2 * min(1, 0.1)) = 0.2
    assert permutation_p_value([1.0, 2.0], [3.0, 4.0, 5.0]) == pytest.approx(0.2)
    assert permutation_p_value([3.0, 4.0, 5.0], [1.0, 2.0]) == pytest.approx(0.2)  # the other way round: the same
    # [10, 20, 30] against [15, 25]: observed 20 - 20 = 0. The 10 picks of three from {10, 15, 20, 25, 30} and the
    # difference of their mean and the other two's:
    #   {10,15,20} -12.5, {10,15,25} -8.333, {10,20,25} -4.167, {10,15,30} -4.167, {15,20,25} 0, {10,20,30} 0,
    #   {15,20,30} 4.167, {10,25,30} 4.167, {15,25,30} 8.333, {20,25,30} 12.5
    # at least 0: 6 of 10, at most 0: 6 of 10; p = min(1, 2 * 0.6) = 1
    assert permutation_p_value([10.0, 20.0, 30.0], [15.0, 25.0]) == 1.0
    # an asymmetric pool: [15, 25, 31] against [10, 20], observed 23.667 - 15 = 8.667. The 10 picks of three from
    # {10, 15, 20, 25, 31} and the difference of their mean and the other two's:
    #   {10,15,20} -13, {10,15,25} -8.833, {10,20,25} -4.667, {10,15,31} -3.833, {15,20,25} -0.5,
    #   {10,20,31} 0.333, {10,25,31} 4.5, {15,20,31} 4.5, {15,25,31} 8.667, {20,25,31} 12.833
    # at least 8.667: 2 of 10, at most 8.667: 9 of 10; p = 2 * 0.2 = 0.4
    assert permutation_p_value([15.0, 25.0, 31.0], [10.0, 20.0]) == pytest.approx(0.4)
    # [1, 2, 3, 4] against [10, 11]: observed 2.5 - 10.5 = -8, the one most extreme of the C(6, 4) = 15 splits: p = 2 / 15
    assert permutation_p_value([1.0, 2.0, 3.0, 4.0], [10.0, 11.0]) == pytest.approx(2 / 15)


def test_permutation_p_value_with_equal_groups():
    # [1, 3] against [2, 4]: the 6 splits of {1, 2, 3, 4} give differences -2, -1, 0, 0, 1, 2; 2 are <= -1
    assert permutation_p_value([1.0, 3.0], [2.0, 4.0]) == pytest.approx(2 * 2 / 6)
    # every seed above every baseline seed: 1 split of C(6, 3) = 20 with 3 seeds each, 1 of C(10, 5) = 252 with 5
    assert permutation_p_value([5.0, 6.0, 7.0], [1.0, 2.0, 3.0]) == pytest.approx(2 / 20)
    assert permutation_p_value([5.0, 6.0, 7.0, 8.0, 9.0], [0.0, 1.0, 2.0, 3.0, 4.0]) == pytest.approx(2 / 252)
    # 10 seeds against 10 is C(20, 10) = 184,756 splits, more than PERMUTATION_SPLITS: sampled, seeded, and close to
    # the exact value (all above: 2 / 184,756, i.e. no sampled split as extreme but the observed one counted)
    high, low = np.arange(10.0) + 100, np.arange(10.0)
    assert permutation_p_value(high, low, seed=1) == permutation_p_value(high, low, seed=1) < 1e-4


def test_smallest_p_value_is_set_by_the_seed_counts():
    assert smallest_p_value(3, 3) == pytest.approx(0.1)  # 2 / C(6, 3) = 2 / 20
    assert smallest_p_value(5, 5) == pytest.approx(2 / 252)
    assert smallest_p_value(5, 3) == smallest_p_value(3, 5) == pytest.approx(2 / 56)
    assert smallest_p_value(1, 1) == 1.0  # 2 / 2
    assert permutation_p_value([6.0, 7.0, 8.0, 9.0, 10.0], [1.0, 2.0, 3.0]) == pytest.approx(smallest_p_value(5, 3))


def test_a_comparison_needs_two_seeds_on_each_side():
    assert against_baseline([5.0], [1.0, 2.0]) == "—"
    assert against_baseline([5.0, 6.0], [1.0, 2.0]) == "+4.0, p=0.333"  # 1 of C(4, 2) = 6 splits as extreme: 2 / 6
    assert against_baseline([5.0, 6.0], [1.0, 2.0], permutation_test=False) == "+4.0"  # the test is an option


def test_summary_at_a_step_is_the_mean_and_the_range_of_the_seeds_that_reached_it():
    runs = [Run("Hopper-v4", "camel", seed, "", np.array([1000, 2000]), np.array(values))
            for seed, values in [(1, [0.0, 10.0]), (2, [4.0, 20.0]), (3, [8.0, 90.0])]]  # fmt: skip
    runs.append(Run("Hopper-v4", "camel", 4, "", np.array([1000]), np.array([100.0])))  # stopped at 1000
    at_1000, at_2000, at_3000 = summarize(runs, [1000, 2000, 3000])
    assert tuple(at_1000) == (28.0, 0.0, 100.0, 4)  # (0 + 4 + 8 + 100) / 4
    assert tuple(at_2000) == (40.0, 10.0, 90.0, 3)
    assert at_3000 is None  # no run reached it


# ---- The interval estimates of docs/preregistration.md (camel_utils/results/intervals.py, with rliable)
def test_normalised_score_is_zero_for_random_actions_and_one_for_mr_q_at_1m():
    # by hand: (1355.5 - 18) / (2693 - 18) = 1337.5 / 2675 = 0.5; (3 - 3) / (6040 - 3) = 0; (6902 + 46.4) / (6902 + 46.4) = 1
    assert intervals.normalised("Hopper-v4", [1355.5, 18.0, 2693.0]).tolist() == [0.5, 0.0, 1.0]
    assert intervals.normalised("Walker2d-v4", [3.0])[0] == 0.0
    assert intervals.normalised("Ant-v4", [6902.0, -46.4 - 6948.4])[0] == pytest.approx(1.0)
    assert intervals.normalised("Ant-v4", [-46.4 - 6948.4])[0] == pytest.approx(-1.0)  # as far below random as MR.Q is above
    assert intervals.normalised("HalfCheetah-v4", [100.0]) is None  # no numbers for it: not normalised


# a hand-made (runs x envs) score matrix: env A 0, 1, 2, 10; env B 3, 4, 5, 6
SCORES = np.array([[0.0, 3.0], [1.0, 4.0], [2.0, 5.0], [10.0, 6.0]])


def test_iqm_and_mean_of_a_hand_made_score_matrix():
    # IQM: the 8 scores pooled and sorted, 0 1 2 3 4 5 6 10, floor(8 / 4) = 2 cut at each end: (2 + 3 + 4 + 5) / 4 = 3.5
    assert intervals.iqm(SCORES) == 3.5
    # mean: env A's mean 13 / 4 = 3.25, env B's 18 / 4 = 4.5, their mean 3.875 (the 10 pulls it, not the IQM)
    assert intervals.mean(SCORES) == 3.875
    # the same numbers as rliable's own metrics
    assert intervals.iqm(SCORES) == pytest.approx(metrics.aggregate_iqm(SCORES))
    assert intervals.mean(SCORES) == pytest.approx(metrics.aggregate_mean(SCORES))


def test_each_estimate_has_a_ci_around_it_and_each_env_its_own():
    aggregate, (env_a, env_b) = intervals.score_estimates(list(SCORES.T), intervals.Bootstrap(200, 0))
    assert (aggregate.iqm.point, aggregate.mean.point) == (3.5, 3.875)
    # each env alone: 4 runs, floor(4 / 4) = 1 cut at each end: A (1 + 2) / 2 = 1.5, B (4 + 5) / 2 = 4.5; means 3.25, 4.5
    assert (env_a.iqm.point, env_a.mean.point, env_b.iqm.point, env_b.mean.point) == (1.5, 3.25, 4.5, 4.5)
    for estimate in (aggregate.iqm, aggregate.mean, env_a.iqm, env_a.mean, env_b.iqm, env_b.mean):
        assert estimate.low <= estimate.point <= estimate.high
    # a resample of env B's runs has its mean between its lowest and highest run: so has the CI
    assert 3.0 <= env_b.mean.low < env_b.mean.high <= 6.0
    # one run per env: nothing to resample, the CI is the point
    alone, _ = intervals.score_estimates([[0.25], [0.75]], intervals.Bootstrap(50))
    assert alone.mean == (0.5, 0.5, 0.5)


def rliables_estimates(matrices, statistic, bootstrap):
    """rliable's get_interval_estimates of the per-resample statistic, NumPy's global generator seeded as ours."""
    state = np.random.get_state()
    np.random.seed(bootstrap.seed)
    try:
        points, ends = library.get_interval_estimates({"k": matrices[0] if len(matrices) == 1 else matrices},
                                                      lambda *ms: statistic(*(m[None] for m in ms))[0],
                                                      reps=bootstrap.resamples, confidence_interval_size=bootstrap.confidence)  # fmt: skip
    finally:
        np.random.set_state(state)
    return [(float(p), float(low), float(high)) for p, low, high in zip(points["k"], *np.asarray(ends["k"]).reshape(2, -1))]


def test_every_estimate_is_rliables_to_the_last_bit(monkeypatch):
    """resampled_estimates computes a block of resamples at a time; rliable one at a time with the same draws: one
    group (StratifiedBootstrap), two of the same size and of different sizes (StratifiedIndependentBootstrap), one
    env alone, one run (its CI its point), at 95% and at the primary comparisons' 98.3%, across blocks (600 resamples
    in blocks of 128: four whole and a short one)."""
    monkeypatch.setattr(intervals, "BLOCK", 128)
    rng = np.random.default_rng(1)

    def env_means(x):
        return x.mean(axis=1)

    ties = rng.integers(0, 3, size=(8, 2)).astype(float)  # ties count a half
    cases = [([rng.normal(size=(5, 3))], env_means), ([rng.normal(size=(5, 3)), rng.normal(size=(5, 3))], intervals.improvement_per_env),
             ([ties[:3], ties[3:]], intervals.improvement_per_env), ([ties[:1], ties[1:5]], intervals.improvement_per_env),
             ([rng.normal(size=(7, 1))], env_means), ([np.array([[0.25, 0.75]])], env_means)]  # fmt: skip
    for matrices, statistic in cases:
        for bootstrap in (intervals.Bootstrap(600, 0, 0.95), intervals.Bootstrap(600, 3, 0.983)):
            assert [tuple(e) for e in intervals.resampled_estimates(matrices, statistic, bootstrap)] == rliables_estimates(
                matrices, statistic, bootstrap)  # fmt: skip
    # the estimates the tables print, against rliable's own metrics (which sum in another order: equal to 1e-12)
    columns = [rng.normal(size=6) for _ in range(3)]
    aggregate, _ = intervals.score_estimates(columns, intervals.Bootstrap(600))
    np.random.seed(0)
    points, ends = library.get_interval_estimates({"k": np.stack(columns, axis=1)},
                                                  lambda s: np.array([metrics.aggregate_iqm(s), metrics.aggregate_mean(s)]), reps=600)
    expected = [value for row in zip(points["k"], *ends["k"]) for value in row]  # the IQM, its CI, then the mean's
    assert [*aggregate.iqm, *aggregate.mean] == pytest.approx(expected)
    for x, y in [(rng.normal(size=(5, 2)), rng.normal(size=(5, 2))), (ties[:1], ties[1:5])]:  # stacked; 1 run against 4
        found = intervals.improvement_estimates(list(x.T), list(y.T), intervals.Bootstrap(600))
        np.random.seed(0)
        points, ends = library.get_interval_estimates({"k": [x, y]}, lambda a, b: np.array([metrics.probability_of_improvement(a, b)]), reps=600)
        assert tuple(found[0]) == pytest.approx((points["k"][0], ends["k"][0][0], ends["k"][1][0]))


def test_the_bootstrap_is_seeded_and_leaves_numpys_generator_as_it_was():
    np.random.seed(123)
    expected_next = np.random.rand()
    np.random.seed(123)
    first = intervals.score_estimates(list(SCORES.T), intervals.Bootstrap(100, 0))
    assert np.random.rand() == expected_next  # the global generator rliable draws from is restored
    assert intervals.score_estimates(list(SCORES.T), intervals.Bootstrap(100, 0)) == first
    assert intervals.score_estimates(list(SCORES.T), intervals.Bootstrap(100, 1)) != first


def test_envs_with_different_run_counts_get_estimates_each_but_no_aggregate():
    aggregate, per_env = intervals.score_estimates([[0.0, 1.0, 2.0], [3.0, 4.0]], intervals.Bootstrap(50))
    assert aggregate is None  # rliable's stratified bootstrap needs a (runs x envs) matrix
    assert [scores.mean.point for scores in per_env] == [1.0, 3.5]


def test_probability_of_improvement_is_one_above_every_run_and_one_half_for_the_same_scores():
    above, below = SCORES + 100.0, SCORES
    assert intervals.probability_of_improvement(above, below) == 1.0
    assert intervals.probability_of_improvement(below, above) == 0.0
    assert intervals.probability_of_improvement(SCORES, SCORES.copy()) == 0.5
    # by hand, one env: X 2, 3 against Y 1, 2: of the 4 pairs, 2 > 1, 3 > 1, 3 > 2 and one tie (2, 2) counted a half
    assert intervals.probability_of_improvement([[2.0], [3.0]], [[1.0], [2.0]]) == 3.5 / 4
    # and two envs average: 1 on one, 0.875 on the other
    assert intervals.probability_of_improvement([[5.0, 2.0], [6.0, 3.0]], [[1.0, 1.0], [2.0, 2.0]]) == (1.0 + 0.875) / 2
    # the same numbers as rliable's own
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 4, size=(5, 3)).astype(float), rng.integers(0, 4, size=(4, 3)).astype(float)
    assert intervals.probability_of_improvement(x, y) == pytest.approx(metrics.probability_of_improvement(x, y))


def test_probability_of_improvement_with_its_ci():
    aggregate, per_env = intervals.improvement_estimates(list((SCORES + 100.0).T), list(SCORES.T), intervals.Bootstrap(100))
    assert aggregate == (1.0, 1.0, 1.0)  # above on every run of every resample
    assert per_env == [(1.0, 1.0, 1.0), (1.0, 1.0, 1.0)]
    aggregate, _ = intervals.improvement_estimates(list(SCORES.T), list(SCORES.T), intervals.Bootstrap(200))
    assert aggregate.point == 0.5 and aggregate.low < 0.5 < aggregate.high  # the same scores: no separation


def test_the_performance_profile_is_the_share_of_runs_above_each_score():
    # env A 0, 1, 2, 10 and env B 3, 4, 5, 6 pooled: above -1 all 8, above 2.5 five (3, 4, 5, 6, 10), above 10 none
    assert intervals.score_distribution(SCORES, [-1.0, 2.5, 10.0]).tolist() == [1.0, 5 / 8, 0.0]
    profiles, bands = intervals.performance_profiles({"x": SCORES}, np.array([-1.0, 2.5, 10.0]), intervals.Bootstrap(50))
    assert profiles["x"].tolist() == [1.0, 5 / 8, 0.0]
    assert bands["x"].shape == (2, 3) and bands["x"][0][0] == bands["x"][1][0] == 1.0


def test_a_wider_coverage_gives_a_wider_ci_from_the_same_resamples():
    narrow = intervals.score_estimates(list(SCORES.T), intervals.Bootstrap(500, 0, 0.5))[0].mean
    wide = intervals.score_estimates(list(SCORES.T), intervals.Bootstrap(500, 0, 0.983))[0].mean  # the primary comparisons'
    assert wide.point == narrow.point == 3.875
    assert wide.low < narrow.low <= narrow.point <= narrow.high < wide.high
