"""A trained agent in your own code (camel_utils/agent.py, the README's snippet): the loaded policy acts as the run's
unmasked evaluation did, so episodes from the same start states give the return the run logged, bit for bit."""

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from camel_utils.agent import load_agent

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


@pytest.mark.parametrize("trainer, flags", [("camel_td3.py", ["--llm-policy", str(REPO / "policies/hopper.py")]),
                                            ("camel_td3.py", []), ("camel_sac.py", ["--random-guide"])],
                         ids=["camel+", "td3", "camel-sac"])  # fmt: skip
def test_the_loaded_agent_reproduces_the_runs_final_evaluation(tmp_path, trainer, flags):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    command = [sys.executable, str(REPO / trainer), "--env-id", "Hopper-v4", "--total-timesteps", "400", "--learning-starts", "200",
               "--eval-frequency", "400", "--eval-episodes", "2", "--seed", "4", "--run-name", "r", *flags]  # fmt: skip
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    finished = json.loads((tmp_path / "runs/r/finished.json").read_text())
    model = next((tmp_path / "runs/r").glob("*.cleanrl_model"))
    policy = load_agent(model)  # the README's two lines
    action = policy(gym.make("Hopper-v4").reset(seed=0)[0])
    assert action.shape == (3,) and np.all(np.abs(action) <= 1.0)
    assert returns_with(policy, "Hopper-v4", 4, 2) == finished["final_eval_return"]


def test_an_agent_for_another_env_says_so(tmp_path):
    import torch

    torch.save(({"fc1.weight": torch.zeros(256, 17), "fc1.bias": torch.zeros(256), "fc2.weight": torch.zeros(256, 256),
                 "fc2.bias": torch.zeros(256), "fc_mu.weight": torch.zeros(3, 256), "fc_mu.bias": torch.zeros(3),
                 "action_scale": torch.ones(3), "action_bias": torch.zeros(3)}, {}, {}), tmp_path / "a.cleanrl_model")  # fmt: skip
    policy = load_agent(tmp_path / "a.cleanrl_model")
    np.testing.assert_array_equal(policy(np.ones(17)), np.zeros(3))  # 17 inputs: a plain actor on a 17-dim obs
    with pytest.raises(ValueError, match="trained on another env"):
        policy(np.ones(12))
