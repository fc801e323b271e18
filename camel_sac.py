# CAMEL-SAC: SAC whose exploration is guided by a hard-coded policy written by a language model.
# Paper: "CAMEL: Continuous Action Masking Enabled by Large Language Models" (arXiv 2502.11896), which builds on TD3;
# this is the same method on CleanRL's sac_continuous_action.py. The CAMEL additions are marked "CAMEL:":
#   - the guide g(s), action masking and epsilon masking, as in camel_td3.py: with probability epsilon a step's
#     action is confined to the box [g(s) - w, g(s) + w] (draw_bounds); epsilon falls linearly from 1 to 0
#     (epsilon_at); the replay buffer keeps the bounds (low, high) of s and of s' beside each transition
#   - the masking-aware stochastic actor: it sees (obs, low, high); its squashed Gaussian sample tanh(u) in [-1, 1] is
#     mapped onto [low, high], and log pi(a|s) includes that map's Jacobian
#   - SAC's entropy terms measure the action against its box, so a narrow box is neither a reward nor a penalty
#     (log_prob_in_box); the target's next action is sampled inside the bounds stored for s'
# camel_td3.py is a peer, not a dependency: the env, the bounds, the epsilon schedule and the replay buffer are written
# out in both files, the same text (tests/test_trainers_agree.py keeps them so). What is not the algorithm is in
# camel_utils/: guides (guide.py), run bookkeeping (run.py), the critics as one batched pair (fast_update.py).
import math
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

from camel_utils.fast_update import BatchedCritics
from camel_utils.guide import action_scale_bias, full_bounds, to_env_units, track_robot_camera
from camel_utils.run import Run, checked_env, checked_guide, parse_args

MIN_MASK_WIDTH = 1e-3  # the least --mask-width (see its help)


