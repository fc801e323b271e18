# CAMEL-TD3: TD3 whose exploration is guided by a hard-coded policy written by a language model.
# Paper: "CAMEL: Continuous Action Masking Enabled by Large Language Models" (arXiv 2502.11896).
# Built on the shape of CleanRL's td3_continuous_action.py; the CAMEL additions are marked "CAMEL:".
#   - guide g(s): an LLM-written `policy(obs)` file, a trained expert, a random action, or none (plain TD3)
#   - action masking: with probability epsilon, the action is confined to [g(s) - w, g(s) + w]
#   - masking-aware actor: the actor sees (obs, low, high) and maps its tanh output into the box
#   - epsilon masking: epsilon falls linearly from 1 to 0, so the agent ends free of the guide
import json
import logging
import os
import random
import re
import signal
import sys
import time
import warnings
from dataclasses import asdict, dataclass, fields
from typing import NamedTuple, Optional

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import tyro
from torch.utils.tensorboard import SummaryWriter

from camel_guide import GuideError, load_guide, sample_observations, track_robot_camera

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
    learning_starts: int = 25000
    """timestep to start learning"""
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
    run_name: Optional[str] = None
    """name of the run folder under runs/ (default: {env_id}__{exp_name}__{seed}__{time}, as CleanRL)"""
    torch_threads: int = 0
    """threads torch may use (0: torch's default; use 1 when several runs share the CPU)"""

    # Speed (the same algorithm, computed faster; see the README's benchmark)
    fused_critics: bool = True
    """run both critics as one batched network (off: CleanRL's two separate QNetworks)"""
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
        # action rescaling
        self.register_buffer(
            "action_scale", torch.tensor((env.action_space.high - env.action_space.low) / 2.0, dtype=torch.float32)
        )
        self.register_buffer(
            "action_bias", torch.tensor((env.action_space.high + env.action_space.low) / 2.0, dtype=torch.float32)
        )

    def forward(self, x, low, high):
        if self.masking_aware:
            x = torch.cat([x, low, high], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        u = torch.tanh(self.fc_mu(x))
        a = low + (u + 1) / 2 * (high - low)  # CAMEL action mapping: [-1, 1] onto [low, high]
        return a * self.action_scale + self.action_bias

    def to_env_scale(self, a):
        """Normalised actions or bounds in [-1, 1] to the env's own action units."""
        return a * self.action_scale + self.action_bias


# CAMEL: the action bounds and the epsilon-masking schedule
def mask_bounds(guide_action, mask_width):
    """The box around the guide's normalised action: [g - w, g + w], clipped to [-1, 1]."""
    return np.clip(guide_action - mask_width, -1.0, 1.0), np.clip(guide_action + mask_width, -1.0, 1.0)


def masking_probability(step, total_timesteps, epsilon_fraction):
    """Epsilon masking: the probability of masking a step falls linearly from 1 to 0 over
    epsilon_fraction * total_timesteps steps, then stays 0."""
    return max(0.0, 1.0 - step / (epsilon_fraction * total_timesteps))


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
        rows = self.data[torch.randint(self.size, (batch_size,), device=self.device)]
        return ReplayBatch(*torch.split(rows, self.widths, dim=1))

    def state_dict(self):
        return {"data": self.data[: self.size].cpu(), "pos": self.pos, "size": self.size}

    def load_state_dict(self, state):
        self.pos, self.size = state["pos"], state["size"]
        self.data[: self.size] = state["data"].to(self.device)


def explore(actor, obs, low, high, exploration_noise):
    """The behaviour policy: the actor's action plus Gaussian noise, clamped into the bounds (CAMEL: on a
    masked step, exploration stays inside the guide's box)."""
    actions = actor(obs, low, high)
    actions = actions + torch.randn_like(actions) * actor.action_scale * exploration_noise
    return actions.clamp(actor.to_env_scale(low), actor.to_env_scale(high))


# ALGO LOGIC: the TD3 update, written once for both critic layouts (CriticPair and TwinQNetwork)
def td3_target(data, target_actor, qf_target, gamma, policy_noise, noise_clip):
    """The critics' regression target r + gamma * (1 - done) * min(Q1', Q2')(s', a'), with a' the target
    actor's smoothed action. CAMEL: a' is chosen, and its noise clamped, inside the bounds stored for s'."""
    with torch.no_grad():
        clipped_noise = (torch.randn_like(data.actions) * policy_noise).clamp(-noise_clip, noise_clip) * target_actor.action_scale
        next_state_actions = target_actor(data.next_observations, data.next_low, data.next_high) + clipped_noise
        next_state_actions = next_state_actions.clamp(target_actor.to_env_scale(data.next_low), target_actor.to_env_scale(data.next_high))
        min_qf_next_target = qf_target(data.next_observations, next_state_actions).min(0).values
        return data.rewards.flatten() + (1 - data.dones.flatten()) * gamma * min_qf_next_target


def update_critics(data, target_actor, qf, qf_target, q_optimizer, gamma, policy_noise, noise_clip):
    next_q_value = td3_target(data, target_actor, qf_target, gamma, policy_noise, noise_clip)
    qf_a_values = qf(data.observations, data.actions)  # (2, batch): qf1 and qf2
    qf_losses = ((qf_a_values - next_q_value) ** 2).mean(1)  # each critic's MSE loss

    # optimize the model
    q_optimizer.zero_grad()
    qf_losses.sum().backward()
    q_optimizer.step()
    return qf_a_values.detach(), qf_losses.detach()


def update_actor(data, actor, qf, actor_optimizer):
    # CAMEL: the actor is trained under the bounds each transition was collected with, masked or not
    actor_loss = -qf.q1(data.observations, actor(data.observations, data.low, data.high)).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
    return actor_loss.detach()


def update_targets(target_params, online_params, tau):
    # target <- tau * online + (1 - tau) * target for every parameter in one call, not a Python loop of small ops
    with torch.no_grad():
        torch._foreach_lerp_(target_params, online_params, tau)


# CAMEL: guides other than an LLM policy file
def load_expert(model, env, device):
    """An actor from a CleanRL-format `.cleanrl_model` (a local file or a Hugging Face repo id), as a guide
    returning normalised actions. Accepts CleanRL's TD3 actor and this script's masking-aware one."""
    path = model
    if not os.path.exists(model):
        if not re.fullmatch(r"[\w.-]+/[\w.-]+", model):
            raise SystemExit(f"error: --expert-model {model}: no such file (and not a Hugging Face repo id)")
        path = download_expert(model)
    try:
        actor_state = torch.load(path, map_location=device, weights_only=True)[0]
        in_features, action_dim = actor_state["fc1.weight"].shape[1], actor_state["fc_mu.weight"].shape[0]
    except Exception as e:
        reason = (str(e).strip().splitlines() or [""])[0]
        raise SystemExit(f"error: --expert-model {model}: not a CleanRL-format model ({type(e).__name__}: {reason})")
    obs_dim, env_action_dim = int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape))
    if action_dim != env_action_dim or in_features not in (obs_dim, obs_dim + 2 * action_dim):
        raise SystemExit(
            f"error: --expert-model {model}: its actor takes {in_features} inputs and gives {action_dim} actions, but "
            f"{env.spec.id} has {obs_dim} observations and {env_action_dim} actions; was it trained on another env?"
        )
    expert = Actor(env, masking_aware=in_features != obs_dim).to(device)
    expert.load_state_dict(actor_state)
    expert.eval()
    full_low = torch.full((1, action_dim), -1.0, device=device)
    full_high = torch.ones((1, action_dim), device=device)

    def expert_guide(obs):
        with torch.no_grad():
            action = expert(torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0), full_low, full_high)
            return ((action - expert.action_bias) / expert.action_scale).clamp(-1, 1).cpu().numpy()[0]

    return expert_guide


