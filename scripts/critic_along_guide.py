"""What a trained CAMEL-TD3 agent's critics think of its guide: run the guide for whole episodes and, at every state,
compare the critics' value of the guide's action, min(Q1, Q2)(s, g(s)), with their value of the unmasked actor's,
min(Q1, Q2)(s, actor(s)), and with what following the guide from s really returned (the discounted return to the
episode's end). Then the same along the actor's own episodes. It shows whether the agent stalls below its guide because
its critics overvalue the actor's actions (docs/design.md, "CAMEL+").

    python scripts/critic_along_guide.py runs/Hopper-v4__camel_tuned__1/camel_tuned.cleanrl_model \\
        --guide policies/tuned/hopper.py --env-id Hopper-v4 --episodes 3 --json critic.json

The model is a camel_td3.py .cleanrl_model (actor, qf1, qf2); the return to go is cut at the episode's end (a time
limit of 1000 steps), so it is low for the last ~100 steps of an episode that did not fall; `--skip-last` leaves
those out of the means.
"""

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Optional

import gymnasium as gym
import numpy as np
import torch
import tyro

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo's modules, when run as scripts/...

from camel_common import UsageError  # noqa: E402
from camel_eval import write_json  # noqa: E402
from camel_guide import GuideError, full_bounds, load_guide, sample_observations, to_env_units  # noqa: E402
from camel_td3 import Actor, QNetwork  # noqa: E402


@dataclass
class Args:
    model: Annotated[str, tyro.conf.Positional]
    """a camel_td3.py .cleanrl_model (the actor's, qf1's and qf2's state dicts)"""
    guide: str
    """the guide file the run learned from (e.g. policies/tuned/hopper.py)"""
    env_id: str = "Hopper-v4"
    """the env the model was trained on"""
    episodes: int = 3
    """episodes of the guide, and of the actor, with seeds seed, seed+1, ..."""
    seed: int = 100
    """seed of the first episode (the guides' 20-episode evaluation used 100-119)"""
    gamma: float = 0.99
    """discount of the return to go (the trainer's --gamma)"""
    skip_last: int = 100
    """leave the last this many steps of an episode cut by the time limit out of the means (their return to go is cut short)"""
    json: Optional[str] = None
    """also write the per-episode numbers to this file"""


def load_networks(path, env):
    try:
        actor_state, qf1_state, qf2_state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:
        raise UsageError(f"{path}: not a camel_td3.py model ({type(e).__name__})")
    obs_dim = int(np.prod(env.observation_space.shape))
    actor = Actor(env, masking_aware=actor_state["fc1.weight"].shape[1] > obs_dim)
    layer_norm = "ln1.weight" in qf1_state
    qf1, qf2 = QNetwork(env, layer_norm), QNetwork(env, layer_norm)
    try:
        for net, state in [(actor, actor_state), (qf1, qf1_state), (qf2, qf2_state)]:
            net.load_state_dict(state)
    except RuntimeError:
        raise UsageError(f"{path}: its networks do not fit {env.spec.id}; was it trained on another env?")
    return actor, qf1, qf2


def returns_to_go(rewards, gamma):
    g, out = 0.0, np.zeros(len(rewards))
    for t in range(len(rewards) - 1, -1, -1):
        g = rewards[t] + gamma * g
        out[t] = g
    return out


def episode(env, seed, act, critic_values, gamma, skip_last):
    """One episode acting with act(obs); per step, critic_values(obs) -> (Q of the guide's action, Q of the actor's)."""
    obs, _ = env.reset(seed=seed)
    rewards, q_guide, q_actor, done, truncated = [], [], [], False, False
    while not done:
        qg, qa = critic_values(obs)
        q_guide.append(qg)
        q_actor.append(qa)
        obs, reward, terminated, truncated, _ = env.step(act(obs))
        rewards.append(float(reward))
        done = terminated or truncated
    keep = slice(0, len(rewards) - skip_last if truncated else len(rewards))
    mc = returns_to_go(rewards, gamma)[keep]
    q_guide, q_actor = np.array(q_guide)[keep], np.array(q_actor)[keep]
    return {"return": sum(rewards), "length": len(rewards), "steps_compared": len(mc), "mc_return_to_go": mc.mean(),
            "q_guide_action": q_guide.mean(), "q_actor_action": q_actor.mean(),
            "critic_prefers_actor": float(np.mean(q_actor > q_guide))}  # fmt: skip


def main(args):
    env = gym.make(args.env_id)
    action_dim = int(np.prod(env.action_space.shape))
    if not Path(args.model).is_file():
        raise UsageError(f"{args.model}: no such file")
    actor, qf1, qf2 = load_networks(args.model, env)
    try:
        guide = load_guide(args.guide, sample_observations(env), action_dim, env_id=args.env_id)
    except GuideError as e:
        raise UsageError(f"--guide {e}")
    low, high = (torch.as_tensor(b).view(1, -1) for b in full_bounds(action_dim))

    def guide_action(obs):
        g = guide(obs)
        return to_env_units(np.zeros(action_dim) if g is None else g, env.action_space)

    def actor_action(obs):
        with torch.no_grad():
            return actor(torch.as_tensor(obs, dtype=torch.float32).view(1, -1), low, high).numpy()[0]

    def critic_values(obs):
        s = torch.as_tensor(obs, dtype=torch.float32).view(1, -1).expand(2, -1)
        a = torch.as_tensor(np.stack([guide_action(obs), actor_action(obs)]), dtype=torch.float32)
        with torch.no_grad():
            q = torch.min(qf1(s, a), qf2(s, a)).view(-1)
        return float(q[0]), float(q[1])

    rows = []
    for who, act in [("guide", guide_action), ("actor", actor_action)]:
        for i in range(args.episodes):
            rows.append({"policy": who, "seed": args.seed + i, **episode(env, args.seed + i, act, critic_values, args.gamma, args.skip_last)})
    print(f"{args.model} on {args.env_id}, guide {args.guide}: along each policy's own episodes (means over steps)")
    print(f"{'episodes of':>11} {'seed':>5} {'return':>8} {'length':>6} {'MC return to go':>16} {'Q(s, guide)':>12} {'Q(s, actor)':>12} {'critic prefers actor':>21}")
    for r in rows:
        print(f"{r['policy']:>11} {r['seed']:>5} {r['return']:>8.0f} {r['length']:>6} {r['mc_return_to_go']:>16.1f} {r['q_guide_action']:>12.1f} "
              f"{r['q_actor_action']:>12.1f} {r['critic_prefers_actor']:>21.0%}")  # fmt: skip
    if args.json:
        write_json(args.json, {"model": args.model, "guide": args.guide, "env_id": args.env_id, "gamma": args.gamma,
                               "skip_last": args.skip_last, "episodes": rows})  # fmt: skip


if __name__ == "__main__":
    main(tyro.cli(Args))
