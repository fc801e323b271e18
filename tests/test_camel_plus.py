"""camel_plus_td3.py, CAMEL+: the paper's CAMEL plus three parts, each set by its own flag (Q-filtered guide BC,
--guide-bc-coef; the guide warm-up, --warmup-actions guide; two critic updates per step, --critic-updates-per-step 2);
the critics' target TD3's with guide BC on; each part off gives back that part of the paper's CAMEL; no run without a
guide."""

import os
import subprocess
import sys
from copy import deepcopy as copy_module

import numpy as np
import pytest
import torch

import camel_plus_td3
import camel_td3
from camel_plus_td3 import Actor, QNetwork, ReplayBuffer, mask_bounds, update_actor_with_guide_bc, update_critics
from camel_utils import fast_update
from camel_utils.conditions import CAMEL_PLUS_PARTS
from camel_utils.fast_update import fuse_critics
from camel_utils.guide import to_env_units
from camel_utils.run import cli_args
from script_process import run_script
from test_camel_td3 import BOOKKEEPING_GUIDE, FAST, REPO, hopper, scalars, stop_after_first_checkpoint, workdir  # noqa: F401 (fixtures)


def run_camel_plus(cwd, *args, timeout=180):
    """Run camel_plus_td3.py as a user would, from `cwd` (where its runs/ folder goes)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    return run_script(REPO / "camel_plus_td3.py", *args, cwd=cwd, env=env, timeout=timeout)


def guide_batch(hopper, n=64, seed=0, next_point=None):
    """A batch from a buffer that keeps the guide's action in s (every fifth s: the guide failed there)."""
    rng = np.random.default_rng(seed)
    rb = ReplayBuffer(n, 11, 3, "cpu", keep_guide_actions=True)
    for i in range(n):
        low, high = mask_bounds(rng.uniform(-1, 1, 3), 0.3)
        next_low, next_high = (next_point, next_point) if next_point is not None else mask_bounds(rng.uniform(-1, 1, 3), 0.3)
        guide = None if i % 5 == 4 else to_env_units(rng.uniform(-1, 1, 3), hopper.action_space)
        rb.add(rng.normal(size=11), rng.normal(size=11), rng.uniform(low, high), rng.normal(), float(rng.random() < 0.2),
               low, high, next_low, next_high, guide)  # fmt: skip
    return rb.sample(n)


def test_buffer_keeps_the_guides_action_in_s_and_whether_there_was_one(hopper):
    rb = ReplayBuffer(2, 2, 3, "cpu", keep_guide_actions=True)
    ones, zeros = np.ones(3), np.zeros(3)
    rb.add(np.zeros(2), np.ones(2), ones, 1.0, 0.0, -ones, ones, -ones, ones, np.array([0.5, 0.6, 0.7]))
    rb.add(np.zeros(2), np.ones(2), ones, 1.0, 0.0, -ones, ones, -ones, ones, None)  # the guide failed on s
    assert rb.data.shape == (2, 2 + 2 + 3 + 1 + 1 + 4 * 3 + 3 + 1)
    guide_actions, has_guide = torch.split(rb.data, rb.widths, dim=1)[-2:]
    np.testing.assert_allclose(guide_actions.numpy(), [[0.5, 0.6, 0.7], zeros], atol=1e-7)
    assert has_guide.flatten().tolist() == [1.0, 0.0]
    batch = rb.sample(8)
    assert batch.guide_actions.shape == (8, 3) and batch.has_guide.shape == (8, 1) and len(batch) == 11
    # the paper's buffer has no such columns, and its batches say so
    plain = ReplayBuffer(2, 2, 3, "cpu")
    plain.add(np.zeros(2), np.ones(2), ones, 1.0, 0.0, -ones, ones, -ones, ones)
    assert plain.data.shape == (2, 2 + 2 + 3 + 1 + 1 + 4 * 3) and plain.sample(1).guide_actions is None


