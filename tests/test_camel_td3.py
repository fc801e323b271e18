"""camel_td3.py: the CAMEL parts of the algorithm (masking-aware actor, exploration inside the bounds, the target
inside stored bounds), the plain update against CleanRL's formulas, the fast update (fast_update.py) against the
plain one, what the loop stores, and the command line (guide sources, ablations, model files, checkpoints, and
refusing bad input before a run folder exists)."""

import json
import os
import re
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
from camel_utils import fast_update
from camel_td3 import ReplayBuffer, mask_bounds
from camel_utils.guide import to_env_units
from camel_utils.run import CompiledOrEager, updates_happen
from camel_td3 import Actor, QNetwork, explore, td3_target, update_actor, update_critics, update_targets
from camel_utils.fast_update import actor_grads, fuse_critics, fused, twin_critic_grads
from camel_utils.machine import cpu_kind, cpu_model
from script_process import run_script

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
    return run_script(REPO / "camel_td3.py", *args, cwd=cwd, env=env, timeout=timeout)


def scalars(run_dir):
    events = EventAccumulator(str(run_dir))
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}, events


# --- the masking-aware actor and exploration ------------------------------------------------------


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


# --- the TD3 update --------------------------------------------------------------------------------


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
    target_actor, qf1_target, qf2_target = Actor(hopper), QNetwork(hopper), QNetwork(hopper)
    # a box of width zero leaves the target actor and its smoothing noise no choice: a' = 0.25
    point = np.array([0.25, 0.25, 0.25])
    data = random_batch(next_low=point, next_high=point)
    y = td3_target(data, target_actor, qf1_target, qf2_target, gamma=0.99, policy_noise=0.2, noise_clip=0.5)
    next_actions = torch.full((64, 3), 0.25)
    with torch.no_grad():
        q = torch.min(qf1_target(data.next_observations, next_actions), qf2_target(data.next_observations, next_actions))
    expected = data.rewards.flatten() + (1 - data.dones.flatten()) * 0.99 * q.flatten()
    torch.testing.assert_close(y, expected)


def test_td3_target_noise_is_clamped_into_next_bounds(hopper, monkeypatch):
    torch.manual_seed(0)
    target_actor, qf1_target, qf2_target = Actor(hopper), QNetwork(hopper), QNetwork(hopper)
    data = random_batch()
    seen = []
    original = QNetwork.forward
    monkeypatch.setattr(QNetwork, "forward", lambda self, x, a: seen.append(a) or original(self, x, a))
    td3_target(data, target_actor, qf1_target, qf2_target, gamma=0.99, policy_noise=5.0, noise_clip=5.0)  # huge noise
    assert len(seen) == 2 and seen[0] is seen[1]  # both critics judge the same a'
    assert torch.all(seen[0] >= data.next_low) and torch.all(seen[0] <= data.next_high)
    assert len(torch.unique(seen[0])) > 3  # noisy, not collapsed onto the bounds


def test_critic_update_is_one_step_on_the_sum_of_both_critics_mse_to_the_td3_target(hopper):
    torch.manual_seed(0)
    target_actor, qf1, qf2, qf1_target, qf2_target = Actor(hopper), *(QNetwork(hopper) for _ in range(4))
    before = [p.detach().clone() for p in [*qf1.parameters(), *qf2.parameters()]]
    data = random_batch()
    torch.manual_seed(1)
    values1, values2, loss1, loss2 = update_critics(data, target_actor, qf1, qf2, qf1_target, qf2_target,
                                                    torch.optim.SGD([*qf1.parameters(), *qf2.parameters()], lr=0.1), 0.99, 0.2, 0.5)  # fmt: skip
    torch.manual_seed(1)  # the same smoothing noise: the same target
    y = td3_target(data, target_actor, qf1_target, qf2_target, 0.99, 0.2, 0.5)
    old1, old2 = QNetwork(hopper), QNetwork(hopper)
    for net, params in [(old1, before[:6]), (old2, before[6:])]:
        with torch.no_grad():
            for p, value in zip(net.parameters(), params):
                p.copy_(value)
    q1, q2 = old1(data.observations, data.actions).flatten(), old2(data.observations, data.actions).flatten()
    torch.testing.assert_close(values1, q1.detach())
    torch.testing.assert_close(loss1, ((q1 - y) ** 2).mean().detach())  # CleanRL's F.mse_loss, by hand
    torch.testing.assert_close(loss2, ((q2 - y) ** 2).mean().detach())
    (((q1 - y) ** 2).mean() + ((q2 - y) ** 2).mean()).backward()
    for updated, old in [(qf1, old1), (qf2, old2)]:
        for p_new, p_old in zip(updated.parameters(), old.parameters()):
            torch.testing.assert_close(p_new.detach(), (p_old - 0.1 * p_old.grad).detach())  # one SGD step


