# CAMEL-SAC: SAC whose exploration is guided by a hard-coded policy written by a language model.
# Paper: "CAMEL: Continuous Action Masking Enabled by Large Language Models" (arXiv 2502.11896), which builds on TD3;
# this is the same method on CleanRL's sac_continuous_action.py. The CAMEL additions are marked "CAMEL:".
#   - guide g(s), action masking, epsilon masking: exactly as in camel_td3.py, imported from there
#   - masking-aware stochastic actor: it sees (obs, low, high); its squashed Gaussian sample tanh(u) in [-1, 1] is
#     mapped onto [low, high], and log pi(a|s) includes that map's Jacobian
#   - SAC's entropy terms measure the action against its box, so a narrow box is neither a reward nor a penalty
#     (see log_prob_in_box)
# What both trainers share is imported, not copied: the CAMEL block (bounds, epsilon, a step's bounds), the replay
# buffer with the bounds of s and s', the env, the twin critics, unmasked evaluation (camel_td3.py); guides
# (camel_guide.py); run bookkeeping (camel_run.py). camel_td3's training loop is under `if __name__ == "__main__"`,
# so importing it runs nothing.
import math
import os
import random
import sys
import time
from dataclasses import dataclass
from typing import Annotated, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import tyro
from torch.utils.tensorboard import SummaryWriter

from camel_guide import GuideError, guide_file_record, action_scale_bias, make_guide, to_env_units
from camel_run import (
    Checkpoints, Progress, StopRequest, check_common_args, check_new_run_dir, checked_env, finish_run, resume_args,
    updates_happen,
)  # fmt: skip
from camel_td3 import CriticPair, ReplayBuffer, TwinQNetwork, draw_bounds, epsilon_at, evaluate, make_env, update_targets


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
    """whether to save the model as `runs/{run_name}/{exp_name}.cleanrl_model` (the actor's, qf1's and qf2's state dicts)"""

    # Algorithm specific arguments
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

    # CAMEL: the guide g(s), at most one of these (none gives the plain SAC baseline)
    llm_policy: Optional[str] = None
    """path of a guide file defining `policy(obs) -> action in [-1, 1]` (e.g. policies/hopper.py)"""
    expert_model: Optional[str] = None
    """guide from a trained actor: a `.cleanrl_model` file, or a Hugging Face repo id such as
    cleanrl/Hopper-v4-td3_continuous_action-seed1 (downloaded once, then cached)"""
    random_guide: bool = False
    """guide with a uniformly random action at every step (the paper's random-masking control)"""
    # CAMEL: masking
    mask_width: float = 0.6
    """half-width w of the box [g(s) - w, g(s) + w] in the normalised action space [-1, 1] (camel_td3.py's width, not tuned for SAC)"""
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
    """evaluate the actor's mean action without any mask every this many steps (logged as eval/episodic_return)"""
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

    # Speed (the same algorithm, computed faster)
    fused_critics: bool = True
    """run both critics as one batched network (off: CleanRL's two separate soft Q-networks)"""
    flush_denormal: bool = True
    """treat float32 values under 1.2e-38 as 0 on the CPU (as camel_td3.py; off: IEEE denormals, torch's default)"""


# ALGO LOGIC: initialize agent here:
# The soft Q-networks: CleanRL's SoftQNetwork is the same 256-256-1 network as TD3's QNetwork, so the twin critics
# are camel_td3's (CriticPair: two of them, one after the other; TwinQNetwork: the same two, batched).
LOG_STD_MAX = 2
LOG_STD_MIN = -5


class Actor(nn.Module):
    """CAMEL: masking-aware stochastic actor. It sees the action bounds (low, high) of the normalised action space
    beside the observation; its squashed Gaussian sample y = tanh(u), u ~ N(mean, std), is mapped from [-1, 1] onto
    [low, high], so every action it takes lies in the box. With masking_aware=False it does not see the bounds but
    its sample is still mapped into them (camel_td3's 'w/o MA' actor); with low = -1, high = 1 it is CleanRL's SAC
    actor."""

    def __init__(self, env, masking_aware=True):
        super().__init__()
        obs_dim, action_dim = np.array(env.observation_space.shape).prod(), np.prod(env.action_space.shape)
        self.masking_aware = masking_aware
        self.fc1 = nn.Linear(obs_dim + 2 * action_dim if masking_aware else obs_dim, 256)
        self.fc2 = nn.Linear(256, 256)
        self.fc_mean = nn.Linear(256, action_dim)
        self.fc_logstd = nn.Linear(256, action_dim)
        # action rescaling, by the normalised action contract (camel_guide.action_scale_bias)
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
        """Normalised actions or bounds in [-1, 1] in the env's own units (camel_guide.to_env_units, on tensors)."""
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


# ALGO LOGIC: the SAC update, as functions, written once for both critic layouts (CriticPair and TwinQNetwork)
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
    next_q_value = sac_target(data, actor, qf_target, alpha, gamma)
    qf_a_values = qf(data.observations, data.actions)  # (2, batch): qf1 and qf2
    qf_losses = ((qf_a_values - next_q_value) ** 2).mean(1)  # each critic's MSE loss

    # optimize the model
    q_optimizer.zero_grad()
    qf_losses.sum().backward()
    q_optimizer.step()
    return qf_a_values.detach(), qf_losses.detach()


