"""camel_td3.py: the CAMEL parts of the algorithm (bounds, masking-aware actor, epsilon masking, the
target inside stored bounds), the fast path's equivalence to the plain one, what the loop stores, and the
command line (guide sources, ablations, model files, checkpoints, and refusing bad input before a run
folder exists)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import camel_td3
from camel_guide import Guide, to_env_units
from camel_run import CompiledOrEager, updates_happen
from camel_td3 import (
    Actor, CriticPair, QNetwork, ReplayBuffer, TwinQNetwork, actor_grads, draw_bounds, epsilon_at, explore, mask_bounds,
    masking_probability, td3_target, twin_critic_grads, update_actor, update_critics, update_targets,
)  # fmt: skip

REPO = Path(__file__).resolve().parents[1]
FAST = ["--total-timesteps", "600", "--learning-starts", "200", "--batch-size", "32", "--eval-frequency", "300",
        "--eval-episodes", "1", "--torch-threads", "1"]  # fmt: skip
ZERO_GUIDE = "import numpy as np\n\ndef policy(obs):\n    return np.zeros(3)\n"


@pytest.fixture(scope="module")
def hopper():
    env = gym.make("Hopper-v4")
    yield env
    env.close()


def run_trainer(cwd, *args, timeout=180):
    """Run camel_td3.py as a user would, from `cwd` (where its runs/ folder goes)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, str(REPO / "camel_td3.py"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def scalars(run_dir):
    events = EventAccumulator(str(run_dir))
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}, events


# --- the CAMEL action space: bounds, mapping, schedule ---------------------------------------------


def test_mask_bounds_are_the_guide_action_plus_minus_width_clipped_to_the_action_space():
    low, high = mask_bounds(np.array([0.9, -0.95, 0.0]), 0.3)
    np.testing.assert_allclose(low, [0.6, -1.0, -0.3])
    np.testing.assert_allclose(high, [1.0, -0.65, 0.3])


def test_masking_probability_falls_linearly_from_one_to_zero_then_stays_zero():
    assert [masking_probability(t, 1000, 0.5) for t in [0, 100, 250, 500, 501, 999]] == [1.0, 0.8, 0.5, 0.0, 0.0, 0.0]
    assert masking_probability(500, 1000, 1.0) == 0.5


def test_epsilon_of_a_step_is_the_schedule_or_one_without_epsilon_masking_or_zero_without_a_guide():
    args = camel_td3.Args(total_timesteps=1000, epsilon_fraction=0.5)
    guide = Guide(lambda obs: np.zeros(3), action_dim=3, name="g")
    assert [epsilon_at(t, args, guide) for t in [0, 250, 600]] == [1.0, 0.5, 0.0]
    assert epsilon_at(600, camel_td3.Args(epsilon_masking=False), guide) == 1.0
    assert epsilon_at(0, args, None) == 0.0


def test_drawn_bounds_are_the_guides_box_when_masked_and_the_full_space_otherwise():
    guide = Guide(lambda obs: np.array([0.9, -0.5, 0.0]), action_dim=3, name="g")
    low, high, masked = draw_bounds(guide, np.zeros(11), 1.0, 0.3, 3, np.random.default_rng(0))
    assert masked
    np.testing.assert_allclose(low, [0.6, -0.8, -0.3])
    np.testing.assert_allclose(high, [1.0, -0.2, 0.3])
    low, high, masked = draw_bounds(guide, np.zeros(11), 0.0, 0.3, 3, np.random.default_rng(0))
    assert not masked and low.tolist() == [-1.0] * 3 and high.tolist() == [1.0] * 3
    assert guide.calls == 1  # epsilon 0: the guide is not asked


def test_a_failed_guide_call_leaves_the_step_unmasked_and_is_counted(capsys):
    guide = Guide(lambda obs: np.full(3, np.nan), action_dim=3, name="nan.py")
    low, high, masked = draw_bounds(guide, np.zeros(11), 1.0, 0.3, 3, np.random.default_rng(0))
    assert not masked and low.tolist() == [-1.0] * 3 and high.tolist() == [1.0] * 3
    assert (guide.calls, guide.failures) == (1, 1)
    assert "warning: guide nan.py failed" in capsys.readouterr().err


def test_masked_fraction_of_draws_follows_epsilon():
    guide, rng = Guide(lambda obs: np.zeros(3), action_dim=3, name="g"), np.random.default_rng(0)
    for epsilon in [0.0, 0.25, 0.75, 1.0]:
        fraction = np.mean([draw_bounds(guide, np.zeros(11), epsilon, 0.3, 3, rng)[2] for _ in range(4000)])
        assert abs(fraction - epsilon) < 0.05  # the binomial's sd is at most 0.008 here


