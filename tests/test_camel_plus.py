"""camel_td3.py's CAMEL+ levers, beyond the paper, for the agent to outgrow its guide: the guide as a proposal
(--guide-proposal: acting with the better of the actor's and the guide's action, bootstrapping from the better of the
two in s'), the guide's own actions in the warm-up (--warmup-actions guide), the unmasked actor pulled towards the
guide while masking fades (--guide-bc-coef), more critic updates per step (--critic-updates-per-step) and layer norm
in the critics (--critic-layer-norm); the actors evaluated beside the actor (--averaged-actor-rate, --keep-best-actor);
that the default is CAMEL+ (Q-filtered guide BC that does not fade, the guide warm-up) and that --paper, every lever
off, is the paper's CAMEL, also for a run saved before --paper existed."""

import json
from copy import deepcopy as copy_module

import numpy as np
import pytest
import torch

import camel_td3
import camel_td3_fast
from camel_common import ReplayBuffer, mask_bounds
from camel_guide import to_env_units
from camel_td3 import Actor, QNetwork, propose, td3_target, update_actor_with_guide_bc, update_critics, with_guide_bootstrap
from camel_run import cli_args
from camel_td3_fast import fuse_critics
from test_camel_td3 import BOOKKEEPING_GUIDE, hopper, scalars, stop_after_first_checkpoint, workdir  # noqa: F401 (fixtures)


def test_with_guide_bootstrap_takes_the_larger_value_only_where_the_guide_acted():
    q_actor = torch.tensor([1.0, 5.0, -2.0, 3.0])
    q_guide = torch.tensor([4.0, 2.0, -1.0, 9.0])
    has_guide = torch.tensor([[1.0], [1.0], [1.0], [0.0]])  # the guide failed on the last s'
    # max(1, 4), max(5, 2), max(-2, -1), and the actor's 3 where there is no guide action
    assert with_guide_bootstrap(q_actor, q_guide, has_guide).tolist() == [4.0, 5.0, -1.0, 3.0]
    # the same in the (batch, 1) shape of the plain update's values
    assert with_guide_bootstrap(q_actor.view(-1, 1), q_guide.view(-1, 1), has_guide).flatten().tolist() == [4.0, 5.0, -1.0, 3.0]


def guide_batch(hopper, n=64, seed=0, next_point=None):
    """A batch from a buffer that keeps the guide's action in s and s' (every fourth s' and every fifth s: the guide
    failed there)."""
    rng = np.random.default_rng(seed)
    rb = ReplayBuffer(n, 11, 3, "cpu", guide_actions=True)
    for i in range(n):
        low, high = mask_bounds(rng.uniform(-1, 1, 3), 0.3)
        next_low, next_high = (next_point, next_point) if next_point is not None else mask_bounds(rng.uniform(-1, 1, 3), 0.3)
        guide = None if i % 5 == 4 else to_env_units(rng.uniform(-1, 1, 3), hopper.action_space)
        next_guide = None if i % 4 == 3 else to_env_units(rng.uniform(-1, 1, 3), hopper.action_space)
        rb.add(rng.normal(size=11), rng.normal(size=11), rng.uniform(low, high), rng.normal(), float(rng.random() < 0.2),
               low, high, next_low, next_high, guide, next_guide)  # fmt: skip
    return rb.sample(n)


def test_buffer_keeps_the_guides_action_in_s_and_next_s_and_whether_there_was_one(hopper):
    rb = ReplayBuffer(2, 2, 3, "cpu", guide_actions=True)
    ones, zeros = np.ones(3), np.zeros(3)
    rb.add(np.zeros(2), np.ones(2), ones, 1.0, 0.0, -ones, ones, -ones, ones, np.array([0.5, 0.6, 0.7]), np.array([0.1, -0.2, 0.3]))
    rb.add(np.zeros(2), np.ones(2), ones, 1.0, 0.0, -ones, ones, -ones, ones, None, None)  # the guide failed on s and s'
    assert rb.data.shape == (2, 2 + 2 + 3 + 1 + 1 + 4 * 3 + 2 * (3 + 1))
    guide_actions, has_guide, next_guide_actions, next_has_guide = torch.split(rb.data, rb.widths, dim=1)[-4:]
    np.testing.assert_allclose(guide_actions.numpy(), [[0.5, 0.6, 0.7], zeros], atol=1e-7)
    np.testing.assert_allclose(next_guide_actions.numpy(), [[0.1, -0.2, 0.3], zeros], atol=1e-7)
    assert has_guide.flatten().tolist() == [1.0, 0.0] and next_has_guide.flatten().tolist() == [1.0, 0.0]
    batch = rb.sample(8)
    assert batch.guide_actions.shape == batch.next_guide_actions.shape == (8, 3) and batch.next_has_guide.shape == (8, 1)
    # the paper's buffer has no such columns, and its batches say so
    plain = ReplayBuffer(2, 2, 3, "cpu")
    plain.add(np.zeros(2), np.ones(2), ones, 1.0, 0.0, -ones, ones, -ones, ones)
    assert plain.data.shape == (2, 2 + 2 + 3 + 1 + 1 + 4 * 3) and plain.sample(1).next_guide_actions is None


