"""camel_sac.py: the masking-aware stochastic actor (its log-probability is the change of variables onto the box,
by hand and by integration; its samples stay in the box; the least mask width keeps it finite), SAC's entropy terms
measured against the box (the critics' target and the temperature, by hand on stub networks), the soft Q-networks
computed as one batched pair, what the loop stores, and the command line."""

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest
import torch
import tyro

import camel_sac
import camel_td3
from camel_sac import ReplayBatch, mask_bounds
from camel_utils.fast_update import BatchedCritics
from test_camel_td3 import printed_path
from camel_utils.guide import expert_policy, to_env_units
from camel_sac import (
    LOG_STD_MAX, LOG_STD_MIN, MIN_MASK_WIDTH, Actor, SoftQNetwork, log_prob_in_box, sac_target, update_actor, update_temperature,
)  # fmt: skip
from script_process import run_script

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hopper():
    env = gym.make("Hopper-v4")
    yield env
    env.close()


def fixed_actor(env, mean, log_std, masking_aware=True):
    """An actor whose mean and log-std are the same constants for every input (all weights zero)."""
    actor = Actor(env, masking_aware=masking_aware)
    with torch.no_grad():
        for layer in [actor.fc1, actor.fc2, actor.fc_mean, actor.fc_logstd]:
            layer.weight.zero_()
            layer.bias.zero_()
        actor.fc_mean.bias.copy_(torch.as_tensor(mean))
        # log_std = LOG_STD_MIN + (LOG_STD_MAX - LOG_STD_MIN) * (tanh(b) + 1) / 2, solved for b
        squashed = 2 * (torch.as_tensor(log_std, dtype=torch.float64) - LOG_STD_MIN) / (LOG_STD_MAX - LOG_STD_MIN) - 1
        actor.fc_logstd.bias.copy_(torch.atanh(squashed))
    return actor


@pytest.fixture
def fixed_noise(monkeypatch):
    """Make Normal.rsample's standard normal draw the rows given (mean + std * noise)."""
    noise = {}
    draw = lambda shape, dtype, device: noise["value"].to(dtype).expand(shape)  # noqa: E731
    monkeypatch.setattr(torch.distributions.normal, "_standard_normal", draw)
    return noise


# --- the masking-aware stochastic actor ------------------------------------------------------------------


def test_log_prob_of_a_known_sample_in_a_known_box_is_the_change_of_variables_by_hand(hopper, fixed_noise):
    mean, log_std, noise = [0.5, -1.0, 2.0], [-1.0, 0.0, 0.5], [1.0, -0.5, 2.0]
    low, high = [-1.0, 0.2, -0.4], [1.0, 0.8, 0.4]  # dim 0 unmasked, dims 1 and 2 in boxes of half-width 0.3 and 0.4
    actor = fixed_actor(hopper, mean, log_std)
    fixed_noise["value"] = torch.tensor([noise])
    action, log_prob, mean_action = actor.get_action(torch.zeros(1, 11), torch.tensor([low]), torch.tensor([high]))

    expected_log_prob, expected_action, expected_mean = 0.0, [], []
    for m, s, e, lo, hi in zip(mean, log_std, noise, low, high):
        u = m + math.exp(s) * e
        gaussian = -e * e / 2 - s - math.log(2 * math.pi) / 2  # log N(u; m, exp(s))
        expected_log_prob += gaussian - math.log(1 - math.tanh(u) ** 2) - math.log((hi - lo) / 2)
        expected_action.append(lo + (math.tanh(u) + 1) / 2 * (hi - lo))
        expected_mean.append(lo + (math.tanh(m) + 1) / 2 * (hi - lo))
    torch.testing.assert_close(log_prob, torch.tensor([expected_log_prob]), rtol=0, atol=1e-4)
    torch.testing.assert_close(action, torch.tensor([expected_action]))  # Hopper's actions are in [-1, 1]: env units = normalised
    torch.testing.assert_close(mean_action, torch.tensor([expected_mean]))


def test_log_prob_stays_exact_where_tanh_saturates(hopper, fixed_noise):
    # u = 12: tanh(u) is 1.0 in float32, so log(1 - tanh(u)^2) would be -inf; CleanRL's +1e-6 would give log(1e-6)
    actor = fixed_actor(hopper, [12.0, 0.0, 0.0], [-5.0, -5.0, -5.0])
    fixed_noise["value"] = torch.zeros(1, 3)
    _, log_prob, _ = actor.get_action(torch.zeros(1, 11), -torch.ones(1, 3), torch.ones(1, 3))
    gaussian = 3 * (5.0 - math.log(2 * math.pi) / 2)
    expected = gaussian - math.log(1 - math.tanh(12.0) ** 2)  # float64: 1 - tanh(12)^2 = 1.5e-10
    torch.testing.assert_close(log_prob, torch.tensor([expected]), rtol=1e-5, atol=0)


