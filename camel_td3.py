# CAMEL-TD3: TD3 whose exploration is guided by a hard-coded policy written by a language model.
# Paper: "CAMEL: Continuous Action Masking Enabled by Large Language Models" (arXiv 2502.11896).
# This is CleanRL's td3_continuous_action.py with the CAMEL additions, each marked "CAMEL:":
#   - the guide g(s): an LLM-written `policy(obs)` file, a trained expert, a random action, or none (plain TD3)
#   - action masking: with probability epsilon a step's action is confined to the box [g(s) - w, g(s) + w]
#     (draw_bounds); the replay buffer keeps the bounds (low, high) of s and of s' beside each transition
#   - the masking-aware actor: it sees (obs, low, high) and maps its tanh output into the box (Actor, below)
#   - epsilon masking: epsilon falls linearly from 1 to 0, so the agent ends acting unmasked (epsilon_at)
#   - the TD target: the target actor acts, and its smoothing noise is clamped, inside the bounds stored for s'
#     (target_action, below)
# Without a guide it is CleanRL's TD3. CAMEL+, the paper's CAMEL plus three parts, is camel_plus_td3.py: this file
# with those parts added (`diff camel_td3.py camel_plus_td3.py`; tests/test_trainers_agree.py keeps the rest the same).
# What is not the algorithm is in camel_utils/, as CleanRL keeps cleanrl_utils/: loading and checking guides (guide.py),
# run bookkeeping (run.py: argument checks, checkpoints, resuming, charts, unmasked evaluations, progress) and the same
# update computed faster, behind --fast-update (fast_update.py).
import logging
import random
from dataclasses import dataclass
from typing import Annotated, NamedTuple, Optional

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import tyro

from camel_utils import fast_update
from camel_utils.guide import action_scale_bias, full_bounds, to_env_units, track_robot_camera
from camel_utils.run import CompiledOrEager, Run, checked_env, checked_guide, parse_args


