"""What both trainers define alike (tests/test_trainers_agree.py keeps their copies equal): CAMEL's bounds (the box around the guide's
action, clipped to the action space), the epsilon-masking schedule and a step's draw of its bounds; the replay
buffer that keeps the bounds of s and of s'; unmasked evaluation from fixed start states; a pair of critics as one
batched network that stays CleanRL's qf1 and qf2."""

import numpy as np
import pytest
import torch

import camel_sac
import camel_td3
from camel_td3 import ReplayBuffer, draw_bounds, epsilon_at, make_env, mask_bounds, masking_probability
from camel_utils.fast_update import BatchedCritics
from camel_utils.run import evaluate
from camel_utils.guide import Guide


# --- the CAMEL action space: bounds and schedule ---------------------------------------------------


def test_mask_bounds_are_the_guide_action_plus_minus_width_clipped_to_the_action_space():
    low, high = mask_bounds(np.array([0.9, -0.95, 0.0]), 0.3)
    np.testing.assert_allclose(low, [0.6, -1.0, -0.3])
    np.testing.assert_allclose(high, [1.0, -0.65, 0.3])


def test_masking_probability_falls_linearly_from_one_to_zero_then_stays_zero():
    assert [masking_probability(t, 1000, 0.5) for t in [0, 100, 250, 500, 501, 999]] == [1.0, 0.8, 0.5, 0.0, 0.0, 0.0]
    assert masking_probability(500, 1000, 1.0) == 0.5


@pytest.mark.parametrize("trainer", [camel_td3, camel_sac], ids=["td3", "sac"])
def test_epsilon_of_a_step_is_the_schedule_or_one_without_epsilon_masking_or_zero_without_a_guide(trainer):
    args = trainer.Args(total_timesteps=1000, epsilon_fraction=0.5)
    guide = Guide(lambda obs: np.zeros(3), action_dim=3, name="g")
    assert [epsilon_at(t, args, guide) for t in [0, 250, 600]] == [1.0, 0.5, 0.0]
    assert epsilon_at(600, trainer.Args(epsilon_masking=False), guide) == 1.0
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


# --- the replay buffer, with the bounds of s and of s' ---------------------------------------------


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


# --- unmasked evaluation ----------------------------------------------------------------------------


class RecordingPolicy:
    """A constant action, recording the bounds and observations it is called with."""

    def __init__(self, action):
        self.action, self.bounds, self.observations = action, set(), []

    def __call__(self, obs, low, high):
        self.bounds.add((tuple(low[0].tolist()), tuple(high[0].tolist())))
        self.observations.append(obs[0].clone())
        return torch.as_tensor(self.action, dtype=torch.float32).unsqueeze(0)


def test_evaluation_acts_under_the_full_bounds_from_the_same_start_states_each_time():
    env = make_env("Pendulum-v1", 0, 1, False, "r")()
    first, second = RecordingPolicy([1.0]), RecordingPolicy([1.0])
    first_result = evaluate(first, env, episodes=2, seed=7, device="cpu")
    env.reset(seed=123)  # whatever happened to the env in between
    second_result = evaluate(second, env, episodes=2, seed=7, device="cpu")
    assert first.bounds == second.bounds == {((-1.0,), (1.0,))}  # unmasked: the whole normalised action space
    assert first_result == second_result and first_result[1] == 200.0  # Pendulum's episodes are 200 steps
    starts = [first.observations[0], first.observations[200]]
    torch.testing.assert_close(torch.stack(starts), torch.stack([second.observations[0], second.observations[200]]))
    # the return is the sum of the env's rewards for those actions: replay episode 1 by hand
    env.reset(seed=8)
    expected = sum(float(env.step(np.array([1.0], dtype=np.float32))[1]) for _ in range(200))
    env.reset(seed=7)
    expected = (expected + sum(float(env.step(np.array([1.0], dtype=np.float32))[1]) for _ in range(200))) / 2
    assert first_result[0] == pytest.approx(expected)