def test_td3_target_bootstraps_from_the_better_of_target_actor_and_guide_in_next_s(hopper):
    torch.manual_seed(0)
    target_actor, qf1_target, qf2_target = Actor(hopper), QNetwork(hopper), QNetwork(hopper)
    point = np.array([0.25, 0.25, 0.25])  # a box of width zero: the target actor's a' is 0.25, noise and all
    data = guide_batch(hopper, next_point=point)
    y = td3_target(data, target_actor, qf1_target, qf2_target, gamma=0.99, policy_noise=0.2, noise_clip=0.5, guide_bootstrap=True)
    with torch.no_grad():
        s2 = data.next_observations
        a2 = torch.full((64, 3), 0.25)
        q_actor = torch.min(qf1_target(s2, a2), qf2_target(s2, a2)).flatten()
        q_guide = torch.min(qf1_target(s2, data.next_guide_actions), qf2_target(s2, data.next_guide_actions)).flatten()
    has = data.next_has_guide.flatten() > 0
    best = torch.where(has, torch.maximum(q_actor, q_guide), q_actor)
    torch.testing.assert_close(y, data.rewards.flatten() + (1 - data.dones.flatten()) * 0.99 * best)
    # the batch has every case, so the test tells max from either one alone
    assert (has & (q_guide > q_actor)).any() and (has & (q_guide < q_actor)).any() and (~has).any()
    assert not torch.allclose(y, data.rewards.flatten() + (1 - data.dones.flatten()) * 0.99 * q_actor)


def hand_computed_target(hopper, data, target_actor, qf1_target, qf2_target, guide_bootstrap):
    """r + 0.99 (1 - done) V(s'), V(s') computed here row by row with plain tensor arithmetic on the networks' weights:
    min over the two target critics of a' = 0.25 (the width-zero box of guide_batch's next_point), and, with the
    bootstrap, of the guide's action g' where the batch says the guide gave one."""
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
            if guide_bootstrap and data.next_has_guide[i, 0] == 1:
                g = data.next_guide_actions[i]
                value = max(value, min(q(qf1_target, s, g), q(qf2_target, s, g)))
            targets.append(float(data.rewards[i, 0]) + 0.99 * (1 - float(data.dones[i, 0])) * value)
    return torch.tensor(targets)


@pytest.mark.parametrize("fast", [False, True])
def test_the_guide_bootstrap_is_set_by_its_flag_alone_not_by_what_the_buffer_holds(hopper, fast):
    """With guide BC on the buffer keeps g(s'); the target is still TD3's unless --guide-bootstrap is on, and with it
    the max only where the guide gave an action in s' (both update paths, on one fixed batch, against a hand computation)."""
    torch.manual_seed(0)
    target_actor, qf1, qf2, qf1_target, qf2_target = Actor(hopper), *(QNetwork(hopper) for _ in range(4))
    if fast:
        fuse_critics(qf1, qf2)
        fuse_critics(qf1_target, qf2_target)
    data = guide_batch(hopper, next_point=np.array([0.25, 0.25, 0.25]))
    assert data.next_guide_actions is not None  # the batch carries g(s'), as every batch of the default's buffer does
    step = camel_td3_fast.update_critics if fast else update_critics
    targets = {}
    for bootstrap in (False, True):
        optimizer = torch.optim.SGD([*qf1.parameters(), *qf2.parameters()], lr=0.0)  # lr 0: the critics stay as they are
        values1, _, loss1, _ = step(data, target_actor, qf1, qf2, qf1_target, qf2_target, optimizer, 0.99, 0.2, 0.5, bootstrap)
        # the loss is the mean squared distance to the target: solve nothing, compare it with the hand-made target's
        expected = hand_computed_target(hopper, data, target_actor, qf1_target, qf2_target, bootstrap)
        torch.testing.assert_close(loss1, ((values1 - expected) ** 2).mean(), rtol=1e-5, atol=1e-5)
        targets[bootstrap] = expected
    has = data.next_has_guide.flatten() > 0
    assert torch.equal(targets[True][~has], targets[False][~has])  # no guide action in s': TD3's target
    assert (targets[True][has] > targets[False][has]).any() and (targets[True] >= targets[False] - 1e-6).all()


