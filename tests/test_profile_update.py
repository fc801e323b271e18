"""benchmarks/profile_update.py: the physical limit it prints is the update's matrix-product FLOPs, counted by hand
here for Hopper-v4 (11 observations, 3 actions, 256 hidden units, batch 256), at the throughput it measures."""

import re
import subprocess
import sys
from types import SimpleNamespace
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def products(*shapes):
    """FLOPs of matrix products (batch, m, k, n): 2 * batch * m * k * n each."""
    return sum(2 * b * m * k * n for b, m, k, n in shapes)


def test_the_limit_counts_the_fast_updates_matrix_products_as_computed_by_hand():
    batch, hidden, obs, act = 256, 256, 11, 3
    actor_in, critic_in = obs + 2 * act, obs + act  # the masking-aware actor also sees the box's low and high
    actor_forward = [(1, batch, actor_in, hidden), (1, batch, hidden, hidden), (1, batch, hidden, act)]
    twin_critic_forward = [(2, batch, critic_in, hidden), (2, batch, hidden, hidden), (2, batch, hidden, 1)]
    critic_update = products(
        *actor_forward,  # the target actor in s'
        *twin_critic_forward,  # the target critics in s'
        *twin_critic_forward,  # the critics in s
        (2, batch, 1, hidden), (2, batch, hidden, hidden),  # back through layers 3 and 2 to the hidden units
        (2, hidden, batch, critic_in), (2, hidden, batch, hidden), (2, 1, batch, hidden),  # the weight gradients
    )  # fmt: skip
    actor_update = products(
        *actor_forward,
        (1, batch, critic_in, hidden), (1, batch, hidden, hidden), (1, batch, hidden, 1),  # Q1(s, actor(s))
        (1, batch, hidden, hidden), (1, batch, hidden, act),  # back through Q1 to the action
        (1, batch, act, hidden), (1, batch, hidden, hidden),  # back through the actor's layers 3 and 2
        (1, hidden, batch, actor_in), (1, hidden, batch, hidden), (1, act, batch, hidden),  # its weight gradients
    )  # fmt: skip
    per_update = critic_update + actor_update / 2  # the actor learns every second step (policy_frequency 2)
    assert per_update == 404_553_728  # 316,669,952 + 175,767,552 / 2

    # CAMEL+ (the default), per update (it makes two per env step): the critics' update is TD3's; the actor on the batch
    # twice (its bounds and [-1, 1]), Q1 at its action, both critics at g(s) and at the unmasked action (the Q-filter),
    # back through twice
    twice = 2 * batch
    plus_critic_update = critic_update
    plus_actor_update = products(
        (1, twice, actor_in, hidden), (1, twice, hidden, hidden), (1, twice, hidden, act),  # the actor, both bounds
        (1, batch, critic_in, hidden), (1, batch, hidden, hidden), (1, batch, hidden, 1),  # Q1(s, actor(s, low, high))
        (1, batch, hidden, hidden), (1, batch, hidden, act),  # back through Q1 to the action
        (2, twice, critic_in, hidden), (2, twice, hidden, hidden), (2, twice, hidden, 1),  # the Q-filter's critics
        (1, twice, act, hidden), (1, twice, hidden, hidden),  # back through the actor's layers 3 and 2
        (1, hidden, twice, actor_in), (1, hidden, twice, hidden), (1, act, twice, hidden),  # its weight gradients
    )  # fmt: skip
    assert plus_critic_update + plus_actor_update / 2 == 528_744_448  # 316,669,952 + 424,148,992 / 2

    for flags, expected in [(["--no-camel-plus"], per_update), ([], plus_critic_update + plus_actor_update / 2)]:
        command = [sys.executable, "benchmarks/profile_update.py", "--steps", "300", "--profiled", "20", "--repeats", "1", "--rows", "1", *flags]
        result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        mflop = float(re.search(r"matrix products per update: ([\d.]+) MFLOP", result.stdout).group(1))
        assert mflop == round(expected / 1e6, 1), result.stdout
        rates = [float(r) for r in re.findall(r"x\d+ ([\d.]+) GFLOP/s", result.stdout)]
        limit_ms = float(re.search(r"limit \(those FLOPs at [\d.]+ GFLOP/s\): ([\d.]+) ms per update", result.stdout).group(1))
        # the printed rate is rounded to 0.1 GFLOP/s and the limit to 0.01 ms: the limit lies between the FLOPs at the
        # highest and the lowest rate that rounds to the printed one, give or take the limit's own rounding
        fastest = max(rates)
        low, high = expected / (fastest + 0.05) / 1e6 - 0.005, expected / (fastest - 0.05) / 1e6 + 0.005
        assert len(rates) == 2 and low <= limit_ms <= high, result.stdout
    alone_ms = float(re.search(r"the same products alone, back to back \(warm, contiguous operands\): ([\d.]+) ms", result.stdout).group(1))
    assert alone_ms > 0, result.stdout


def test_products_alone_replays_each_shape_as_often_per_update_as_the_profile_saw_it(monkeypatch):
    sys.path.insert(0, str(REPO / "benchmarks"))
    import profile_update

    seen = []
    monkeypatch.setattr(profile_update, "PRODUCTS", {
        "aten::addmm": lambda *operands: seen.append(("addmm", [tuple(o.shape) for o in operands])),
        "aten::bmm": lambda *operands: seen.append(("bmm", [tuple(o.shape) for o in operands])),
    })  # fmt: skip
    events = [  # 2 updates profiled: addmm three times (the actor's, once per update and once more every second),
        # bmm twice; aten::linear wraps addmm and is not replayed
        SimpleNamespace(key="aten::addmm", count=3, input_shapes=[[256], [256, 17], [17, 256], [], []]),
        SimpleNamespace(key="aten::bmm", count=2, input_shapes=[[2, 256, 1], [2, 1, 256]]),
        SimpleNamespace(key="aten::linear", count=3, input_shapes=[[256, 17], [256, 17], [256]]),
    ]
    assert profile_update.products_alone(events, updates=2, repeats=4) > 0
    one_pass = [("addmm", [(256,), (256, 17), (17, 256)])] * 3 + [("bmm", [(2, 256, 1), (2, 1, 256)])] * 2
    assert seen == one_pass * 5  # an untimed pass, then the 4 timed ones


@pytest.mark.parametrize("camel_plus", [False, True], ids=["paper", "camel+"])
def test_the_staged_fast_update_is_the_fast_update_bit_for_bit(camel_plus):
    # profile_update.td3_update(stages=...) times the fast update stage by stage: the same update, or its times say nothing
    sys.path.insert(0, str(REPO / "benchmarks"))
    import torch
    from camel_td3 import make_env
    from profile_update import filled_buffer, td3_update

    env = make_env("Hopper-v4", 1, 0, False, "test")()
    rb = filled_buffer(env, 300, guide_actions=camel_plus)
    stages = {}
    runs = []
    for update in [td3_update(env, rb, camel_plus=camel_plus), td3_update(env, rb, stages=stages, camel_plus=camel_plus)]:
        torch.manual_seed(2)  # the same batches and target noise
        for step in range(4):
            update(step)
        runs.append([{k: v.clone() for k, v in net.state_dict().items()} for net in update.networks])
    for fast, staged in zip(*runs):
        assert all(torch.equal(fast[key], staged[key]) for key in fast)
    assert runs[0][0]["fc2.weight"].sum() != td3_update(env, rb, camel_plus=camel_plus).networks[0].state_dict()["fc2.weight"].sum()  # it learned
    assert len(stages) == 8 and all(seconds > 0 for seconds in stages.values())