def download_expert(repo_id):
    """Fetch a CleanRL model from the Hugging Face Hub, or take it from huggingface_hub's cache (~/.cache)."""
    import socket
    from urllib.parse import urlparse

    from huggingface_hub import constants, hf_hub_download

    # CleanRL names its repos {env_id}-{exp_name}-seed{seed} and the file {exp_name}.cleanrl_model
    match = re.fullmatch(r".+?-v\d+-(.+)-seed\d+", repo_id.split("/")[1])
    filename = f"{match.group(1) if match else 'td3_continuous_action'}.cleanrl_model"
    try:
        return hf_hub_download(repo_id=repo_id, filename=filename, local_files_only=True)
    except Exception:
        pass  # not cached yet
    offline_help = (f"Download it on a connected machine (`hf download {repo_id} {filename} --local-dir experts/`) "
                    "and pass the local file's path, or train one with scripts/train_expert.sh.")  # fmt: skip
    endpoint = urlparse(constants.ENDPOINT)
    try:  # fail in seconds, not after the Hub client's retries, when there is no network
        socket.create_connection((endpoint.hostname, endpoint.port or (443 if endpoint.scheme == "https" else 80)), timeout=5).close()
    except OSError:
        raise SystemExit(f"error: --expert-model {repo_id}: the Hugging Face Hub ({constants.ENDPOINT}) is unreachable. {offline_help}")
    try:
        return hf_hub_download(repo_id=repo_id, filename=filename)
    except Exception as e:
        raise SystemExit(f"error: --expert-model {repo_id}: could not download {filename} ({type(e).__name__}). {offline_help}")


