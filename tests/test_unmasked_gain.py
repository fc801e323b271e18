"""camel_td3.py's options that let the unmasked agent (the one evaluated) gain while masking is on, each off by
default: --actor-full-bounds-share (the actor also trained under the full bounds on a share of the batch),
--target-full-bounds (the TD target's next action chosen under the full bounds) and --distill-coef (Q-filtered
distillation from the masked to the free action). Losses are checked against numbers worked out by hand on a
linear stub actor and critic; the defaults against today's formulas on the real networks."""

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
import torch
import torch.nn as nn

import camel_td3
from camel_run import check_unmasked_gain_args
from camel_td3 import (
    Actor, CriticPair, ReplayBatch, TwinQNetwork, actor_objective, q_filtered_distillation, td3_target, update_actor,
    update_critics,
)  # fmt: skip

REPO = Path(__file__).resolve().parents[1]


# --- a batch small enough to work out by hand -------------------------------------------------------
class LinearActor(nn.Module):
    """u = theta * s, elementwise (obs and actions both have 2 dims), mapped into [low, high] and into env units
    with action_scale (2, 0.5), as camel_td3.Actor maps its tanh output."""

    def __init__(self):
        super().__init__()
        self.theta = nn.Parameter(torch.ones(2))
        self.register_buffer("action_scale", torch.tensor([2.0, 0.5]))
        self.register_buffer("action_bias", torch.zeros(2))
        self.rows_seen = []

    def forward(self, x, low, high):
        self.rows_seen.append(len(x))
        u = x * self.theta
        return self.to_env_units(low + (u + 1) / 2 * (high - low))

    to_env_units = Actor.to_env_units


class LinearCritic(nn.Module):
    """Q1(s, a) = a . (1, -2) in env units, whatever s; Q2 = Q1 + 1. Records the actions it is asked about."""

    def __init__(self):
        super().__init__()
        self.v = torch.tensor([1.0, -2.0])
        self.actions_seen = []

    def q1(self, x, a):
        self.actions_seen.append(a.detach().clone())
        return (a * self.v).sum(1)

    def forward(self, x, a):
        q = self.q1(x, a)
        return torch.stack([q, q + 1])


FULL_LOW, FULL_HIGH = [-1.0, -1.0], [1.0, 1.0]


def hand_batch():
    """Four rows; rows 0 and 2 masked. Normalised actions under the stored bounds (masked a_m, free a_f = s):
    row 0: s (0.5, 0),   box [0, 1] x [-1, 1]: a_m (0.75, 0),     a_f (0.5, 0);   env a_m (1.5, 0),     Q1 1.5 > a_f's 1.0
    row 1: s (0, 0.5),   full:                  a_m = a_f (0, 0.5);               env (0, 0.25),        Q1 -0.5
    row 2: s (-0.5, 0.5), box [-1, 0] x [0, 1]: a_m (-0.75, 0.75), a_f (-0.5, 0.5); env a_m (-1.5, 0.375), Q1 -2.25 < a_f's -1.5
    row 3: s (1, -1),    full:                  a_m = a_f (1, -1);                env (2, -0.5),        Q1 3"""
    obs = torch.tensor([[0.5, 0.0], [0.0, 0.5], [-0.5, 0.5], [1.0, -1.0]])
    low = torch.tensor([[0.0, -1.0], FULL_LOW, [-1.0, 0.0], FULL_LOW])
    high = torch.tensor([[1.0, 1.0], FULL_HIGH, [0.0, 1.0], FULL_HIGH])
    zeros = torch.zeros(4, 1)
    # s' = s and the same bounds for s', so the target's rows are the rows above
    return ReplayBatch(obs, obs.clone(), torch.zeros(4, 2), zeros, zeros, low, high, low.clone(), high.clone())


def loss_and_grad(**options):
    actor, critic = LinearActor(), LinearCritic()
    loss, distill_loss, distill_fraction = actor_objective(hand_batch(), actor, critic, **options)
    loss.backward()
    return loss.item(), actor.theta.grad.tolist(), distill_loss, distill_fraction, actor.rows_seen


def test_default_actor_loss_is_minus_q1_under_the_stored_bounds():
    loss, grad, distill_loss, distill_fraction, rows = loss_and_grad()
    assert loss == pytest.approx(-(1.5 - 0.5 - 2.25 + 3.0) / 4)  # -0.4375
    # dQ1/dtheta per row: (0.5, 0), (0, -0.5), (-0.5, -0.25), (2, 1); the loss is minus their mean
    assert grad == pytest.approx([-2.0 / 4, -0.25 / 4])
    assert rows == [4] and distill_loss is None and distill_fraction is None