@dataclass
class Args:
    """CAMEL-TD3: CleanRL's TD3 guided by a controller a language model wrote, the paper's CAMEL (arXiv 2502.11896):
    action masking around the guide's action, the masking-aware actor and epsilon masking. Without a guide, TD3.
    (camel_plus_td3.py is CAMEL+: this with Q-filtered guide BC, the guide warm-up and two critic updates per step.)

    The flags a first run needs:
      --env-id           a Gymnasium env with continuous actions
      --llm-policy       the guide file, e.g. policies/hopper.py (without a guide: plain TD3)
      --total-timesteps  1M by default (docs/benchmark.md: hours per 1M steps)
      --resume runs/RUN  continue a stopped run
      --seed             one seed of a sweep (scripts/sweep.py runs many)

    Run folders: runs/{env_id}__{exp_name}__{seed}__{time}; curves: tensorboard --logdir runs"""
    # experiment: CleanRL's flags for the run's name, seed, device and tracking
    exp_name: Annotated[Optional[str], tyro.conf.arg(help_behavior_hint="(default: camel_td3; td3 without a guide)")] = None
    """the name of this experiment, as CleanRL's: the script's name (td3 for a run without a guide);
    it names the method, not the guide file (runs record its sha256) or the settings: give an ablation an --exp-name of its own"""
    seed: int = 1
    """seed of the experiment"""
    torch_deterministic: bool = True
    """run cuDNN deterministically (turn off with --no-torch-deterministic)"""
    cuda: bool = True
    """use a CUDA GPU where there is one (--no-cuda: the CPU even then)"""
    track: bool = False
    """if toggled, this experiment will be tracked with Weights and Biases (needs `pip install wandb`)"""
    wandb_project_name: str = "camel"
    """the wandb's project name"""
    wandb_entity: Optional[str] = None
    """the entity (team) of wandb's project"""
    capture_video: bool = False
    """whether to capture videos of the agent performances (check out `videos` folder)"""
    save_model: bool = True
    """save the model at the end as `runs/{run_name}/{exp_name}.cleanrl_model` (CleanRL's format; skip with --no-save-model)"""
    upload_model: Optional[str] = None
    """after the run, upload the model, a model card, the scalars and the arguments to this Hugging Face repo
    (owner/name, e.g. you/Hopper-v4-camel_td3-seed1; token from HF_TOKEN or `hf auth login`; camel_utils/hub.py)"""

    # TD3: CleanRL's algorithm flags (the env, the length of the run, the hyperparameters)
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
    """timestep to start learning (CleanRL's TD3 waits 25000):
    from 5000, CAMEL's unmasked agent gains while masking is on and ends higher, on Hopper-v4 and Ant-v4 (docs/design.md)"""
    policy_frequency: int = 2
    """the frequency of training policy (delayed)"""
    noise_clip: float = 0.5
    """noise clip parameter of the Target Policy Smoothing Regularization"""

    # guide: the guide g(s), at most one of these (none gives the plain TD3 baseline)
    llm_policy: Optional[str] = None
    """path of a guide file defining `policy(obs) -> action in [-1, 1]` (e.g. policies/hopper.py)"""
    expert_model: Optional[str] = None
    """guide from a trained actor: a `.cleanrl_model` file, or a Hugging Face repo id
    (e.g. cleanrl/Hopper-v4-td3_continuous_action-seed1; downloaded once, then cached)"""
    random_guide: bool = False
    """guide with a uniformly random action at every step (the paper's random-masking control)"""
    # masking: the paper's CAMEL (the box around the guide's action, the masking-aware actor, epsilon masking)
    mask_width: float = 0.6
    """half-width w of the box [g(s) - w, g(s) + w] in the normalised action space [-1, 1]
    (0.6 was chosen on Hopper-v4 from 0.1, 0.3, 0.6, 1.0: the mask width experiment in docs/design.md)"""
    epsilon_fraction: float = 0.5
    """epsilon masking: the masking probability falls linearly from 1 to 0 over this fraction of total-timesteps"""
    masking_aware: bool = True
    """the actor sees the action bounds (off: the 'w/o MA' ablation, actor sees only obs)"""
    epsilon_masking: bool = True
    """mask with a decaying probability (off: the 'w/o EM' ablation, every step is masked)"""
    guide_timeout: float = 1.0
    """seconds a single guide call may take before that step goes unmasked"""
    # bookkeeping: evaluations, checkpoints, resuming, the run folder, threads
    eval_frequency: int = 5000
    """evaluate the actor without any mask every this many steps (logged as eval/episodic_return)"""
    eval_episodes: int = 5
    """deterministic episodes per evaluation"""
    checkpoint_frequency: int = 50000
    """save a resumable checkpoint at the first episode end after every this many steps (0: never)"""
    resume: Optional[str] = None
    """continue an interrupted run: its folder (runs/{run_name}) or its checkpoint.pt;
    other flags are taken from it, except --cuda and --torch-threads (this machine's) and --upload-model (the command's, if given)"""
    run_name: Annotated[
        Optional[str], tyro.conf.arg(help_behavior_hint="(default: {env_id}__{exp_name}__{seed}__{time}, as CleanRL)")
    ] = None
    """name of the run folder under runs/"""
    torch_threads: int = 1
    """threads torch may use (1 holds up beside other runs and work; 0: torch's default, all cores, for an idle machine)"""

    # speed: the same algorithm, computed faster (docs/benchmark.md)
    flush_denormal: bool = True
    """treat float32 values under 1.2e-38 as 0 on the CPU, as XLA does:
    Adam's moments of dead ReLU units decay into that range, where x86 arithmetic runs many times slower
    (off: IEEE denormals, torch's default)"""
    fast_update: bool = True
    """compute the update with camel_utils/fast_update.py (both critics as one batched network, the gradients written out):
    the same update up to float rounding, 1.12-1.17x as fast per update on one thread of an Intel(R) Xeon(R) Processor
    (two measurements; off: the plain update in this file, CleanRL's autograd; not with --compile, which compiles the plain one)"""
    compile: bool = False
    """torch.compile the (plain) update and the acting step (falls back to eager, with a message, where it fails)"""
    cudagraphs: bool = True
    """on a CUDA device with --compile, also capture them in CUDA graphs (torch.compile's reduce-overhead mode)"""


# ---- The env, as CleanRL makes it -----------------------------------------------------------------------------------
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


