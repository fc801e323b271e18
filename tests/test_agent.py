"""A trained agent in your own code (camel_utils/agent.py, the README's snippet, the one loader of a .cleanrl_model): the
loaded policy acts as the run's unmasked evaluation did, so episodes from the same start states give the return the run
logged, bit for bit; it takes one observation or a batch, refuses an observation of another size, and is importable
from any folder once the repository is installed (`pip install -e .`)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from camel_utils.agent import load_agent
from script_process import run_script

REPO = Path(__file__).resolve().parent.parent


def returns_with(policy, env_id, seed, episodes):
    """The mean return of episodes from the evaluation's start states (the trainers reset with seed + 100000 + i)."""
    env = gym.make(env_id)
    total = []
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + 100_000 + episode)
        done, episode_return = False, 0.0
        while not done:
            obs, reward, terminated, truncated, _ = env.step(policy(obs))
            episode_return, done = episode_return + float(reward), terminated or truncated
        total.append(episode_return)
    return float(np.mean(total))


def save_hopper_agent(path, masking_aware=True, set_weights=None):
    """A Hopper-v4 agent (11 observations, 3 actions) in CleanRL's format, built from state dicts: the actor (reading
    the bounds beside the observation if masking_aware) and two critics, which read the observation and the action."""
    torch.manual_seed(0)
    in_features = 11 + 6 if masking_aware else 11
    actor = {"fc1.weight": torch.randn(256, in_features) * 0.1, "fc1.bias": torch.zeros(256),
             "fc2.weight": torch.randn(256, 256) * 0.1, "fc2.bias": torch.zeros(256),
             "fc_mu.weight": torch.randn(3, 256) * 0.1, "fc_mu.bias": torch.zeros(3),
             "action_scale": torch.ones(3), "action_bias": torch.zeros(3)}  # fmt: skip
    if set_weights:
        set_weights(actor)
    critic = {"fc1.weight": torch.zeros(256, 11 + 3), "fc1.bias": torch.zeros(256), "fc2.weight": torch.zeros(256, 256),
              "fc2.bias": torch.zeros(256), "fc3.weight": torch.zeros(1, 256), "fc3.bias": torch.zeros(1)}  # fmt: skip
    torch.save((actor, critic, critic), path)
    return path


@pytest.mark.parametrize("trainer, flags", [("camel_plus_td3.py", ["--llm-policy", str(REPO / "policies/hopper.py")]),
                                            ("camel_td3.py", []), ("camel_sac.py", ["--random-guide"])],
                         ids=["camel+", "td3", "camel-sac"])  # fmt: skip