def test_full_bounds_share_adds_the_first_k_rows_under_full_bounds_and_averages_over_b_plus_k():
    # k = round(0.5 * 4) = 2: rows 0 and 1 again under [-1, 1], Q1 1.0 and -0.5; dQ1/dtheta (1, 0) and (0, -0.5)
    loss, grad, _, _, rows = loss_and_grad(full_bounds_share=0.5)
    assert rows == [6]  # one forward pass over B + k rows
    assert loss == pytest.approx(-(1.75 + 1.0 - 0.5) / 6)
    assert grad == pytest.approx([-(2.0 + 1.0) / 6, -(0.25 - 0.5) / 6])


def test_full_bounds_share_one_counts_every_row_twice_once_under_each_box():
    loss, _, _, _, rows = loss_and_grad(full_bounds_share=1.0)
    assert rows == [8]
    assert loss == pytest.approx(-(1.75 + (1.0 - 0.5 - 1.5 + 3.0)) / 8)


@pytest.mark.parametrize("share, extra_rows", [(0.1, 0), (0.25, 1), (0.5, 2), (0.9, 4)])
def test_full_bounds_share_rounds_to_whole_rows(share, extra_rows):
    assert loss_and_grad(full_bounds_share=share)[4] == [4 + extra_rows]


def test_distillation_pulls_the_free_action_toward_the_masked_one_where_q1_prefers_it():
    # only row 0 is masked with Q1(a_m) > Q1(a_f): ||a_f - a_m||^2 = 0.25^2 in normalised units, over 4 rows
    loss, grad, distill_loss, distill_fraction, rows = loss_and_grad(distill_coef=2.0)
    assert rows == [8]  # every row's free action, in the same pass
    assert distill_loss.item() == pytest.approx(0.0625 / 4)
    assert distill_fraction.item() == 0.25
    assert loss == pytest.approx(-0.4375 + 2.0 * 0.0625 / 4)
    # d/dtheta_0 of 2/4 * (0.5 theta_0 - 0.75)^2 at theta = 1 is 2/4 * 2 * (-0.25) * 0.5 = -0.125; a_m gets no pull
    assert grad == pytest.approx([-0.5 - 0.125, -0.0625])


def test_distillation_and_full_bounds_share_add_up():
    loss, grad, _, _, rows = loss_and_grad(full_bounds_share=0.5, distill_coef=2.0)
    assert rows == [8]  # the share's rows are among distillation's free rows, not extra ones
    assert loss == pytest.approx(-(1.75 + 1.0 - 0.5) / 6 + 2.0 * 0.0625 / 4)
    assert grad == pytest.approx([-3.0 / 6 - 0.125, 0.25 / 6])


def test_distillation_filter_is_on_only_for_masked_rows_where_q1_prefers_the_masked_action():
    full, box = [-1.0, -1.0, 1.0, 1.0], [-0.5, -1.0, 1.0, 1.0]  # low then high; box is masked in its first dim only
    rows = [  # (bounds, Q1(s, a_m), Q1(s, a_f)), every row with a_f - a_m = (0.1, 0.2)
        (box, 2.0, 1.0),  # masked, masked action better: on
        (box, 1.0, 2.0),  # masked, free action better: off
        (box, 1.0, 1.0),  # masked, a tie: off
        (full, 2.0, 1.0),  # not masked: off, whatever the critic says
        ([-1.0, -1.0, 1.0, 0.9], 3.0, 0.0),  # masked by its high bound alone: on
    ]
    bounds = torch.tensor([r[0] for r in rows])
    masked_action = torch.zeros(5, 2)
    free_action = torch.tensor([[0.1, 0.2]] * 5) * torch.tensor([2.0, 0.5])  # in env units: scale (2, 0.5)
    loss, fraction = q_filtered_distillation(bounds[:, :2], bounds[:, 2:], masked_action, free_action,
                                             torch.tensor([r[1] for r in rows]), torch.tensor([r[2] for r in rows]),
                                             torch.tensor([2.0, 0.5]))  # fmt: skip
    assert fraction.item() == pytest.approx(2 / 5)
    assert loss.item() == pytest.approx(2 * (0.1**2 + 0.2**2) / 5)  # in normalised units, averaged over every row


# --- the TD target ---------------------------------------------------------------------------------
def target_next_actions(target_full_bounds):
    critic = LinearCritic()
    y = td3_target(hand_batch(), LinearActor(), critic, gamma=0.5, policy_noise=0.0, noise_clip=0.5, target_full_bounds=target_full_bounds)
    return critic.actions_seen[0], y


