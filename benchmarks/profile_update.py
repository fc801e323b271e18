"""Where a TD3 update's time goes, per operator: camel_td3.py's own update functions, on a replay buffer filled by
a real run of the env, profiled with torch.profiler.

Prints the operators by total time (each shape apart), then the time split into matrix products, the optimiser,
and everything else, in microseconds per update (one critic update, and the actor and target update every
policy_frequency steps, as in training; every hyperparameter is camel_td3.py's default). Then the physical limit:
the update's matrix-product FLOPs (as the profiler counts them, 2 * m * k * n per product) at the best matrix-product
throughput this CPU reaches (GFLOP/s of a warm 256x256x256 and 1024x1024x1024 product, one thread), beside the
update's measured time, so the headroom above the limit is visible; and the update's own products (their shapes and
calls, from the profile) called back to back with nothing between them, the least time they take with torch's kernels. Run it on a quiet machine; it takes about a minute.

    python benchmarks/profile_update.py                      # the default fast update (camel_utils/fast_update.py)
    python benchmarks/profile_update.py --no-fast-update     # the plain update in camel_td3.py (autograd)
    python benchmarks/profile_update.py --no-flush-denormal  # IEEE denormals
"""

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import tyro

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import camel_plus_td3  # noqa: E402  (the paper's CAMEL's update functions, the same text in camel_td3.py, and CAMEL+'s)
from camel_utils import fast_update as fast  # noqa: E402
from camel_plus_td3 import ReplayBuffer, make_env  # noqa: E402
from camel_utils.machine import cpu_model, cpu_simd  # noqa: E402
from camel_utils.guide import full_bounds, to_env_units  # noqa: E402

MATMULS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear"}
PRODUCTS = {"aten::mm": torch.mm, "aten::bmm": torch.bmm, "aten::addmm": torch.addmm, "aten::baddbmm": torch.baddbmm}  # the kernels


@dataclass
class Args:
    env_id: str = "Hopper-v4"
    """env whose observations and actions fill the replay buffer"""
    steps: int = 20000
    """env steps of random actions filling the buffer, then updates to warm up (Adam's moments decay as in training)"""
    profiled: int = 300
    """updates profiled after the warm-up"""
    fast_update: bool = True
    """camel_td3.py's --fast-update"""
    flush_denormal: bool = True
    """camel_td3.py's --flush-denormal"""
    masking_aware: bool = True
    """the masking-aware actor (CAMEL) or CleanRL's (plain TD3)"""
    camel_plus: bool = True
    """CAMEL+'s update, camel_plus_td3.py's (Q-filtered guide BC in the actor's; the buffer holds the guide's
    actions; CAMEL+ makes two such critic updates per env step, and this times one): --no-camel-plus for the paper's CAMEL"""
    rows: int = 25
    """operator rows printed"""
    repeats: int = 5
    """timed repeats of the updates and of the throughput products (their median is printed)"""
    stages: bool = False
    """also time the fast update stage by stage (a table of each stage's microseconds per update)"""


def matmul_flops(events):
    """FLOPs of the matrix products among the profiler's events (recorded with with_flops=True)."""
    return sum(event.flops for event in events if event.key in MATMULS)


def matmul_gflops(size, repeats=5):
    """GFLOP/s of a warm size x size x size float32 matrix product on this thread: the median of repeats."""
    a, b = torch.randn(1, size, size), torch.randn(1, size, size)
    calls = max(1, 2**27 // size**3)  # about a quarter second of work per repeat
    torch.bmm(a, b)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            torch.bmm(a, b)
        rates.append(2 * size**3 * calls / (time.perf_counter() - start) / 1e9)
    return float(np.median(rates))


def products_alone(events, updates, repeats=5):
    """Milliseconds per update of the update's own matrix products (the kernels among the profiler's events of
    `updates` updates, each shape called as often as it was there) back to back on warm, contiguous operands with
    nothing between them: the least time these products take with torch's kernels on this thread, the small and oddly
    shaped ones included. The median of repeats, after one untimed pass."""
    calls = [(PRODUCTS[event.key], [torch.randn(shape) for shape in event.input_shapes if shape], event.count) for event in events if event.key in PRODUCTS]

    def all_updates():
        for product, operands, count in calls:
            for _ in range(count):
                product(*operands)

    all_updates()
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        all_updates()
        timings.append((time.perf_counter() - start) / updates)
    return float(np.median(timings)) * 1e3


def filled_buffer(env, steps, seed=1, guide_actions=False):
    """A replay buffer of `steps` transitions of `env` under uniform random actions (unmasked bounds), as the warm-up
    of a training run fills it; with guide_actions (CAMEL+'s buffer), a guide's action in s too (uniform random
    ones: the update's cost does not depend on which)."""
    obs_dim, action_dim = int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape))
    rb = ReplayBuffer(steps, obs_dim, action_dim, "cpu", keep_guide_actions=guide_actions)
    rng = np.random.default_rng(seed)
    low, high = full_bounds(action_dim)
    obs, _ = env.reset(seed=seed)
    for _ in range(steps):
        action = to_env_units(rng.uniform(low, high), env.action_space)
        next_obs, reward, terminated, truncated, _ = env.step(action)
        guide = to_env_units(rng.uniform(low, high), env.action_space) if guide_actions else None
        rb.add(obs, next_obs, action, reward, terminated, low, high, low, high, guide)
        obs = env.reset()[0] if terminated or truncated else next_obs
    return rb