def hand_computed_target(hopper, data, target_actor, qf1_target, qf2_target):
    """r + 0.99 (1 - done) V(s'), V(s') computed here row by row with plain tensor arithmetic on the networks' weights:
    the min over the two target critics of a' = 0.25 (the width-zero box of guide_batch's next_point)."""
    def q(critic, s, a):
        x = torch.cat([s, a])
        h = torch.clamp(critic.fc1.weight @ x + critic.fc1.bias, min=0)
        h = torch.clamp(critic.fc2.weight @ h + critic.fc2.bias, min=0)
        return float(critic.fc3.weight[0] @ h + critic.fc3.bias[0])

    a_next = torch.as_tensor(to_env_units(np.full(3, 0.25), hopper.action_space), dtype=torch.float32)
    targets = []
    with torch.no_grad():
        for i in range(len(data.rewards)):
            s = data.next_observations[i]
            value = min(q(qf1_target, s, a_next), q(qf2_target, s, a_next))
            targets.append(float(data.rewards[i, 0]) + 0.99 * (1 - float(data.dones[i, 0])) * value)
    return torch.tensor(targets)


@pytest.mark.parametrize("fast", [False, True])
def test_with_guide_bc_on_the_critics_target_is_td3s(hopper, fast):
    """The default's batches carry g(s) for guide BC; the critics' target is TD3's all the same, r + gamma (1 - done)
    min(Q1', Q2')(s', a') (both update paths, on one fixed batch, against a hand computation)."""
    torch.manual_seed(0)
    target_actor, qf1, qf2, qf1_target, qf2_target = Actor(hopper), *(QNetwork(hopper) for _ in range(4))
    if fast:
        fuse_critics(qf1, qf2)
        fuse_critics(qf1_target, qf2_target)
    data = guide_batch(hopper, next_point=np.array([0.25, 0.25, 0.25]))
    assert data.guide_actions is not None  # the batch carries g(s), as every batch of the default's buffer does
    step = fast_update.update_critics if fast else update_critics
    optimizer = torch.optim.SGD([*qf1.parameters(), *qf2.parameters()], lr=0.0)  # lr 0: the critics stay as they are
    values1, values2, loss1, loss2 = step(data, target_actor, qf1, qf2, qf1_target, qf2_target, optimizer, 0.99, 0.2, 0.5)
    # the loss is the mean squared distance to the target: solve nothing, compare it with the hand-made target's
    expected = hand_computed_target(hopper, data, target_actor, qf1_target, qf2_target)
    torch.testing.assert_close(loss1, ((values1 - expected) ** 2).mean(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(loss2, ((values2 - expected) ** 2).mean(), rtol=1e-5, atol=1e-5)


def test_fast_critic_update_on_a_guide_bc_batch_computes_the_plain_one(hopper):
    def one_update(fast):
        torch.manual_seed(0)
        target_actor, qf1, qf2, qf1_target, qf2_target = Actor(hopper), *(QNetwork(hopper) for _ in range(4))
        qf1_target.load_state_dict(qf1.state_dict())
        qf2_target.load_state_dict(qf2.state_dict())
        step = update_critics
        if fast:
            fuse_critics(qf1, qf2)
            fuse_critics(qf1_target, qf2_target)
            step = fast_update.update_critics
        optimizer = torch.optim.Adam([*qf1.parameters(), *qf2.parameters()], lr=3e-4)
        data = guide_batch(hopper, n=256, seed=1)
        torch.manual_seed(2)
        return step(data, target_actor, qf1, qf2, qf1_target, qf2_target, optimizer, 0.99, 0.2, 0.5), qf1.state_dict()

    (plain, plain_state), (fast, fast_state) = one_update(False), one_update(True)
    for a, b in zip(plain, fast):
        torch.testing.assert_close(a, b, rtol=2e-6, atol=2e-6)
    for key in plain_state:
        torch.testing.assert_close(plain_state[key], fast_state[key], rtol=2e-6, atol=2e-6)


def test_guide_warmup_and_the_guides_actions_in_a_default_run(workdir, hopper):
    """What the loop does by default: before learning starts, masked actions are the guide's plus noise of scale
    exploration-noise (not uniform in the box); the buffer holds g(s) of every transition; the share of the batch's
    rows in guide BC is charted."""
    (workdir / "g.py").write_text(BOOKKEEPING_GUIDE)
    width, noise = 0.6, 0.1
    checkpoint = stop_after_first_checkpoint(workdir, [
        "--llm-policy", "g.py", "--mask-width", str(width),
        "--total-timesteps", "100000", "--learning-starts", "800", "--batch-size", "32", "--checkpoint-frequency", "1200",
        "--eval-frequency", "100000", "--exploration-noise", str(noise)], "p", script="camel_plus_td3.py")  # fmt: skip
    data = checkpoint["replay_buffer"]["data"].numpy()
    assert data.shape[1] == 11 + 11 + 3 + 1 + 1 + 4 * 3 + 3 + 1
    obs, next_obs, actions, _, _, low, high, _, _, guide, has = np.split(data, np.cumsum([11, 11, 3, 1, 1, 3, 3, 3, 3, 3]), axis=1)

    assert np.all(hopper.action_space.low == -1.0) and np.all(hopper.action_space.high == 1.0)  # env units = normalised

    def guide_env_action(states):
        return np.tanh(3.0 * states[:, 2:5].astype(np.float64))

    np.testing.assert_allclose(guide, guide_env_action(obs), atol=1e-5)  # g(s) of every row
    assert np.all(has == 1.0)
    warmup = np.arange(800)
    masked = ~(np.all(low == -1.0, axis=1) & np.all(high == 1.0, axis=1))
    rows = warmup[masked[warmup]]
    deviation = actions[rows] - guide_env_action(obs[rows])
    inside = (actions[rows] > low[rows] + 1e-6) & (actions[rows] < high[rows] - 1e-6)
    # where the clamp did not act, the deviation is the Gaussian noise: its spread is exploration-noise (uniform in a box
    # of half-width 0.6 would give 0.35)
    assert abs(deviation[inside].std() - noise) < 0.01 and abs(deviation[inside].mean()) < 0.01
    assert len(rows) > 300
    values, _ = scalars(workdir / "runs/p")
    shares = [v for step, v in values["charts/guide_bc_rows"]]
    assert shares and all(0.0 <= v <= 1.0 for v in shares)


def test_guide_bc_adds_the_weighted_distance_of_the_unmasked_actor_to_the_guide_on_the_q_filtered_rows(hopper):
    torch.manual_seed(0)
    actor, qf1, qf2 = Actor(hopper), QNetwork(hopper), QNetwork(hopper)
    data = guide_batch(hopper)
    with torch.no_grad():  # by hand, before the step
        q = qf1(data.observations, actor(data.observations, data.low, data.high))
        free = actor(data.observations, -torch.ones(64, 3), torch.ones(64, 3))  # the unmasked actor
        q_guide = torch.min(qf1(data.observations, data.guide_actions), qf2(data.observations, data.guide_actions)).flatten()
        q_free = torch.min(qf1(data.observations, free), qf2(data.observations, free)).flatten()
        rows = (data.has_guide.flatten() > 0) & (q_guide >= q_free)  # a guide action, valued at least as high
        bc = ((free[rows] - data.guide_actions[rows]) ** 2).mean()  # Hopper: env units are normalised units
        expected = -q.mean() + 0.3 * q.abs().mean() * bc
    assert 0 < rows.sum() < (data.has_guide.flatten() > 0).sum()  # the filter keeps some rows and drops others
    before, copy = [p.detach().clone() for p in actor.parameters()], copy_module(actor)
    loss, bc_loss, share = update_actor_with_guide_bc(data, actor, qf1, qf2, torch.optim.SGD(actor.parameters(), lr=0.01), bc_weight=0.3)
    assert share.item() == rows.float().mean().item()
    torch.testing.assert_close(bc_loss, bc)
    torch.testing.assert_close(loss, expected)
    # the gradient is that of the whole loss: one SGD step from `before` on it, by autograd on a copy
    q_copy = qf1(data.observations, copy(data.observations, data.low, data.high))
    free_copy = copy(data.observations, -torch.ones(64, 3), torch.ones(64, 3))
    loss_copy = -q_copy.mean() + 0.3 * q_copy.abs().mean().detach() * ((free_copy[rows] - data.guide_actions[rows]) ** 2).mean()
    loss_copy.backward()
    for new, old, p in zip(actor.parameters(), before, copy.parameters()):
        torch.testing.assert_close(new.detach(), old - 0.01 * p.grad)
    # with weight 0 it is TD3's actor loss
    loss0, _, _ = update_actor_with_guide_bc(data, actor, qf1, qf2, torch.optim.SGD(actor.parameters(), lr=0.0), bc_weight=0.0)
    torch.testing.assert_close(loss0, -qf1(data.observations, actor(data.observations, data.low, data.high)).mean().detach())


@pytest.mark.parametrize("masking_aware", [True, False], ids=["masking-aware", "plain actor"])
def test_fast_guide_bc_update_computes_the_plain_one(hopper, masking_aware):
    def three_updates(fast):
        torch.manual_seed(0)
        actor, qf1, qf2 = Actor(hopper, masking_aware), QNetwork(hopper), QNetwork(hopper)
        step = update_actor_with_guide_bc
        if fast:
            fuse_critics(qf1, qf2)
            step = fast_update.update_actor_with_guide_bc
        optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4)
        results = []
        for seed in range(3):
            data = guide_batch(hopper, n=256, seed=seed)
            results.append(step(data, actor, qf1, qf2, optimizer, 0.4))
        return results, actor.state_dict()

    (plain, plain_state), (fast, fast_state) = three_updates(False), three_updates(True)
    for plain_result, fast_result in zip(plain, fast):
        for a, b in zip(plain_result, fast_result):  # loss, its BC part, the share of rows in it
            torch.testing.assert_close(a, b, rtol=2e-6, atol=2e-6)
    assert 0.0 < plain[0][2].item() < 1.0  # some rows out of the BC (no guide there, or filtered): the mask is exercised
    for key in plain_state:
        torch.testing.assert_close(plain_state[key], fast_state[key], rtol=2e-6, atol=2e-6)


def test_the_defaults_are_camel_plus_and_each_part_has_the_value_that_turns_it_off():
    default = cli_args(camel_plus_td3.Args, [])
    assert (default.guide_bc_coef, default.warmup_actions, default.critic_updates_per_step) == (0.4, "guide", 2)
    # conditions.CAMEL_PLUS_PARTS (method names, the model card) holds each part's value and its off value
    for name, (value, off, _, _) in CAMEL_PLUS_PARTS.items():
        assert getattr(default, name) == value
        assert getattr(cli_args(camel_plus_td3.Args, [f"--{name.replace('_', '-')}", str(off)]), name) == off
    # the paper's CAMEL has none of the three flags, and its buffer no guide columns
    assert not set(CAMEL_PLUS_PARTS) & set(vars(cli_args(camel_td3.Args, [])))
    assert camel_td3.ReplayBuffer(1, 11, 3, "cpu").widths == [11, 11, 3, 1, 1, 3, 3, 3, 3]


def test_camel_plus_needs_a_guide_and_says_so_in_one_line(workdir):
    result = run_camel_plus(workdir, "--run-name", "r", *FAST)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == ("error: camel_plus_td3.py needs a guide (--llm-policy FILE, --expert-model MODEL or "
                                     "--random-guide); TD3 without one is camel_td3.py")  # fmt: skip
    assert not (workdir / "runs/r").exists()


@pytest.mark.parametrize("script, flags, critic_updates", [
    ("camel_plus_td3.py", [], 2),  # CAMEL+
    ("camel_plus_td3.py", ["--critic-updates-per-step", "3"], 3),
    ("camel_plus_td3.py", ["--critic-updates-per-step", "1"], 1),
    ("camel_td3.py", [], 1),  # the paper's CAMEL
])  # fmt: skip
def test_the_critics_update_that_many_times_per_step_and_the_actor_as_in_td3(workdir, script, flags, critic_updates):
    (workdir / "g.py").write_text(BOOKKEEPING_GUIDE)
    learning_starts = 300
    checkpoint = stop_after_first_checkpoint(workdir, [
        "--llm-policy", "g.py", *flags, "--total-timesteps", "100000",
        "--learning-starts", str(learning_starts), "--batch-size", "32", "--checkpoint-frequency", "500",
        "--eval-frequency", "100000"], "u", script=script)  # fmt: skip
    next_step = checkpoint["global_step"]  # steps 0 .. next_step - 1 ran; those after learning-starts updated
    update_steps = range(learning_starts + 1, next_step)
    assert checkpoint["q_optimizer"]["state"][0]["step"].item() == critic_updates * len(update_steps)
    assert checkpoint["actor_optimizer"]["state"][0]["step"].item() == sum(1 for step in update_steps if step % 2 == 0)


def test_zero_critic_updates_per_step_is_refused_with_one_line(workdir):
    result = run_camel_plus(workdir, "--llm-policy", "guide.py", "--run-name", "r", *FAST, "--critic-updates-per-step", "0")
    assert result.returncode == 2 and result.stderr.strip() == "error: --critic-updates-per-step must be positive, got 0"
    assert not (workdir / "runs/r").exists()


@pytest.mark.parametrize("flags, logged", [([], [200, 300, 400, 500]), (["--guide-bc-coef", "0"], [])])
def test_guide_bc_lasts_the_run_and_is_off_at_coefficient_zero(flags, logged, workdir):
    # 600 steps, learning from 100, charts every 100 steps; epsilon = 1 - t / 300 reaches 0 at step 300
    result = run_camel_plus(workdir, "--llm-policy", "guide.py", "--run-name", "r", *FAST, "--learning-starts", "100", *flags)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("run r: Hopper-v4, CAMEL+" + (" w/o guide BC" if flags else "") + ", guide ")
    values, _ = scalars(workdir / "runs/r")
    assert [step for step, _ in values.get("losses/guide_bc_loss", [])] == logged
    assert all(0.0 <= share <= 1.0 for _, share in values.get("charts/guide_bc_rows", []))  # the Q-filter may keep none


@pytest.mark.parametrize("flags, message", [
    (["--guide-bc-coef", "-0.4"], "error: --guide-bc-coef cannot be negative (it would push the actor away from the guide), got -0.4"),
])  # fmt: skip
def test_camel_plus_values_out_of_range_are_refused_with_one_line(workdir, flags, message):
    result = run_camel_plus(workdir, "--llm-policy", "guide.py", "--run-name", "r", *FAST, *flags)
    assert result.returncode == 2 and result.stderr.strip() == message
    assert not (workdir / "runs/r").exists()


def test_a_stopped_camel_plus_run_resumes_bit_for_bit(workdir):
    """Stopped mid-run (with g(s) of the episode under way in the checkpoint) and resumed, CAMEL+ logs every scalar
    the run that never stopped logs."""
    common = ["--llm-policy", "guide.py", *FAST, "--learning-starts", "100", "--checkpoint-frequency", "0"]
    whole = run_camel_plus(workdir, "--run-name", "whole", *common)
    assert whole.returncode == 0, whole.stderr
    env = {**os.environ, "CAMEL_STOP_AT_STEP": "350", "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    stopped = subprocess.run([sys.executable, str(REPO / "camel_plus_td3.py"), "--run-name", "part", *common], cwd=workdir,
                             env=env, capture_output=True, text=True, timeout=180)  # fmt: skip
    assert stopped.returncode == 130 and "python" in stopped.stderr and "--resume" in stopped.stderr
    resumed = run_camel_plus(workdir, "--resume", "runs/part")
    assert resumed.returncode == 0, resumed.stderr
    (a, _), (b, _) = scalars(workdir / "runs/whole"), scalars(workdir / "runs/part")
    drop = {"charts/SPS"}
    assert {t: v for t, v in a.items() if t not in drop} == {t: v for t, v in b.items() if t not in drop}
