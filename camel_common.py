"""What camel_td3.py and camel_sac.py share that is not their algorithm, imported by both, so that each trainer
file holds its own algorithm and the two stay peers (neither imports the other):

- the env: CleanRL's make_env, and the env and guide of a run, checked before its run folder is written (a mistake is
  a UsageError: one `error:` line, exit status 2);
- CAMEL's action bounds: the box around the guide's action, the epsilon-masking schedule, and the draw that
  gives a step its bounds (the guides themselves are in camel_guide.py);
- the replay buffer, which keeps the bounds of s and of s' beside each transition;
- unmasked evaluation, the curve that shows whether the agent outgrew its guide;
- SPEED: a pair of critics computed as one batched network (camel_sac.py's critics, camel_td3_fast.py's).

The loop's run bookkeeping (writer, checkpoints, resuming, charts, evaluations, stopping) is camel_run.py's.
"""

import sys
import warnings
from typing import NamedTuple, Optional

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from camel_guide import GuideError, full_bounds, make_guide, track_robot_camera

# The paper's envs are the v4 MuJoCo ones; Gymnasium's reminder that v5 exists is not news here.
warnings.filterwarnings("ignore", message=r".*is out of date\. You should consider upgrading")


# ---- The env ------------------------------------------------------------------------------------------------------
class UsageError(SystemExit):
    """A mistake in the command (a flag, a file, the env, a guide) found before the run starts: its message, one
    `error: ...` line, goes to stderr as it is raised, and the trainer exits with status 2, as evaluate_policy.py and
    generate_policy.py do for such mistakes."""

    def __init__(self, problem):
        super().__init__(f"error: {problem}")  # str(e) is the line
        self.code = 2  # what Python exits with; the line is printed here, since Python prints no message for a number
        print(self, file=sys.stderr)


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


def checked_env(make_env_thunk, env_id):
    """The env the thunk makes, or one line saying why there is none (an unknown id, not a continuous action space)."""
    try:
        env = make_env_thunk()
    except gym.error.Error as e:
        raise UsageError(f"--env-id {env_id}: {e}")
    if not isinstance(env.action_space, gym.spaces.Box):
        raise UsageError(f"{env_id} has a {type(env.action_space).__name__} action space; only continuous (Box) action spaces are supported")
    return env


def make_env_and_guide(args, rng):
    """The training env, the evaluation env and CAMEL's guide g(s) (None without one: the plain baseline), each
    checked before the run folder is written, so a failed start (an unknown env, a broken guide) leaves none. An
    LLM-written guide is tried on states sampled from the evaluation env, so the training env (and its video) starts
    untouched."""
    env = checked_env(make_env(args.env_id, args.seed, 0, args.capture_video, args.run_name), args.env_id)
    eval_env = make_env(args.env_id, args.seed, 1, False, args.run_name)()
    try:
        guide = make_guide(eval_env, llm_policy=args.llm_policy, expert_model=args.expert_model, random_guide=args.random_guide,
                           rng=rng, seed=args.seed, call_timeout=args.guide_timeout)  # fmt: skip
    except GuideError as e:
        raise UsageError(str(e))
    return env, eval_env, guide


# ---- CAMEL: the action bounds, the epsilon-masking schedule, and a step's bounds -----------------------------------
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
    # only in a buffer made with guide_actions=True (camel_td3.py's CAMEL+ levers): the guide's action in s and in s',
    # in the env's units, each with 1 where the guide gave one (0 where it failed there, the action columns holding zeros)
    guide_actions: Optional[torch.Tensor] = None
    has_guide: Optional[torch.Tensor] = None
    next_guide_actions: Optional[torch.Tensor] = None
    next_has_guide: Optional[torch.Tensor] = None


class ReplayBuffer:
    """Ring buffer of transitions that, for CAMEL, also keeps the action bounds of s and of s' (and, with
    guide_actions=True, the guide's action in s and in s').

    One float32 tensor holds every field side by side, so storing a transition is one row copy and
    sampling a batch is one gather; the fields are column slices of it (see ReplayBatch)."""

    def __init__(self, buffer_size, obs_dim, action_dim, device, guide_actions=False):
        self.widths = [obs_dim, obs_dim, action_dim, 1, 1] + [action_dim] * 4  # in ReplayBatch's order
        if guide_actions:
            self.widths += [action_dim, 1, action_dim, 1]
        self.action_dim, self.guide_actions = action_dim, guide_actions
        self.buffer_size, self.device, self.pos, self.size = buffer_size, device, 0, 0
        self.data = torch.zeros((buffer_size, sum(self.widths)), dtype=torch.float32, device=device)

    def add(self, obs, next_obs, action, reward, done, low, high, next_low, next_high, guide_action=None, next_guide_action=None):
        """guide_action, next_guide_action: the guide's action in s and in s' (env units; None where it failed), kept in
        a guide_actions buffer."""
        columns = [obs, next_obs, action, [reward], [done], low, high, next_low, next_high]
        if self.guide_actions:
            for g in (guide_action, next_guide_action):
                columns += [np.zeros(self.action_dim) if g is None else g, [float(g is not None)]]
        row = np.concatenate(columns, dtype=np.float32)
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