def td3_update(env, rb, fast_update=True, masking_aware=True, compile_options=None, fused_adam=True, stages=None, camel_plus=False):
    """One TD3 update as camel_td3.py's loop makes it, as update(step): a batch from rb, the critics' update, and
    every policy_frequency steps the actor's and the targets' (every hyperparameter camel_td3.py's default, fresh
    networks from torch seed 1). fast_update: camel_utils/fast_update.py's update, else the plain one (autograd).
    compile_options: torch.compile's keyword arguments for the update functions (None: eager), as --compile does.
    stages: a dict that, for the fast eager update, sums each stage's seconds under its name. camel_plus: CAMEL+'s
    update (rb must hold the guide's actions)."""
    td3 = camel_plus_td3.Args()  # the trainers' defaults: learning rate, batch size, gamma, noise, tau, policy frequency
    torch.manual_seed(1)
    actor, target_actor = camel_plus_td3.Actor(env, masking_aware), camel_plus_td3.Actor(env, masking_aware)
    qf1, qf2, qf1_target, qf2_target = (camel_plus_td3.QNetwork(env) for _ in range(4))
    target_actor.load_state_dict(actor.state_dict())
    qf1_target.load_state_dict(qf1.state_dict())
    qf2_target.load_state_dict(qf2.state_dict())
    update_critics, update_actor = camel_plus_td3.update_critics, camel_plus_td3.update_actor
    update_actor_with_guide_bc = camel_plus_td3.update_actor_with_guide_bc
    if fast_update:  # as camel_td3.py does it
        fast.fuse_critics(qf1, qf2)
        fast.fuse_critics(qf1_target, qf2_target)
        update_critics, update_actor = fast.update_critics, fast.update_actor
        update_actor_with_guide_bc = fast.update_actor_with_guide_bc
    q_optimizer = torch.optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=td3.learning_rate, fused=fused_adam)
    actor_optimizer = torch.optim.Adam(actor.parameters(), lr=td3.learning_rate, fused=fused_adam)

    def critic_step(data):
        return update_critics(data, target_actor, qf1, qf2, qf1_target, qf2_target, q_optimizer, td3.gamma, td3.policy_noise,
                              td3.noise_clip)  # fmt: skip

    def actor_step(data):
        if camel_plus:
            update_actor_with_guide_bc(data, actor, qf1, qf2, actor_optimizer, camel_plus_td3.Args().guide_bc_coef)
        else:
            update_actor(data, actor, qf1, actor_optimizer)
        camel_plus_td3.update_targets([actor, qf1, qf2], [target_actor, qf1_target, qf2_target], td3.tau)

    if compile_options is not None:
        critic_step, actor_step = torch.compile(critic_step, **compile_options), torch.compile(actor_step, **compile_options)

    def update(step):
        data = rb.sample(td3.batch_size)
        critic_step(data)
        if step % td3.policy_frequency == 0:
            actor_step(data)

    if stages is not None:
        update = staged_fast_update(stages, td3, actor, target_actor, qf1, qf2, qf1_target, qf2_target, q_optimizer, actor_optimizer, rb,
                                    camel_plus)  # fmt: skip
    update.networks = [actor, qf1, qf2, target_actor, qf1_target, qf2_target]  # for tests
    return update


def seconds_per_update(update, count):
    """Seconds per call of update(step) over steps 0 to count - 1, timed together."""
    start = time.perf_counter()
    for step in range(count):
        update(step)
    return (time.perf_counter() - start) / count