def make_guide(args, env, rng, device):
    """CAMEL: the guide g(s) chosen by the flags: a function obs -> normalised action (None when a call fails)."""
    action_dim = int(np.prod(env.action_space.shape))
    if args.llm_policy:
        try:
            observations = sample_observations(env, seed=args.seed)
            return load_guide(args.llm_policy, observations, action_dim, call_timeout=args.guide_timeout)
        except GuideError as e:
            raise SystemExit(f"error: guide {e}")
    if args.expert_model:
        return load_expert(args.expert_model, env, device)
    if args.random_guide:
        return lambda obs: rng.uniform(-1.0, 1.0, action_dim)
    return None


def check_args(args):
    """Refuse contradictory or impossible settings with one line."""
    guides = [flag for flag, on in [("--llm-policy", args.llm_policy), ("--expert-model", args.expert_model),
                                    ("--random-guide", args.random_guide)] if on]  # fmt: skip
    problems = []
    if len(guides) > 1:
        problems.append(f"choose one guide, not {' and '.join(guides)}")
    if not guides and (not args.masking_aware or not args.epsilon_masking):
        problems.append("--no-masking-aware and --no-epsilon-masking are CAMEL ablations and need a guide")
    if not 0 < args.mask_width <= 2:
        problems.append(f"--mask-width must be in (0, 2], got {args.mask_width}")
    if not 0 < args.epsilon_fraction <= 1:
        problems.append(f"--epsilon-fraction must be in (0, 1], got {args.epsilon_fraction}")
    for name in ["total_timesteps", "buffer_size", "batch_size", "policy_frequency", "eval_frequency", "eval_episodes"]:
        if getattr(args, name) <= 0:
            problems.append(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if args.learning_starts < 0 or args.checkpoint_frequency < 0 or args.torch_threads < 0:
        problems.append("--learning-starts, --checkpoint-frequency and --torch-threads cannot be negative")
    if problems:
        raise SystemExit(f"error: {problems[0]}")


class StopRequest:
    """Ctrl-C or SIGTERM (a cluster's preemption, `kill`) asks the loop to stop at the end of the current step,
    where the state is consistent, and save a checkpoint there. A second signal stops at once, unsaved."""

    def __init__(self):
        self.signal = None
        signal.signal(signal.SIGINT, self.handle)
        signal.signal(signal.SIGTERM, self.handle)

    def handle(self, signum, frame):
        if self.signal is not None:
            raise KeyboardInterrupt
        self.signal = signum


# Checkpoints: everything needed to continue a run as if it had never stopped
def save_checkpoint(path, state):
    tmp = path + ".tmp"
    torch.save(state, tmp)
    os.replace(tmp, path)  # atomic: a kill during the save leaves the previous checkpoint intact


MACHINE_SETTINGS = ("cuda", "torch_threads")


def resume_args(resume, cli_args):
    """The Args of the run being resumed, and its checkpoint's path. Flags given on the command line that
    differ from the run's own are reported and ignored, except the machine settings (--cuda, --torch-threads)."""
    path = os.path.join(resume, "checkpoint.pt") if os.path.isdir(resume) else resume
    if not os.path.isfile(path):
        if os.path.isfile(os.path.join(resume, "finished.json")):
            raise SystemExit(f"error: the run in {resume} already finished; there is nothing to resume")
        raise SystemExit(f"error: --resume {resume}: no checkpoint.pt there")
    saved = torch.load(path, map_location="cpu", weights_only=False)["args"]
    args = Args(**{f.name: saved[f.name] for f in fields(Args) if f.name in saved})
    for name in MACHINE_SETTINGS:  # these describe the machine, not the experiment: take them from the command line
        setattr(args, name, getattr(cli_args, name))
    defaults = Args()
    ignored = [f.name for f in fields(Args) if f.name not in ("resume", *MACHINE_SETTINGS)
               and getattr(cli_args, f.name) != getattr(defaults, f.name) and getattr(cli_args, f.name) != getattr(args, f.name)]  # fmt: skip
    if ignored:
        print(f"warning: resuming uses the run's own settings; ignoring --{', --'.join(n.replace('_', '-') for n in ignored)}", file=sys.stderr)
    args.resume = resume
    return args, path


class CompiledOrEager:
    """torch.compile(fn), or fn itself (with a message) if compiling fails on this machine (no C++ compiler,
    an unsupported op): compilation happens at the first call, before anything runs, so falling back is safe."""

    def __init__(self, fn, mode=None):
        self.fn, self.compiled = fn, torch.compile(fn, mode=mode)

    def __call__(self, *args):
        if self.compiled is not None:
            try:
                return self.compiled(*args)
            except Exception as e:
                print(f"warning: torch.compile failed for {self.fn.__name__} ({type(e).__name__}); running it uncompiled", file=sys.stderr)
                self.compiled = None
        return self.fn(*args)


class Progress:
    """A progress bar with steps/s and the latest returns in a terminal; plain periodic lines otherwise."""

    def __init__(self, total, initial):
        self.total, self.last_print, self.stats = total, time.time(), {}
        self.bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=initial, unit="step", dynamic_ncols=True, smoothing=0.05)

    def update(self, step, **stats):
        self.stats.update({k: v for k, v in stats.items() if v is not None})
        text = ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}" for k, v in self.stats.items())
        if self.bar is not None:
            self.bar.n = step
            self.bar.set_postfix_str(text, refresh=True)
        elif time.time() - self.last_print >= 30 or step >= self.total:
            self.last_print = time.time()
            print(f"step {step}/{self.total} ({step / self.total:.0%}) | {text}", flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def evaluate(actor, eval_env, episodes, seed, device):
    """Unmasked evaluation: deterministic actions over the whole action space (low = -1, high = 1).
    This is the curve that shows whether the agent outgrew its guide."""
    action_dim = int(np.prod(eval_env.action_space.shape))
    full_low = torch.full((1, action_dim), -1.0, device=device)
    full_high = torch.ones((1, action_dim), device=device)
    returns, lengths = [], []
    for episode in range(episodes):
        obs, _ = eval_env.reset(seed=seed + episode)  # the same start states at every evaluation
        done, episode_return, length = False, 0.0, 0
        while not done:
            with torch.no_grad():
                action = actor(torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0), full_low, full_high)
            obs, reward, terminated, truncated, _ = eval_env.step(action.cpu().numpy()[0])
            episode_return, length, done = episode_return + float(reward), length + 1, terminated or truncated
        returns.append(episode_return)
        lengths.append(length)
    return float(np.mean(returns)), float(np.mean(lengths))