# ---- CAMEL: the action bounds and epsilon masking (the same in camel_td3.py and camel_sac.py: tests/test_trainers_agree.py)
def mask_bounds(guide_action, mask_width):
    """The box around the guide's normalised action: [g - w, g + w], clipped to [-1, 1]."""
    return np.clip(guide_action - mask_width, -1.0, 1.0), np.clip(guide_action + mask_width, -1.0, 1.0)


def masking_probability(step, total_timesteps, epsilon_fraction):
    """Epsilon masking: the probability of masking a step falls linearly from 1 to 0 over
    epsilon_fraction * total_timesteps steps, then stays 0."""
    return max(0.0, 1.0 - step / (epsilon_fraction * total_timesteps))


def epsilon_at(step, args, guide):
    """Epsilon of a step in this run: the schedule above; 1 at every step without epsilon masking (the 'w/o EM'
    ablation); 0 without a guide (the plain baseline never masks)."""
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


# ---- CAMEL: the replay buffer, with the bounds of s and of s' ------------------------------------------------------
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
        # a copy of the rows in use: torch.save writes a view's whole storage, the preallocated buffer_size rows
        return {"data": self.data[: self.size].to("cpu", copy=True), "pos": self.pos, "size": self.size}

    def load_state_dict(self, state):
        self.pos, self.size = state["pos"], state["size"]
        self.data[: self.size] = state["data"].to(self.device)


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
        # action rescaling, by the normalised action contract (camel_utils.guide.action_scale_bias)
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
        """Normalised actions or bounds in [-1, 1] in the env's own units (camel_utils.guide.to_env_units, on tensors)."""
        return a * self.action_scale + self.action_bias


# ALGO LOGIC: acting and the TD3 update, as functions (tests call them on fixed inputs; --compile compiles them)
def explore(actor, obs, low, high, exploration_noise):
    """The behaviour policy: the actor's action plus Gaussian noise, clamped into the bounds (CAMEL: on a
    masked step, exploration stays inside the guide's box)."""
    actions = actor(obs, low, high)
    actions = actions + torch.randn_like(actions) * actor.action_scale * exploration_noise
    return actions.clamp(actor.to_env_units(low), actor.to_env_units(high))


def target_action(data, target_actor, policy_noise, noise_clip):
    """TD3's target policy smoothing: the target actor's action in s' plus clipped Gaussian noise. CAMEL: the action
    is chosen, and the noise clamped, inside the bounds stored for s', masked or not: the value of s' is that of
    acting there the way the agent acts there."""
    clipped_noise = (torch.randn_like(data.actions) * policy_noise).clamp(-noise_clip, noise_clip) * target_actor.action_scale
    next_state_actions = target_actor(data.next_observations, data.next_low, data.next_high) + clipped_noise
    return next_state_actions.clamp(target_actor.to_env_units(data.next_low), target_actor.to_env_units(data.next_high))


def td3_target(data, target_actor, qf1_target, qf2_target, gamma, policy_noise, noise_clip):
    """The critics' regression target r + gamma * (1 - done) * min(Q1', Q2')(s', a'), a' the target action above."""
    with torch.no_grad():
        next_state_actions = target_action(data, target_actor, policy_noise, noise_clip)
        qf1_next_target = qf1_target(data.next_observations, next_state_actions)
        qf2_next_target = qf2_target(data.next_observations, next_state_actions)
        min_qf_next_target = torch.min(qf1_next_target, qf2_next_target)
        return data.rewards.flatten() + (1 - data.dones.flatten()) * gamma * (min_qf_next_target).view(-1)


def update_critics(data, target_actor, qf1, qf2, qf1_target, qf2_target, q_optimizer, gamma, policy_noise, noise_clip):
    """One step of both critics on their MSE to td3_target; returns their values and losses, detached."""
    next_q_value = td3_target(data, target_actor, qf1_target, qf2_target, gamma, policy_noise, noise_clip)
    qf1_a_values = qf1(data.observations, data.actions).view(-1)
    qf2_a_values = qf2(data.observations, data.actions).view(-1)
    qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
    qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
    qf_loss = qf1_loss + qf2_loss

    # optimize the model
    q_optimizer.zero_grad()
    qf_loss.backward()
    q_optimizer.step()
    return qf1_a_values.detach(), qf2_a_values.detach(), qf1_loss.detach(), qf2_loss.detach()


