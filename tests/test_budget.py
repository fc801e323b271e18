"""The user's budget (B1M): the time each method needs to reach TD3's return, from mean curves and steps per second
(numbers computed by hand), and the 1M figure with the published references read back from the file."""

import numpy as np
import pytest

from camel_utils.results.budget import REFERENCES_1M, draw_budget_figure, first_step_reaching, mean_curve, time_to_return
from camel_utils.results.runs import Run


def run(seed, points, method="td3"):
    steps, values = zip(*points)
    return Run("Hopper-v4", method, seed, f"{method}/{seed}", np.array(steps), np.array(values, dtype=float))


TD3 = [run(1, [(100, 0), (200, 10), (300, 20)]), run(2, [(100, 0), (200, 30), (300, 40)])]  # mean 0, 20, 30
FAST = [run(1, [(100, 10), (200, 40), (300, 50)], "camel"), run(2, [(100, 20), (200, 40), (300, 50)], "camel")]  # mean 15, 40, 50
SLOW = [run(1, [(100, 0), (200, 5), (300, 10)], "slow")]


def test_the_mean_curve_is_taken_on_the_steps_every_run_reached():
    shorter = [TD3[0], run(3, [(100, 4), (200, 6)])]
    steps, mean = mean_curve(shorter)
    assert steps.tolist() == [100, 200] and mean.tolist() == [2.0, 8.0]


def test_the_first_step_reaching_a_return_is_the_first_at_or_above_it():
    assert first_step_reaching(np.array([100, 200, 300]), np.array([15, 40, 50]), 20) == 200
    assert first_step_reaching(np.array([100, 200, 300]), np.array([15, 40, 50]), 15) == 100
    assert first_step_reaching(np.array([100, 200, 300]), np.array([15, 40, 50]), 51) is None


def test_time_to_tds_return_is_the_first_step_reaching_it_over_the_methods_speed():
    # TD3's mean at step 300 is 30; CAMEL's mean first reaches 30 at step 200, at 0.05 steps/s: 4000 s = 1.111 h;
    # TD3 itself reaches it at 300 (by definition), at 0.1 steps/s: 3000 s; the slow method never does
    target, times = time_to_return({"td3": TD3, "camel": FAST, "slow": SLOW}, "td3", 300, {"td3": 0.1, "camel": 0.05, "slow": 1.0})
    assert target == 30.0
    assert times["camel"] == (200, pytest.approx(4000 / 3600)) and times["td3"] == (300, pytest.approx(3000 / 3600))
    assert times["slow"] is None
    # at a step between evaluations, TD3's return is its latest evaluation before it (step 200: 20)
    target, times = time_to_return({"td3": TD3, "camel": FAST}, "td3", 250, {"td3": 1.0, "camel": 1.0})
    assert target == 20.0 and times["camel"][0] == 200
    with pytest.raises(ValueError, match="end at step 300, before 400"):
        time_to_return({"td3": TD3}, "td3", 400, {"td3": 1.0})


def test_the_references_name_their_sources_and_the_paper_envs():
    for returns, source in REFERENCES_1M.values():
        assert set(returns) == {"Hopper-v4", "Walker2d-v4", "Ant-v4"} and "arXiv" in source


def test_the_budget_figure_is_written_with_a_panel_per_env(tmp_path):
    groups = {("Hopper-v4", "td3"): TD3, ("Hopper-v4", "camel"): FAST, ("Ant-v4", "td3"): [run(1, [(100, 5), (1_000_000, 900)])]}
    path = tmp_path / "budget.png"
    draw_budget_figure(groups, ["Hopper-v4", "Ant-v4"], ["td3", "camel"], {"td3": "TD3", "camel": "paper's CAMEL"}, path)
    from matplotlib.image import imread

    image = imread(path)
    assert image.shape[1] > image.shape[0] * 1.5  # two panels side by side
