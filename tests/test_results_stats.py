"""camel_utils/results/stats.py: the permutation test of final returns follows its stated definition (every split of
the pooled seeds into groups of the two sizes, equal or not; p = min(1, 2 * the smaller of the shares at least
and at most as extreme as observed)), checked against splits enumerated by hand; the smallest p the seeds allow;
the range over seeds."""

import numpy as np
import pytest

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


def test_summary_at_a_step_is_the_mean_and_the_range_of_the_seeds_that_reached_it():
    runs = [Run("Hopper-v4", "camel", seed, "", np.array([1000, 2000]), np.array(values))
            for seed, values in [(1, [0.0, 10.0]), (2, [4.0, 20.0]), (3, [8.0, 90.0])]]  # fmt: skip
    runs.append(Run("Hopper-v4", "camel", 4, "", np.array([1000]), np.array([100.0])))  # stopped at 1000
    at_1000, at_2000, at_3000 = summarize(runs, [1000, 2000, 3000])
    assert tuple(at_1000) == (28.0, 0.0, 100.0, 4)  # (0 + 4 + 8 + 100) / 4
    assert tuple(at_2000) == (40.0, 10.0, 90.0, 3)
    assert at_3000 is None  # no run reached it
