"""scripts/critic_along_guide.py: the critics' values of the guide's and the actor's actions along whole episodes,
beside the return that really followed."""

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from critic_along_guide import returns_to_go  # noqa: E402

from camel_td3 import Actor, QNetwork  # noqa: E402

# stands still with bent knees: a guide whose Hopper episodes are short and seeded
GUIDE = "import numpy as np\n\ndef policy(obs):\n    return np.array([0.5, -0.5, 0.2])\n"


def test_return_to_go_is_the_discounted_sum_of_the_rewards_left():
    # 1 + 0.5 * (2 + 0.5 * 4) = 3, 2 + 0.5 * 4 = 4, 4
    np.testing.assert_allclose(returns_to_go([1.0, 2.0, 4.0], 0.5), [3.0, 4.0, 4.0])


def run(tmp_path, *args):
    return subprocess.run([sys.executable, str(REPO / "scripts/critic_along_guide.py"), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_a_model_is_compared_along_guide_and_actor_episodes(tmp_path):
    env = gym.make("Hopper-v4")
    torch.manual_seed(0)
    actor, qf1, qf2 = Actor(env), QNetwork(env), QNetwork(env)
    torch.save((actor.state_dict(), qf1.state_dict(), qf2.state_dict()), tmp_path / "m.cleanrl_model")
    (tmp_path / "g.py").write_text(GUIDE)
    result = run(tmp_path, "m.cleanrl_model", "--guide", "g.py", "--episodes", "2", "--json", "c.json")
    assert result.returncode == 0, result.stderr
    rows = json.loads((tmp_path / "c.json").read_text())["episodes"]
    assert [(r["policy"], r["seed"]) for r in rows] == [("guide", 100), ("guide", 101), ("actor", 100), ("actor", 101)]
    for r in rows:
        assert 0 < r["steps_compared"] <= r["length"] and 0.0 <= r["critic_prefers_actor"] <= 1.0
    # the guide's episode, replayed here, returns what the script says it did
    obs, _ = env.reset(seed=100)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(np.array([0.5, -0.5, 0.2]))
        total, done = total + reward, terminated or truncated
    assert abs(rows[0]["return"] - total) < 1e-6
    assert "critic prefers actor" in result.stdout


def test_a_missing_model_or_the_wrong_env_is_one_line(tmp_path):
    (tmp_path / "g.py").write_text(GUIDE)
    result = run(tmp_path, "none.cleanrl_model", "--guide", "g.py")
    assert result.returncode == 2 and result.stderr.strip() == "error: none.cleanrl_model: no such file"
    env = gym.make("Hopper-v4")
    torch.save((Actor(env).state_dict(), QNetwork(env).state_dict(), QNetwork(env).state_dict()), tmp_path / "m.cleanrl_model")
    result = run(tmp_path, "m.cleanrl_model", "--guide", "g.py", "--env-id", "Walker2d-v4")
    assert result.returncode == 2 and "do not fit Walker2d-v4" in result.stderr and "Traceback" not in result.stderr