def test_the_loaded_agent_reproduces_the_runs_final_evaluation(tmp_path, trainer, flags):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    args = ["--env-id", "Hopper-v4", "--total-timesteps", "400", "--learning-starts", "200", "--eval-frequency", "400",
            "--eval-episodes", "2", "--seed", "4", "--run-name", "r", *flags]  # fmt: skip
    result = run_script(REPO / trainer, *args, cwd=tmp_path, env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    finished = json.loads((tmp_path / "runs/r/finished.json").read_text())
    policy = load_agent(tmp_path / "runs/r" / f"{finished['exp_name']}.cleanrl_model")  # the README's two lines
    action = policy(gym.make("Hopper-v4").reset(seed=0)[0])
    assert action.shape == (3,) and action.dtype == np.float32 and np.all(np.abs(action) <= 1.0)
    assert returns_with(policy, "Hopper-v4", 4, 2) == finished["final_eval_return"]


def test_a_batch_of_observations_gives_one_action_per_row(tmp_path):
    policy = load_agent(save_hopper_agent(tmp_path / "a.cleanrl_model"))
    observations = np.random.default_rng(0).normal(size=(4, 11))
    actions = policy(observations)
    assert actions.shape == (4, 3)
    for obs, action in zip(observations, actions):  # a batch of four and four batches of one: the same products, to rounding
        np.testing.assert_allclose(action, policy(obs), rtol=0, atol=1e-6)
    assert policy(observations[:1]).shape == (1, 3)  # a batch of one stays a batch


def test_the_action_is_the_actors_tanh_output_in_the_envs_units(tmp_path):
    def constant(actor):  # every hidden unit 0: the normalised action is tanh(fc_mu.bias) = (0.5, -0.25, 0)
        for name in ["fc1.weight", "fc2.weight", "fc_mu.weight"]:
            actor[name].zero_()
        actor["fc_mu.bias"] = torch.tensor([np.arctanh(0.5), np.arctanh(-0.25), 0.0])
        actor["action_scale"], actor["action_bias"] = torch.tensor([2.0, 2.0, 4.0]), torch.tensor([1.0, 0.0, -1.0])

    policy = load_agent(save_hopper_agent(tmp_path / "a.cleanrl_model", masking_aware=False, set_weights=constant))
    np.testing.assert_allclose(policy(np.ones(11)), [0.5 * 2 + 1, -0.25 * 2 + 0, 0 * 4 - 1], atol=1e-6)
    np.testing.assert_allclose(policy.normalized_action(np.ones(11)), [0.5, -0.25, 0.0], atol=1e-6)


def test_a_masking_aware_actor_is_given_the_whole_action_space_as_its_bounds(tmp_path):
    def reads_high(actor):  # unit 0 carries the first `high` input (index 11 + 3): tanh(relu(relu(high_0)))
        for name in ["fc1.weight", "fc2.weight", "fc_mu.weight"]:
            actor[name].zero_()
        actor["fc1.weight"][0, 14] = 1.0
        actor["fc2.weight"][0, 0] = 1.0
        actor["fc_mu.weight"][0, 0] = 1.0

    policy = load_agent(save_hopper_agent(tmp_path / "a.cleanrl_model", masking_aware=True, set_weights=reads_high))
    assert policy.masking_aware and policy.obs_dim == 11
    np.testing.assert_allclose(policy(np.zeros(11)), [np.tanh(1.0), 0.0, 0.0], atol=1e-6)  # high = +1 (low = -1 would give 0)


@pytest.mark.parametrize("obs_shape", [(17,), (2, 17), (12,), (2, 3, 11), ()])
def test_an_observation_of_another_size_is_refused_naming_both_sizes(tmp_path, obs_shape):
    # the masking-aware Hopper actor takes 17 inputs, as many as Walker2d-v4 has observations: only the critic knows 11
    policy = load_agent(save_hopper_agent(tmp_path / "hopper.cleanrl_model", masking_aware=True))
    with pytest.raises(ValueError) as refused:
        policy(np.ones(obs_shape))
    message = str(refused.value)
    assert "observations of size 11" in message and f"not of shape {obs_shape}" in message and "another env" in message


def test_an_agent_that_does_not_fit_the_env_it_is_given_is_refused(tmp_path):
    model = save_hopper_agent(tmp_path / "hopper.cleanrl_model", masking_aware=True)
    assert load_agent(model, gym.make("Hopper-v4")).obs_dim == 11
    with pytest.raises(ValueError, match=r"^its actor takes 17 inputs \(observations of size 11 and 6 bounds\) and gives 3 "
                                         r"actions, but Walker2d-v4 has 17 observations and 6 actions; was it trained on another env\?$"):  # fmt: skip
        load_agent(model, gym.make("Walker2d-v4"))


def test_a_file_without_critics_needs_the_env_and_a_file_without_an_actor_is_not_a_model(tmp_path):
    actor = torch.load(save_hopper_agent(tmp_path / "a.cleanrl_model", masking_aware=False), weights_only=True)[0]
    torch.save((actor, {}, {}), tmp_path / "actor_only.cleanrl_model")
    with pytest.raises(ValueError, match="holds no critic, so the observation size is unknown"):
        load_agent(tmp_path / "actor_only.cleanrl_model")
    assert load_agent(tmp_path / "actor_only.cleanrl_model", gym.make("Hopper-v4"))(np.zeros(11)).shape == (3,)
    (tmp_path / "text.cleanrl_model").write_text("def policy(obs):\n    return obs\n")
    with pytest.raises(ValueError, match="^not a CleanRL-format model"):
        load_agent(tmp_path / "text.cleanrl_model")
    torch.save({"actor": actor}, tmp_path / "nested.cleanrl_model")
    with pytest.raises(ValueError, match=r"^not a CleanRL-format model \(KeyError: 'fc1.weight'\)"):
        load_agent(tmp_path / "nested.cleanrl_model")


def test_the_readme_snippet_runs_from_another_folder_with_the_package_installed(tmp_path):
    """The README's three lines in a fresh Python whose folder is outside the repository, which is not on PYTHONPATH:
    camel_utils must come from `pip install -e .`."""
    model = save_hopper_agent(tmp_path / "hopper.cleanrl_model")
    obs = np.random.default_rng(1).normal(size=11)
    snippet = f"""
import json, sys
import numpy as np
try:
    import camel_utils
except ModuleNotFoundError:
    sys.exit("camel_utils is not installed: run `pip install -e .` in the repository ({REPO})")
from camel_utils.agent import load_agent
policy = load_agent({str(model)!r})
action = policy(np.array({obs.tolist()!r}))
print(json.dumps({{"package": camel_utils.__file__, "action": action.tolist()}}))
"""
    (tmp_path / "elsewhere").mkdir()
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path / "elsewhere", env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    assert Path(printed["package"]) == REPO / "camel_utils" / "__init__.py", (
        f"camel_utils was imported from {printed['package']}, not this repository: run `pip install -e .` in {REPO}")
    assert printed["action"] == load_agent(model)(obs).tolist()