def test_the_bootstrap_needs_no_guide_bc_and_the_paper_has_neither():
    assert cli_args(camel_td3.Args, []).guide_bootstrap is True  # the default
    assert cli_args(camel_td3.Args, ["--no-guide-bootstrap"]).guide_bootstrap is False
    assert cli_args(camel_td3.Args, ["--paper"]).guide_bootstrap is False
    assert cli_args(camel_td3.Args, ["--paper", "--guide-bootstrap"]).guide_bootstrap is True  # a lever beside --paper applies
    assert cli_args(camel_td3.Args, ["--paper", "--no-paper"]).guide_bootstrap is True  # the last of the two counts


def test_fast_update_bootstraps_from_the_guide_as_the_plain_one_does(hopper):
    def one_update(fast):
        torch.manual_seed(0)
        target_actor, qf1, qf2, qf1_target, qf2_target = Actor(hopper), *(QNetwork(hopper) for _ in range(4))
        qf1_target.load_state_dict(qf1.state_dict())
        qf2_target.load_state_dict(qf2.state_dict())
        step = update_critics
        if fast:
            fuse_critics(qf1, qf2)
            fuse_critics(qf1_target, qf2_target)
            step = camel_td3_fast.update_critics
        optimizer = torch.optim.Adam([*qf1.parameters(), *qf2.parameters()], lr=3e-4)
        data = guide_batch(hopper, n=256, seed=1)
        torch.manual_seed(2)
        return step(data, target_actor, qf1, qf2, qf1_target, qf2_target, optimizer, 0.99, 0.2, 0.5, True), qf1.state_dict()

    (plain, plain_state), (fast, fast_state) = one_update(False), one_update(True)
    for a, b in zip(plain, fast):
        torch.testing.assert_close(a, b, rtol=2e-6, atol=2e-6)
    for key in plain_state:
        torch.testing.assert_close(plain_state[key], fast_state[key], rtol=2e-6, atol=2e-6)


class LinearCritic:
    """Q(s, a) = scale * sum(a): a critic whose preferences are known by hand."""

    def __init__(self, scale):
        self.scale = scale

    def __call__(self, obs, action):
        return self.scale * action.sum(1, keepdim=True)


def test_propose_acts_with_the_action_of_higher_min_q():
    obs = torch.zeros(1, 11)
    actor_action, guide_action = torch.tensor([[0.5, 0.0, 0.0]]), torch.tensor([[0.1, 0.1, 0.1]])
    # both critics prefer larger sums: min Q is 0.5 for the actor and 0.3 for the guide -> the actor
    action, took_guide = propose(LinearCritic(1.0), LinearCritic(2.0), obs, actor_action, guide_action)
    assert action is actor_action and not took_guide
    # one critic prefers smaller sums: min Q is min(0.5, -0.5) = -0.5 against min(0.3, -0.3) = -0.3 -> the guide
    action, took_guide = propose(LinearCritic(1.0), LinearCritic(-1.0), obs, actor_action, guide_action)
    assert action is guide_action and took_guide
    # a tie goes to the actor
    action, took_guide = propose(LinearCritic(1.0), LinearCritic(1.0), obs, guide_action.clone(), guide_action)
    assert not took_guide


def test_proposal_and_guide_warmup_in_a_run(workdir, hopper):
    """What the loop does with both levers: before learning starts, masked actions are the guide's plus noise of scale
    exploration-noise (not uniform in the box); the buffer holds g(s') of every transition; the share of steps that
    took the guide's action is charted."""
    (workdir / "g.py").write_text(BOOKKEEPING_GUIDE)
    width, noise = 0.6, 0.1
    checkpoint = stop_after_first_checkpoint(workdir, [
        "--llm-policy", "g.py", "--guide-proposal", "--warmup-actions", "guide", "--mask-width", str(width),
        "--total-timesteps", "100000", "--learning-starts", "800", "--batch-size", "32", "--checkpoint-frequency", "1200",
        "--eval-frequency", "100000", "--exploration-noise", str(noise)], "p")  # fmt: skip
    data = checkpoint["replay_buffer"]["data"].numpy()
    obs, next_obs, actions, _, _, low, high, _, _, guide, has, next_guide, next_has = np.split(
        data, np.cumsum([11, 11, 3, 1, 1, 3, 3, 3, 3, 3, 1, 3]), axis=1)  # fmt: skip

    assert np.all(hopper.action_space.low == -1.0) and np.all(hopper.action_space.high == 1.0)  # env units = normalised

    def guide_env_action(states):
        return np.tanh(3.0 * states[:, 2:5].astype(np.float64))

    np.testing.assert_allclose(guide, guide_env_action(obs), atol=1e-5)  # g(s) and g(s') of every row
    np.testing.assert_allclose(next_guide, guide_env_action(next_obs), atol=1e-5)
    assert np.all(has == 1.0) and np.all(next_has == 1.0)
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
    taken = [v for step, v in values["charts/guide_action_taken"]]
    assert taken and all(0.0 <= v <= 1.0 for v in taken)