def test_actor_maps_its_tanh_output_into_the_bounds(hopper):
    actor = Actor(hopper, masking_aware=True)
    with torch.no_grad():  # a constant tanh output u = 0.5 puts the action 3/4 of the way from low to high
        for layer in [actor.fc1, actor.fc2, actor.fc_mu]:
            layer.weight.zero_()
            layer.bias.zero_()
        actor.fc_mu.bias.fill_(float(np.arctanh(0.5)))
    low, high = torch.tensor([[-1.0, 0.2, -0.4]]), torch.tensor([[-0.6, 0.8, 0.4]])
    action = actor(torch.zeros(1, 11), low, high)
    torch.testing.assert_close(action, torch.tensor([[-0.7, 0.65, 0.2]]))


def test_masked_actions_stay_inside_random_bounds(hopper):
    torch.manual_seed(0)
    actor = Actor(hopper, masking_aware=True)
    centre = torch.rand(512, 3) * 2 - 1
    low, high = (centre - 0.3).clamp(-1, 1), (centre + 0.3).clamp(-1, 1)
    action = actor(torch.randn(512, 11) * 5, low, high)
    assert torch.all(action >= low) and torch.all(action <= high)


def test_exploration_noise_stays_inside_the_bounds(hopper):
    torch.manual_seed(0)
    actor = Actor(hopper, masking_aware=True)
    low, high = torch.full((256, 3), 0.2), torch.full((256, 3), 0.4)
    actions = explore(actor, torch.randn(256, 11), low, high, exploration_noise=10.0)
    assert torch.all(actions >= 0.2) and torch.all(actions <= 0.4)
    assert len(torch.unique(actions)) > 3  # noisy, not collapsed onto one point


def test_actor_without_mask_is_cleanrls_tanh_actor(hopper):
    actor = Actor(hopper, masking_aware=False)
    assert actor.fc1.in_features == 11
    obs = torch.randn(4, 11)
    expected = torch.tanh(actor.fc_mu(torch.relu(actor.fc2(torch.relu(actor.fc1(obs))))))
    torch.testing.assert_close(actor(obs, -torch.ones(4, 3), torch.ones(4, 3)), expected)


def test_masking_aware_actor_sees_the_bounds(hopper):
    actor = Actor(hopper, masking_aware=True)
    assert actor.fc1.in_features == 11 + 2 * 3
    obs = torch.randn(1, 11)
    wide = actor(obs, -torch.ones(1, 3), torch.ones(1, 3))
    narrow = actor(obs, torch.zeros(1, 3), torch.full((1, 3), 0.5))
    assert not torch.allclose((wide + 1) / 2, narrow * 2)  # not just a rescaling: the bounds are an input


# --- replay buffer and the TD3 update ------------------------------------------------------------


def test_replay_buffer_keeps_the_bounds_of_s_and_of_next_s():
    rb = ReplayBuffer(3, obs_dim=2, action_dim=1, device="cpu")
    for i in range(5):  # the first two rows are overwritten by the ring
        rb.add([i, -i], [i + 1, -i - 1], [0.1 * i], float(i), i % 2, [-0.1 * i], [0.2 * i], [-0.3 * i], [0.4 * i])
    assert rb.size == 3 and rb.pos == 2
    torch.manual_seed(0)
    batch = rb.sample(64)
    for row in range(64):
        i = batch.rewards[row, 0].item()
        assert i in (2.0, 3.0, 4.0)
        expected = [[i, -i], [i + 1, -i - 1], [0.1 * i], [i], [i % 2], [-0.1 * i], [0.2 * i], [-0.3 * i], [0.4 * i]]
        for field, value in zip(batch, expected):
            torch.testing.assert_close(field[row], torch.tensor(value, dtype=torch.float32))


def test_replay_buffer_state_round_trips():
    rb = ReplayBuffer(10, 2, 1, "cpu")
    for i in range(4):
        rb.add([i, i], [i, i], [0.0], 1.0, 0, [-1.0], [1.0], [-1.0], [1.0])
    restored = ReplayBuffer(10, 2, 1, "cpu")
    restored.load_state_dict(rb.state_dict())
    assert (restored.pos, restored.size) == (4, 4)
    torch.testing.assert_close(restored.data, rb.data)


def random_batch(n=64, seed=0, next_low=None, next_high=None):
    rng = np.random.default_rng(seed)
    rb = ReplayBuffer(n, 11, 3, "cpu")
    for _ in range(n):
        low, high = mask_bounds(rng.uniform(-1, 1, 3), 0.3)
        nlow, nhigh = mask_bounds(rng.uniform(-1, 1, 3), 0.3)
        if next_low is not None:
            nlow, nhigh = next_low, next_high
        rb.add(rng.normal(size=11), rng.normal(size=11), rng.uniform(low, high), rng.normal(), float(rng.random() < 0.2),
               low, high, nlow, nhigh)  # fmt: skip
    return rb.sample(n)