@dataclass
class Args:
    """CAMEL-SAC: CleanRL's SAC with the paper's CAMEL (action masking around a guide's action, the masking-aware
    actor, epsilon masking); no CAMEL+ parts (camel_plus_td3.py has them).

    The flags a first run needs:
      --env-id           a Gymnasium env with continuous actions
      --llm-policy       the guide file, e.g. policies/hopper.py (without a guide: plain SAC)
      --total-timesteps  the length of the run
      --resume runs/RUN  continue a stopped run
      --seed             one seed of a sweep (scripts/sweep.py runs many)"""
    # experiment: CleanRL's flags for the run's name, seed, device and tracking
    exp_name: Annotated[Optional[str], tyro.conf.arg(help_behavior_hint="(default: camel_sac; sac without a guide)")] = None
    """the name of this experiment, as CleanRL's: the script's name (sac for a run without a guide);
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
    """save the model at the end as `runs/{run_name}/{exp_name}.cleanrl_model`
    (the actor's, qf1's and qf2's state dicts, CleanRL's format; skip with --no-save-model)"""
    upload_model: Optional[str] = None
    """after the run, upload the model, a model card, the scalars and the arguments to this Hugging Face repo
    (owner/name, e.g. you/Hopper-v4-sac_camel-seed1; token from HF_TOKEN or `hf auth login`; camel_utils/hub.py)"""

    # SAC: CleanRL's algorithm flags (the env, the length of the run, the hyperparameters)
    env_id: str = "Hopper-v4"
    """the id of the environment (any Gymnasium env with a Box action space)"""
    total_timesteps: int = 1000000
    """total timesteps of the experiments"""
    buffer_size: int = int(1e6)
    """the replay memory buffer size"""
    gamma: float = 0.99
    """the discount factor gamma"""
    tau: float = 0.005
    """target smoothing coefficient"""
    batch_size: int = 256
    """the batch size of sample from the replay memory"""
    learning_starts: int = 5000
    """timestep to start learning"""
    policy_lr: float = 3e-4
    """the learning rate of the policy network optimizer"""
    q_lr: float = 1e-3
    """the learning rate of the Q network optimizer (and of the temperature's)"""
    policy_frequency: int = 2
    """the frequency of training policy (delayed; each time, this many actor updates make up for the delay)"""
    target_network_frequency: int = 1
    """the frequency of updates for the target networks"""
    alpha: float = 0.2
    """entropy regularization coefficient (the temperature; used as is only with --no-autotune)"""
    autotune: bool = True
    """automatic tuning of the entropy coefficient (starts at alpha = 1, as CleanRL's)"""

    # guide: the guide g(s), at most one of these (none gives the plain SAC baseline)
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
    (camel_td3.py's width, not tuned for SAC); at least 0.001:
    log pi subtracts the log of the box's width, and log_prob_in_box adds it back;
    float32 bounds cannot tell a much narrower box from a point (w = 1e-8 gave NaN at the first update)"""
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
    """evaluate the actor's mean action without any mask every this many steps (logged as eval/episodic_return)"""
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
    """treat float32 values under 1.2e-38 as 0 on the CPU (as camel_td3.py; off: IEEE denormals, torch's default)"""


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
class SoftQNetwork(nn.Module):
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


LOG_STD_MAX = 2
LOG_STD_MIN = -5


class Actor(nn.Module):
    """CAMEL: masking-aware stochastic actor. It sees the action bounds (low, high) of the normalised action space
    beside the observation; its squashed Gaussian sample y = tanh(u), u ~ N(mean, std), is mapped from [-1, 1] onto
    [low, high], so every action it takes lies in the box. With masking_aware=False it does not see the bounds but
    its sample is still mapped into them (camel_td3.py's 'w/o MA' actor); with low = -1, high = 1 it is CleanRL's SAC
    actor."""

    def __init__(self, env, masking_aware=True):
        super().__init__()
        obs_dim, action_dim = np.array(env.observation_space.shape).prod(), np.prod(env.action_space.shape)
        self.masking_aware = masking_aware
        self.fc1 = nn.Linear(obs_dim + 2 * action_dim if masking_aware else obs_dim, 256)
        self.fc2 = nn.Linear(256, 256)
        self.fc_mean = nn.Linear(256, action_dim)
        self.fc_logstd = nn.Linear(256, action_dim)
        # action rescaling, by the normalised action contract (camel_utils.guide.action_scale_bias)
        action_scale, action_bias = action_scale_bias(env.action_space)
        self.register_buffer("action_scale", torch.tensor(action_scale, dtype=torch.float32))
        self.register_buffer("action_bias", torch.tensor(action_bias, dtype=torch.float32))

    def forward(self, x, low, high):
        if self.masking_aware:
            x = torch.cat([x, low, high], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        mean = self.fc_mean(x)
        log_std = torch.tanh(self.fc_logstd(x))
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)  # From SpinUp / Denis Yarats
        return mean, log_std

    def get_action(self, x, low, high):
        """A sampled action (env units), its log-probability log pi(a|s) (shape (batch,)) and the mean action (env
        units). CAMEL: the density is that of a = low + (tanh(u) + 1) / 2 * (high - low) in the normalised space, by the
        change of variables u -> tanh(u) -> a:
            log pi(a|s) = sum_i [log N(u_i; mean_i, std_i) - log(1 - tanh(u_i)^2) - log((high_i - low_i) / 2)].
        Beside CleanRL's, two choices (the same numbers on the paper's envs, whose actions are in [-1, 1], wherever
        1 - tanh(u)^2 >> 1e-6): log(1 - tanh(u)^2) is exact, where CleanRL adds 1e-6 inside the log (an error the
        box's Jacobian would scale up as the box narrows); and there is no log(action_scale) term: the density lives
        where the box, the guide and the target entropy do, not in each env's units."""
        mean, log_std = self(x, low, high)
        std = log_std.exp()
        normal = torch.distributions.Normal(mean, std)
        u = normal.rsample()  # for reparameterization trick (mean + std * N(0,1))
        y = torch.tanh(u)
        a = low + (y + 1) / 2 * (high - low)  # CAMEL action mapping: [-1, 1] onto [low, high]
        log_one_minus_y2 = 2 * (math.log(2) - u - F.softplus(-2 * u))  # log(1 - tanh(u)^2), exact for any u
        log_prob = (normal.log_prob(u) - log_one_minus_y2 - torch.log((high - low) / 2)).sum(1)
        return self.to_env_units(a), log_prob, self.deterministic(x, low, high, mean)

    def deterministic(self, x, low, high, mean=None):
        """The mean action tanh(mean) mapped into [low, high], in env units: the action SAC evaluates."""
        if mean is None:
            mean, _ = self(x, low, high)
        return self.to_env_units(low + (torch.tanh(mean) + 1) / 2 * (high - low))

    def to_env_units(self, a):
        """Normalised actions or bounds in [-1, 1] in the env's own units (camel_utils.guide.to_env_units, on tensors)."""
        return a * self.action_scale + self.action_bias


# ---- CAMEL: SAC's entropy, measured against the box ---------------------------------------------------------------
def log_prob_in_box(log_prob, low, high):
    """log pi(a|s) + sum_i log((high_i - low_i) / 2): the log-density of where the action sits in its box (that of
    y = tanh(u) in [-1, 1]), the part of pi the actor controls; log pi itself when unmasked. SAC's three entropy terms
    (the critics' target, the actor's loss, the temperature's loss) use it in place of log pi.

    Why: a box of half-widths h holds at most the full space's entropy plus sum log h (about -2.4 nats on Hopper at
    w = 0.6, where the guide's boxes are mostly clipped at the action limits). CleanRL's fixed target -|A| on log pi
    itself asks a masked policy for that much more spread inside its box, and where the box cannot hold it
    (sum log h < -|A| (1 + log 2), e.g. w = 0.1) alpha grows without bound: on Hopper at w = 0.1 it went from 1 to
    1342 in 4,000 steps, and the critics' values to -20,000. Measured in the box, the target -|A| asks the same spread
    in any box, and nothing changes for alpha when masking ends. In the critics' target it keeps -alpha log pi(a'|s')
    from charging a masked s' alpha * sum log(1/h(s')) per step, a cost of the mask that the critics, which do not
    see the bounds, would learn as part of the state's value and unlearn as epsilon falls. In the actor's loss the
    term is a constant: the actor's gradient is SAC's."""
    return log_prob + torch.log((high - low) / 2).sum(1)


# ALGO LOGIC: the SAC update, as functions; qf and qf_target are the pairs (qf1, qf2) as one batched network, called
# as qf(obs, actions) -> both critics' values, shape (2, batch) (camel_utils.fast_update.BatchedCritics)
def sac_target(data, actor, qf_target, alpha, gamma):
    """The critics' regression target r + gamma * (1 - done) * (min(Q1', Q2')(s', a') - alpha * log pi(a'|s')), with
    a' ~ pi(.|s'). CAMEL: a' is sampled inside the bounds stored for s' (as TD3's target acts there), and its log pi
    is measured against that box (log_prob_in_box)."""
    with torch.no_grad():
        next_state_actions, next_state_log_pi, _ = actor.get_action(data.next_observations, data.next_low, data.next_high)
        next_state_log_pi = log_prob_in_box(next_state_log_pi, data.next_low, data.next_high)
        min_qf_next_target = qf_target(data.next_observations, next_state_actions).min(0).values - alpha * next_state_log_pi
        return data.rewards.flatten() + (1 - data.dones.flatten()) * gamma * min_qf_next_target


def update_critics(data, actor, qf, qf_target, q_optimizer, alpha, gamma):
    """One step of both soft Q-networks on their MSE to sac_target; returns their values (2, batch) and losses (2,)."""
    next_q_value = sac_target(data, actor, qf_target, alpha, gamma)
    qf_a_values = qf(data.observations, data.actions)  # (2, batch): qf1 and qf2
    qf_losses = ((qf_a_values - next_q_value) ** 2).mean(1)  # each critic's MSE loss

    # optimize the model
    q_optimizer.zero_grad()
    qf_losses.sum().backward()
    q_optimizer.step()
    return qf_a_values.detach(), qf_losses.detach()


def update_actor(data, actor, qf, actor_optimizer, alpha):
    """SAC's actor loss alpha * log pi(a|s) - min(Q1, Q2)(s, a), a ~ pi(.|s). CAMEL: under the bounds each
    transition was collected with, masked or not. Returns the loss and the entropy estimate -log pi (in the box)."""
    pi, log_pi, _ = actor.get_action(data.observations, data.low, data.high)
    log_pi = log_prob_in_box(log_pi, data.low, data.high)
    min_qf_pi = qf(data.observations, pi, fixed=True).min(0).values  # the critics' weights held fixed
    actor_loss = ((alpha * log_pi) - min_qf_pi).mean()

    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
    return actor_loss.detach(), -log_pi.detach().mean()


def update_temperature(data, actor, log_alpha, a_optimizer, target_entropy):
    """Automatic entropy tuning: alpha rises while the policy's entropy is below target_entropy and falls while it
    is above. CAMEL: the entropy is measured in each transition's box (log_prob_in_box), which is the same as a
    target of target_entropy + sum log((high - low) / 2) for log pi itself."""
    with torch.no_grad():
        _, log_pi, _ = actor.get_action(data.observations, data.low, data.high)
        log_pi = log_prob_in_box(log_pi, data.low, data.high)
    alpha_loss = (-log_alpha.exp() * (log_pi + target_entropy)).mean()

    a_optimizer.zero_grad()
    alpha_loss.backward()
    a_optimizer.step()
    return alpha_loss.detach()


if __name__ == "__main__":
    args, checkpoint = parse_args(Args, "camel_sac.py", positive=["policy_frequency", "target_network_frequency"], min_mask_width=MIN_MASK_WIDTH)

    # TRY NOT TO MODIFY: seeding
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = args.torch_deterministic
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    torch.set_flush_denormal(args.flush_denormal)  # SPEED: slow x86 arithmetic on tiny numbers (see --help)
    rng = np.random.default_rng(args.seed)  # CAMEL: masking draws, random warm-up actions, the random guide

    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")

    # env setup (checked before the run folder is written: a mistake is one line and exit status 2)
    env = checked_env(make_env(args.env_id, args.seed, 0, args.capture_video, args.run_name), args.env_id)
    eval_env = make_env(args.env_id, args.seed, 1, False, args.run_name)()
    # CAMEL: the guide g(s), an LLM-written policy file, an expert actor, random actions, or None (plain SAC)
    guide = checked_guide(args, eval_env, rng)
    obs_dim, action_dim = int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape))
    # the TensorBoard writer, checkpoints, charts every 100 steps, unmasked evaluations, the summary (camel_utils/run.py)
    run = Run(args, "camel_sac.py", checkpoint, env, eval_env, guide, rng, device)
    writer = run.writer

    # CAMEL: the masking-aware actor (a plain SAC baseline keeps CleanRL's actor)
    masking_aware = args.masking_aware and guide is not None
    actor = Actor(env, masking_aware).to(device)
    qf1 = SoftQNetwork(env).to(device)
    qf2 = SoftQNetwork(env).to(device)
    qf1_target = SoftQNetwork(env).to(device)
    qf2_target = SoftQNetwork(env).to(device)
    qf1_target.load_state_dict(qf1.state_dict())
    qf2_target.load_state_dict(qf2.state_dict())
    # SPEED: each pair computed as one batched network (the committed runs' float rounding); qf1 and qf2 keep their
    # parameters, now views into the pair's stacked tensors, so it is made before the optimiser
    qf, qf_target = BatchedCritics(qf1, qf2), BatchedCritics(qf1_target, qf2_target)
    q_optimizer = optim.Adam(list(qf1.parameters()) + list(qf2.parameters()), lr=args.q_lr, fused=True)
    actor_optimizer = optim.Adam(list(actor.parameters()), lr=args.policy_lr, fused=True)

    # Automatic entropy tuning (CAMEL: the entropy is measured against each transition's box, see log_prob_in_box)
    if args.autotune:
        target_entropy = -float(action_dim)
        temperature = nn.ParameterDict({"log_alpha": nn.Parameter(torch.zeros(1, device=device))})  # a module: checkpoints hold it
        log_alpha = temperature["log_alpha"]
        alpha = log_alpha.exp().item()
        a_optimizer = optim.Adam([log_alpha], lr=args.q_lr)
    else:
        alpha = args.alpha

    # CAMEL: the replay buffer keeps the bounds of s and of s' beside each transition
    rb = ReplayBuffer(min(args.buffer_size, args.total_timesteps), obs_dim, action_dim, device)

    # what checkpoints hold by name (with the counters, every random generator and, CAMEL: the guide's call counts);
    # a resumed run restores them here, and the episode it was stopped in: the env, obs and its bounds (obs None: an
    # episode starts at the top of the loop). SAC is evaluated by its mean action, squashed into the full bounds
    modules = {"actor": actor, "qf1": qf1, "qf2": qf2, "qf1_target": qf1_target, "qf2_target": qf2_target,
               "q_optimizer": q_optimizer, "actor_optimizer": actor_optimizer, "replay_buffer": rb}  # fmt: skip
    if args.autotune:
        modules.update(temperature=temperature, a_optimizer=a_optimizer)
    start_step, (obs, low, high, masked) = run.start(modules, policy=actor.deterministic)
    if args.autotune:
        alpha = log_alpha.exp().item()  # a resumed run's

    actor_loss = alpha_loss = entropy = None  # until the first actor update of this process
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
                    actions, _, _ = actor.get_action(obs_t, low_t, high_t)
                    # float rounding can leave low + (y + 1) / 2 * (high - low) one ulp outside the box
                    actions = actions.clamp(actor.to_env_units(low_t), actor.to_env_units(high_t)).cpu().numpy()[0]

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
                qf_a_values, qf_losses = update_critics(data, actor, qf, qf_target, q_optimizer, alpha, args.gamma)

                if global_step % args.policy_frequency == 0:  # TD3 Delayed update support
                    for _ in range(args.policy_frequency):  # compensate for the delay by doing 'policy_frequency' updates instead of 1
                        actor_loss, entropy = update_actor(data, actor, qf, actor_optimizer, alpha)
                        if args.autotune:
                            alpha_loss = update_temperature(data, actor, log_alpha, a_optimizer, target_entropy)
                            alpha = log_alpha.exp().item()

                # update the target networks (CleanRL's tau * param + (1 - tau) * target_param, as one lerp: the
                # rounding the committed runs were made with)
                if global_step % args.target_network_frequency == 0:
                    for param, target_param in zip([*qf1.parameters(), *qf2.parameters()], [*qf1_target.parameters(), *qf2_target.parameters()]):
                        target_param.data.lerp_(param.data, args.tau)

                if global_step % 100 == 0:
                    qf1_value, qf2_value = qf_a_values.mean(1).tolist()
                    qf1_loss, qf2_loss = qf_losses.tolist()
                    writer.add_scalar("losses/qf1_values", qf1_value, global_step)
                    writer.add_scalar("losses/qf2_values", qf2_value, global_step)
                    writer.add_scalar("losses/qf1_loss", qf1_loss, global_step)
                    writer.add_scalar("losses/qf2_loss", qf2_loss, global_step)
                    writer.add_scalar("losses/qf_loss", (qf1_loss + qf2_loss) / 2.0, global_step)
                    writer.add_scalar("losses/alpha", alpha, global_step)
                    if actor_loss is not None:
                        writer.add_scalar("losses/actor_loss", actor_loss.item(), global_step)
                        # CAMEL: -log pi measured in the boxes (what autotune holds near -action_dim)
                        writer.add_scalar("losses/entropy", entropy.item(), global_step)
                    if alpha_loss is not None:
                        writer.add_scalar("losses/alpha_loss", alpha_loss.item(), global_step)

            # charts every 100 steps, unmasked evaluations, checkpoints, a stop request (camel_utils/run.py): a checkpoint
            # keeps the episode under way, s' and its bounds, for a resumed run to continue
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