def test_guide_bc_adds_the_weighted_distance_of_the_unmasked_actor_to_the_guide(hopper):
    torch.manual_seed(0)
    actor, qf1 = Actor(hopper), QNetwork(hopper)
    data = guide_batch(hopper)
    with torch.no_grad():  # by hand, before the step
        q = qf1(data.observations, actor(data.observations, data.low, data.high))
        free = actor(data.observations, -torch.ones(64, 3), torch.ones(64, 3))  # the unmasked actor
        rows = data.has_guide.flatten() > 0
        bc = ((free[rows] - data.guide_actions[rows]) ** 2).mean()  # Hopper: env units are normalised units
        expected = -q.mean() + 0.3 * q.abs().mean() * bc
    assert (~rows).any() and rows.any()  # rows without a guide action are left out of the mean
    before, copy = [p.detach().clone() for p in actor.parameters()], copy_module(actor)
    loss, bc_loss, share = update_actor_with_guide_bc(data, actor, qf1, torch.optim.SGD(actor.parameters(), lr=0.01), bc_weight=0.3)
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
    loss0, _, _ = update_actor_with_guide_bc(data, actor, qf1, torch.optim.SGD(actor.parameters(), lr=0.0), bc_weight=0.0)
    torch.testing.assert_close(loss0, -qf1(data.observations, actor(data.observations, data.low, data.high)).mean().detach())


@pytest.mark.parametrize("q_filter", [False, True], ids=["bc", "q-filtered bc"])
@pytest.mark.parametrize("masking_aware", [True, False], ids=["masking-aware", "plain actor"])
def test_fast_guide_bc_update_computes_the_plain_one(hopper, q_filter, masking_aware):
    def three_updates(fast):
        torch.manual_seed(0)
        actor, qf1, qf2 = Actor(hopper, masking_aware), QNetwork(hopper), QNetwork(hopper)
        step = update_actor_with_guide_bc
        if fast:
            fuse_critics(qf1, qf2)
            step = camel_td3_fast.update_actor_with_guide_bc
        optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4)
        results = []
        for seed in range(3):
            data = guide_batch(hopper, n=256, seed=seed)
            results.append(step(data, actor, qf1, optimizer, 0.4, qf2 if q_filter else None))
        return results, actor.state_dict()

    (plain, plain_state), (fast, fast_state) = three_updates(False), three_updates(True)
    for plain_result, fast_result in zip(plain, fast):
        for a, b in zip(plain_result, fast_result):  # loss, its BC part, the share of rows in it
            torch.testing.assert_close(a, b, rtol=2e-6, atol=2e-6)
    assert 0.0 < plain[0][2].item() < 1.0  # some rows out of the BC (no guide there, or filtered): the mask is exercised
    for key in plain_state:
        torch.testing.assert_close(plain_state[key], fast_state[key], rtol=2e-6, atol=2e-6)


def test_guide_bc_q_filter_keeps_only_the_rows_where_the_critics_value_the_guide_at_least_as_high(hopper):
    torch.manual_seed(0)
    actor, qf1, qf2 = Actor(hopper), QNetwork(hopper), QNetwork(hopper)
    data = guide_batch(hopper)
    with torch.no_grad():
        free = actor(data.observations, -torch.ones(64, 3), torch.ones(64, 3))
        q_guide = torch.min(qf1(data.observations, data.guide_actions), qf2(data.observations, data.guide_actions)).flatten()
        q_free = torch.min(qf1(data.observations, free), qf2(data.observations, free)).flatten()
        rows = (data.has_guide.flatten() > 0) & (q_guide >= q_free)
        bc = ((free[rows] - data.guide_actions[rows]) ** 2).mean()
    assert 0 < rows.sum() < (data.has_guide.flatten() > 0).sum()  # the filter keeps some rows and drops others
    _, bc_loss, share = update_actor_with_guide_bc(data, actor, qf1, torch.optim.SGD(actor.parameters(), lr=0.0), 0.3, qf2=qf2)
    torch.testing.assert_close(bc_loss, bc)
    assert share.item() == rows.float().mean().item()