def update_actor(data, actor, qf1, actor_optimizer):
    """One step of the actor on TD3's loss -Q1(s, actor(s)). CAMEL: under the bounds each transition was collected
    with, masked or not (the critics do not see the bounds)."""
    actor_loss = -qf1(data.observations, actor(data.observations, data.low, data.high)).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
    return actor_loss.detach()


def update_targets(networks, target_networks, tau):
    """CleanRL's soft update, target <- tau * online + (1 - tau) * target, for every parameter of the networks, as one
    lerp target + tau * (online - target) (the rounding the committed runs were made with)."""
    with torch.no_grad():
        torch._foreach_lerp_([p for net in target_networks for p in net.parameters()], [p for net in networks for p in net.parameters()], tau)

if __name__ == "__main__":
    args, checkpoint = parse_args(Args, "camel_td3.py", positive=["policy_frequency"])  # a resumed run's own; checked before anything is written

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

    # env setup (checked before the run folder is written: a mistake is one line and exit status 2)
    env = checked_env(make_env(args.env_id, args.seed, 0, args.capture_video, args.run_name), args.env_id)
    eval_env = make_env(args.env_id, args.seed, 1, False, args.run_name)()
    # CAMEL: the guide g(s), an LLM-written policy file, an expert actor, random actions, or None (plain TD3); an
    # LLM-written guide is tried on states of the evaluation env first, so the training env starts untouched
    guide = checked_guide(args, eval_env, rng)
    obs_dim, action_dim = int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape))
    # the TensorBoard writer, checkpoints, charts every 100 steps, unmasked evaluations, the summary (camel_utils/run.py)
    run = Run(args, "camel_td3.py", checkpoint, env, eval_env, guide, rng, device)
    writer = run.writer

    # CAMEL: the masking-aware actor (a plain TD3 baseline keeps CleanRL's actor)
    masking_aware = args.masking_aware and guide is not None
    actor = Actor(env, masking_aware).to(device)
    qf1 = QNetwork(env).to(device)
    qf2 = QNetwork(env).to(device)
    qf1_target = QNetwork(env).to(device)
    qf2_target = QNetwork(env).to(device)
    target_actor = Actor(env, masking_aware).to(device)
    target_actor.load_state_dict(actor.state_dict())
    qf1_target.load_state_dict(qf1.state_dict())
    qf2_target.load_state_dict(qf2.state_dict())
    # SPEED (--fast-update, camel_utils/fast_update.py): the same update with the gradients written out, on both
    # critics as one batched pair; qf1 and qf2 stay the critics (their weights become views into the pair, so this
    # comes before the optimisers). The plain update, the one to read, is the one above
    fast = args.fast_update and not args.compile
    if fast:
        fast_update.fuse_critics(qf1, qf2)
        fast_update.fuse_critics(qf1_target, qf2_target)
    critic_step = fast_update.update_critics if fast else update_critics
    actor_step = fast_update.update_actor if fast else update_actor
    # fused Adam: one kernel for all parameters (torch.compile makes its own); capturable keeps its step count on the
    # GPU, as CUDA graphs need
    cudagraphs = args.compile and args.cudagraphs and device.type == "cuda"
    q_optimizer = optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=args.learning_rate, fused=not args.compile, capturable=cudagraphs)
    actor_optimizer = optim.Adam(list(actor.parameters()), lr=args.learning_rate, fused=not args.compile, capturable=cudagraphs)

    # CAMEL: the replay buffer keeps the bounds of s and of s' beside each transition
    rb = ReplayBuffer(min(args.buffer_size, args.total_timesteps), obs_dim, action_dim, device)

    if args.compile:
        # the optimisers' profiler markers cannot be compiled; Dynamo says so once per function, harmlessly
        logging.getLogger("torch._dynamo.variables.ctx_manager").setLevel(logging.ERROR)
        mode = "reduce-overhead" if cudagraphs else None
        explore = CompiledOrEager(explore, mode)
        critic_step = CompiledOrEager(critic_step, mode)
        actor_step = CompiledOrEager(actor_step, mode)

    # what checkpoints hold by name (with the counters, every random generator and, CAMEL: the guide's call counts);
    # a resumed run restores them here, and the episode it was stopped in: the env, obs and its bounds (obs None: an
    # episode starts at the top of the loop). The actor, under the full bounds, is what the unmasked evaluations run
    start_step, (obs, low, high, masked) = run.start({"actor": actor, "qf1": qf1, "qf2": qf2, "target_actor": target_actor,
                                                      "qf1_target": qf1_target, "qf2_target": qf2_target, "q_optimizer": q_optimizer,
                                                      "actor_optimizer": actor_optimizer, "replay_buffer": rb}, policy=actor)  # fmt: skip
    actor_loss = None  # until this process's first actor update (a resumed run may log a critic step before it)
    try:
        for global_step in range(start_step, args.total_timesteps):
            epsilon = epsilon_at(global_step, args, guide)  # CAMEL: the probability that this step is masked
            if obs is None:
                obs, _ = env.reset(seed=args.seed if global_step == 0 else None)
                low, high, masked = draw_bounds(guide, obs, epsilon, args.mask_width, action_dim, rng)  # CAMEL: bounds of s

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

            # TRY NOT TO MODIFY: record rewards for plotting purposes
            if "episode" in info:
                writer.add_scalar("charts/episodic_return", info["episode"]["r"], global_step)
                writer.add_scalar("charts/episodic_length", info["episode"]["l"], global_step)

            # CAMEL: the bounds of s' are drawn now, with the next step's epsilon (the next step acts in s')
            next_low, next_high, next_masked = draw_bounds(
                guide, next_obs, epsilon_at(global_step + 1, args, guide), args.mask_width, action_dim, rng
            )
            # TRY NOT TO MODIFY: save data to reply buffer (CAMEL: with the bounds of s and of s')
            rb.add(obs, next_obs, actions, reward, terminated, low, high, next_low, next_high)

            # ALGO LOGIC: training.
            if global_step > args.learning_starts:
                data = rb.sample(args.batch_size)
                qf1_a_values, qf2_a_values, qf1_loss, qf2_loss = critic_step(
                    data, target_actor, qf1, qf2, qf1_target, qf2_target, q_optimizer, args.gamma, args.policy_noise, args.noise_clip
                )
                if global_step % args.policy_frequency == 0:
                    actor_loss = actor_step(data, actor, qf1, actor_optimizer)
                    # update the target networks
                    update_targets([actor, qf1, qf2], [target_actor, qf1_target, qf2_target], args.tau)

                if global_step % 100 == 0:
                    writer.add_scalar("losses/qf1_values", qf1_a_values.mean().item(), global_step)
                    writer.add_scalar("losses/qf2_values", qf2_a_values.mean().item(), global_step)
                    writer.add_scalar("losses/qf1_loss", qf1_loss.item(), global_step)
                    writer.add_scalar("losses/qf2_loss", qf2_loss.item(), global_step)
                    writer.add_scalar("losses/qf_loss", (qf1_loss.item() + qf2_loss.item()) / 2.0, global_step)
                    if actor_loss is not None:
                        writer.add_scalar("losses/actor_loss", actor_loss.item(), global_step)

            # charts every 100 steps, unmasked evaluations, checkpoints, a stop request (camel_utils/run.py): a
            # checkpoint keeps the episode under way, s' and its bounds, for a resumed run to continue
            run.after_step(global_step, info, epsilon, masked, terminated or truncated, (next_obs, next_low, next_high, next_masked))

            # TRY NOT TO MODIFY: CRUCIAL step easy to overlook (CAMEL: the bounds drawn for s' come along)
            obs, low, high, masked = next_obs, next_low, next_high, next_masked
            if terminated or truncated:
                obs = None
    except KeyboardInterrupt:
        run.stopped_at_once()

    if args.save_model:  # CleanRL's format, at runs/{run_name}/{exp_name}.cleanrl_model
        torch.save((actor.state_dict(), qf1.state_dict(), qf2.state_dict()), run.model_path)
    run.finish()  # finished.json; where the model is and what to run next; --upload-model: to the Hub (camel_utils/hub.py)
