"""A trained agent in your own code: load a `.cleanrl_model` file that camel_td3.py, camel_plus_td3.py or camel_sac.py
saved, and act with it, unmasked, as the runs' evaluations do:

    from camel_utils.agent import load_agent
    policy = load_agent("runs/RUN/camel_plus_td3.cleanrl_model")
    action = policy(obs)  # a NumPy action in the env's units, for env.step

The one loader of a `.cleanrl_model` in this project: evaluate_policy.py and expert masking (--expert-model,
camel_utils.guide.expert_policy) act through it too. The actor is run with the same torch operations, in float32, as
the trainer's evaluation on the CPU (its layers on the observation and, for a masking-aware actor, the whole action
space as its bounds), so an episode from the same start state gives the same return as the run logged
(tests/test_agent.py). It reads TD3's actor (CleanRL's, or the masking-aware one of camel_td3.py and camel_plus_td3.py)
and SAC's, which acts with its mean action. Needs torch only: no trainer code.

`pip install -e .` in the repository makes `camel_utils` importable from any folder.
"""

import numpy as np
import torch
import torch.nn.functional as F


class Agent:
    """A trained actor as a deterministic policy with no mask: an observation (obs_dim,) gives an action (action_dim,),
    a batch (N, obs_dim) gives (N, action_dim); NumPy in, NumPy out, the action in the env's units."""

    def __init__(self, actor_state, obs_dim):
        output = "fc_mean" if "fc_mean.weight" in actor_state else "fc_mu"  # SAC acts with its mean, TD3 with fc_mu
        self.layers = [(actor_state[f"{name}.weight"].float(), actor_state[f"{name}.bias"].float()) for name in ("fc1", "fc2", output)]
        self.action_scale, self.action_bias = actor_state["action_scale"].float(), actor_state["action_bias"].float()
        self.obs_dim, self.action_dim = obs_dim, self.layers[2][0].shape[0]
        self.in_features = self.layers[0][0].shape[1]
        # a masking-aware actor reads the bounds (low, high) beside the observation
        self.masking_aware = self.in_features == obs_dim + 2 * self.action_dim
        if not self.masking_aware and self.in_features != obs_dim:
            raise ValueError(f"its actor takes {self.in_features} inputs, which is neither the observation size {obs_dim} "
                             f"nor that plus {2 * self.action_dim} bounds")  # fmt: skip

    def __call__(self, obs):
        """The action, in the env's units, for one observation or a batch of them."""
        return self.to_env_units(self.normalized_action(obs))

    def normalized_action(self, obs):
        """The action in the normalised action space [-1, 1]^d (before the actor's action_scale and action_bias)."""
        obs = np.asarray(obs)
        if obs.shape == (self.obs_dim,):
            return self.forward(obs.reshape(1, -1))[0]  # one observation: a batch of one, as the evaluation runs it
        if obs.ndim == 2 and obs.shape[1] == self.obs_dim:
            return self.forward(obs)
        raise ValueError(f"the agent takes observations of size {self.obs_dim} (or batches of shape (N, {self.obs_dim})), "
                         f"not of shape {obs.shape}: was it trained on another env?")  # fmt: skip

    def to_env_units(self, action):
        """A normalised action in the env's units, as the actor maps it (float32)."""
        return (torch.as_tensor(action) * self.action_scale + self.action_bias).numpy()

    def forward(self, obs):
        """The actor on a batch (N, obs_dim): its normalised action (N, action_dim), float32."""
        with torch.no_grad():
            x = torch.as_tensor(obs, dtype=torch.float32)
            # the unmasked bounds: the whole normalised action space, as the trainers' evaluations give them
            low, high = -torch.ones(x.shape[0], self.action_dim), torch.ones(x.shape[0], self.action_dim)
            if self.masking_aware:
                x = torch.cat([x, low, high], 1)
            (w1, b1), (w2, b2), (w3, b3) = self.layers
            x = F.relu(F.linear(x, w1, b1))
            x = F.relu(F.linear(x, w2, b2))
            u = torch.tanh(F.linear(x, w3, b3))
            return (low + (u + 1) / 2 * (high - low)).numpy()  # the actors' mapping onto the bounds


def load_agent(path, env=None):
    """The agent saved at path, a .cleanrl_model file: torch.save of the actor's, qf1's and qf2's state dicts.

    The observation size comes from the critic (it reads the observation and the action); for a file without one,
    from `env`. Given `env` (a Gymnasium env, or anything with its observation_space and action_space), the agent must
    fit it. Raises ValueError (one line) for a file that is not such a model, or an agent that does not fit the env."""
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
        actor_state, critic_state = (saved[0], saved[1]) if isinstance(saved, (tuple, list)) else (saved, {})
        output = "fc_mean" if "fc_mean.weight" in actor_state else "fc_mu"
        for name in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", f"{output}.weight", f"{output}.bias", "action_scale", "action_bias"):
            actor_state[name]  # a KeyError names the first layer missing
        in_features, action_dim = actor_state["fc1.weight"].shape[1], actor_state[f"{output}.weight"].shape[0]
    except OSError:  # no such file, a folder: as open() says it
        raise
    except Exception as e:  # a text file, a pickle of something else, a state dict without an actor's layers
        raise ValueError(f"not a CleanRL-format model ({type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]})") from None
    critic_inputs = critic_state.get("fc1.weight") if isinstance(critic_state, dict) else None
    obs_dim = critic_inputs.shape[1] - action_dim if critic_inputs is not None else None
    if env is not None:
        env_obs_dim, env_action_dim = int(np.prod(env.observation_space.shape)), int(np.prod(env.action_space.shape))
        fits = action_dim == env_action_dim and obs_dim in (None, env_obs_dim) and in_features in (env_obs_dim, env_obs_dim + 2 * action_dim)
        if not fits:
            env_id = env.spec.id if getattr(env, "spec", None) is not None else type(env.unwrapped).__name__
            reads = f" (observations of size {obs_dim} and {2 * action_dim} bounds)" if obs_dim and in_features != obs_dim else ""
            raise ValueError(f"its actor takes {in_features} inputs{reads} and gives {action_dim} actions, but {env_id} has "
                             f"{env_obs_dim} observations and {env_action_dim} actions; was it trained on another env?")  # fmt: skip
        obs_dim = env_obs_dim
    if obs_dim is None:
        raise ValueError("the file holds no critic, so the observation size is unknown: pass the env, load_agent(path, env)")
    return Agent(actor_state, obs_dim)