def test_the_default_is_camel_plus_and_paper_turns_every_lever_off():
    default = cli_args(camel_td3.Args, [])
    assert (default.guide_bc_coef, default.guide_bc_fade, default.guide_bc_q_filter, default.warmup_actions) == (0.4, False, True, "guide")
    paper = cli_args(camel_td3.Args, ["--paper"])
    assert paper.guide_bc_coef == 0.0 and paper.warmup_actions == "uniform" and paper.guide_bootstrap is False  # guide BC off: its fade and filter do nothing
    for args in (default, paper):  # the levers that lost, and the speed-for-samples trades, are off either way
        assert args.guide_proposal is False and args.critic_updates_per_step == 1 and args.critic_layer_norm is False
    # a lever flag beside --paper still applies (the sweep runs a variant so)
    beside = cli_args(camel_td3.Args, ["--paper", "--warmup-actions", "guide"])
    assert beside.warmup_actions == "guide" and beside.guide_bc_coef == 0.0
    assert cli_args(camel_td3.Args, ["--guide-bc-coef", "0"]).warmup_actions == "guide"
    # and the paper's buffer: nine fields, no guide columns (test_camel_td3.py checks what the loop stores in them)
    assert ReplayBuffer(1, 11, 3, "cpu").widths == [11, 11, 3, 1, 1, 3, 3, 3, 3]


@pytest.mark.parametrize("flags", [["--guide-proposal"], ["--warmup-actions", "guide"], ["--guide-bc-coef", "1", "--guide-bc-q-filter"]])
def test_levers_without_a_guide_leave_plain_td3(flags, workdir):
    """Without a guide there is nothing to propose or to follow: the run is plain TD3 (no guide-action chart)."""
    from test_camel_td3 import FAST, run_trainer

    result = run_trainer(workdir, "--run-name", "r", *FAST, *flags)
    assert result.returncode == 0, result.stderr
    values, _ = scalars(workdir / "runs/r")
    assert "charts/guide_action_taken" not in values and "eval/episodic_return" in values


def test_critic_layer_norm_normalises_each_hidden_layer_before_its_relu(hopper):
    torch.manual_seed(0)
    qf = QNetwork(hopper, layer_norm=True)
    with torch.no_grad():  # layer norm's scale and shift away from their initial 1 and 0, so that they count
        for ln in (qf.ln1, qf.ln2):
            ln.weight.uniform_(0.5, 1.5)
            ln.bias.uniform_(-0.1, 0.1)
    obs, action = torch.randn(5, 11), torch.rand(5, 3) * 2 - 1

    def norm(h, ln):  # by hand: (h - mean) / sqrt(var + 1e-5) * weight + bias, over the 256 units of each row
        mean, var = h.mean(1, keepdim=True), h.var(1, unbiased=False, keepdim=True)
        return (h - mean) / torch.sqrt(var + 1e-5) * ln.weight + ln.bias

    with torch.no_grad():
        h1 = torch.relu(norm(torch.cat([obs, action], 1) @ qf.fc1.weight.T + qf.fc1.bias, qf.ln1))
        h2 = torch.relu(norm(h1 @ qf.fc2.weight.T + qf.fc2.bias, qf.ln2))
        torch.testing.assert_close(qf(obs, action), h2 @ qf.fc3.weight.T + qf.fc3.bias)
    plain = QNetwork(hopper)  # without the flag: CleanRL's critic, the same parameters and nothing else
    assert [name for name, _ in plain.named_parameters()] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias"]


def test_more_critic_updates_per_step_step_the_critics_that_many_times_and_the_actor_as_before(workdir):
    (workdir / "g.py").write_text(BOOKKEEPING_GUIDE)
    learning_starts = 300
    checkpoint = stop_after_first_checkpoint(workdir, [
        "--llm-policy", "g.py", "--critic-updates-per-step", "3", "--critic-layer-norm", "--total-timesteps", "100000",
        "--learning-starts", str(learning_starts), "--batch-size", "32", "--checkpoint-frequency", "500",
        "--eval-frequency", "100000"], "u")  # fmt: skip
    next_step = checkpoint["global_step"]  # steps 0 .. next_step - 1 ran; those after learning-starts updated
    update_steps = range(learning_starts + 1, next_step)
    assert checkpoint["q_optimizer"]["state"][0]["step"].item() == 3 * len(update_steps)
    assert checkpoint["actor_optimizer"]["state"][0]["step"].item() == sum(1 for step in update_steps if step % 2 == 0)
    assert {"ln1.weight", "ln2.bias"} <= set(checkpoint["qf1"]) and {"ln1.weight", "ln2.bias"} <= set(checkpoint["qf2_target"])


def test_zero_critic_updates_per_step_is_refused_with_one_line(workdir):
    from test_camel_td3 import FAST, run_trainer

    result = run_trainer(workdir, "--run-name", "r", *FAST, "--critic-updates-per-step", "0")
    assert result.returncode == 2 and result.stderr.strip() == "error: --critic-updates-per-step must be positive, got 0"
    assert not (workdir / "runs/r").exists()


