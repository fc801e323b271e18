# CAMEL-TD3: TD3 whose exploration is guided by a hard-coded policy written by a language model.
# Paper: "CAMEL: Continuous Action Masking Enabled by Large Language Models" (arXiv 2502.11896).
# Built on the shape of CleanRL's td3_continuous_action.py; the CAMEL additions are marked "CAMEL:".
#   - guide g(s): an LLM-written `policy(obs)` file, a trained expert, a random action, or none (plain TD3)
#   - action masking: with probability epsilon, the action is confined to [g(s) - w, g(s) + w]
#   - masking-aware actor: the actor sees (obs, low, high) and maps its tanh output into the box
#   - epsilon masking: epsilon falls linearly from 1 to 0, so the agent ends free of the guide
# Guides are loaded and checked in camel_guide.py; run bookkeeping (argument checks, checkpoints, resuming,
# progress) is in camel_run.py, as CleanRL keeps such helpers in cleanrl_utils/.
import logging
import os
import random
import sys
import time
import warnings
from dataclasses import dataclass
from typing import Annotated, NamedTuple, Optional

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import tyro
from torch.utils.tensorboard import SummaryWriter

from camel_guide import GuideError, guide_file_record, action_scale_bias, full_bounds, make_guide, to_env_units, track_robot_camera
from camel_run import (
    Checkpoints, CompiledOrEager, Progress, StopRequest, check_common_args, check_new_run_dir, checked_env, finish_run,
    resume_args, updates_happen,
)  # fmt: skip

# The paper's envs are the v4 MuJoCo ones; Gymnasium's reminder that v5 exists is not news here.
warnings.filterwarnings("ignore", message=r".*is out of date\. You should consider upgrading")


@dataclass
class Args:
    exp_name: str = os.path.basename(__file__)[: -len(".py")]
    """the name of this experiment"""
    seed: int = 1
    """seed of the experiment"""
    torch_deterministic: bool = True
    """run cuDNN deterministically (turn off with --no-torch-deterministic)"""
    cuda: bool = True
    """if toggled, cuda will be enabled by default"""
    track: bool = False
    """if toggled, this experiment will be tracked with Weights and Biases (needs `pip install wandb`)"""
    wandb_project_name: str = "camel"
    """the wandb's project name"""
    wandb_entity: Optional[str] = None
    """the entity (team) of wandb's project"""
    capture_video: bool = False
    """whether to capture videos of the agent performances (check out `videos` folder)"""
    save_model: bool = False
    """whether to save the model as `runs/{run_name}/{exp_name}.cleanrl_model` (CleanRL's format)"""

    # Algorithm specific arguments
    env_id: str = "Hopper-v4"
    """the id of the environment (any Gymnasium env with a Box action space)"""
    total_timesteps: int = 1000000
    """total timesteps of the experiments"""
    learning_rate: float = 3e-4
    """the learning rate of the optimizer"""
    buffer_size: int = int(1e6)
    """the replay memory buffer size"""
    gamma: float = 0.99
    """the discount factor gamma"""
    tau: float = 0.005
    """target smoothing coefficient"""
    batch_size: int = 256
    """the batch size of sample from the replay memory"""
    policy_noise: float = 0.2
    """the scale of policy noise"""
    exploration_noise: float = 0.1
    """the scale of exploration noise"""
    learning_starts: int = 5000
    """timestep to start learning (CleanRL's TD3 waits 25000; from 5000 CAMEL's unmasked agent gains while masking is
    on and ends higher, on Hopper-v4 and Ant-v4: docs/design.md)"""
    policy_frequency: int = 2
    """the frequency of training policy (delayed)"""
    noise_clip: float = 0.5
    """noise clip parameter of the Target Policy Smoothing Regularization"""

    # CAMEL: the guide g(s), at most one of these (none gives the plain TD3 baseline)
    llm_policy: Optional[str] = None
    """path of a guide file defining `policy(obs) -> action in [-1, 1]` (e.g. policies/hopper.py)"""
    expert_model: Optional[str] = None
    """guide from a trained actor: a `.cleanrl_model` file, or a Hugging Face repo id such as
    cleanrl/Hopper-v4-td3_continuous_action-seed1 (downloaded once, then cached)"""
    random_guide: bool = False
    """guide with a uniformly random action at every step (the paper's random-masking control)"""
    # CAMEL: masking
    mask_width: float = 0.6
    """half-width w of the box [g(s) - w, g(s) + w] in the normalised action space [-1, 1]
    (0.6 was chosen on Hopper-v4 from 0.1, 0.3, 0.6, 1.0: see the README)"""
    epsilon_fraction: float = 0.5
    """epsilon masking: the masking probability falls linearly from 1 to 0 over this fraction of total-timesteps"""
    masking_aware: bool = True
    """the actor sees the action bounds (off: the 'w/o MA' ablation, actor sees only obs)"""
    epsilon_masking: bool = True
    """mask with a decaying probability (off: the 'w/o EM' ablation, every step is masked)"""
    guide_timeout: float = 1.0
    """seconds a single guide call may take before that step goes unmasked"""

    # Evaluation, checkpoints and run bookkeeping
    eval_frequency: int = 5000
    """evaluate the actor without any mask every this many steps (logged as eval/episodic_return)"""
    eval_episodes: int = 5
    """deterministic episodes per evaluation"""
    checkpoint_frequency: int = 50000
    """save a resumable checkpoint at the first episode end after every this many steps (0: never)"""
    resume: Optional[str] = None
    """continue an interrupted run: its folder (runs/{run_name}) or its checkpoint.pt; other flags are taken from it"""
    run_name: Annotated[
        Optional[str], tyro.conf.arg(help_behavior_hint="(default: {env_id}__{exp_name}__{seed}__{time}, as CleanRL)")
    ] = None
    """name of the run folder under runs/"""
    torch_threads: int = 1
    """threads torch may use (1 holds up beside other runs and work; 0: torch's default, all cores, for an idle machine)"""

    # Speed (the same algorithm, computed faster; see docs/benchmark.md)
    flush_denormal: bool = True
    """treat float32 values under 1.2e-38 as 0 on the CPU, as XLA does: Adam's moments of dead ReLU units decay
    into that range, where x86 arithmetic runs many times slower (off: IEEE denormals, torch's default)"""
    fused_critics: bool = True
    """run both critics as one batched network (off: CleanRL's two separate QNetworks)"""
    manual_grads: bool = True
    """compute the update's gradients with the layers' derivatives written out, not with autograd (the same numbers,
    less overhead); used with --fused-critics, not with --compile (off: autograd, as CleanRL)"""
    compile: bool = False
    """torch.compile the update and the acting step (falls back to eager, with a message, where it fails)"""
    cudagraphs: bool = True
    """on a CUDA device with --compile, also capture them in CUDA graphs (torch.compile's reduce-overhead mode)"""