def test_target_full_bounds_changes_next_actions_only_on_masked_next_rows():
    stored, y_stored = target_next_actions(False)
    full, y_full = target_next_actions(True)
    torch.testing.assert_close(stored, torch.tensor([[1.5, 0.0], [0.0, 0.25], [-1.5, 0.375], [2.0, -0.5]]))
    torch.testing.assert_close(full, torch.tensor([[1.0, 0.0], [0.0, 0.25], [-1.0, 0.25], [2.0, -0.5]]))
    # r = 0, not done, gamma 0.5, min(Q1, Q1 + 1) = Q1
    torch.testing.assert_close(y_stored, 0.5 * torch.tensor([1.5, -0.5, -2.25, 3.0]))
    torch.testing.assert_close(y_full, 0.5 * torch.tensor([1.0, -0.5, -1.5, 3.0]))


def test_target_full_bounds_clamps_the_smoothing_noise_into_the_full_action_space():
    torch.manual_seed(0)
    critic = LinearCritic()
    td3_target(hand_batch(), LinearActor(), critic, gamma=0.5, policy_noise=5.0, noise_clip=5.0, target_full_bounds=True)
    a = critic.actions_seen[0]
    scale = torch.tensor([2.0, 0.5])
    assert torch.all(a >= -scale) and torch.all(a <= scale)
    # in env units row 0's stored box is [0, 2] x [-0.5, 0.5], row 2's [-2, 0] x [0, 0.5]: some noise leaves them
    assert a[0, 0] < 0 or a[2, 0] > 0 or a[2, 1] < 0


# --- the defaults are today's update, on the real networks ----------------------------------------------
@pytest.fixture(scope="module")
def hopper():
    env = gym.make("Hopper-v4")
    yield env
    env.close()


def real_batch(n=64, seed=0):
    """Random rows of Hopper's sizes (11 obs, 3 actions), about half of them masked."""
    g = torch.Generator().manual_seed(seed)
    centre = torch.rand(n, 3, generator=g) * 2 - 1
    masked = (torch.rand(n, 1, generator=g) < 0.5).float()
    low = masked * (centre - 0.3).clamp(-1, 1) + (1 - masked) * -1.0
    high = masked * (centre + 0.3).clamp(-1, 1) + (1 - masked) * 1.0
    obs, next_obs = torch.randn(n, 11, generator=g), torch.randn(n, 11, generator=g)
    return ReplayBatch(obs, next_obs, torch.rand(n, 3, generator=g) * 2 - 1, torch.randn(n, 1, generator=g),
                       (torch.rand(n, 1, generator=g) < 0.2).float(), low, high, low.roll(1, 0), high.roll(1, 0))  # fmt: skip


@pytest.mark.parametrize("critics_class", [CriticPair, TwinQNetwork])
def test_default_actor_update_reproduces_todays_loss_and_step_exactly(hopper, critics_class):
    data = real_batch()
    torch.manual_seed(0)
    actor, qf = Actor(hopper), critics_class(hopper)
    today = Actor(hopper)
    today.load_state_dict(actor.state_dict())
    expected = -qf.q1(data.observations, today(data.observations, data.low, data.high)).mean()  # today's update_actor
    today_optimizer = torch.optim.Adam(today.parameters(), lr=1e-3)
    today_optimizer.zero_grad()
    expected.backward()
    today_optimizer.step()
    loss = update_actor(data, actor, qf, torch.optim.Adam(actor.parameters(), lr=1e-3))
    torch.testing.assert_close(loss, expected.detach(), rtol=0, atol=0)
    for key, value in today.state_dict().items():
        torch.testing.assert_close(actor.state_dict()[key], value, rtol=0, atol=0)


def test_default_td3_target_reproduces_todays_target_exactly(hopper):
    data = real_batch()
    torch.manual_seed(0)
    target_actor, qf_target = Actor(hopper), CriticPair(hopper)
    torch.manual_seed(1)
    y = td3_target(data, target_actor, qf_target, 0.99, 0.2, 0.5)
    torch.manual_seed(1)
    with torch.no_grad():  # today's td3_target, written out
        noise = (torch.randn_like(data.actions) * 0.2).clamp(-0.5, 0.5) * target_actor.action_scale
        a = (target_actor(data.next_observations, data.next_low, data.next_high) + noise).clamp(
            target_actor.to_env_units(data.next_low), target_actor.to_env_units(data.next_high))  # fmt: skip
        expected = data.rewards.flatten() + (1 - data.dones.flatten()) * 0.99 * qf_target(data.next_observations, a).min(0).values
    torch.testing.assert_close(y, expected, rtol=0, atol=0)