def fixed_critics(qf, x, a):
    """Both critics' values (2, batch) with their weights held fixed: the actor's loss needs no gradient for them."""
    weights = {name: p.detach() for name, p in qf.named_parameters()}
    return torch.func.functional_call(qf, weights, (x, a))


def update_actor(data, actor, qf, actor_optimizer, alpha):
    """SAC's actor loss alpha * log pi(a|s) - min(Q1, Q2)(s, a), a ~ pi(.|s). CAMEL: under the bounds each
    transition was collected with, masked or not. Returns the loss and the entropy estimate -log pi (in the box)."""
    pi, log_pi, _ = actor.get_action(data.observations, data.low, data.high)
    log_pi = log_prob_in_box(log_pi, data.low, data.high)
    min_qf_pi = fixed_critics(qf, data.observations, pi).min(0).values
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
    args = tyro.cli(Args)
    checkpoint = None
    if args.resume:
        args, checkpoint = resume_args(args.resume, args, Args)
    check_common_args(args, positive=["policy_frequency", "target_network_frequency"])
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
    torch.set_flush_denormal(args.flush_denormal)  # SPEED: slow x86 arithmetic on tiny numbers, see camel_td3.py
    rng = np.random.default_rng(args.seed)  # CAMEL: masking draws, random warm-up actions, the random guide

    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")

    # env setup (the env and the guide are checked before the run folder is written: a failed start leaves none)
    env = checked_env(make_env(args.env_id, args.seed, 0, args.capture_video, run_name), args.env_id)
    eval_env = make_env(args.env_id, args.seed, 1, False, run_name)()
    obs_dim, action_dim = int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape))

    # CAMEL: the guide g(s): an LLM-written policy file, an expert actor, random actions, or None (plain SAC).
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

    # CAMEL: the masking-aware actor (a plain SAC baseline keeps CleanRL's actor)
    masking_aware = args.masking_aware and guide is not None
    actor = Actor(env, masking_aware).to(device)
    Critics = TwinQNetwork if args.fused_critics else CriticPair
    qf = Critics(env).to(device)  # qf1 and qf2
    qf_target = Critics(env).to(device)
    qf_target.load_state_dict(qf.state_dict())
    q_optimizer = optim.Adam(list(qf.parameters()), lr=args.q_lr, fused=True)
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

    rb = ReplayBuffer(min(args.buffer_size, args.total_timesteps), obs_dim, action_dim, device)

    # checkpoints hold these by name (CAMEL: with the guide's call counts), the counters and every random generator
    modules = {"actor": actor, "qf": qf, "qf_target": qf_target, "q_optimizer": q_optimizer,
               "actor_optimizer": actor_optimizer, "replay_buffer": rb}  # fmt: skip
    if args.autotune:
        modules.update(temperature=temperature, a_optimizer=a_optimizer)
    if guide is not None:
        modules["guide"] = guide
    counters = {"episodes": 0}
    checkpoints = Checkpoints(os.path.join(run_dir, "checkpoint.pt"), args, modules, counters, rng, env)
    start_step = 0
    if checkpoint:
        start_step = checkpoints.restore(checkpoint)
        if args.autotune:
            alpha = log_alpha.exp().item()
        print(f"resuming {run_name} at step {start_step}", file=sys.stderr)

    stop_request = StopRequest()
    print(f"run {run_name}: {args.env_id}, SAC, guide {guide.name if guide else 'none (SAC baseline)'}, "
          f"steps {start_step}-{args.total_timesteps} on {device}; logs in {run_dir}", flush=True)  # fmt: skip
    start_time = time.time()
    progress = Progress(args.total_timesteps, start_step)
    next_checkpoint = (start_step // args.checkpoint_frequency + 1) * args.checkpoint_frequency if args.checkpoint_frequency else None
    obs = None  # None: an episode starts at the top of the loop
    window_masked = window_steps = 0
    last_return = eval_return = None
    actor_loss = alpha_loss = entropy = None  # until the first actor update of this process
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
                    actions, _, _ = actor.get_action(obs_t, low_t, high_t)
                    # float rounding can leave low + (y + 1) / 2 * (high - low) one ulp outside the box
                    actions = actions.clamp(actor.to_env_units(low_t), actor.to_env_units(high_t)).cpu().numpy()[0]

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
                qf_a_values, qf_losses = update_critics(data, actor, qf, qf_target, q_optimizer, alpha, args.gamma)

                if global_step % args.policy_frequency == 0:  # TD3 Delayed update support
                    for _ in range(args.policy_frequency):  # compensate for the delay by doing 'policy_frequency' updates instead of 1
                        actor_loss, entropy = update_actor(data, actor, qf, actor_optimizer, alpha)
                        if args.autotune:
                            alpha_loss = update_temperature(data, actor, log_alpha, a_optimizer, target_entropy)
                            alpha = log_alpha.exp().item()

                # update the target networks
                if global_step % args.target_network_frequency == 0:
                    update_targets(list(qf_target.parameters()), list(qf.parameters()), args.tau)

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
                # unmasked evaluation (camel_td3's), with SAC's deterministic action: the mean, squashed into [-1, 1]
                eval_return, eval_length = evaluate(actor.deterministic, eval_env, args.eval_episodes, args.seed + 100_000, device)
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
                print(f"\ninterrupted at step {global_step + 1}; continue with: python camel_sac.py --resume {run_dir}", file=sys.stderr)
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