def make_env(env_id, seed, idx, capture_video, run_name):
    def thunk():
        if capture_video and idx == 0:
            env = gym.make(env_id, render_mode="rgb_array")
            track_robot_camera(env)
            env = gym.wrappers.RecordVideo(env, f"videos/{run_name}")
        else:
            env = gym.make(env_id)
        env = gym.wrappers.RecordEpisodeStatistics(env)
        env.action_space.seed(seed)
        return env

    return thunk


# ALGO LOGIC: initialize agent here:
class QNetwork(nn.Module):
    def __init__(self, env):
        super().__init__()
        self.fc1 = nn.Linear(np.array(env.observation_space.shape).prod() + np.prod(env.action_space.shape), 256)
        self.fc2 = nn.Linear(256, 256)
        self.fc3 = nn.Linear(256, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


class Actor(nn.Module):
    """CAMEL: masking-aware actor. It sees the action bounds (low, high) of the normalised action space
    beside the observation, and maps its tanh output into them, so every action it takes lies in the box.
    With low = -1, high = 1 and masking_aware=False it is exactly CleanRL's TD3 actor."""

    def __init__(self, env, masking_aware=True):
        super().__init__()
        obs_dim, action_dim = np.array(env.observation_space.shape).prod(), np.prod(env.action_space.shape)
        self.masking_aware = masking_aware
        self.fc1 = nn.Linear(obs_dim + 2 * action_dim if masking_aware else obs_dim, 256)
        self.fc2 = nn.Linear(256, 256)
        self.fc_mu = nn.Linear(256, action_dim)
        # action rescaling, by the normalised action contract (camel_guide.action_scale_bias)
        action_scale, action_bias = action_scale_bias(env.action_space)
        self.register_buffer("action_scale", torch.tensor(action_scale, dtype=torch.float32))
        self.register_buffer("action_bias", torch.tensor(action_bias, dtype=torch.float32))

    def forward(self, x, low, high):
        if self.masking_aware:
            x = torch.cat([x, low, high], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        u = torch.tanh(self.fc_mu(x))
        a = low + (u + 1) / 2 * (high - low)  # CAMEL action mapping: [-1, 1] onto [low, high]
        return self.to_env_units(a)

    def to_env_units(self, a):
        """Normalised actions or bounds in [-1, 1] in the env's own units (camel_guide.to_env_units, on tensors)."""
        return a * self.action_scale + self.action_bias


# ---- SPEED: TD3's twin critics as one module, computed plainly (CriticPair) or fused (TwinQNetwork) --------------
# Both give forward(x, a) -> (2, batch), q1(x, a) for the actor's loss, and CleanRL's state-dict layout.
class CriticPair(nn.Module):
    """TD3's twin critics as CleanRL has them: two QNetworks, called one after the other."""

    def __init__(self, env):
        super().__init__()
        self.qf1 = QNetwork(env)
        self.qf2 = QNetwork(env)

    def forward(self, x, a):
        """Both critics' values, shape (2, batch)."""
        return torch.stack([self.qf1(x, a).view(-1), self.qf2(x, a).view(-1)])

    def q1(self, x, a):
        """The first critic alone, its weights held fixed (the actor's loss needs no gradient for them)."""
        weights = {name: p.detach() for name, p in self.qf1.named_parameters()}
        return torch.func.functional_call(self.qf1, weights, (x, a)).view(-1)

    def cleanrl_state_dicts(self):
        return self.qf1.state_dict(), self.qf2.state_dict()


class TwinQNetwork(nn.Module):
    """Fast path (--fused-critics): the same two critics with each layer's weights stacked, so both run as
    one batched matmul per layer, forward and backward. Initialised exactly like CriticPair."""

    def __init__(self, env):
        super().__init__()
        pair = CriticPair(env)
        for name in ["fc1", "fc2", "fc3"]:
            layers = [getattr(pair.qf1, name), getattr(pair.qf2, name)]
            self.register_parameter(f"{name}_weight", nn.Parameter(torch.stack([l.weight.T for l in layers]).contiguous()))
            self.register_parameter(f"{name}_bias", nn.Parameter(torch.stack([l.bias for l in layers]).unsqueeze(1)))

    def forward(self, x, a):
        x = torch.cat([x, a], 1).expand(2, -1, -1)
        x = F.relu(torch.baddbmm(self.fc1_bias, x, self.fc1_weight))
        x = F.relu(torch.baddbmm(self.fc2_bias, x, self.fc2_weight))
        return torch.baddbmm(self.fc3_bias, x, self.fc3_weight).squeeze(-1)

    def q1(self, x, a):
        x = torch.cat([x, a], 1)
        x = F.relu(torch.addmm(self.fc1_bias[0].detach(), x, self.fc1_weight[0].detach()))
        x = F.relu(torch.addmm(self.fc2_bias[0].detach(), x, self.fc2_weight[0].detach()))
        return torch.addmm(self.fc3_bias[0].detach(), x, self.fc3_weight[0].detach()).view(-1)

    def cleanrl_state_dicts(self):
        """qf1's and qf2's weights in CleanRL's QNetwork layout."""
        return tuple(
            {f"{name}.{kind}": (getattr(self, f"{name}_weight")[i].T if kind == "weight" else getattr(self, f"{name}_bias")[i, 0]).detach().clone()
             for name in ["fc1", "fc2", "fc3"] for kind in ["weight", "bias"]}
            for i in range(2)
        )  # fmt: skip


# ---- SPEED: the update's gradients written out (--manual-grads) ---------------------------------------------------
# The networks are three dense layers, so their gradients are a few matrix products. Computing them directly gives
# autograd's numbers without its graph: no saved-tensor bookkeeping, no transposed copies, ReLU's derivative taken
# in place. Checked against autograd on fixed inputs in tests/test_camel_td3.py.
def relu_grad_(grad, out):
    """grad * 1[out > 0], in place: the gradient through out = relu(x)."""
    return torch.ops.aten.threshold_backward(grad, out, 0.0)


def twin_critic_grads(qf, obs, actions, next_q_value):
    """Both critics' values (2, batch) and MSE losses (2,) against next_q_value, with the gradient of the losses'
    sum stored in each parameter's .grad, as (qf_losses.sum()).backward() would (TwinQNetwork layout)."""
    x = torch.cat([obs, actions], 1).expand(2, -1, -1)
    h1 = torch.baddbmm(qf.fc1_bias, x, qf.fc1_weight).relu_()
    h2 = torch.baddbmm(qf.fc2_bias, h1, qf.fc2_weight).relu_()
    q = torch.baddbmm(qf.fc3_bias, h2, qf.fc3_weight)  # (2, batch, 1)
    error = q.squeeze(-1) - next_q_value
    dq = (error * (2.0 / error.shape[1])).unsqueeze(-1)  # d(mean of squared errors)/dq
    dh2 = relu_grad_(torch.bmm(dq, qf.fc3_weight.transpose(1, 2)), h2)
    dh1 = relu_grad_(torch.bmm(dh2, qf.fc2_weight.transpose(1, 2)), h1)
    grads = [torch.bmm(x.transpose(1, 2), dh1), dh1.sum(1, keepdim=True), torch.bmm(h1.transpose(1, 2), dh2),
             dh2.sum(1, keepdim=True), torch.bmm(h2.transpose(1, 2), dq), dq.sum(1, keepdim=True)]  # fmt: skip
    for param, grad in zip([qf.fc1_weight, qf.fc1_bias, qf.fc2_weight, qf.fc2_bias, qf.fc3_weight, qf.fc3_bias], grads):
        param.grad = grad
    return q.squeeze(-1), (error * error).mean(1)


def actor_grads(actor, qf, obs, low, high):
    """TD3's actor loss -mean Q1(s, actor(s, low, high)), with its gradient stored in the actor's .grad (the
    critic's weights held fixed), as update_actor's autograd path would."""
    x = torch.cat([obs, low, high], 1) if actor.masking_aware else obs
    h1 = F.linear(x, actor.fc1.weight, actor.fc1.bias).relu_()
    h2 = F.linear(h1, actor.fc2.weight, actor.fc2.bias).relu_()
    u = F.linear(h2, actor.fc_mu.weight, actor.fc_mu.bias).tanh_()
    half_width = (high - low) / 2
    action = (low + (u + 1) * half_width) * actor.action_scale + actor.action_bias  # Actor.forward's mapping
    g1 = torch.addmm(qf.fc1_bias[0], torch.cat([obs, action], 1), qf.fc1_weight[0]).relu_()
    g2 = torch.addmm(qf.fc2_bias[0], g1, qf.fc2_weight[0]).relu_()
    q = torch.addmm(qf.fc3_bias[0], g2, qf.fc3_weight[0])
    dg2 = relu_grad_(qf.fc3_weight[0].T.expand(q.shape[0], -1) * (-1.0 / q.shape[0]), g2)  # dloss/dq = -1/batch
    dg1 = relu_grad_(dg2 @ qf.fc2_weight[0].T, g1)
    daction = dg1 @ qf.fc1_weight[0][obs.shape[1]:].T
    dz3 = daction * actor.action_scale * half_width * (1 - u * u)  # back through the mapping and tanh
    dh2 = relu_grad_(dz3 @ actor.fc_mu.weight, h2)
    dh1 = relu_grad_(dh2 @ actor.fc2.weight, h1)
    grads = [dh1.T @ x, dh1.sum(0), dh2.T @ h1, dh2.sum(0), dz3.T @ h2, dz3.sum(0)]
    for param, grad in zip([actor.fc1.weight, actor.fc1.bias, actor.fc2.weight, actor.fc2.bias, actor.fc_mu.weight, actor.fc_mu.bias], grads):
        param.grad = grad
    return -q.mean()


# ---- CAMEL: the action bounds, the epsilon-masking schedule, and a step's bounds ----------------------------------
def mask_bounds(guide_action, mask_width):
    """The box around the guide's normalised action: [g - w, g + w], clipped to [-1, 1]."""
    return np.clip(guide_action - mask_width, -1.0, 1.0), np.clip(guide_action + mask_width, -1.0, 1.0)


def masking_probability(step, total_timesteps, epsilon_fraction):
    """Epsilon masking: the probability of masking a step falls linearly from 1 to 0 over
    epsilon_fraction * total_timesteps steps, then stays 0."""
    return max(0.0, 1.0 - step / (epsilon_fraction * total_timesteps))


def epsilon_at(step, args, guide):
    """Epsilon of a step in this run: the schedule above; 1 at every step without epsilon masking (the 'w/o EM'
    ablation); 0 without a guide (plain TD3 never masks)."""
    if guide is None:
        return 0.0
    if not args.epsilon_masking:
        return 1.0
    return masking_probability(step, args.total_timesteps, args.epsilon_fraction)


def draw_bounds(guide, obs, epsilon, mask_width, action_dim, rng):
    """The action bounds (low, high) for acting in `obs`, and whether they mask: with probability epsilon the box
    around the guide's action g(obs), otherwise the full normalised action space."""
    if epsilon > 0 and rng.random() < epsilon:
        guide_action = guide(obs)
        if guide_action is not None:  # None: the guide failed on this state (it counts and warns); act unmasked
            return *mask_bounds(guide_action, mask_width), True
    return *full_bounds(action_dim), False


class ReplayBatch(NamedTuple):
    observations: torch.Tensor
    next_observations: torch.Tensor
    actions: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    low: torch.Tensor
    high: torch.Tensor
    next_low: torch.Tensor
    next_high: torch.Tensor


class ReplayBuffer:
    """Ring buffer of transitions that, for CAMEL, also keeps the action bounds of s and of s'.

    One float32 tensor holds every field side by side, so storing a transition is one row copy and
    sampling a batch is one gather; the fields are column slices of it (see ReplayBatch)."""

    def __init__(self, buffer_size, obs_dim, action_dim, device):
        self.widths = [obs_dim, obs_dim, action_dim, 1, 1] + [action_dim] * 4  # in ReplayBatch's order
        self.buffer_size, self.device, self.pos, self.size = buffer_size, device, 0, 0
        self.data = torch.zeros((buffer_size, sum(self.widths)), dtype=torch.float32, device=device)

    def add(self, obs, next_obs, action, reward, done, low, high, next_low, next_high):
        row = np.concatenate([obs, next_obs, action, [reward], [done], low, high, next_low, next_high], dtype=np.float32)
        self.data[self.pos] = torch.from_numpy(row).to(self.device)
        self.pos = (self.pos + 1) % self.buffer_size
        self.size = min(self.size + 1, self.buffer_size)

    def sample(self, batch_size):
        rows = self.data.index_select(0, torch.randint(self.size, (batch_size,), device=self.device))
        return ReplayBatch(*torch.split(rows, self.widths, dim=1))

    def state_dict(self):
        return {"data": self.data[: self.size].cpu(), "pos": self.pos, "size": self.size}

    def load_state_dict(self, state):
        self.pos, self.size = state["pos"], state["size"]
        self.data[: self.size] = state["data"].to(self.device)


# ALGO LOGIC: acting and the TD3 update, as functions (so --compile can compile them), written once for both
# critic layouts (CriticPair and TwinQNetwork)
def explore(actor, obs, low, high, exploration_noise):
    """The behaviour policy: the actor's action plus Gaussian noise, clamped into the bounds (CAMEL: on a
    masked step, exploration stays inside the guide's box)."""
    actions = actor(obs, low, high)
    actions = actions + torch.randn_like(actions) * actor.action_scale * exploration_noise
    return actions.clamp(actor.to_env_units(low), actor.to_env_units(high))


def td3_target(data, target_actor, qf_target, gamma, policy_noise, noise_clip):
    """The critics' regression target r + gamma * (1 - done) * min(Q1', Q2')(s', a'), with a' the target
    actor's smoothed action. CAMEL: a' is chosen, and its noise clamped, inside the bounds stored for s'."""
    with torch.no_grad():
        next_low, next_high = data.next_low, data.next_high
        clipped_noise = (torch.randn_like(data.actions) * policy_noise).clamp(-noise_clip, noise_clip) * target_actor.action_scale
        next_state_actions = target_actor(data.next_observations, next_low, next_high) + clipped_noise
        next_state_actions = next_state_actions.clamp(target_actor.to_env_units(next_low), target_actor.to_env_units(next_high))
        min_qf_next_target = qf_target(data.next_observations, next_state_actions).min(0).values
        return data.rewards.flatten() + (1 - data.dones.flatten()) * gamma * min_qf_next_target


def update_critics(data, target_actor, qf, qf_target, q_optimizer, gamma, policy_noise, noise_clip, manual_grads=False):
    next_q_value = td3_target(data, target_actor, qf_target, gamma, policy_noise, noise_clip)
    if manual_grads:  # SPEED: the same gradients, written out (twin_critic_grads)
        with torch.no_grad():
            qf_a_values, qf_losses = twin_critic_grads(qf, data.observations, data.actions, next_q_value)
    else:
        qf_a_values = qf(data.observations, data.actions)  # (2, batch): qf1 and qf2
        qf_losses = ((qf_a_values - next_q_value) ** 2).mean(1)  # each critic's MSE loss

        # optimize the model
        q_optimizer.zero_grad()
        qf_losses.sum().backward()
    q_optimizer.step()
    return qf_a_values.detach(), qf_losses.detach()


def update_actor(data, actor, qf, actor_optimizer, manual_grads=False):
    """TD3's actor loss -Q1(s, actor(s)), CAMEL: under the bounds each transition was collected with, masked or not."""
    if manual_grads:  # SPEED: the same gradient, written out (actor_grads)
        with torch.no_grad():
            actor_loss = actor_grads(actor, qf, data.observations, data.low, data.high)
    else:
        actor_loss = -qf.q1(data.observations, actor(data.observations, data.low, data.high)).mean()
        actor_optimizer.zero_grad()
        actor_loss.backward()
    actor_optimizer.step()
    return actor_loss.detach()


def update_targets(target_params, online_params, tau):
    # target <- tau * online + (1 - tau) * target for every parameter in one call, not a Python loop of small ops
    with torch.no_grad():
        torch._foreach_lerp_(target_params, online_params, tau)


def evaluate(actor, eval_env, episodes, seed, device):
    """Unmasked evaluation: deterministic actions over the whole action space (low = -1, high = 1).
    This is the curve that shows whether the agent outgrew its guide."""
    low, high = (torch.as_tensor(b, device=device).unsqueeze(0) for b in full_bounds(int(np.prod(eval_env.action_space.shape))))
    returns, lengths = [], []
    for episode in range(episodes):
        obs, _ = eval_env.reset(seed=seed + episode)  # the same start states at every evaluation
        done, episode_return, length = False, 0.0, 0
        while not done:
            with torch.no_grad():
                action = actor(torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0), low, high)
            obs, reward, terminated, truncated, _ = eval_env.step(action.cpu().numpy()[0])
            episode_return, length, done = episode_return + float(reward), length + 1, terminated or truncated
        returns.append(episode_return)
        lengths.append(length)
    return float(np.mean(returns)), float(np.mean(lengths))


if __name__ == "__main__":
    args = tyro.cli(Args)
    checkpoint = None
    if args.resume:
        args, checkpoint = resume_args(args.resume, args, Args)
    check_common_args(args, positive=["policy_frequency"])
    if args.run_name is None:
        args.run_name = f"{args.env_id}__{args.exp_name}__{args.seed}__{int(time.time())}"
    run_name = args.run_name
    run_dir = f"runs/{run_name}"
    if checkpoint is None:
        check_new_run_dir(run_dir)

    # TRY NOT TO MODIFY: seeding
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    torch.set_flush_denormal(args.flush_denormal)  # SPEED: before torch starts threads, which inherit the setting
    rng = np.random.default_rng(args.seed)  # CAMEL: masking draws, random warm-up actions, the random guide

    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")

    # env setup (the env and the guide are checked before the run folder is written: a failed start leaves none)
    env = checked_env(make_env(args.env_id, args.seed, 0, args.capture_video, run_name), args.env_id)
    eval_env = make_env(args.env_id, args.seed, 1, False, run_name)()
    obs_dim, action_dim = int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape))

    # CAMEL: the guide g(s): an LLM-written policy file, an expert actor, random actions, or None (plain TD3).
    # An LLM file is tried on states sampled from eval_env, so the training env (and its video) starts untouched.
    try:
        guide = make_guide(eval_env, llm_policy=args.llm_policy, expert_model=args.expert_model, random_guide=args.random_guide,
                           rng=rng, seed=args.seed, call_timeout=args.guide_timeout)  # fmt: skip
    except GuideError as e:
        raise SystemExit(f"error: {e}")
    guide_file = guide_file_record(args.llm_policy) if args.llm_policy else None  # path and sha256, for the run's record

    if args.track:
        try:
            import wandb
        except ImportError:
            raise SystemExit("error: --track needs Weights and Biases: pip install wandb")
        wandb.init(project=args.wandb_project_name, entity=args.wandb_entity, sync_tensorboard=True,
                   config=vars(args), name=run_name, monitor_gym=True, save_code=True, resume="allow", id=run_name)  # fmt: skip
    # purge_step hides curve points logged after the checkpoint by an interrupted process (or, on a fresh
    # start, those of an earlier attempt that was killed before its first checkpoint)
    writer = SummaryWriter(run_dir, purge_step=checkpoint["global_step"] if checkpoint else 0)
    if checkpoint is None:
        writer.add_text(
            "hyperparameters",
            "|param|value|\n|-|-|\n%s" % ("\n".join([f"|{key}|{value}|" for key, value in vars(args).items()])),
        )

    # CAMEL: the masking-aware actor (a plain TD3 baseline keeps CleanRL's actor)
    masking_aware = args.masking_aware and guide is not None
    actor = Actor(env, masking_aware).to(device)
    Critics = TwinQNetwork if args.fused_critics else CriticPair
    qf = Critics(env).to(device)  # qf1 and qf2
    qf_target = Critics(env).to(device)
    target_actor = Actor(env, masking_aware).to(device)
    target_actor.load_state_dict(actor.state_dict())
    qf_target.load_state_dict(qf.state_dict())
    # fused Adam: one kernel for all parameters instead of several small ops per tensor (torch.compile makes
    # its own fused kernel instead); capturable keeps its step counter on the GPU, as CUDA graphs need
    cudagraphs = args.compile and args.cudagraphs and device.type == "cuda"
    adam_options = dict(lr=args.learning_rate, fused=not args.compile, capturable=cudagraphs)
    q_optimizer = optim.Adam(list(qf.parameters()), **adam_options)
    actor_optimizer = optim.Adam(list(actor.parameters()), **adam_options)
    # SPEED: gradients written out where they are (the fused critics' layout; --compile derives its own backward)
    manual_grads = args.manual_grads and args.fused_critics and not args.compile
    online_params = list(actor.parameters()) + list(qf.parameters())
    target_params = list(target_actor.parameters()) + list(qf_target.parameters())

    rb = ReplayBuffer(min(args.buffer_size, args.total_timesteps), obs_dim, action_dim, device)

    if args.compile:
        # the optimisers' profiler markers cannot be compiled; Dynamo says so once per function, harmlessly
        logging.getLogger("torch._dynamo.variables.ctx_manager").setLevel(logging.ERROR)
        mode = "reduce-overhead" if cudagraphs else None
        explore = CompiledOrEager(explore, mode)
        update_critics = CompiledOrEager(update_critics, mode)
        update_actor = CompiledOrEager(update_actor, mode)

    # checkpoints hold these by name (CAMEL: with the guide's call counts), the counters and every random generator
    modules = {"actor": actor, "qf": qf, "target_actor": target_actor, "qf_target": qf_target,
               "q_optimizer": q_optimizer, "actor_optimizer": actor_optimizer, "replay_buffer": rb}  # fmt: skip
    if guide is not None:
        modules["guide"] = guide
    counters = {"episodes": 0}
    checkpoints = Checkpoints(os.path.join(run_dir, "checkpoint.pt"), args, modules, counters, rng, env)
    start_step = 0
    if checkpoint:
        start_step = checkpoints.restore(checkpoint)
        print(f"resuming {run_name} at step {start_step}", file=sys.stderr)

    stop_request = StopRequest()
    print(f"run {run_name}: {args.env_id}, guide {guide.name if guide else 'none (TD3 baseline)'}, "
          f"steps {start_step}-{args.total_timesteps} on {device}; logs in {run_dir}", flush=True)  # fmt: skip
    start_time = time.time()
    progress = Progress(args.total_timesteps, start_step)
    next_checkpoint = (start_step // args.checkpoint_frequency + 1) * args.checkpoint_frequency if args.checkpoint_frequency else None
    obs = None  # None: an episode starts at the top of the loop
    window_masked = window_steps = 0
    last_return = eval_return = None
    actor_loss = None  # until this process's first actor update (a resumed run may log a critic step before it)
    try:
        for global_step in range(start_step, args.total_timesteps):
            epsilon = epsilon_at(global_step, args, guide)  # CAMEL: the probability that this step is masked
            if obs is None:
                obs, _ = env.reset(seed=args.seed if global_step == 0 else None)
                low, high, masked = draw_bounds(guide, obs, epsilon, args.mask_width, action_dim, rng)

            # ALGO LOGIC: put action logic here (CAMEL: actions stay inside [low, high])
            if global_step < args.learning_starts:
                actions = to_env_units(rng.uniform(low, high), env.action_space)
            else:
                with torch.no_grad():  # one copy to the device for obs and bounds together
                    x = torch.as_tensor(np.concatenate([obs, low, high]), dtype=torch.float32, device=device)
                    obs_t, low_t, high_t = x.view(1, -1).split([obs_dim, action_dim, action_dim], 1)
                    actions = explore(actor, obs_t, low_t, high_t, args.exploration_noise).cpu().numpy()[0]

            # TRY NOT TO MODIFY: execute the game and log data.
            next_obs, reward, terminated, truncated, info = env.step(actions)
            window_masked, window_steps = window_masked + masked, window_steps + 1

            # TRY NOT TO MODIFY: record rewards for plotting purposes
            if "episode" in info:
                last_return = float(info["episode"]["r"])
                counters["episodes"] += 1
                writer.add_scalar("charts/episodic_return", info["episode"]["r"], global_step)
                writer.add_scalar("charts/episodic_length", info["episode"]["l"], global_step)

            # CAMEL: the bounds of s' are drawn now, with the next step's epsilon (the next step acts in s')
            next_low, next_high, next_masked = draw_bounds(
                guide, next_obs, epsilon_at(global_step + 1, args, guide), args.mask_width, action_dim, rng
            )
            # TRY NOT TO MODIFY: save data to reply buffer (CAMEL: with the bounds of s and of s')
            rb.add(obs, next_obs, actions, reward, terminated, low, high, next_low, next_high)

            # TRY NOT TO MODIFY: CRUCIAL step easy to overlook
            obs, low, high, masked = next_obs, next_low, next_high, next_masked

            # ALGO LOGIC: training.
            if global_step > args.learning_starts:
                data = rb.sample(args.batch_size)
                qf_a_values, qf_losses = update_critics(data, target_actor, qf, qf_target, q_optimizer, args.gamma, args.policy_noise,
                                                        args.noise_clip, manual_grads=manual_grads)  # fmt: skip
                if global_step % args.policy_frequency == 0:
                    actor_loss = update_actor(data, actor, qf, actor_optimizer, manual_grads=manual_grads)
                    # update the target networks
                    update_targets(target_params, online_params, args.tau)

                if global_step % 100 == 0:
                    qf1_value, qf2_value = qf_a_values.mean(1).tolist()
                    qf1_loss, qf2_loss = qf_losses.tolist()
                    writer.add_scalar("losses/qf1_values", qf1_value, global_step)
                    writer.add_scalar("losses/qf2_values", qf2_value, global_step)
                    writer.add_scalar("losses/qf1_loss", qf1_loss, global_step)
                    writer.add_scalar("losses/qf2_loss", qf2_loss, global_step)
                    writer.add_scalar("losses/qf_loss", (qf1_loss + qf2_loss) / 2.0, global_step)
                    if actor_loss is not None:
                        writer.add_scalar("losses/actor_loss", actor_loss.item(), global_step)

            if global_step % 100 == 0:
                sps = int((global_step + 1 - start_step) / (time.time() - start_time))
                writer.add_scalar("charts/SPS", sps, global_step)
                # CAMEL: epsilon, the share of steps masked since the last point, and the guide's failed calls
                writer.add_scalar("charts/epsilon", epsilon, global_step)
                writer.add_scalar("charts/masked_fraction", window_masked / window_steps, global_step)
                writer.add_scalar("charts/guide_failures", guide.failures if guide else 0, global_step)
                window_masked = window_steps = 0
                progress.update(global_step + 1, sps=sps, epsilon=round(epsilon, 3) if guide else None,
                                **{"return": last_return, "eval": eval_return})  # fmt: skip

            if (global_step + 1) % args.eval_frequency == 0 or global_step + 1 == args.total_timesteps:
                eval_return, eval_length = evaluate(actor, eval_env, args.eval_episodes, args.seed + 100_000, device)
                writer.add_scalar("eval/episodic_return", eval_return, global_step + 1)
                writer.add_scalar("eval/episodic_length", eval_length, global_step + 1)
                progress.update(global_step + 1, eval=eval_return)

            if terminated or truncated:
                obs = None
                # checkpoint between episodes, so a resumed run continues exactly where this one stopped
                if next_checkpoint is not None and global_step + 1 >= next_checkpoint and global_step + 1 < args.total_timesteps:
                    checkpoints.save(global_step + 1)
                    next_checkpoint = ((global_step + 1) // args.checkpoint_frequency + 1) * args.checkpoint_frequency

            if stop_request.signal is not None and global_step + 1 < args.total_timesteps:  # drops the unfinished episode
                progress.close()
                checkpoints.save(global_step + 1)
                writer.close()
                print(f"\ninterrupted at step {global_step + 1}; continue with: python camel_td3.py --resume {run_dir}", file=sys.stderr)
                sys.exit(130)
    except KeyboardInterrupt:
        progress.close()
        writer.close()
        sys.exit(f"\nstopped at once without saving; the last checkpoint (if any) is in {run_dir}")
    progress.close()

    if args.save_model:
        model_path = f"{run_dir}/{args.exp_name}.cleanrl_model"
        torch.save((actor.state_dict(), *qf.cleanrl_state_dicts()), model_path)
        print(f"model saved to {model_path}")

    finish_run(run_dir, {"run_name": run_name, "env_id": args.env_id, "exp_name": args.exp_name, "seed": args.seed,
                         "total_timesteps": args.total_timesteps, "final_eval_return": eval_return,
                         "guide_calls": guide.calls if guide else None, "guide_failures": guide.failures if guide else 0,
                         "guide_file": guide_file})  # fmt: skip
    if updates_happen(args):
        print(f"finished {run_name}: eval/episodic_return {eval_return:.1f} after {args.total_timesteps} steps")
    else:
        print(f"finished {run_name} without learning (no update before --total-timesteps {args.total_timesteps}): "
              f"eval/episodic_return {eval_return:.1f} is the untrained actor's")  # fmt: skip
    env.close()
    eval_env.close()
    writer.close()