@pytest.mark.parametrize("flags, logged", [([], [200, 300, 400, 500]), (["--guide-bc-fade"], [200]), (["--paper"], [])])
def test_guide_bc_lasts_the_run_by_default_fades_with_epsilon_if_told_and_is_off_with_paper(flags, logged, workdir):
    from test_camel_td3 import FAST, run_trainer

    # 600 steps, learning from 100, charts every 100 steps; epsilon = 1 - t / 300 reaches 0 at step 300
    result = run_trainer(workdir, "--llm-policy", "guide.py", "--run-name", "r", *FAST, "--learning-starts", "100", *flags)
    assert result.returncode == 0, result.stderr
    values, _ = scalars(workdir / "runs/r")
    assert [step for step, _ in values.get("losses/guide_bc_loss", [])] == logged
    assert all(0.0 <= share <= 1.0 for _, share in values.get("charts/guide_bc_rows", []))  # the Q-filter may keep none


def test_averaged_actor_is_the_running_average_of_the_actors_weights(hopper):
    """--averaged-actor-rate r: after each actor update avg <- avg + r (actor - avg), so after updates to a1 and a2
    from a0 the average is (1 - r)^2 a0 + r (1 - r) a1 + r a2."""
    rate = 0.25
    actor = Actor(hopper)
    averaged = copy_module(actor)
    a0 = {name: p.detach().clone() for name, p in actor.named_parameters()}
    a1 = {name: p + 0.5 for name, p in a0.items()}
    a2 = {name: p - 2.0 for name, p in a0.items()}
    for weights in (a1, a2):
        with torch.no_grad():
            for name, p in actor.named_parameters():
                p.copy_(weights[name])
        camel_td3.update_targets([actor], [averaged], rate)
    for name, p in averaged.named_parameters():
        expected = (1 - rate) ** 2 * a0[name] + rate * (1 - rate) * a1[name] + rate * a2[name]
        torch.testing.assert_close(p, expected, rtol=0, atol=1e-6)


def test_averaged_actor_only_watches_and_is_evaluated_and_saved_beside_the_actor(workdir):
    """Training is bit for bit the same with the average or without; at rate 1 the average is the actor itself after
    every actor update (so it follows each one, the last included); it is evaluated from the same start states at the
    same steps, saved beside the model, and its last return is in finished.json."""
    from test_camel_td3 import FAST, read_model, run_trainer

    for run, flags in [("off", []), ("one", ["--averaged-actor-rate", "1"]), ("slow", ["--averaged-actor-rate", "0.01"])]:
        result = run_trainer(workdir, "--llm-policy", "guide.py", "--exp-name", "a", "--run-name", run, *FAST, *flags)
        assert result.returncode == 0, result.stderr
    off, one, slow = (read_model(workdir / f"runs/{run}/a.cleanrl_model") for run in ["off", "one", "slow"])
    for trained in (one, slow):
        for whole, other in zip(off, trained):
            for key in whole:
                torch.testing.assert_close(whole[key], other[key], rtol=0, atol=0)
    assert not (workdir / "runs/off/a_averaged.cleanrl_model").exists()
    actor = off[0]
    averaged_one = read_model(workdir / "runs/one/a_averaged.cleanrl_model")[0]
    averaged_slow = read_model(workdir / "runs/slow/a_averaged.cleanrl_model")[0]
    for key in actor:
        torch.testing.assert_close(averaged_one[key], actor[key], rtol=0, atol=0)
    assert any(not torch.equal(averaged_slow[key], actor[key]) for key in actor if key.endswith("weight"))

    curves = {run: scalars(workdir / f"runs/{run}")[0] for run in ["off", "one", "slow"]}
    assert "eval/averaged_episodic_return" not in curves["off"]
    assert curves["one"]["eval/episodic_return"] == curves["off"]["eval/episodic_return"]
    assert curves["one"]["eval/averaged_episodic_return"] == curves["one"]["eval/episodic_return"]  # steps and values
    steps = [step for step, _ in curves["slow"]["eval/episodic_return"]]
    assert [step for step, _ in curves["slow"]["eval/averaged_episodic_return"]] == steps == [300, 600]
    finished = json.loads((workdir / "runs/slow/finished.json").read_text())
    assert finished["final_averaged_eval_return"] == pytest.approx(curves["slow"]["eval/averaged_episodic_return"][-1][1], rel=1e-6)
    assert "final_averaged_eval_return" not in json.loads((workdir / "runs/off/finished.json").read_text())