def one_dimensional_actor(mean, log_std, scale=2.0):
    """A 1-D actor in float64 for an env with actions in [-scale, scale] (the density is in normalised units)."""
    env = SimpleNamespace(observation_space=gym.spaces.Box(-np.inf, np.inf, (2,)), action_space=gym.spaces.Box(-scale, scale, (1,)))
    return fixed_actor(env, [mean], [log_std]).double()


@pytest.mark.parametrize("low, high", [(-1.0, 1.0), (0.1, 0.4), (-0.95, -0.9)], ids=["full", "box", "narrow"])
def test_density_integrates_to_one_over_the_box_and_matches_the_cdf(fixed_noise, low, high):
    actor = one_dimensional_actor(mean=0.3, log_std=-0.5)
    n = 20_001
    obs, lows, highs = (torch.full((n, k), value, dtype=torch.float64) for k, value in [(2, 0.0), (1, low), (1, high)])
    mean, log_std = (v[0, 0].item() for v in actor(obs[:1], lows[:1], highs[:1]))
    std = math.exp(log_std)
    u = torch.linspace(-9, 9, n, dtype=torch.float64)  # even in u, so the grid in a follows the mass to the box's edges
    fixed_noise["value"] = ((u - mean) / std).unsqueeze(1)
    action, log_prob, _ = actor.get_action(obs, lows, highs)
    a = (action[:, 0] / actor.action_scale).detach()  # back to the normalised units of the density
    density = log_prob.detach().exp()
    assert torch.all(a[1:] >= a[:-1]) and a[0] >= low and a[-1] <= high
    cumulative = torch.cat([torch.zeros(1, dtype=torch.float64), torch.cumulative_trapezoid(density, a)])
    assert cumulative[-1].item() == pytest.approx(1.0, abs=1e-6)
    # P(a <= a_0) = P(u <= u_0) = Phi((u_0 - mean) / std), at a few points inside the box
    for i in [n // 4, n // 2, 3 * n // 4]:
        cdf = 0.5 * (1 + math.erf((u[i].item() - mean) / std / math.sqrt(2)))
        assert cumulative[i].item() == pytest.approx(cdf, abs=1e-6)


def test_sampled_and_mean_actions_stay_inside_random_boxes(hopper):
    torch.manual_seed(0)
    actor = Actor(hopper, masking_aware=True)
    with torch.no_grad():
        actor.fc_logstd.bias.fill_(5.0)  # std near exp(2): many samples saturate tanh at the box's edges
    centre, width = torch.rand(4096, 3) * 2 - 1, torch.rand(4096, 3) * 0.6 + 0.01
    low, high = (centre - width).clamp(-1, 1), (centre + width).clamp(-1, 1)
    action, log_prob, mean_action = actor.get_action(torch.randn(4096, 11) * 5, low, high)
    for a in [action, mean_action]:  # Hopper: env units = normalised; float rounding may cross a bound by an ulp
        assert torch.all(a >= low - 1e-6) and torch.all(a <= high + 1e-6)
    assert torch.isfinite(log_prob).all()


def test_actor_without_masking_awareness_ignores_the_bounds_but_acts_inside_them(hopper, fixed_noise):
    actor = fixed_actor(hopper, [0.2, -0.3, 0.0], [-1.0, -1.0, -1.0], masking_aware=False)
    assert actor.fc1.in_features == 11  # the 'w/o MA' actor sees obs only
    fixed_noise["value"] = torch.tensor([[0.5, 0.5, -1.0]])
    wide_low, wide_high = -torch.ones(1, 3), torch.ones(1, 3)
    box_low, box_high = torch.tensor([[0.0, -1.0, 0.2]]), torch.tensor([[0.5, -0.5, 0.6]])
    wide, wide_log_prob, _ = actor.get_action(torch.zeros(1, 11), wide_low, wide_high)
    boxed, box_log_prob, _ = actor.get_action(torch.zeros(1, 11), box_low, box_high)
    # the same squashed sample y, mapped onto each box; its density grows by the box's Jacobian 1 / prod((high - low) / 2)
    torch.testing.assert_close(boxed, box_low + (wide + 1) / 2 * (box_high - box_low))
    torch.testing.assert_close(box_log_prob, wide_log_prob - math.log(0.25 * 0.25 * 0.2))


def test_plain_sac_actor_is_cleanrls(hopper):
    torch.manual_seed(0)
    actor = Actor(hopper, masking_aware=False)
    obs = torch.randn(64, 11)
    torch.manual_seed(1)
    action, log_prob, mean_action = actor.get_action(obs, -torch.ones(64, 3), torch.ones(64, 3))
    torch.manual_seed(1)  # CleanRL's get_action, with the same draw
    mean, log_std = actor(obs, None, None)
    normal = torch.distributions.Normal(mean, log_std.exp())
    u = normal.rsample()
    y = torch.tanh(u)
    cleanrl_log_prob = (normal.log_prob(u) - torch.log(actor.action_scale * (1 - y.pow(2)) + 1e-6)).sum(1)
    torch.testing.assert_close(action, y * actor.action_scale + actor.action_bias)
    torch.testing.assert_close(log_prob, cleanrl_log_prob, rtol=1e-4, atol=1e-4)  # the 1e-6 in CleanRL's log is the difference
    torch.testing.assert_close(mean_action, torch.tanh(mean) * actor.action_scale + actor.action_bias)


@pytest.mark.parametrize("centre", [-1.0, -0.3, 0.0, 0.9999, 1.0])
def test_boxes_of_the_least_mask_width_give_finite_log_probabilities_where_narrower_ones_give_nan(hopper, centre):
    # log pi subtracts log((high - low) / 2) and log_prob_in_box adds it back: a box that float32 bounds (as the
    # replay buffer stores them) cannot tell from a point gives inf - inf. Near +-1 a box of width 1e-8 is such a box
    torch.manual_seed(0)
    actor = Actor(hopper)
    for width in [MIN_MASK_WIDTH, 1e-8]:
        low, high = (torch.tensor(np.tile(bound, (256, 1)), dtype=torch.float32) for bound in mask_bounds(np.full(3, centre), width))
        collapsed = bool((high <= low).any())
        action, log_prob, _ = actor.get_action(torch.randn(256, 11), low, high)
        assert bool(torch.isfinite(log_prob_in_box(log_prob, low, high)).all()) == (not collapsed), (width, centre)
        assert torch.all(action >= low) and torch.all(action <= high)
        assert collapsed == (width == 1e-8 and abs(centre) > 0.5)  # never at the least width
    assert MIN_MASK_WIDTH == 1e-3


def test_a_mask_width_below_the_least_is_refused_with_one_error_line(tmp_path):
    result = run_script(REPO / "camel_sac.py", "--random-guide", "--mask-width", "1e-8", "--total-timesteps", "100",
                        cwd=tmp_path, env=trainer_env(), timeout=120)  # fmt: skip
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == ["error: --mask-width must be in [0.001, 2] (see --help), got 1e-08"]
    assert not (tmp_path / "runs").exists()


# --- SAC's entropy terms, measured against the box ------------------------------------------------------


class StubActor:
    """get_action returns fixed actions and log-probabilities, and records the bounds it was asked about."""

    def __init__(self, actions, log_probs):
        self.actions, self.log_probs, self.calls = actions, log_probs, []

    def get_action(self, obs, low, high):
        self.calls.append((low, high))
        return self.actions, self.log_probs, self.actions


class StubCritics:
    """Both critics' values (2, batch) fixed; records the actions they were asked about."""

    def __init__(self, values):
        self.values, self.actions = values, []

    def __call__(self, obs, actions):
        self.actions.append(actions)
        return self.values


def batch(low, high, next_low, next_high, rewards, dones):
    n = len(rewards)
    return ReplayBatch(observations=torch.zeros(n, 11), next_observations=torch.ones(n, 11), actions=torch.zeros(n, 3),
                       rewards=torch.tensor(rewards).unsqueeze(1), dones=torch.tensor(dones).unsqueeze(1),
                       low=torch.tensor(low), high=torch.tensor(high), next_low=torch.tensor(next_low), next_high=torch.tensor(next_high))  # fmt: skip


FULL, BOX, NARROW = ([-1.0] * 3, [1.0] * 3), ([0.2, -0.5, -1.0], [0.8, 0.1, 0.2]), ([0.3, 0.3, 0.3], [0.5, 0.5, 0.5])


def test_log_prob_in_box_adds_the_boxs_log_half_widths():
    log_prob = torch.tensor([1.0, 1.0, 1.0])
    low, high = torch.tensor([FULL[0], BOX[0], NARROW[0]]), torch.tensor([FULL[1], BOX[1], NARROW[1]])
    expected = [1.0, 1.0 + math.log(0.3 * 0.3 * 0.6), 1.0 + 3 * math.log(0.1)]
    torch.testing.assert_close(log_prob_in_box(log_prob, low, high), torch.tensor(expected))


def test_sac_target_samples_in_the_bounds_of_next_s_and_measures_its_entropy_there():
    data = batch(low=[FULL[0]] * 3, high=[FULL[1]] * 3, next_low=[FULL[0], BOX[0], NARROW[0]],
                 next_high=[FULL[1], BOX[1], NARROW[1]], rewards=[1.0, 2.0, -1.0], dones=[0.0, 0.0, 1.0])  # fmt: skip
    next_actions, log_probs = torch.rand(3, 3), torch.tensor([-2.0, 0.5, 4.0])
    actor, qf_target = StubActor(next_actions, log_probs), StubCritics(torch.tensor([[10.0, 5.0, 7.0], [9.0, 6.0, 8.0]]))
    y = sac_target(data, actor, qf_target, alpha=0.2, gamma=0.9)
    in_box = [-2.0, 0.5 + math.log(0.3 * 0.3 * 0.6), 4.0 + 3 * math.log(0.1)]
    expected = [1.0 + 0.9 * (9.0 - 0.2 * in_box[0]), 2.0 + 0.9 * (5.0 - 0.2 * in_box[1]), -1.0]  # min(Q1', Q2'); no future when done
    torch.testing.assert_close(y, torch.tensor(expected))
    (low, high), = actor.calls  # fmt: skip
    assert low is data.next_low and high is data.next_high
    assert qf_target.actions[0] is next_actions


@pytest.mark.parametrize("box", [FULL, BOX, NARROW], ids=["full", "box", "narrow"])
def test_a_policy_at_the_target_spread_leaves_alpha_alone_in_any_box(box):
    # -log pi in the box at the target entropy -3 means log pi = 3 - sum log h: the temperature's gradient is zero
    low, high = torch.tensor([box[0]] * 4), torch.tensor([box[1]] * 4)
    log_pi = 3.0 - torch.log((high - low) / 2).sum(1)
    log_alpha = torch.zeros(1, requires_grad=True)
    data = batch(box[0:1] * 4, box[1:2] * 4, box[0:1] * 4, box[1:2] * 4, [0.0] * 4, [0.0] * 4)
    loss = update_temperature(data, StubActor(None, log_pi), log_alpha, torch.optim.SGD([log_alpha], lr=0.1), target_entropy=-3.0)
    assert abs(loss.item()) < 1e-5 and abs(log_alpha.item()) < 1e-6


def test_temperature_loss_by_hand_including_a_narrow_box():
    data = batch(low=[FULL[0], NARROW[0]], high=[FULL[1], NARROW[1]], next_low=[FULL[0]] * 2, next_high=[FULL[1]] * 2,
                 rewards=[0.0, 0.0], dones=[0.0, 0.0])  # fmt: skip
    log_alpha = torch.tensor([math.log(0.5)], requires_grad=True)
    # row 1: log pi = -1 in the full space; row 2: log pi = 5 in a box of half-width 0.1, i.e. 5 + 3 log 0.1 in it
    loss = update_temperature(data, StubActor(None, torch.tensor([-1.0, 5.0])), log_alpha, torch.optim.SGD([log_alpha], lr=0.1), -3.0)
    in_box = [-1.0, 5.0 + 3 * math.log(0.1)]
    expected = sum(-0.5 * (lp - 3.0) for lp in in_box) / 2  # mean of -alpha (log pi + target entropy)
    assert loss.item() == pytest.approx(expected, rel=1e-6)
    # d loss / d log alpha = the loss itself; both rows' entropy is above the target: alpha falls
    assert log_alpha.item() == pytest.approx(math.log(0.5) - 0.1 * expected, rel=1e-6) and expected > 0


def test_actor_update_trains_the_actor_on_min_q_and_leaves_the_critics_alone(hopper):
    torch.manual_seed(0)
    actor, qf1, qf2 = Actor(hopper), SoftQNetwork(hopper), SoftQNetwork(hopper)
    qf = BatchedCritics(qf1, qf2)
    critics_before = [p.detach().clone() for p in [*qf1.parameters(), *qf2.parameters()]]
    data = batch([BOX[0]] * 8, [BOX[1]] * 8, [FULL[0]] * 8, [FULL[1]] * 8, [0.0] * 8, [0.0] * 8)
    data = data._replace(observations=torch.randn(8, 11))
    torch.manual_seed(1)
    loss, entropy = update_actor(data, actor, qf, torch.optim.SGD(actor.parameters(), lr=0.1), alpha=0.2)
    assert all(p.grad is None for p in [*qf1.parameters(), *qf2.parameters()]) and all(p.grad is not None for p in actor.parameters())
    assert all(torch.equal(p, q) for p, q in zip([*qf1.parameters(), *qf2.parameters()], critics_before))
    actor_after = [p.detach().clone() for p in actor.parameters()]
    with torch.no_grad():  # back to the actor the loss was computed with (one SGD step of lr 0.1)
        for p in actor.parameters():
            p.add_(0.1 * p.grad)
    torch.manual_seed(1)  # the same sample again: the loss is alpha * log pi (in the box) - min(Q1, Q2), CleanRL's two calls
    pi, log_pi, _ = actor.get_action(data.observations, data.low, data.high)
    in_box = log_prob_in_box(log_pi, data.low, data.high)
    expected = (0.2 * in_box - torch.min(qf1(data.observations, pi), qf2(data.observations, pi)).flatten()).mean()
    torch.testing.assert_close(loss, expected.detach())
    torch.testing.assert_close(entropy, -in_box.mean().detach())
    assert not all(torch.equal(p, q) for p, q in zip(actor.parameters(), actor_after))  # the step did move the actor


def test_saved_sac_actor_guides_as_an_expert_by_its_mean_action(hopper, tmp_path):
    torch.manual_seed(0)
    actor = Actor(hopper, masking_aware=True)
    torch.save((actor.state_dict(), {}, {}), tmp_path / "sac.cleanrl_model")
    expert = expert_policy(str(tmp_path / "sac.cleanrl_model"), hopper)
    obs = np.random.default_rng(0).normal(size=11)
    with torch.no_grad():
        mean_action = actor.deterministic(torch.as_tensor(obs[None], dtype=torch.float32), -torch.ones(1, 3), torch.ones(1, 3))
    np.testing.assert_allclose(expert(obs), mean_action[0].numpy(), atol=1e-5)


# --- what the loop stores -------------------------------------------------------------------------------

# deterministic, depends on the state, and near +-1 often enough that boxes get clipped
BOOKKEEPING_GUIDE = "import numpy as np\n\ndef policy(obs):\n    return np.tanh(3.0 * np.asarray(obs)[2:5])\n"


def trainer_env():
    return {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}


def test_replay_buffer_holds_each_step_with_the_bounds_the_loop_drew(tmp_path, hopper):
    """A masked run stopped by SIGTERM after its first checkpoint; what it stored up to there does not depend on
    where it stopped (the run is seeded)."""
    (tmp_path / "g.py").write_text(BOOKKEEPING_GUIDE)
    decay, width, total = 1200, 0.3, 100_000  # epsilon falls from 1 to 0 over steps 0..1200
    args = ["--llm-policy", "g.py", "--mask-width", str(width), "--total-timesteps", str(total), "--epsilon-fraction",
            str(decay / total), "--learning-starts", "900", "--batch-size", "16", "--checkpoint-frequency", str(decay),
            "--eval-frequency", str(total), "--run-name", "b"]  # fmt: skip
    process = subprocess.Popen([sys.executable, str(REPO / "camel_sac.py"), *args], cwd=tmp_path, env=trainer_env(),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    checkpoint_path = tmp_path / "runs/b/checkpoint.pt"
    deadline = time.time() + 300
    while not checkpoint_path.exists() and process.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert f"continue with: python {printed_path(REPO / 'camel_sac.py', tmp_path)} --resume runs/b" in stderr
    checkpoint = torch.load(checkpoint_path, weights_only=False)
    assert {"temperature", "a_optimizer", "actor", "qf1", "qf2", "qf1_target", "qf2_target", "guide"} <= set(checkpoint)
    assert checkpoint["temperature"]["log_alpha"].item() != 0.0  # alpha was tuned (it starts at 1)

    data = checkpoint["replay_buffer"]["data"].numpy()
    n = len(data)
    assert n == checkpoint["global_step"] >= decay
    obs, next_obs, actions, rewards, dones, low, high, next_low, next_high = np.split(data, np.cumsum([11, 11, 3, 1, 1, 3, 3, 3]), axis=1)

    def box_around_guide(observations):
        g = np.tanh(3.0 * observations[:, 2:5].astype(np.float64))
        return np.clip(g - width, -1.0, 1.0), np.clip(g + width, -1.0, 1.0)

    masked = ~(np.all(low == -1.0, axis=1) & np.all(high == 1.0, axis=1))  # a box of half-width 0.3 is never [-1, 1]
    next_masked = ~(np.all(next_low == -1.0, axis=1) & np.all(next_high == 1.0, axis=1))
    # masked rows: the box around g(s) for s, and around g(s') for s' (obs are stored in float32, hence atol)
    for (lo, hi), states, rows in [((low, high), obs, masked), ((next_low, next_high), next_obs, next_masked)]:
        expected_low, expected_high = box_around_guide(states[rows])
        np.testing.assert_allclose(lo[rows], expected_low, atol=1e-5)
        np.testing.assert_allclose(hi[rows], expected_high, atol=1e-5)
    clipped = (low == -1.0).any(1) | (high == 1.0).any(1)
    assert np.any(masked & ~clipped) and np.any(masked & clipped)  # both kinds of box occur
    # unmasked rows hold the full bounds; every action (env units) lies inside its stored box, exactly: the random
    # warm-up and the actor's samples from step 900 on alike, masked ones among them
    assert np.all(low[~masked] == -1.0) and np.all(high[~masked] == 1.0)
    assert np.all(actions >= to_env_units(low, hopper.action_space)) and np.all(actions <= to_env_units(high, hopper.action_space))
    assert masked[901:decay].any() and not masked[decay:].any() and not next_masked[decay - 1 :].any()
    # within an episode (where s' is the next row's s), the bounds of s' are the next row's bounds of s
    inside = np.array([i for i in range(n - 1) if np.array_equal(next_obs[i], obs[i + 1])])
    assert len(inside) > n * 0.9  # episodes are tens of steps long
    np.testing.assert_array_equal(next_low[inside], low[inside + 1])
    np.testing.assert_array_equal(next_high[inside], high[inside + 1])
    # the masked fraction over each half of the decay follows epsilon = 1 - t / 1200 (means 3/4, 1/4; sd <= 0.023)
    for half in range(2):
        steps = np.arange(half * decay // 2, (half + 1) * decay // 2)
        assert abs(masked[steps].mean() - np.mean(1 - steps / decay)) < 0.1


# --- the command line -----------------------------------------------------------------------------------


@pytest.mark.parametrize("args, message", [(["--env-id", "Hoper-v4"], "error: --env-id Hoper-v4:"),
                                           (["--target-network-frequency", "0"], "error: --target-network-frequency must be positive")])  # fmt: skip
def test_bad_command_line_gets_one_error_line_and_leaves_no_run_folder(tmp_path, args, message):
    result = run_script(REPO / "camel_sac.py", *args, "--total-timesteps", "100", cwd=tmp_path, env=trainer_env(), timeout=120)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(message)
    assert not (tmp_path / "runs").exists()


def test_help_documents_every_flag_and_keeps_camel_td3s_names_and_cleanrls_sac_defaults(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "300")
    with pytest.raises(SystemExit) as done:
        tyro.cli(camel_sac.Args, args=["--help"])
    assert done.value.code == 0
    help_text = capsys.readouterr().out
    for field in camel_sac.Args.__dataclass_fields__:
        assert "--" + field.replace("_", "-") in help_text, field
    args, td3 = camel_sac.Args(), camel_td3.Args()
    cleanrl_sac = {"policy_lr": 3e-4, "q_lr": 1e-3, "policy_frequency": 2, "target_network_frequency": 1, "tau": 0.005,
                   "alpha": 0.2, "autotune": True, "learning_starts": 5000, "batch_size": 256, "buffer_size": 10**6, "gamma": 0.99}  # fmt: skip
    assert {name: getattr(args, name) for name in cleanrl_sac} == cleanrl_sac
    shared = ["llm_policy", "expert_model", "random_guide", "mask_width", "epsilon_fraction", "masking_aware", "epsilon_masking",
              "guide_timeout", "eval_frequency", "eval_episodes", "checkpoint_frequency", "resume", "run_name", "torch_threads",
              "total_timesteps", "seed", "env_id", "flush_denormal", "save_model", "upload_model"]  # fmt: skip
    assert all(getattr(args, name) == getattr(td3, name) for name in shared)