@pytest.mark.parametrize("fast", [False, True], ids=["plain", "fast"])
def test_actor_update_steps_the_actor_on_minus_q1_and_leaves_the_critics_alone(hopper, fast):
    torch.manual_seed(0)
    actor, qf1, qf2 = Actor(hopper), QNetwork(hopper), QNetwork(hopper)
    if fast:
        fuse_critics(qf1, qf2)
    critics_before = [p.detach().clone() for p in [*qf1.parameters(), *qf2.parameters()]]
    data = random_batch()
    expected = -qf1(data.observations, actor(data.observations, data.low, data.high)).mean()
    step = fast_update.update_actor if fast else update_actor
    loss = step(data, actor, qf1, torch.optim.SGD(actor.parameters(), lr=0.01))
    torch.testing.assert_close(loss, expected.detach())
    assert all(torch.equal(p, q) for p, q in zip([*qf1.parameters(), *qf2.parameters()], critics_before))
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in actor.parameters())


def test_target_update_moves_every_target_parameter_tau_of_the_way(hopper):
    torch.manual_seed(0)
    actor, target_actor, qf1, qf1_target = Actor(hopper), Actor(hopper), QNetwork(hopper), QNetwork(hopper)
    expected = [0.995 * t.detach() + 0.005 * p.detach() for n, tn in [(actor, target_actor), (qf1, qf1_target)]
                for p, t in zip(n.parameters(), tn.parameters())]  # fmt: skip
    update_targets([actor, qf1], [target_actor, qf1_target], tau=0.005)
    for value, target in zip(expected, [*target_actor.parameters(), *qf1_target.parameters()]):
        torch.testing.assert_close(target.detach(), value)


# --- the fast update (fast_update.py) computes the plain one ---------------------------------------


def td3_updates(hopper, fast, steps=4, compiled=False):
    """A few TD3 updates (critics, then actor and targets every second step, as in training) on a fixed batch,
    with camel_td3.py's update or, fast=True, fast_update.py's. Returns each step's values and losses, and the
    networks' state dicts (CleanRL's layout) at the end."""
    torch.manual_seed(0)
    actor, qf1, qf2, qf1_target, qf2_target, target_actor = Actor(hopper), *(QNetwork(hopper) for _ in range(4)), Actor(hopper)
    target_actor.load_state_dict(actor.state_dict())
    qf1_target.load_state_dict(qf1.state_dict())
    qf2_target.load_state_dict(qf2.state_dict())
    critics_step, actor_step = update_critics, update_actor
    if fast:
        fuse_critics(qf1, qf2)
        fuse_critics(qf1_target, qf2_target)
        critics_step, actor_step = fast_update.update_critics, fast_update.update_actor
    if compiled:
        critics_step, actor_step = torch.compile(update_critics), torch.compile(update_actor)
    q_optimizer = torch.optim.Adam([*qf1.parameters(), *qf2.parameters()], lr=3e-4, fused=not compiled)
    actor_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4, fused=not compiled)
    data = random_batch(n=256, seed=1)
    torch.manual_seed(2)
    outputs = []
    for step in range(steps):
        outputs.append(critics_step(data, target_actor, qf1, qf2, qf1_target, qf2_target, q_optimizer, 0.99, 0.2, 0.5))
        if step % 2 == 0:
            outputs.append((actor_step(data, actor, qf1, actor_optimizer),))
            update_targets([actor, qf1, qf2], [target_actor, qf1_target, qf2_target], 0.005)
    return outputs, [net.state_dict() for net in (actor, qf1, qf2, target_actor, qf1_target, qf2_target)]