def staged_fast_update(stages, td3, actor, target_actor, qf1, qf2, qf1_target, qf2_target, q_optimizer, actor_optimizer, rb,
                       camel_plus=False):  # fmt: skip
    """camel_utils/fast_update.py's update (the paper's CAMEL, or CAMEL+'s) stage by stage, each stage's seconds added
    to stages[name]: the same operations as fast_update.update_critics and update_actor(_with_guide_bc), with clocks
    between them."""
    critics, critics_target = fast.fused(qf1, qf2), fast.fused(qf1_target, qf2_target)
    clock = time.perf_counter

    def timed(name, start):
        now = clock()
        stages[name] = stages.get(name, 0.0) + now - start
        return now

    def update(step):
        start = clock()
        data = rb.sample(td3.batch_size)
        start = timed("sample a batch", start)
        with torch.no_grad():
            next_actions = fast.target_action(data, target_actor, td3.policy_noise, td3.noise_clip)
            start = timed("target actor in s' (1 product of 256x256x256)", start)
            next_q = critics_target(data.next_observations, next_actions).min(0).values
            start = timed("target critics in s' (2 products)", start)
            y = data.rewards.flatten() + (1 - data.dones.flatten()) * td3.gamma * next_q
            fast.twin_critic_grads(critics, data.observations, data.actions, y)
            start = timed("critics forward and backward (6 products)", start)
        q_optimizer.step()
        start = timed("critics' Adam step", start)
        if step % td3.policy_frequency == 0:
            with torch.no_grad():
                if camel_plus:
                    fast.actor_grads_with_guide_bc(actor, critics, data, camel_plus_td3.Args().guide_bc_coef)
                else:
                    fast.actor_grads(actor, critics, data.observations, data.low, data.high)
            name = "CAMEL+: actor's gradient with Q-filtered guide BC" if camel_plus else "actor's gradient (5 products)"
            start = timed(name + ", every 2nd update", start)
            actor_optimizer.step()
            start = timed("actor's Adam step, every 2nd update", start)
            camel_plus_td3.update_targets([actor, qf1, qf2], [target_actor, qf1_target, qf2_target], td3.tau)
            timed("target networks' lerp, every 2nd update", start)

    return update


def main(args):
    torch.set_num_threads(1)
    torch.set_flush_denormal(args.flush_denormal)
    env = make_env(args.env_id, 1, 0, False, "profile")()
    update = td3_update(env, filled_buffer(env, args.steps, guide_actions=args.camel_plus), args.fast_update, args.masking_aware,
                        camel_plus=args.camel_plus)  # fmt: skip
    method = "CAMEL+" if args.camel_plus else "the paper's CAMEL"
    print(f"update: {method}, {'fast' if args.fast_update else 'plain'}")
    if args.stages:  # each stage's share, timed apart (the clocks cost a little themselves)
        stages = {}
        staged = td3_update(env, filled_buffer(env, args.steps, guide_actions=args.camel_plus), args.fast_update, args.masking_aware,
                            stages=stages, camel_plus=args.camel_plus)  # fmt: skip
        seconds_per_update(staged, args.steps)
        stages.clear()
        seconds_per_update(staged, args.profiled * args.repeats)
        total = sum(stages.values())
        print("| stage | us per update | share |\n|---|---|---|")
        for name, seconds in stages.items():
            print(f"| {name} | {seconds / (args.profiled * args.repeats) * 1e6:.0f} | {seconds / total:.0%} |")

    print(f"{args.steps} warm-up updates: {seconds_per_update(update, args.steps) * 1e3:.2f} ms per update")
    # the update without the profiler, the same steps as the profiled loop below
    update_seconds = float(np.median([seconds_per_update(update, args.profiled) for _ in range(args.repeats)]))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True, with_flops=True) as profile:
        for step in range(args.profiled):
            update(step)
    events = profile.key_averages(group_by_input_shape=True)
    print(events.table(sort_by="self_cpu_time_total", row_limit=args.rows, max_name_column_width=32, max_shapes_column_width=60))
    split = {"matrix products": 0.0, "optimiser (Adam)": 0.0, "other operators": 0.0}
    for event in events:
        if event.key in MATMULS:
            split["matrix products"] += event.self_cpu_time_total
        elif "adam" in event.key.lower():
            split["optimiser (Adam)"] += event.self_cpu_time_total
        else:
            split["other operators"] += event.self_cpu_time_total
    total = sum(split.values())
    for name, us in split.items():
        print(f"{name:18s} {us / args.profiled:8.0f} us per update  ({us / total:.0%})")
    flops = matmul_flops(events) / args.profiled  # a sum over the shapes, as over the calls
    rates = {f"{n}x{n}x{n}": matmul_gflops(n, args.repeats) for n in (256, 1024)}
    best = max(rates.values())
    limit = flops / best / 1e9
    print(f"\nCPU: {cpu_model()} ({' '.join(cpu_simd())}; torch kernels: {torch.backends.cpu.get_cpu_capability()}), one thread")
    print(f"matrix products per update: {flops / 1e6:.1f} MFLOP")
    print("matrix-product throughput: " + ", ".join(f"{name} {rate:.1f} GFLOP/s" for name, rate in rates.items()))
    print(f"limit (those FLOPs at {best:.1f} GFLOP/s): {limit * 1e3:.2f} ms per update, {1 / limit:.0f} updates/s")
    alone = products_alone(events, args.profiled, args.repeats)
    print(f"the same products alone, back to back (warm, contiguous operands): {alone:.2f} ms per update")
    print(f"measured (median of {args.repeats} x {args.profiled} updates, no profiler): {update_seconds * 1e3:.2f} ms per update, "
          f"{1 / update_seconds:.0f} updates/s: {update_seconds / limit:.2f}x the limit, {update_seconds * 1e3 / alone:.2f}x the products alone")


if __name__ == "__main__":
    main(tyro.cli(Args))