# --- a pair of critics as one batched network -----------------------------------------------------------------


def critic_pair(seed=0):
    env = make_env("Hopper-v4", 0, 0, False, "r")()
    torch.manual_seed(seed)
    return camel_td3.QNetwork(env), camel_td3.QNetwork(env)


def test_batched_critics_give_both_critics_values_and_keep_their_parameters_names_shapes_and_values():
    qf1, qf2 = critic_pair()
    before = [{key: value.clone() for key, value in net.state_dict().items()} for net in (qf1, qf2)]
    obs, actions = torch.randn(64, 11), torch.rand(64, 3) * 2 - 1
    with torch.no_grad():
        separate = torch.stack([qf1(obs, actions).flatten(), qf2(obs, actions).flatten()])
    qf = BatchedCritics(qf1, qf2)
    for net, state in zip((qf1, qf2), before):
        assert net.state_dict().keys() == state.keys()
        assert all(torch.equal(net.state_dict()[key], state[key]) for key in state)
        assert all(p.is_contiguous() for p in net.parameters())
    torch.testing.assert_close(qf(obs, actions), separate, rtol=1e-5, atol=1e-6)  # float rounding apart, the two calls


def test_a_change_to_qf1_or_qf2_in_place_is_a_change_to_the_batched_pair():
    qf1, qf2 = critic_pair()
    qf = BatchedCritics(qf1, qf2)
    obs, actions = torch.randn(8, 11), torch.rand(8, 3)
    with torch.no_grad():
        expected = qf(obs, actions)
        qf1.fc3.bias.add_(1.0)  # as an optimiser's step or the soft target update changes it
    torch.testing.assert_close(qf(obs, actions), expected + torch.tensor([[1.0], [0.0]]))
    qf2.load_state_dict({key: torch.zeros_like(value) for key, value in qf2.state_dict().items()})  # a checkpoint's restore
    assert torch.count_nonzero(qf(obs, actions)[1]) == 0


def test_autograd_through_the_pair_hands_each_critic_its_own_gradient():
    qf1, qf2 = critic_pair()
    twins = critic_pair()  # the same weights, computed separately
    qf = BatchedCritics(qf1, qf2)
    obs, actions, y = torch.randn(64, 11), torch.rand(64, 3) * 2 - 1, torch.randn(64)
    ((qf(obs, actions) - y) ** 2).mean(1).sum().backward()
    separate = torch.stack([twins[0](obs, actions).flatten(), twins[1](obs, actions).flatten()])
    ((separate - y) ** 2).mean(1).sum().backward()
    for mine, theirs in zip([*qf1.parameters(), *qf2.parameters()], [*twins[0].parameters(), *twins[1].parameters()]):
        torch.testing.assert_close(mine.grad, theirs.grad, rtol=1e-5, atol=1e-6)
    assert all(w.grad is None for w in qf.weights)  # handed on, not kept
    ((qf(obs, actions) - y) ** 2).mean(1).sum().backward()  # a second backward adds up, as autograd's would
    for mine, theirs in zip([*qf1.parameters(), *qf2.parameters()], [*twins[0].parameters(), *twins[1].parameters()]):
        torch.testing.assert_close(mine.grad, 2 * theirs.grad, rtol=1e-5, atol=1e-6)
    optimizer = torch.optim.SGD([*qf1.parameters(), *qf2.parameters()], lr=0.1)
    stepped = [p - 0.1 * p.grad for p in [*qf1.parameters(), *qf2.parameters()]]
    optimizer.step()  # an optimiser over qf1's and qf2's parameters steps the pair
    for p, value in zip([*qf1.parameters(), *qf2.parameters()], stepped):
        torch.testing.assert_close(p.detach(), value.detach())
    qf1.zero_grad()
    qf2.zero_grad()
    actions.requires_grad_(True)  # as the actor's action is
    qf(obs, actions, fixed=True).sum().backward()
    assert actions.grad is not None and all(p.grad is None for p in [*qf1.parameters(), *qf2.parameters()])  # fixed: for the actor only