def assert_same_updates(first, second, tolerance):
    for values_first, values_second in zip(first[0], second[0]):
        for a, b in zip(values_first, values_second):
            torch.testing.assert_close(a, b, rtol=tolerance, atol=tolerance)
    for state_first, state_second in zip(first[1], second[1]):
        assert state_first.keys() == state_second.keys()
        for key in state_first:
            torch.testing.assert_close(state_first[key], state_second[key], rtol=tolerance, atol=tolerance)


def test_fast_update_computes_the_plain_updates_losses_and_parameters(hopper):
    plain, fast = td3_updates(hopper, fast=False), td3_updates(hopper, fast=True)
    assert_same_updates(plain, fast, tolerance=2e-6)  # float32 rounding: they differ by at most 7e-7 here
    initial = td3_updates(hopper, fast=False, steps=0)[1]
    for key in ["fc1.weight", "fc2.bias"]:  # the updates did move every network, the targets included
        for moved, start in zip(fast[1], initial):
            assert not torch.allclose(moved[key], start[key], atol=1e-6), key


def test_fast_update_repeats_itself_exactly(hopper):
    assert_same_updates(td3_updates(hopper, fast=True), td3_updates(hopper, fast=True), tolerance=0)


@pytest.mark.parametrize("masking_aware", [True, False])
def test_written_out_gradients_equal_autograds_on_the_first_step(hopper, masking_aware):
    # one step, so no Adam in between: each parameter's gradient itself, critics and actor (masked and unmasked rows)
    torch.manual_seed(0)
    actor, qf1, qf2 = Actor(hopper, masking_aware), QNetwork(hopper), QNetwork(hopper)
    fuse_critics(qf1, qf2)
    data, y = random_batch(n=128, seed=3), torch.randn(128)
    with torch.no_grad():
        values, losses = twin_critic_grads(fused(qf1, qf2), data.observations, data.actions, y)
    manual = [p.grad.clone() for p in [*qf1.parameters(), *qf2.parameters()]]
    qf1.zero_grad()
    qf2.zero_grad()
    q1, q2 = qf1(data.observations, data.actions).flatten(), qf2(data.observations, data.actions).flatten()
    (torch.nn.functional.mse_loss(q1, y) + torch.nn.functional.mse_loss(q2, y)).backward()  # camel_td3.update_critics'
    for grad, param in zip(manual, [*qf1.parameters(), *qf2.parameters()]):
        torch.testing.assert_close(grad, param.grad, rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(values, torch.stack([q1, q2]).detach(), rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(losses, torch.stack([((q1 - y) ** 2).mean(), ((q2 - y) ** 2).mean()]).detach())
    with torch.no_grad():
        loss = actor_grads(actor, fused(qf1), data.observations, data.low, data.high)
    manual = [p.grad.clone() for p in actor.parameters()]
    actor.zero_grad()
    expected = -qf1(data.observations, actor(data.observations, data.low, data.high)).mean()  # camel_td3.update_actor's
    expected.backward()
    torch.testing.assert_close(loss, expected.detach())
    for grad, param in zip(manual, actor.parameters()):
        torch.testing.assert_close(grad, param.grad, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("masking_aware", [True, False])
def test_fast_target_action_is_the_plain_one_bit_for_bit(hopper, masking_aware):
    # the same operations in the same order (in place, on the layers directly): equal, not close, and the noise drawn
    # from the same generator state, so committed runs stay reproducible with the fast path
    torch.manual_seed(0)
    target_actor = Actor(hopper, masking_aware)
    data = random_batch(seed=5)  # each row with its own box for s'
    torch.manual_seed(7)
    plain = camel_td3.target_action(data, target_actor, 0.2, 0.5)
    torch.manual_seed(7)
    fast = fast_update.target_action(data, target_actor, 0.2, 0.5)
    assert torch.equal(plain, fast)
    env_low, env_high = target_actor.to_env_units(data.next_low), target_actor.to_env_units(data.next_high)
    assert (fast >= env_low).all() and (fast <= env_high).all()


def test_the_fast_update_needs_critics_fused_before_their_optimiser(hopper):
    torch.manual_seed(0)
    qf1, qf2 = QNetwork(hopper), QNetwork(hopper)
    with pytest.raises(ValueError, match="fuse_critics"):
        fused(qf1, qf2)
    fuse_critics(qf1, qf2)
    assert fused(qf1, qf2).qf2 is qf2
    qf1.fc1.weight = torch.nn.Parameter(qf1.fc1.weight.detach().clone())  # a parameter no longer in the batched pair
    with pytest.raises(ValueError, match="fuse_critics"):
        fused(qf1, qf2)


def test_compiled_update_computes_the_same_update_as_eager(hopper, monkeypatch):
    # compiled code draws its own random numbers unless told to use eager's generator, as here
    monkeypatch.setattr(torch._inductor.config, "fallback_random", True)
    assert_same_updates(td3_updates(hopper, fast=False), td3_updates(hopper, fast=False, compiled=True), tolerance=1e-5)


def test_compile_falls_back_to_eager_with_a_message(capsys):
    def broken(x):
        raise torch._dynamo.exc.Unsupported("no compiler here")

    def eager(x):
        return x + 1

    wrapped = CompiledOrEager(eager)
    wrapped.compiled = broken
    assert wrapped(torch.ones(1)).item() == 2.0 and wrapped.compiled is None
    assert "torch.compile failed for eager" in capsys.readouterr().err


# --- what the loop stores ---------------------------------------------------------------------------

# deterministic, depends on the state, and near +-1 often enough that boxes get clipped
BOOKKEEPING_GUIDE = "import numpy as np\n\ndef policy(obs):\n    return np.tanh(3.0 * np.asarray(obs)[2:5])\n"


def printed_path(path, cwd):
    """How the trainers print a path for a user in cwd (camel_utils.cli.shown_path): relative, or absolute if shorter."""
    relative = os.path.relpath(path, cwd)
    return relative if len(relative) <= len(str(path)) else str(path)


def stop_after_first_checkpoint(workdir, args, run, script="camel_td3.py"):
    """Start a run, wait for its first periodic checkpoint, then send SIGTERM: the run saves a checkpoint at the
    step it is on and exits. Where it stops varies; what it stored up to there does not (the run is seeded)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    process = subprocess.Popen([sys.executable, str(REPO / script), *args, "--run-name", run], cwd=workdir,
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
        "--eval-frequency", str(total)], "b")  # the paper's buffer (CAMEL+'s adds the guide's actions: test_camel_plus.py)
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
    assert summary["cpu"] == cpu_model() and summary["cpu_kind"] == cpu_kind()  # which kind of CPU made the curve
    assert "r: 600/600 steps (100%)" in result.stderr  # plain progress lines when not in a terminal
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


def test_a_finished_run_keeps_its_model_and_says_how_to_evaluate_it(workdir):
    result = run_trainer(workdir, "--llm-policy", "guide.py", "--run-name", "r", *FAST)  # saved without asking
    assert result.returncode == 0, result.stderr
    model = "runs/r/camel_td3.cleanrl_model"  # named as CleanRL names it: the script's name
    assert f"model saved to {model}" in result.stdout
    actor_state, _, _ = torch.load(workdir / model, weights_only=True)
    (command,) = [line.split("evaluate it:")[1].strip() for line in result.stdout.splitlines() if "evaluate it:" in line]
    # from the run's own evaluation start states (seed 1 + 100000, --eval-episodes 1)
    assert command == f"python {printed_path(REPO / 'evaluate_policy.py', workdir)} --env-id Hopper-v4 {model} --seed 100001 --episodes 1"

    # pasted where the user ran the trainer, it runs (no video and a JSON report, for speed) and measures the return
    # the run logged last
    pasted = command.replace("python ", f"{sys.executable} ", 1) + " --no-video --json agent.json"
    evaluated = subprocess.run(["bash", "-c", pasted], cwd=workdir, capture_output=True, text=True, timeout=300)
    assert evaluated.returncode == 0, evaluated.stderr
    (agent,) = json.loads((workdir / "agent.json").read_text())["candidates"]
    assert agent["kind"] == "agent" and agent["error"] is None and len(agent["episodes"]) == 1
    assert agent["mean_return"] == json.loads((workdir / "runs/r/finished.json").read_text())["final_eval_return"]


def test_baseline_run_uses_cleanrls_actor_and_logs_no_masking(workdir):
    result = run_trainer(workdir, "--save-model", "--exp-name", "b", "--run-name", "r", "--no-fast-update", *FAST)
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
    args = ["--llm-policy", "guide.py", "--save-model", "--exp-name", "k", "--total-timesteps", "1500",
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
    assert 400 <= stopped_at < 1500

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
    assert f"continue with: python {printed_path(REPO / 'camel_td3.py', workdir)} --resume runs/t" in stderr
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
    assert result.returncode == 2  # a mistake in the command, as evaluate_policy.py and generate_policy.py exit
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
    env = {**os.environ, "COLUMNS": "129"}  # one column of boxes (tyro sets them side by side from 130 columns)
    result = subprocess.run([sys.executable, str(REPO / "camel_td3.py"), "--help"], capture_output=True, text=True, env=env)
    assert result.returncode == 0
    return " ".join(re.sub("[│╭╮╰╯─]", " ", result.stdout).split())  # the text, unwrapped: words split by one space


def flag_help(help_text, flag, next_flag):
    """The help of a flag: from its entry (the flag and its metavar, INT or {None}|STR, or its --no- twin) to
    next_flag's, not from mentions of them in other flags' help."""
    def entry(name):
        return re.search(rf"{re.escape(name)}( \{{None\}}\|| [A-Z]+\b|, --no-)", help_text).start()

    return help_text[entry(flag) : entry(next_flag)]


def test_help_documents_every_flag(help_text):
    for field in camel_td3.Args.__dataclass_fields__:
        assert "--" + field.replace("_", "-") in help_text, field


def test_one_torch_thread_is_the_default_and_help_says_when_to_use_all(help_text):
    assert camel_td3.Args().torch_threads == 1
    text = flag_help(help_text, "--torch-threads", "--flush-denormal")
    assert "(default: 1)" in text and "0: torch's default, all cores" in text


def test_run_name_help_states_its_default_once(help_text):
    text = flag_help(help_text, "--run-name", "--torch-threads")
    assert text.count("default") == 1 and "{env_id}__{exp_name}__{seed}__{time}" in text


def test_a_checkpoint_grows_with_the_steps_taken_not_with_the_buffer_size(workdir):
    """The replay buffer is preallocated for --buffer-size rows (1M by default), but a checkpoint holds only the rows
    filled so far: a 1000-step run's checkpoint of the paper's CAMEL's buffer (39 float32 columns on Hopper) is about
    1000 x 39 x 4 bytes, not 1M x 39 x 4 = 156 MB."""
    (workdir / "g.py").write_text(BOOKKEEPING_GUIDE)
    checkpoint = stop_after_first_checkpoint(workdir, [
        "--llm-policy", "g.py", "--total-timesteps", "1000000", "--learning-starts", "500", "--batch-size", "32",
        "--checkpoint-frequency", "1000", "--eval-frequency", "1000000"], "c")  # fmt: skip
    rows, buffer = checkpoint["global_step"], checkpoint["replay_buffer"]
    width = 11 + 11 + 3 + 1 + 1 + 4 * 3  # obs, next obs, action, reward, done, the bounds of s and of s'
    assert buffer["data"].shape == (rows, width) and buffer["size"] == rows
    assert buffer["data"].untyped_storage().nbytes() == rows * width * 4  # its own storage, not a view of the 1M rows
    networks = 6 * 80_000 * 4 * 3  # the six networks (about 70-80k parameters each) and Adam's two moments, generously
    size = (workdir / "runs/c/checkpoint.pt").stat().st_size
    assert rows * width * 4 < size < rows * width * 4 + networks + 1_000_000