def test_watched_actors_are_checkpointed_so_a_killed_run_resumes_to_the_same_ones(workdir):
    """The average and the kept copy (with its candidate and score) are in the checkpoint; the run is killed after
    masking has ended (epsilon 0 from step 750), so the kept copy's bookkeeping is under way when it stops."""
    from test_camel_td3 import read_model, run_trainer

    args = ["--llm-policy", "guide.py", "--exp-name", "k", "--total-timesteps", "1500", "--learning-starts", "300",
            "--batch-size", "32", "--eval-frequency", "500", "--eval-episodes", "1", "--checkpoint-frequency", "1000",
            "--torch-threads", "1", "--averaged-actor-rate", "0.01", "--keep-best-actor"]  # fmt: skip
    assert run_trainer(workdir, *args, "--run-name", "whole").returncode == 0
    checkpoint = stop_after_first_checkpoint(workdir, args, "killed")
    assert "averaged_actor" in checkpoint and 1000 <= checkpoint["global_step"] < 1500
    assert checkpoint["kept_actor"]["candidate"] is not None or checkpoint["kept_actor"]["score"] is not None
    result = run_trainer(workdir, "--resume", "runs/killed")
    assert result.returncode == 0, result.stderr
    for name in ["averaged", "kept"]:
        whole, resumed = (read_model(workdir / f"runs/{run}/k_{name}.cleanrl_model")[0] for run in ["whole", "killed"])
        for key in whole:
            torch.testing.assert_close(whole[key], resumed[key], rtol=0, atol=0)
        curves = [scalars(workdir / f"runs/{run}")[0][f"eval/{name}_episodic_return"] for run in ["whole", "killed"]]
        assert curves[0] == curves[1]
    charts = [scalars(workdir / f"runs/{run}")[0]["charts/kept_actor_score"] for run in ["whole", "killed"]]
    assert charts[0] == charts[1] and len(charts[0]) >= 1


def test_kept_actor_keeps_the_start_of_the_unmasked_episode_pair_with_the_best_smaller_return(hopper):
    """--keep-best-actor by hand. Each episode starts with the actor's weights all equal to its letter's number; the
    returns of the unmasked episodes B..G are 100, 300, 200, 50, 400, 500. A candidate is scored by the smaller return
    of its episode and the next: B min(100, 300) = 100 is kept first, then C min(300, 200) = 200; D (50), E (50) do
    not beat 200; F min(400, 500) = 400 is kept. A's episode was masked, so it is no candidate and A-B is no pair."""
    actor = Actor(hopper)
    kept = camel_td3.KeptActor(actor)

    def episode(number, epsilon, episode_return):
        with torch.no_grad():
            for p in actor.parameters():
                p.fill_(number)
        kept.episode_started(number * 1000, epsilon)
        with torch.no_grad():  # the actor learns during the episode: the candidate is the actor at its start
            for p in actor.parameters():
                p.fill_(-number)
        return kept.episode_ended(episode_return)

    def kept_number():
        values = {float(v) for p in kept.kept.parameters() for v in p.detach().flatten()}
        assert len(values) == 1
        return values.pop()

    assert episode(1, 0.2, 5000.0) is False and kept.deployed is actor  # A, masked (its return does not count)
    assert episode(2, 0.0, 100.0) is False and kept.deployed is actor and kept.score is None  # B: no pair yet
    assert episode(3, 0.0, 300.0) is True and kept.deployed is kept.kept
    assert (kept_number(), kept.score, kept.kept_at) == (2.0, 100.0, 2000)
    assert episode(4, 0.0, 200.0) is True and (kept_number(), kept.score, kept.kept_at) == (3.0, 200.0, 3000)
    assert episode(5, 0.0, 50.0) is False and episode(6, 0.0, 400.0) is False
    assert (kept_number(), kept.score) == (3.0, 200.0)
    assert episode(7, 0.0, 500.0) is True and (kept_number(), kept.score, kept.kept_at) == (6.0, 400.0, 6000)
    # a masked episode ends the chain: neither it nor the pair across it is a candidate
    assert episode(8, 0.5, 9000.0) is False and episode(9, 0.0, 9000.0) is False
    assert episode(10, 0.0, 8000.0) is True and (kept_number(), kept.score) == (9.0, 8000.0)
    # its state, read back into a fresh one, is the same bookkeeping
    again = camel_td3.KeptActor(Actor(hopper))
    again.load_state_dict(copy_module(kept.state_dict()))
    assert (again.score, again.kept_at, again.candidate[1:]) == (8000.0, 9000, (10000, 8000.0))
    for p, q in zip(again.kept.parameters(), kept.kept.parameters()):
        assert torch.equal(p, q)