if __name__ == "__main__":
    args = tyro.cli(Args)
    checkpoint = None
    if args.resume:
        args, checkpoint_path = resume_args(args.resume, args)
        checkpoint = torch.load(checkpoint_path, map_location="cpu", weights_only=False)
    check_args(args)
    if args.run_name is None:
        args.run_name = f"{args.env_id}__{args.exp_name}__{args.seed}__{int(time.time())}"
    run_name = args.run_name
    run_dir = f"runs/{run_name}"
    checkpoint_path = os.path.join(run_dir, "checkpoint.pt")
    if checkpoint is None and os.path.exists(checkpoint_path):
        raise SystemExit(f"error: {run_dir} holds an unfinished run; continue it with --resume {run_dir} or pick another --run-name")
    if checkpoint is None and os.path.exists(os.path.join(run_dir, "finished.json")):
        raise SystemExit(f"error: {run_dir} holds a finished run; pick another --run-name")

    if args.track:
        try:
            import wandb
        except ImportError:
            raise SystemExit("error: --track needs Weights and Biases: pip install wandb")
        wandb.init(project=args.wandb_project_name, entity=args.wandb_entity, sync_tensorboard=True,
                   config=vars(args), name=run_name, monitor_gym=True, save_code=True, resume="allow", id=run_name)  # fmt: skip
    start_step = checkpoint["global_step"] if checkpoint else 0
    # purge_step hides curve points logged after the checkpoint by an interrupted process (or, on a fresh
    # start, those of an earlier attempt that was killed before its first checkpoint)
    writer = SummaryWriter(run_dir, purge_step=start_step)
    if checkpoint is None:
        writer.add_text(
            "hyperparameters",
            "|param|value|\n|-|-|\n%s" % ("\n".join([f"|{key}|{value}|" for key, value in vars(args).items()])),
        )

    # TRY NOT TO MODIFY: seeding
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    rng = np.random.default_rng(args.seed)  # CAMEL: masking draws, random warm-up actions, the random guide

    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")

    # env setup
    try:
        env = make_env(args.env_id, args.seed, 0, args.capture_video, run_name)()
        eval_env = make_env(args.env_id, args.seed, 1, False, run_name)()
    except gym.error.Error as e:
        raise SystemExit(f"error: --env-id {args.env_id}: {e}")
    if not isinstance(env.action_space, gym.spaces.Box):
        raise SystemExit(f"error: {args.env_id} has a {type(env.action_space).__name__} action space; only continuous (Box) action spaces are supported")
    obs_dim, action_dim = int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape))
    action_scale = (env.action_space.high - env.action_space.low) / 2.0
    action_bias = (env.action_space.high + env.action_space.low) / 2.0

    # CAMEL: the guide, and the masking-aware actor (a plain TD3 baseline keeps CleanRL's actor)
    guide = make_guide(args, env, rng, device)
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

    # CAMEL: each step is masked with probability epsilon; a masked step's actions lie in the guide's box
    full_low, full_high = -np.ones(action_dim), np.ones(action_dim)

    def draw_bounds(obs, step):
        """The action bounds (low, high) for acting in `obs` at `step`, and whether the step is masked."""
        epsilon = masking_probability(step, args.total_timesteps, args.epsilon_fraction) if args.epsilon_masking else 1.0
        if guide is None or rng.random() >= epsilon:
            return full_low, full_high, False
        guide_action = guide(obs)
        if guide_action is None:  # the guide failed on this state (counted by the guide): act unmasked
            return full_low, full_high, False
        return *mask_bounds(guide_action, args.mask_width), True

    counters = {"episodes": 0, "guide_failures": 0}
    training_state = {"actor": actor, "qf": qf, "target_actor": target_actor, "qf_target": qf_target,
                      "q_optimizer": q_optimizer, "actor_optimizer": actor_optimizer, "replay_buffer": rb}  # fmt: skip
    if checkpoint:
        for name, module in training_state.items():
            module.load_state_dict(checkpoint[name])
        random.setstate(checkpoint["rng"]["python"])
        np.random.set_state(checkpoint["rng"]["numpy_global"])
        rng.bit_generator.state = checkpoint["rng"]["numpy"]
        torch.set_rng_state(checkpoint["rng"]["torch"])
        if device.type == "cuda" and checkpoint["rng"]["cuda"] is not None:
            torch.cuda.set_rng_state(checkpoint["rng"]["cuda"])
        env.unwrapped.np_random.bit_generator.state = checkpoint["rng"]["env"]
        counters = checkpoint["counters"]
        print(f"resuming {run_name} at step {start_step}", file=sys.stderr)

    def checkpoint_state(next_step):
        return {
            "args": asdict(args), "global_step": next_step, "counters": dict(counters,
            guide_failures=getattr(guide, "failures", 0)),
            **{name: module.state_dict() for name, module in training_state.items()},
            "rng": {"python": random.getstate(), "numpy_global": np.random.get_state(), "numpy": rng.bit_generator.state,
                    "torch": torch.get_rng_state(), "cuda": torch.cuda.get_rng_state() if device.type == "cuda" else None,
                    "env": env.unwrapped.np_random.bit_generator.state},
        }  # fmt: skip

    if hasattr(guide, "failures"):
        guide.failures = counters["guide_failures"]

    stop_request = StopRequest()
    guide_name = args.llm_policy or args.expert_model or ("random" if args.random_guide else "none (TD3 baseline)")
    print(f"run {run_name}: {args.env_id}, guide {guide_name}, steps {start_step}-{args.total_timesteps} on {device}; "
          f"logs in {run_dir}", flush=True)  # fmt: skip
    start_time = time.time()
    progress = Progress(args.total_timesteps, start_step)
    next_checkpoint = (start_step // args.checkpoint_frequency + 1) * args.checkpoint_frequency if args.checkpoint_frequency else None
    obs = None  # None: an episode starts at the top of the loop
    window_masked = window_steps = 0
    last_return = eval_return = None
    try:
        for global_step in range(start_step, args.total_timesteps):
            if obs is None:
                obs, _ = env.reset(seed=args.seed if global_step == 0 else None)
                low, high, masked = draw_bounds(obs, global_step)

            # ALGO LOGIC: put action logic here (CAMEL: actions stay inside [low, high])
            if global_step < args.learning_starts:
                actions = (rng.uniform(low, high) * action_scale + action_bias).astype(np.float32)
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

            # TRY NOT TO MODIFY: save data to reply buffer (CAMEL: with the bounds of s and of s')
            next_low, next_high, next_masked = draw_bounds(next_obs, global_step + 1)
            rb.add(obs, next_obs, actions, reward, terminated, low, high, next_low, next_high)

            # TRY NOT TO MODIFY: CRUCIAL step easy to overlook
            obs, low, high, masked = next_obs, next_low, next_high, next_masked

            # ALGO LOGIC: training.
            if global_step > args.learning_starts:
                data = rb.sample(args.batch_size)
                qf_a_values, qf_losses = update_critics(
                    data, target_actor, qf, qf_target, q_optimizer, args.gamma, args.policy_noise, args.noise_clip
                )
                if global_step % args.policy_frequency == 0:
                    actor_loss = update_actor(data, actor, qf, actor_optimizer)
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
                    writer.add_scalar("losses/actor_loss", actor_loss.item(), global_step)

            if global_step % 100 == 0:
                sps = int((global_step + 1 - start_step) / (time.time() - start_time))
                epsilon = masking_probability(global_step, args.total_timesteps, args.epsilon_fraction) if args.epsilon_masking else 1.0
                writer.add_scalar("charts/SPS", sps, global_step)
                writer.add_scalar("charts/epsilon", epsilon if guide is not None else 0.0, global_step)
                writer.add_scalar("charts/masked_fraction", window_masked / window_steps, global_step)
                writer.add_scalar("charts/guide_failures", getattr(guide, "failures", 0), global_step)
                window_masked = window_steps = 0
                progress.update(global_step + 1, sps=sps, epsilon=round(epsilon, 3) if guide is not None else None,
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
                    save_checkpoint(checkpoint_path, checkpoint_state(global_step + 1))
                    next_checkpoint = ((global_step + 1) // args.checkpoint_frequency + 1) * args.checkpoint_frequency

            if stop_request.signal is not None and global_step + 1 < args.total_timesteps:  # drops the unfinished episode
                progress.close()
                save_checkpoint(checkpoint_path, checkpoint_state(global_step + 1))
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

    summary = {"run_name": run_name, "env_id": args.env_id, "exp_name": args.exp_name, "seed": args.seed,
               "total_timesteps": args.total_timesteps, "final_eval_return": eval_return,
               "guide_calls": getattr(guide, "calls", None), "guide_failures": getattr(guide, "failures", 0)}  # fmt: skip
    with open(os.path.join(run_dir, "finished.json"), "w") as f:
        json.dump(summary, f, indent=2)
    if os.path.exists(checkpoint_path):
        os.remove(checkpoint_path)  # the run is complete; the replay buffer in it is no longer needed
    print(f"finished {run_name}: eval/episodic_return {eval_return:.1f} after {args.total_timesteps} steps")
    env.close()
    eval_env.close()
    writer.close()