def updated_with(critics_class, hopper, **options):
    """Critics and actor after one update of each with the new options (as camel_td3.py calls them)."""
    data = real_batch(seed=3)
    torch.manual_seed(0)
    actor, qf, qf_target, target_actor = Actor(hopper), critics_class(hopper), critics_class(hopper), Actor(hopper)
    qf_target.load_state_dict(qf.state_dict())
    target_actor.load_state_dict(actor.state_dict())
    torch.manual_seed(2)
    update_critics(data, target_actor, qf, qf_target, torch.optim.Adam(qf.parameters()), 0.99, 0.2, 0.5,
                   target_full_bounds=options["target_full_bounds"])  # fmt: skip
    loss = update_actor(data, actor, qf, torch.optim.Adam(actor.parameters()), full_bounds_share=options["full_bounds_share"],
                        distill_coef=options["distill_coef"])  # fmt: skip
    return loss, qf.cleanrl_state_dicts(), actor.state_dict()


def test_fused_critics_compute_the_same_update_with_every_option_on(hopper):
    options = dict(target_full_bounds=True, full_bounds_share=0.5, distill_coef=1.0)
    (loss_pair, critics_pair, actor_pair), (loss_twin, critics_twin, actor_twin) = (
        updated_with(CriticPair, hopper, **options), updated_with(TwinQNetwork, hopper, **options))  # fmt: skip
    torch.testing.assert_close(loss_pair, loss_twin, rtol=1e-5, atol=1e-5)
    for sd_pair, sd_twin in zip(critics_pair, critics_twin):
        for key in sd_pair:
            torch.testing.assert_close(sd_pair[key], sd_twin[key], rtol=1e-5, atol=1e-5)
    for key in actor_pair:
        torch.testing.assert_close(actor_pair[key], actor_twin[key], rtol=1e-5, atol=1e-5)
    default = updated_with(CriticPair, hopper, target_full_bounds=False, full_bounds_share=0.0, distill_coef=0.0)
    assert not torch.allclose(default[2]["fc1.weight"], actor_pair["fc1.weight"], atol=1e-7)  # the options change the step


# --- the command line --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "flags, message",
    [
        (dict(random_guide=True, actor_full_bounds_share=1.5), "--actor-full-bounds-share must be in [0, 1], got 1.5"),
        (dict(random_guide=True, actor_full_bounds_share=-0.1), "--actor-full-bounds-share must be in [0, 1], got -0.1"),
        (dict(random_guide=True, distill_coef=-1.0), "--distill-coef cannot be negative, got -1.0"),
        (dict(target_full_bounds=True), "--target-full-bounds acts only where masking was on and needs a guide"),
        (dict(actor_full_bounds_share=0.5, distill_coef=1.0),
         "--actor-full-bounds-share and --distill-coef act only where masking was on and need a guide"),
    ],
)  # fmt: skip
def test_out_of_range_or_guideless_options_are_refused(flags, message):
    with pytest.raises(SystemExit) as refused:
        check_unmasked_gain_args(camel_td3.Args(**flags))
    assert str(refused.value) == f"error: {message}"


def test_defaults_and_options_with_a_guide_pass_the_checks():
    check_unmasked_gain_args(camel_td3.Args())
    check_unmasked_gain_args(camel_td3.Args(llm_policy="g.py", actor_full_bounds_share=1.0, target_full_bounds=True, distill_coef=0.5))


def run_trainer(cwd, *args):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, str(REPO / "camel_td3.py"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def test_bad_option_on_the_command_line_is_one_error_line_and_leaves_no_run_folder(tmp_path):
    result = run_trainer(tmp_path, "--random-guide", "--distill-coef", "-0.5")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == ["error: --distill-coef cannot be negative, got -0.5"]
    assert not (tmp_path / "runs").exists()


def test_short_run_with_every_option_logs_the_distillation(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    result = run_trainer(tmp_path, "--random-guide", "--actor-full-bounds-share", "0.5", "--target-full-bounds", "--distill-coef", "1",
                         "--run-name", "r", "--total-timesteps", "400", "--learning-starts", "200", "--batch-size", "32",
                         "--eval-frequency", "400", "--eval-episodes", "1")  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = EventAccumulator(str(tmp_path / "runs/r"))
    events.Reload()
    fraction = [e.value for e in events.Scalars("charts/distill_fraction")]
    assert [e.step for e in events.Scalars("losses/distill_loss")] == [300]
    assert len(fraction) == 1 and 0 < fraction[0] < 1  # epsilon fell to 0 by step 200: about a third of the rows are masked
    assert json.loads((tmp_path / "runs/r/finished.json").read_text())["total_timesteps"] == 400