# ---- Unmasked evaluation -------------------------------------------------------------------------------------------
def evaluate(policy, eval_env, episodes, seed, device):
    """Unmasked evaluation: the deterministic policy(obs, low, high) -> env action over the whole action space
    (low = -1, high = 1), from the same start states at every evaluation. Returns the mean return and length."""
    low, high = (torch.as_tensor(b, device=device).unsqueeze(0) for b in full_bounds(int(np.prod(eval_env.action_space.shape))))
    returns, lengths = [], []
    for episode in range(episodes):
        obs, _ = eval_env.reset(seed=seed + episode)  # the same start states at every evaluation
        done, episode_return, length = False, 0.0, 0
        while not done:
            with torch.no_grad():
                action = policy(torch.as_tensor(obs, dtype=torch.float32, device=device).unsqueeze(0), low, high)
            obs, reward, terminated, truncated, _ = eval_env.step(action.cpu().numpy()[0])
            episode_return, length, done = episode_return + float(reward), length + 1, terminated or truncated
        returns.append(episode_return)
        lengths.append(length)
    return float(np.mean(returns)), float(np.mean(lengths))


# ---- SPEED: a pair of critics as one batched network ---------------------------------------------------------------
class BatchedCritics:
    """Two critics with CleanRL's Q-network layers (fc1, fc2, fc3: obs and action in, 256, 256, 1 out), qf1 and qf2,
    computed as one batched network: each layer's two weight matrices are stacked in one tensor of shape (2, out, in)
    and its biases in one of shape (2, 1, out), so both critics take one torch.baddbmm per layer, forward and
    backward. Called as qf(x, a), it gives both critics' values, shape (2, batch).

    qf1's and qf2's parameters become views into the stacked tensors (qf1's weight is weights[i][0], in its own
    shape): they keep CleanRL's names and shapes, so the optimiser, the soft target update, checkpoints and
    .cleanrl_model files see qf1 and qf2 as ever, and every in-place change to them (Adam's step, the target update,
    load_state_dict) is a change to the stacked tensors. The gradient autograd computes for a stacked tensor is handed
    on to qf1's and qf2's parameters (as views of it) once it is complete, so an optimiser over their parameters steps
    as usual. Make the pair after .to(device) (which would copy the parameters out) and before the optimiser (which
    must hold the new parameters)."""

    def __init__(self, qf1, qf2):
        self.qf1, self.qf2, self.weights, self.biases = qf1, qf2, [], []
        for name in ["fc1", "fc2", "fc3"]:
            layer1, layer2 = getattr(qf1, name), getattr(qf2, name)
            weight = torch.stack([layer1.weight.detach(), layer2.weight.detach()])  # (2, out, in)
            bias = torch.stack([layer1.bias.detach(), layer2.bias.detach()]).unsqueeze(1).clone()  # (2, 1, out)
            layer1.weight, layer2.weight = nn.Parameter(weight[0]), nn.Parameter(weight[1])
            layer1.bias, layer2.bias = nn.Parameter(bias[0, 0]), nn.Parameter(bias[1, 0])
            for stacked, params in [(weight, (layer1.weight, layer2.weight)), (bias, (layer1.bias, layer2.bias))]:
                stacked.requires_grad_(True)
                stacked.register_post_accumulate_grad_hook(lambda tensor, params=params: hand_on(tensor, params))
            self.weights.append(weight)
            self.biases.append(bias)

    def layers(self):
        """(qf1's, qf2's) nn.Linear for fc1, fc2 and fc3, in the order of self.weights and self.biases."""
        return [(getattr(self.qf1, name), getattr(self.qf2, name)) for name in ["fc1", "fc2", "fc3"]]

    def __call__(self, x, a, fixed=False):
        """Both critics' values, shape (2, batch); fixed=True holds their weights fixed (no gradient for them)."""
        weights, biases = self.weights, self.biases
        if fixed:
            weights, biases = [w.detach() for w in weights], [b.detach() for b in biases]
        x = torch.cat([x, a], 1).expand(2, -1, -1)
        x = torch.baddbmm(biases[0], x, weights[0].transpose(1, 2)).relu_()  # in place: no fresh (2, batch, 256) tensor
        x = torch.baddbmm(biases[1], x, weights[1].transpose(1, 2)).relu_()
        return torch.baddbmm(biases[2], x, weights[2].transpose(1, 2)).squeeze(-1)


def hand_on(stacked, params):
    """Give qf1's and qf2's parameters their parts of a stacked tensor's gradient (added to any they hold)."""
    grad, stacked.grad = stacked.grad, None
    for i, param in enumerate(params):
        part = grad[i].view(param.shape)
        param.grad = part if param.grad is None else param.grad + part