def test_td3_target_acts_inside_the_bounds_stored_for_next_s(hopper):
    torch.manual_seed(0)
    target_actor, qf_target = Actor(hopper), CriticPair(hopper)
    # a box of width zero leaves the target actor and its smoothing noise no choice: a' = 0.25
    point = np.array([0.25, 0.25, 0.25])
    data = random_batch(next_low=point, next_high=point)
    y = td3_target(data, target_actor, qf_target, gamma=0.99, policy_noise=0.2, noise_clip=0.5)
    next_actions = torch.full((64, 3), 0.25)
    with torch.no_grad():
        q = torch.min(qf_target.qf1(data.next_observations, next_actions), qf_target.qf2(data.next_observations, next_actions))
    expected = data.rewards.flatten() + (1 - data.dones.flatten()) * 0.99 * q.flatten()
    torch.testing.assert_close(y, expected)


def test_td3_target_noise_is_clamped_into_next_bounds(hopper, monkeypatch):
    torch.manual_seed(0)
    target_actor, qf_target = Actor(hopper), CriticPair(hopper)
    data = random_batch()
    seen = []
    original = CriticPair.forward
    monkeypatch.setattr(CriticPair, "forward", lambda self, x, a: seen.append(a) or original(self, x, a))
    td3_target(data, target_actor, qf_target, gamma=0.99, policy_noise=5.0, noise_clip=5.0)  # huge noise
    assert torch.all(seen[0] >= data.next_low) and torch.all(seen[0] <= data.next_high)


def one_update(critics_class, hopper, steps=3, compiled=False, fast=True, manual_grads=False):
    """A few TD3 updates (critics, actor, targets) on a fixed batch. fast=False is CleanRL's plain path: Adam
    without fusing, and targets updated parameter by parameter."""
    torch.manual_seed(0)
    actor, qf, qf_target, target_actor = Actor(hopper), critics_class(hopper), critics_class(hopper), Actor(hopper)
    qf_target.load_state_dict(qf.state_dict())
    target_actor.load_state_dict(actor.state_dict())
    fused = fast and not compiled  # as camel_td3.py: torch.compile fuses the optimiser step itself
    q_optimizer = torch.optim.Adam(qf.parameters(), lr=3e-4, fused=fused)
    actor_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4, fused=fused)
    critics_step, actor_step = (torch.compile(update_critics), torch.compile(update_actor)) if compiled else (update_critics, update_actor)
    data = random_batch(n=256, seed=1)
    torch.manual_seed(2)
    for _ in range(steps):
        values, losses = critics_step(data, target_actor, qf, qf_target, q_optimizer, 0.99, 0.2, 0.5, manual_grads=manual_grads)
        actor_loss = actor_step(data, actor, qf, actor_optimizer, manual_grads=manual_grads)
        if fast:
            update_targets(list(target_actor.parameters()) + list(qf_target.parameters()),
                           list(actor.parameters()) + list(qf.parameters()), 0.005)  # fmt: skip
        else:
            for online, target in ((actor, target_actor), (qf, qf_target)):
                for param, target_param in zip(online.parameters(), target.parameters()):
                    target_param.data.copy_(0.005 * param.data + (1 - 0.005) * target_param.data)
    return (values, losses, actor_loss, qf.cleanrl_state_dicts(), actor.state_dict(),
            qf_target.cleanrl_state_dicts(), target_actor.state_dict())  # fmt: skip


def assert_same_update(plain, fused):
    for a, b in zip(plain[:3], fused[:3]):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    for critics_plain, critics_fused in ((plain[3], fused[3]), (plain[5], fused[5])):
        for sd_plain, sd_fused in zip(critics_plain, critics_fused):
            for key in sd_plain:
                torch.testing.assert_close(sd_plain[key], sd_fused[key], rtol=1e-5, atol=1e-5)  # Adam steps are ~3e-4
    for actor_plain, actor_fused in ((plain[4], fused[4]), (plain[6], fused[6])):
        for key in actor_plain:
            torch.testing.assert_close(actor_plain[key], actor_fused[key], rtol=1e-5, atol=1e-5)


def test_fused_critics_compute_the_same_update_as_two_qnetworks(hopper):
    assert_same_update(one_update(CriticPair, hopper), one_update(TwinQNetwork, hopper))


def test_fast_path_computes_the_same_update_as_cleanrls_plain_path(hopper):
    # fused critics + fused Adam + one foreach target update, against two critics, plain Adam, a loop per parameter
    plain, fast = one_update(CriticPair, hopper, fast=False), one_update(TwinQNetwork, hopper)
    assert_same_update(plain, fast)
    torch.manual_seed(0)
    initial_actor = Actor(hopper)  # the target actor's starting weights, as in one_update
    assert not torch.allclose(fast[6]["fc1.weight"], initial_actor.fc1.weight, atol=1e-7)  # the targets did move


def test_manual_gradients_compute_the_same_update_as_autograd(hopper):
    # gradients written out (fused critics), against autograd on CleanRL's plain path: values, losses, weights
    plain, manual = one_update(CriticPair, hopper, fast=False), one_update(TwinQNetwork, hopper, manual_grads=True)
    assert_same_update(plain, manual)


