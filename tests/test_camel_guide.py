"""camel_utils.guide: a guide file is checked before it runs, tried in a child process (which also says when it was
written for another env), and every guide source (LLM file, expert, random) is wrapped as one Guide, so that a
misbehaving call costs one unmasked step instead of the run."""

import time
import textwrap
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from camel_utils.guide import (
    Guide, GuideError, as_action, check_source, expert_policy, load_guide, make_guide, sample_observations, trial_run,
)  # fmt: skip

POLICIES = Path(__file__).resolve().parents[1] / "policies"

GOOD = """
import numpy as np
import math

def policy(obs):
    return np.clip(np.array([math.sin(obs[0]), 0.5, -0.5]), -1.0, 1.0)
"""


def write(tmp_path, source, name="guide.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


@pytest.fixture(scope="module")
def hopper_observations():
    env = gym.make("Hopper-v4")
    observations = sample_observations(env, n=32, seed=0)
    env.close()
    return observations


def test_check_source_accepts_a_numpy_policy():
    check_source(GOOD)


def test_check_source_allows_a_main_demo_block():
    check_source(GOOD + '\nif __name__ == "__main__":\n    policy(np.zeros(11))\n')


@pytest.mark.parametrize(
    "source, reason",
    [
        ("import os\ndef policy(obs): return obs", "line 1 imports 'os'"),
        ("import numpy, subprocess\ndef policy(obs): return obs", "imports 'subprocess'"),
        ("from pathlib import Path\ndef policy(obs): return obs", "imports from 'pathlib'"),
        ("from . import helper\ndef policy(obs): return obs", "imports from '.'"),
        ("from numpy import load\ndef policy(obs): return obs", "imports 'load'"),
        ("def policy(obs):\n    return open('x').read()", "line 2 uses 'open'"),
        ("def policy(obs):\n    return eval('obs')", "uses 'eval'"),
        ("def policy(obs):\n    exec('x = 1')\n    return obs", "uses 'exec'"),
        ("def policy(obs):\n    return __import__('os')", "uses '__import__'"),
        ("def policy(obs):\n    return getattr(obs, 'copy')()", "uses 'getattr'"),
        ("def policy(obs):\n    return obs.__class__", "accesses '.__class__'"),
        ("import numpy as np\ndef policy(obs):\n    np.save('x.npy', obs)\n    return obs", "uses '.save'"),
        ("import numpy as np\ndef policy(obs):\n    return np.load('weights.npy')", "uses '.load'"),
        ("def policy(obs):\n    obs.tofile('x')\n    return obs", "uses '.tofile'"),
        ("import numpy as np\ndef act(obs):\n    return obs", "defines no top-level function 'policy(obs)'"),
        ("def policy(obs)\n    return obs", "syntax error at line 1"),
    ],
)
def test_check_source_refuses_with_the_reason_and_line(source, reason):
    with pytest.raises(GuideError, match=reason.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        check_source(source, "guide.py")


def test_as_action_accepts_lists_and_row_vectors():
    np.testing.assert_array_equal(as_action([0.1, 0.2, 0.3], 3), [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(as_action(np.ones((1, 3)), 3), [1.0, 1.0, 1.0])


@pytest.mark.parametrize(
    "output, reason",
    [(np.zeros(2), r"shape \(2,\)"), (np.zeros((3, 3)), r"shape \(3, 3\)"), ([0.0, np.nan, 0.0], "NaN"),
     ([np.inf, 0.0, 0.0], "inf"), ("abc", "not an array of numbers"), (None, "returned None")],
)  # fmt: skip
def test_as_action_refuses_wrong_shapes_and_non_finite_values(output, reason):
    with pytest.raises(ValueError, match=reason):
        as_action(output, 3)


def test_trial_run_returns_the_actions_of_each_sample(tmp_path, hopper_observations):
    report = trial_run(write(tmp_path, GOOD), hopper_observations, action_dim=3)
    assert report.actions.shape == (len(hopper_observations), 3)
    np.testing.assert_allclose(report.actions[:, 0], np.sin(hopper_observations[:, 0]))
    assert report.out_of_range_fraction == 0.0


@pytest.mark.parametrize(
    "source, reason",
    [
        ("import numpy as np\ndef policy(obs):\n    return np.zeros(2)", r"returned shape \(2,\), expected \(3,\) on sample observation 0"),
        ("import numpy as np\ndef policy(obs):\n    return np.full(3, np.nan)", "returned NaN or inf"),
        ("def policy(obs):\n    return {'torque': 1}", "not an array of numbers"),
        ("def policy(obs):\n    return [1.0, 2.0, obs[100]]", "raised IndexError"),
        ("import numpy as np\nx = np.zeros(3)[7]\ndef policy(obs):\n    return obs", "importing it raised IndexError"),
        ("def policy(obs):\n    return policy(obs)", "raised RecursionError"),
    ],
)
def test_trial_run_refuses_broken_guides(tmp_path, hopper_observations, source, reason):
    with pytest.raises(GuideError, match=reason):
        trial_run(write(tmp_path, source), hopper_observations, action_dim=3)


def test_trial_run_stops_a_guide_call_that_hangs(tmp_path, hopper_observations):
    path = write(tmp_path, "def policy(obs):\n    while True:\n        pass\n")
    start = time.time()
    with pytest.raises(GuideError, match=r"took over 0.5 s on sample observation 0 \(does it hang\?\)"):
        trial_run(path, hopper_observations, action_dim=3, call_timeout=0.5)
    assert time.time() - start < 10


def test_trial_run_stops_a_guide_that_hangs_while_importing(tmp_path, hopper_observations):
    path = write(tmp_path, "while True:\n    pass\n\ndef policy(obs):\n    return obs\n")
    start = time.time()
    with pytest.raises(GuideError, match="did not finish 32 sample calls within 2 s"):
        trial_run(path, hopper_observations, action_dim=3, timeout=2)
    assert time.time() - start < 10


def test_load_guide_refuses_a_missing_file(tmp_path, hopper_observations):
    with pytest.raises(GuideError, match="no such guide policy file"):
        load_guide(tmp_path / "nope.py", hopper_observations, action_dim=3)


def test_load_guide_warns_about_out_of_range_actions_and_clips_them(tmp_path, hopper_observations, capsys):
    path = write(tmp_path, "import numpy as np\ndef policy(obs):\n    return np.array([2.0, -3.0, 0.5])\n")
    guide = load_guide(path, hopper_observations, action_dim=3)
    assert "outside [-1, 1] on 100% of sample observations" in capsys.readouterr().err
    np.testing.assert_array_equal(guide(hopper_observations[0]), [1.0, -1.0, 0.5])
    assert guide.clipped == 1 and guide.failures == 0


def test_guide_turns_failures_into_none_and_counts_them(capsys):
    outputs = iter([np.zeros(3), RuntimeError("boom"), np.full(3, np.nan), np.zeros(4), np.ones(3)])

    def flaky(obs):
        out = next(outputs)
        if isinstance(out, Exception):
            raise out
        return out

    guide = Guide(flaky, action_dim=3, name="flaky.py")
    results = [guide(np.zeros(11)) for _ in range(5)]
    assert [r is None for r in results] == [False, True, True, True, False]
    assert guide.calls == 5 and guide.failures == 3
    assert "shape (4,)" in guide.last_error
    assert capsys.readouterr().err.count("warning: guide flaky.py failed") == 1  # warned once, counted always


def test_guide_interrupts_a_call_that_hangs():
    def stuck(obs):
        while True:
            pass

    guide = Guide(stuck, action_dim=3, name="stuck.py", call_timeout=0.2)
    start = time.time()
    assert guide(np.zeros(11)) is None
    assert time.time() - start < 2
    assert guide.last_error == "timed out after 0.2 s"


def test_guide_does_not_let_the_guide_change_the_observation():
    def mutating(obs):
        obs[:] = 99.0
        return np.zeros(3)

    obs = np.arange(11.0)
    Guide(mutating, action_dim=3, name="m.py")(obs)
    np.testing.assert_array_equal(obs, np.arange(11.0))


def test_sample_observations_come_from_the_env():
    env = gym.make("Hopper-v4")
    observations = sample_observations(env, n=40, seed=3)
    assert observations.shape == (40, 11) and observations.dtype == np.float64
    assert np.all(np.isfinite(observations))
    assert len(np.unique(observations[:, 0])) > 20  # states along rollouts, not one state repeated


# --- a guide written for another env ---------------------------------------------------------------


@pytest.mark.parametrize(
    "policy, env_id, did",
    [
        ("ant.py", "Hopper-v4", "policy(obs) raised ValueError: matmul"),  # Ant's 27 observations, read from Hopper's 11
        ("walker2d.py", "Hopper-v4", "policy(obs) raised IndexError: index 11 is out of bounds"),
        ("hopper.py", "Walker2d-v4", "policy(obs) returned shape (3,), expected (6,)"),
    ],
)
def test_guide_for_another_env_is_refused_with_what_the_env_gives_and_wants(policy, env_id, did):
    env = gym.make(env_id)
    observations, action_dim = sample_observations(env, n=4), int(np.prod(env.action_space.shape))
    with pytest.raises(GuideError) as refused:
        load_guide(POLICIES / "tuned" / policy, observations, action_dim, env_id=env_id)
    message = str(refused.value)
    obs_size = {"Hopper-v4": 11, "Walker2d-v4": 17}[env_id]
    assert did in message
    assert f"{env_id} gives observations of size {obs_size} and wants {action_dim} actions" in message
    assert "\n" not in message


def test_a_guides_own_value_error_is_reported_as_raised_not_as_a_bad_return(tmp_path, hopper_observations):
    path = write(tmp_path, "def policy(obs):\n    raise ValueError('bad gait')\n")
    with pytest.raises(GuideError, match=r"policy\(obs\) raised ValueError: bad gait on sample observation 0"):
        trial_run(path, hopper_observations, action_dim=3)


# --- one guide type for every source ---------------------------------------------------------------


def test_guide_counts_survive_a_state_dict_round_trip():
    guide = Guide(lambda obs: [2.0, 0.0, 0.0] if obs[0] > 0 else None, action_dim=3, name="g")
    for x in [1.0, -1.0, 1.0]:
        guide(np.array([x]))
    assert guide.state_dict() == {"calls": 3, "failures": 1, "clipped": 2}
    restored = Guide(lambda obs: np.zeros(3), action_dim=3, name="g")
    restored.load_state_dict(guide.state_dict())
    assert (restored.calls, restored.failures, restored.clipped) == (3, 1, 2)


def test_make_guide_gives_one_guide_type_for_file_expert_and_random(tmp_path):
    hopper = gym.make("Hopper-v4")
    model = save_expert(tmp_path / "expert.cleanrl_model", hopper, masking_aware=False)
    guides = [
        make_guide(hopper, llm_policy=str(write(tmp_path, GOOD)), seed=0),
        make_guide(hopper, expert_model=str(model)),
        make_guide(hopper, random_guide=True, rng=np.random.default_rng(0)),
    ]
    obs = hopper.reset(seed=0)[0]
    for guide in guides:
        assert type(guide) is Guide
        action = guide(obs)
        assert action.shape == (3,) and np.all(np.abs(action) <= 1)
        assert (guide.calls, guide.failures) == (1, 0)
    assert make_guide(hopper) is None  # no guide: the plain baseline


def test_make_guide_names_the_flag_and_the_file_of_a_refused_guide(tmp_path):
    with pytest.raises(GuideError, match=r"^guide .*nope\.py: no such guide policy file"):
        make_guide(gym.make("Hopper-v4"), llm_policy=str(tmp_path / "nope.py"))


def save_expert(path, env, masking_aware, set_weights=None):
    """A CleanRL-format model: torch.save of (actor, qf1, qf2) state dicts, the actor with CleanRL's keys."""
    obs_dim, action_dim = env.observation_space.shape[0], env.action_space.shape[0]
    in_features = obs_dim + 2 * action_dim if masking_aware else obs_dim
    torch.manual_seed(0)
    actor = {"fc1.weight": torch.randn(256, in_features) * 0.1, "fc1.bias": torch.zeros(256),
             "fc2.weight": torch.randn(256, 256) * 0.1, "fc2.bias": torch.zeros(256),
             "fc_mu.weight": torch.randn(action_dim, 256) * 0.1, "fc_mu.bias": torch.zeros(action_dim),
             "action_scale": torch.ones(action_dim), "action_bias": torch.zeros(action_dim)}  # fmt: skip
    if set_weights:
        set_weights(actor)
    torch.save((actor, {}, {}), path)
    return path


def test_expert_guide_is_the_actors_tanh_output_as_a_normalised_action(tmp_path):
    hopper = gym.make("Hopper-v4")

    def constant(actor):  # every hidden unit 0, so the action is tanh(fc_mu.bias) = (0.5, -0.25, 0)
        for name in ["fc1.weight", "fc2.weight", "fc_mu.weight"]:
            actor[name].zero_()
        actor["fc_mu.bias"] = torch.tensor([np.arctanh(0.5), np.arctanh(-0.25), 0.0], dtype=torch.float32)

    expert = expert_policy(str(save_expert(tmp_path / "e.cleanrl_model", hopper, False, constant)), hopper)
    np.testing.assert_allclose(expert(np.ones(11)), [0.5, -0.25, 0.0], atol=1e-6)


def test_masking_aware_expert_is_given_the_full_bounds(tmp_path):
    hopper = gym.make("Hopper-v4")

    def reads_high(actor):  # unit 0 carries the first `high` input (index 11 + 3): tanh(relu(relu(high_0)))
        for name in ["fc1.weight", "fc2.weight", "fc_mu.weight"]:
            actor[name].zero_()
        actor["fc1.weight"][0, 14] = 1.0
        actor["fc2.weight"][0, 0] = 1.0
        actor["fc_mu.weight"][0, 0] = 1.0

    expert = expert_policy(str(save_expert(tmp_path / "e.cleanrl_model", hopper, True, reads_high)), hopper)
    np.testing.assert_allclose(expert(np.zeros(11)), [np.tanh(1.0), 0.0, 0.0], atol=1e-6)  # high = +1 (low would give 0)


def test_a_guide_that_uses_a_name_it_never_defined_is_not_blamed_on_the_env(tmp_path, hopper_observations):
    path = write(tmp_path, "import numpy as np\n\ndef policy(obs):\n    return np.clip(np.array([math.sin(obs[0]), 0.0, 0.0]), -1, 1)\n")
    with pytest.raises(GuideError) as refused:
        load_guide(path, hopper_observations, 3, env_id="Hopper-v4")
    assert "raised NameError: name 'math' is not defined" in str(refused.value) and "another env" not in str(refused.value)