def test_kept_actor_only_watches_and_is_evaluated_and_saved_beside_the_actor(workdir):
    """Training is bit for bit the same with the kept copy or without; it is evaluated at the same steps (as the
    actor, with the actor's return, until one is kept: masking ends at step 300 here), saved beside the model as the
    copy whose score was logged last, and its last return is in finished.json."""
    from test_camel_td3 import FAST, read_model, run_trainer

    for run, flags in [("off", []), ("kept", ["--keep-best-actor"])]:
        result = run_trainer(workdir, "--llm-policy", "guide.py", "--exp-name", "a", "--run-name", run, *FAST, *flags)
        assert result.returncode == 0, result.stderr
    off, kept = (read_model(workdir / f"runs/{run}/a.cleanrl_model") for run in ["off", "kept"])
    for whole, other in zip(off, kept):
        for key in whole:
            torch.testing.assert_close(whole[key], other[key], rtol=0, atol=0)
    assert not (workdir / "runs/off/a_kept.cleanrl_model").exists()
    curves = {run: scalars(workdir / f"runs/{run}")[0] for run in ["off", "kept"]}
    assert curves["kept"]["eval/episodic_return"] == curves["off"]["eval/episodic_return"]
    assert [step for step, _ in curves["kept"]["eval/kept_episodic_return"]] == [300, 600]
    assert curves["kept"]["eval/kept_episodic_return"][0] == curves["kept"]["eval/episodic_return"][0]  # none kept by 300
    scores = [value for _, value in curves["kept"]["charts/kept_actor_score"]]
    assert len(scores) >= 1 and scores == sorted(set(scores))  # each kept copy beats the one before
    assert all(step >= 300 for _, step in curves["kept"]["charts/kept_actor_from_step"])
    kept_copy = read_model(workdir / "runs/kept/a_kept.cleanrl_model")[0]
    assert any(not torch.equal(kept_copy[key], kept[0][key]) for key in kept_copy if key.endswith("weight"))
    finished = json.loads((workdir / "runs/kept/finished.json").read_text())
    assert finished["final_kept_eval_return"] == pytest.approx(curves["kept"]["eval/kept_episodic_return"][-1][1], rel=1e-6)


@pytest.mark.parametrize("flags, message", [
    (["--averaged-actor-rate", "1.5"], "error: --averaged-actor-rate must be in [0, 1], got 1.5"),
    (["--guide-bc-coef", "-0.4"], "error: --guide-bc-coef cannot be negative (it would push the actor away from the guide), got -0.4"),
])  # fmt: skip
def test_camel_plus_values_out_of_range_are_refused_with_one_line(workdir, flags, message):
    from test_camel_td3 import FAST, run_trainer

    result = run_trainer(workdir, "--llm-policy", "guide.py", "--run-name", "r", *FAST, *flags)
    assert result.returncode == 2 and result.stderr.strip() == message
    assert not (workdir / "runs/r").exists()


def test_a_run_saved_before_paper_existed_resumes_as_the_papers_camel(tmp_path):
    """Its checkpoint's args lack --paper and the levers added since: they take the paper's values, not CAMEL+'s."""
    import camel_run

    old = {"env_id": "Hopper-v4", "seed": 3, "llm_policy": "g.py", "total_timesteps": 1000, "mask_width": 0.3}
    torch.save({"args": old, "counters": {}}, tmp_path / "checkpoint.pt")
    args, _ = camel_run.resume_args(str(tmp_path), cli_args(camel_td3.Args, []), camel_td3.Args)
    assert (args.paper, args.guide_bc_coef, args.warmup_actions, args.guide_bc_fade, args.guide_bc_q_filter) == (True, 0.0, "uniform", True, False)
    assert (args.seed, args.mask_width) == (3, 0.3) and args.guide_bootstrap is False
    # a CAMEL+ run saved before --guide-bootstrap had a flag: its buffer kept g(s'), so its target bootstrapped from it
    torch.save({"args": {**old, "paper": False, "guide_bc_coef": 0.4, "warmup_actions": "guide"}, "counters": {}}, tmp_path / "checkpoint.pt")
    assert camel_run.resume_args(str(tmp_path), cli_args(camel_td3.Args, []), camel_td3.Args)[0].guide_bootstrap is True
    # a run saved since keeps what it saved, CAMEL+ included
    new = {**old, **vars(cli_args(camel_td3.Args, ["--seed", "3"]))}
    torch.save({"args": new, "counters": {}}, tmp_path / "checkpoint.pt")
    args, _ = camel_run.resume_args(str(tmp_path), cli_args(camel_td3.Args, []), camel_td3.Args)
    assert (args.paper, args.guide_bc_coef, args.warmup_actions, args.guide_bc_fade, args.guide_bc_q_filter) == (False, 0.4, "guide", False, True)