@pytest.mark.parametrize("masking_aware", [True, False])
def test_manual_gradients_equal_autograds_on_the_first_step(hopper, masking_aware):
    # one step, so no Adam in between: each parameter's gradient itself, critics and actor (masked and unmasked rows)
    torch.manual_seed(0)
    actor, qf = Actor(hopper, masking_aware), TwinQNetwork(hopper)
    data, y = random_batch(n=128, seed=3), torch.randn(128)
    values, losses = twin_critic_grads(qf, data.observations, data.actions, y)
    manual = [p.grad.clone() for p in qf.parameters()]
    qf.zero_grad()
    ((qf(data.observations, data.actions) - y) ** 2).mean(1).sum().backward()
    for grad, param in zip(manual, qf.parameters()):
        torch.testing.assert_close(grad, param.grad, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(losses, ((qf(data.observations, data.actions) - y) ** 2).mean(1).detach())
    loss = actor_grads(actor, qf, data.observations, data.low, data.high)
    manual = [p.grad.clone() for p in actor.parameters()]
    actor.zero_grad()
    expected = -qf.q1(data.observations, actor(data.observations, data.low, data.high)).mean()  # update_actor's autograd path
    expected.backward()
    torch.testing.assert_close(loss, expected.detach())
    for grad, param in zip(manual, actor.parameters()):
        torch.testing.assert_close(grad, param.grad, rtol=1e-5, atol=1e-7)


def test_compiled_update_computes_the_same_update_as_eager(hopper, monkeypatch):
    # compiled code draws its own random numbers unless told to use eager's generator, as here
    monkeypatch.setattr(torch._inductor.config, "fallback_random", True)
    assert_same_update(one_update(TwinQNetwork, hopper), one_update(TwinQNetwork, hopper, compiled=True))


def test_compile_falls_back_to_eager_with_a_message(capsys):
    def broken(x):
        raise torch._dynamo.exc.Unsupported("no compiler here")

    def eager(x):
        return x + 1

    wrapped = CompiledOrEager(eager)
    wrapped.compiled = broken
    assert wrapped(torch.ones(1)).item() == 2.0 and wrapped.compiled is None
    assert "torch.compile failed for eager" in capsys.readouterr().err


def test_critic_update_matches_cleanrls_two_mse_losses(hopper):
    torch.manual_seed(0)
    qf = CriticPair(hopper)
    data = random_batch()
    y = torch.randn(64)
    values = qf(data.observations, data.actions)
    expected = [torch.nn.functional.mse_loss(qf.qf1(data.observations, data.actions).view(-1), y),
                torch.nn.functional.mse_loss(qf.qf2(data.observations, data.actions).view(-1), y)]  # fmt: skip
    torch.testing.assert_close(((values - y) ** 2).mean(1), torch.stack(expected))


def test_actor_update_leaves_critic_gradients_untouched(hopper):
    for critics_class in [CriticPair, TwinQNetwork]:
        actor, qf = Actor(hopper), critics_class(hopper)
        update_actor(random_batch(), actor, qf, torch.optim.Adam(actor.parameters()))
        assert all(p.grad is None for p in qf.parameters())
        assert all(p.grad is not None for p in actor.parameters())


def test_twin_q_network_exports_cleanrls_qnetwork_layout(hopper):
    twin = TwinQNetwork(hopper)
    for state in twin.cleanrl_state_dicts():
        plain = QNetwork(hopper)
        plain.load_state_dict(state)  # same keys and shapes
    qf1 = QNetwork(hopper)
    qf1.load_state_dict(twin.cleanrl_state_dicts()[0])
    obs, act = torch.randn(5, 11), torch.rand(5, 3)
    torch.testing.assert_close(qf1(obs, act).view(-1), twin(obs, act)[0])


# --- what the loop stores ---------------------------------------------------------------------------

# deterministic, depends on the state, and near +-1 often enough that boxes get clipped
BOOKKEEPING_GUIDE = "import numpy as np\n\ndef policy(obs):\n    return np.tanh(3.0 * np.asarray(obs)[2:5])\n"


def stop_after_first_checkpoint(workdir, args, run):
    """Start a run, wait for its first periodic checkpoint, then send SIGTERM: the run saves a checkpoint at the
    step it is on and exits. Where it stops varies; what it stored up to there does not (the run is seeded)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    process = subprocess.Popen([sys.executable, str(REPO / "camel_td3.py"), *args, "--run-name", run], cwd=workdir,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    checkpoint = workdir / "runs" / run / "checkpoint.pt"
    deadline = time.time() + 300
    while not checkpoint.exists() and process.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    return torch.load(checkpoint, weights_only=False)


def test_replay_buffer_holds_each_step_with_the_bounds_the_loop_drew(workdir, hopper):
    (workdir / "g.py").write_text(BOOKKEEPING_GUIDE)
    decay, width, total = 3000, 0.3, 100_000  # epsilon falls from 1 to 0 over steps 0..3000
    checkpoint = stop_after_first_checkpoint(workdir, [
        "--llm-policy", "g.py", "--mask-width", str(width), "--total-timesteps", str(total), "--epsilon-fraction",
        str(decay / total), "--learning-starts", "2500", "--batch-size", "32", "--checkpoint-frequency", str(decay),
        "--eval-frequency", str(total)], "b")  # fmt: skip
    data = checkpoint["replay_buffer"]["data"].numpy()
    n = len(data)
    assert n == checkpoint["global_step"] >= decay
    obs, next_obs, actions, rewards, dones, low, high, next_low, next_high = np.split(data, np.cumsum([11, 11, 3, 1, 1, 3, 3, 3]), axis=1)

    def box_around_guide(observations):
        g = np.tanh(3.0 * observations[:, 2:5].astype(np.float64))
        return np.clip(g - width, -1.0, 1.0), np.clip(g + width, -1.0, 1.0)

    def is_full(lo, hi):  # a box of half-width 0.3 is never the whole space [-1, 1]
        return np.all(lo == -1.0, axis=1) & np.all(hi == 1.0, axis=1)

    masked, next_masked = ~is_full(low, high), ~is_full(next_low, next_high)
    # masked rows: the box around g(s) for s, and around g(s') for s' (obs are stored in float32, hence atol)
    for (lo, hi), states, rows in [((low, high), obs, masked), ((next_low, next_high), next_obs, next_masked)]:
        expected_low, expected_high = box_around_guide(states[rows])
        np.testing.assert_allclose(lo[rows], expected_low, atol=1e-5)
        np.testing.assert_allclose(hi[rows], expected_high, atol=1e-5)
    clipped = (low == -1.0).any(1) | (high == 1.0).any(1)
    assert np.any(masked & ~clipped) and np.any(masked & clipped)  # both kinds of box occur

    # every action (in the env's units) lies inside its stored box (normalised), exactly: the random warm-up and
    # the actor's exploration from step 2500 on alike
    assert np.all(actions >= to_env_units(low, hopper.action_space)) and np.all(actions <= to_env_units(high, hopper.action_space))
    assert masked[2501:].any()

    # within an episode, each row's s' and its bounds are the next row's s and bounds
    episode_ends = {step for step, _ in scalars(workdir / "runs/b")[0]["charts/episodic_length"]}
    assert set(np.flatnonzero(dones[:, 0])) <= episode_ends
    inside = np.array([i for i in range(n - 1) if i not in episode_ends])
    for stored_next, stored in [(next_obs, obs), (next_low, low), (next_high, high)]:
        np.testing.assert_array_equal(stored_next[inside], stored[inside + 1])

    # the masked fraction over each third of the decay follows epsilon = 1 - t / 3000 (means 5/6, 1/2, 1/6);
    # over 1000 draws the binomial's sd is at most 0.016, so 0.1 is over six of them; none is masked after
    for third in range(3):
        steps = np.arange(third * decay // 3, (third + 1) * decay // 3)
        assert abs(masked[steps].mean() - np.mean(1 - steps / decay)) < 0.1
    assert not masked[decay:].any() and not next_masked[decay - 1 :].any()

    # the guide was called once per masked draw: for every masked s' and every masked first state of an episode
    episode_starts = [0] + [end + 1 for end in sorted(episode_ends) if end + 1 < n]
    assert checkpoint["guide"]["calls"] == next_masked.sum() + masked[episode_starts].sum()
    assert checkpoint["guide"]["failures"] == 0


# --- the command line ---------------------------------------------------------------------------


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "guide.py").write_text(ZERO_GUIDE)
    return tmp_path


def test_short_camel_run_writes_cleanrl_and_camel_scalars(workdir):
    result = run_trainer(workdir, "--llm-policy", "guide.py", "--run-name", "r", *FAST)
    assert result.returncode == 0, result.stderr
    values, events = scalars(workdir / "runs/r")
    for tag in ["charts/episodic_return", "charts/episodic_length", "charts/SPS", "losses/qf1_loss", "losses/qf2_loss",
                "losses/qf1_values", "losses/actor_loss", "charts/epsilon", "charts/masked_fraction",
                "charts/guide_failures", "eval/episodic_return", "eval/episodic_length"]:  # fmt: skip
        assert tag in values, tag
    assert [step for step, _ in values["eval/episodic_return"]] == [300, 600]
    epsilon = dict(values["charts/epsilon"])
    assert epsilon[0] == 1.0 and epsilon[100] == pytest.approx(1 - 100 / 300) and epsilon[500] == 0.0
    assert dict(values["charts/masked_fraction"])[500] == 0.0
    assert "hyperparameters" in events.Tags()["tensors"] or "hyperparameters/text_summary" in events.Tags()["tensors"]
    summary = json.loads((workdir / "runs/r/finished.json").read_text())
    assert summary["guide_failures"] == 0 and summary["total_timesteps"] == 600
    assert "step 600/600" in result.stdout  # plain progress lines when not in a terminal
    assert not (workdir / "runs/r/checkpoint.pt").exists()


def test_actor_loss_is_logged_from_the_first_actor_update_whatever_the_policy_frequency(workdir):
    # step 100 updates the critics, and the actor only at step 102, the first multiple of 3 after learning starts
    result = run_trainer(workdir, "--run-name", "r", *FAST, "--policy-frequency", "3", "--learning-starts", "99",
                         "--total-timesteps", "400")  # fmt: skip
    assert result.returncode == 0, result.stderr
    values, _ = scalars(workdir / "runs/r")
    assert [step for step, _ in values["losses/qf1_loss"]] == [100, 200, 300]
    assert [step for step, _ in values["losses/actor_loss"]] == [200, 300]


def test_without_epsilon_masking_every_step_is_masked(workdir):
    result = run_trainer(workdir, "--llm-policy", "guide.py", "--no-epsilon-masking", "--run-name", "r", *FAST)
    assert result.returncode == 0, result.stderr
    values, _ = scalars(workdir / "runs/r")
    assert {v for _, v in values["charts/epsilon"]} == {1.0}
    assert {v for _, v in values["charts/masked_fraction"]} == {1.0}


def test_saved_model_is_cleanrl_format_and_guides_another_run_as_expert(workdir):
    result = run_trainer(workdir, "--no-masking-aware", "--random-guide", "--save-model", "--exp-name", "e",
                         "--run-name", "first", *FAST)  # fmt: skip
    assert result.returncode == 0, result.stderr
    actor_state, qf1_state, qf2_state = torch.load(workdir / "runs/first/e.cleanrl_model", weights_only=True)
    assert actor_state["fc1.weight"].shape == (256, 11)  # --no-masking-aware: the actor sees obs only
    assert set(qf1_state) == set(qf2_state) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"}
    assert {"action_scale", "action_bias", "fc_mu.weight"} <= set(actor_state)

    result = run_trainer(workdir, "--expert-model", "runs/first/e.cleanrl_model", "--save-model", "--exp-name", "x",
                         "--run-name", "second", *FAST)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert torch.load(workdir / "runs/second/x.cleanrl_model", weights_only=True)[0]["fc1.weight"].shape == (256, 17)
    # a masking-aware actor guides too (it is run with the whole action space as its bounds)
    result = run_trainer(workdir, "--expert-model", "runs/second/x.cleanrl_model", "--run-name", "third", *FAST)
    assert result.returncode == 0, result.stderr


def test_baseline_run_uses_cleanrls_actor_and_logs_no_masking(workdir):
    result = run_trainer(workdir, "--save-model", "--exp-name", "b", "--run-name", "r", "--no-fused-critics", *FAST)
    assert result.returncode == 0, result.stderr
    assert torch.load(workdir / "runs/r/b.cleanrl_model", weights_only=True)[0]["fc1.weight"].shape == (256, 11)
    values, _ = scalars(workdir / "runs/r")
    assert {v for _, v in values["charts/masked_fraction"]} == {0.0}


def test_guide_failing_mid_run_leaves_steps_unmasked_and_is_counted(workdir):
    # passes the trial (64 calls in a child process), then fails from its 300th call in the run on
    (workdir / "flaky.py").write_text(
        "import numpy as np\ncalls = [0]\n\ndef policy(obs):\n    calls[0] += 1\n"
        "    if calls[0] > 300:\n        return np.full(3, np.nan)\n    return np.zeros(3)\n"
    )
    result = run_trainer(workdir, "--llm-policy", "flaky.py", "--run-name", "r", "--no-epsilon-masking", *FAST)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("warning: guide flaky.py failed (ValueError: returned NaN or inf)") == 1
    summary = json.loads((workdir / "runs/r/finished.json").read_text())
    assert summary["guide_failures"] > 100
    values, _ = scalars(workdir / "runs/r")
    assert dict(values["charts/guide_failures"])[500] > 0


def read_model(path):
    return torch.load(path, weights_only=True)


def test_killed_run_resumes_exactly_where_it_stopped(workdir):
    args = ["--llm-policy", "guide.py", "--save-model", "--exp-name", "k", "--total-timesteps", "3000",
            "--learning-starts", "300", "--batch-size", "32", "--eval-frequency", "500", "--eval-episodes", "1",
            "--checkpoint-frequency", "400", "--torch-threads", "1"]  # fmt: skip
    assert run_trainer(workdir, *args, "--run-name", "whole").returncode == 0

    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    process = subprocess.Popen([sys.executable, str(REPO / "camel_td3.py"), *args, "--run-name", "killed"], cwd=workdir,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    checkpoint = workdir / "runs/killed/checkpoint.pt"
    deadline = time.time() + 120
    while not checkpoint.exists() and process.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)  # no chance to save anything more
    process.wait()
    assert checkpoint.exists() and not (workdir / "runs/killed/finished.json").exists()
    stopped_at = torch.load(checkpoint, weights_only=False)["global_step"]
    assert 400 <= stopped_at < 3000

    result = run_trainer(workdir, "--resume", "runs/killed")
    assert result.returncode == 0, result.stderr
    assert f"resuming killed at step {stopped_at}" in result.stderr
    for whole, resumed in zip(read_model(workdir / "runs/whole/k.cleanrl_model"), read_model(workdir / "runs/killed/k.cleanrl_model")):
        for key in whole:
            torch.testing.assert_close(whole[key], resumed[key], rtol=0, atol=0)
    whole_curve = scalars(workdir / "runs/whole")[0]["eval/episodic_return"]
    resumed_curve = scalars(workdir / "runs/killed")[0]["eval/episodic_return"]
    assert resumed_curve == whole_curve  # one point per evaluation, none lost or doubled by the restart
    whole_summary, resumed_summary = (json.loads((workdir / f"runs/{run}/finished.json").read_text()) for run in ["whole", "killed"])
    assert resumed_summary["guide_calls"] == whole_summary["guide_calls"] > 0  # the guide's calls before the kill count too


def start_and_terminate(workdir, args, seconds):
    """Start camel_td3.py, let it run for `seconds` after its run folder appears, then send SIGTERM."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    process = subprocess.Popen([sys.executable, str(REPO / "camel_td3.py"), *args], cwd=workdir, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout.readline().startswith("run t: Hopper-v4")  # printed once training is about to start
    time.sleep(seconds)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    return process.returncode, stderr


def test_sigterm_saves_a_checkpoint_and_resume_continues_the_step_counter(workdir):
    args = ["--llm-policy", "guide.py", "--run-name", "t", "--total-timesteps", "100000", "--learning-starts", "100000",
            "--checkpoint-frequency", "0", "--eval-frequency", "100000"]  # fmt: skip
    returncode, stderr = start_and_terminate(workdir, args, seconds=3)
    assert returncode == 130
    assert "continue with: python camel_td3.py --resume runs/t" in stderr
    first = torch.load(workdir / "runs/t/checkpoint.pt", weights_only=False)
    assert 0 < first["global_step"] < 100000 and first["replay_buffer"]["size"] == first["global_step"]

    returncode, stderr = start_and_terminate(workdir, ["--resume", "runs/t", "--total-timesteps", "5"], seconds=3)
    assert returncode == 130
    assert "ignoring --total-timesteps" in stderr  # a resumed run keeps its own settings
    assert f"resuming t at step {first['global_step']}" in stderr
    second = torch.load(workdir / "runs/t/checkpoint.pt", weights_only=False)
    assert first["global_step"] < second["global_step"] == second["replay_buffer"]["size"]


@pytest.mark.parametrize(
    "guide_source, message",
    [
        (None, "no such guide policy file"),
        ("def policy(obs)\n    return obs\n", "syntax error at line 1"),
        ("import numpy as np\n", "defines no top-level function 'policy(obs)'"),
        ("import os\ndef policy(obs):\n    return [0, 0, 0]\n", "imports 'os'"),
        ("import numpy as np\ndef policy(obs):\n    return np.zeros(5)\n", r"returned shape (5,), expected (3,)"),
        ("import numpy as np\ndef policy(obs):\n    return np.full(3, np.inf)\n", "returned NaN or inf"),
        ("def policy(obs):\n    raise RuntimeError('no idea')\n", "raised RuntimeError: no idea"),
        ("def policy(obs):\n    while True:\n        pass\n", "took over 0.3 s on sample observation 0"),
    ],
    ids=["missing", "syntax", "no-policy", "import", "shape", "inf", "raises", "hangs"],
)
def test_broken_guide_is_refused_with_one_line(workdir, guide_source, message):
    if guide_source is not None:
        (workdir / "bad.py").write_text(guide_source)
    result = run_trainer(workdir, "--llm-policy", "bad.py", "--guide-timeout", "0.3", *FAST)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: guide bad.py: ")
    assert message in result.stderr
    assert not (workdir / "runs").exists()  # a failed start leaves no run folder behind


@pytest.mark.parametrize(
    "args, message",
    [
        (["--env-id", "Hoper-v4"], "error: --env-id Hoper-v4:"),
        (["--env-id", "CartPole-v1"], "only continuous (Box) action spaces"),
        (["--llm-policy", "guide.py", "--random-guide"], "choose one guide, not --llm-policy and --random-guide"),
        (["--no-epsilon-masking"], "are CAMEL ablations and need a guide"),
        (["--random-guide", "--mask-width", "0"], "--mask-width must be in (0, 2]"),
        (["--random-guide", "--epsilon-fraction", "1.5"], "--epsilon-fraction must be in (0, 1]"),
        (["--batch-size", "0"], "--batch-size must be positive"),
        (["--expert-model", "missing.cleanrl_model"], "no such file"),
        (["--expert-model", "guide.py"], "not a CleanRL-format model"),
        (["--llm-policy", str(REPO / "policies" / "ant.py")], "policy(obs) raised "),
        (["--llm-policy", str(REPO / "policies" / "ant.py")], "Hopper-v4 gives observations of size 11 and wants 3 actions"),
        (["--resume", "runs/nothing"], "--resume runs/nothing: no such run folder"),
    ],
)
def test_bad_command_lines_get_one_clear_error_and_leave_no_run_folder(workdir, args, message):
    result = run_trainer(workdir, *FAST, *args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert message in result.stderr.strip().splitlines()[-1]
    assert not (workdir / "runs").exists()


def test_resume_of_a_folder_without_checkpoint_says_so(workdir):
    (workdir / "runs/empty").mkdir(parents=True)
    result = run_trainer(workdir, "--resume", "runs/empty")
    assert result.returncode != 0 and "--resume runs/empty: no checkpoint.pt there" in result.stderr


def test_updates_start_after_learning_starts_so_a_run_must_be_longer_to_learn():
    # steps are 0 .. total - 1 and the first update is at step learning_starts + 1, as in CleanRL
    assert not updates_happen(camel_td3.Args(total_timesteps=301, learning_starts=300))
    assert updates_happen(camel_td3.Args(total_timesteps=302, learning_starts=300))


def test_a_run_too_short_to_learn_warns_at_start_and_does_not_claim_it_learned(workdir):
    result = run_trainer(workdir, "--run-name", "r", "--total-timesteps", "300", "--learning-starts", "300",
                         "--eval-frequency", "300", "--eval-episodes", "1")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "warning: no update will happen: the first is at step 301" in result.stderr
    assert "finished r without learning" in result.stdout and "after 300 steps" not in result.stdout


def test_expert_trained_for_another_env_is_refused(workdir):
    walker = gym.make("Walker2d-v4")
    torch.save((Actor(walker, masking_aware=False).state_dict(), {}, {}), workdir / "walker.cleanrl_model")
    result = run_trainer(workdir, "--expert-model", "walker.cleanrl_model", *FAST)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "its actor takes 17 inputs and gives 6 actions, but Hopper-v4 has 11 observations and 3 actions" in result.stderr


def test_a_new_run_never_overwrites_an_unfinished_or_finished_one(workdir):
    assert run_trainer(workdir, "--run-name", "same", *FAST).returncode == 0
    result = run_trainer(workdir, "--run-name", "same", *FAST)
    assert result.returncode != 0 and "holds a finished run" in result.stderr
    (workdir / "runs/unfinished").mkdir(parents=True)
    (workdir / "runs/unfinished/checkpoint.pt").write_bytes(b"")
    result = run_trainer(workdir, "--run-name", "unfinished", *FAST)
    assert result.returncode != 0 and "continue it with --resume runs/unfinished" in result.stderr


@pytest.mark.parametrize("env_id, policy", [("Hopper-v4", "hopper.py"), ("Walker2d-v4", "walker2d.py"), ("Ant-v4", "ant.py")])
def test_shipped_guide_policies_train_on_their_envs(tmp_path, env_id, policy):
    result = run_trainer(tmp_path, "--env-id", env_id, "--llm-policy", str(REPO / "policies" / policy), "--run-name", "r", *FAST)
    assert result.returncode == 0, result.stderr
    summary = json.loads((tmp_path / "runs/r/finished.json").read_text())
    assert summary["guide_failures"] == 0 and summary["guide_calls"] > 0


@pytest.fixture(scope="module")
def help_text():
    env = {**os.environ, "COLUMNS": "300"}  # wide enough that tyro does not wrap a flag's help
    result = subprocess.run([sys.executable, str(REPO / "camel_td3.py"), "--help"], capture_output=True, text=True, env=env)
    assert result.returncode == 0
    return result.stdout


def flag_help(help_text, flag, next_flag):
    return help_text[help_text.index(flag) : help_text.index(next_flag)]


def test_help_documents_every_flag(help_text):
    for field in camel_td3.Args.__dataclass_fields__:
        assert "--" + field.replace("_", "-") in help_text, field


def test_one_torch_thread_is_the_default_and_help_says_when_to_use_all(help_text):
    assert camel_td3.Args().torch_threads == 1
    text = flag_help(help_text, "--torch-threads", "--fused-critics")
    assert "(default: 1)" in text and "0: torch's default, all cores" in text


def test_run_name_help_states_its_default_once(help_text):
    text = flag_help(help_text, "--run-name", "--torch-threads")
    assert text.count("default") == 1 and "{env_id}__{exp_name}__{seed}__{time}" in text
