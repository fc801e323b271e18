"""A trained agent in your own code: load a `.cleanrl_model` file that camel_td3.py or camel_sac.py saved, and act
with it, unmasked, as the runs' evaluations do:

    from camel_utils.agent import load_agent
    policy = load_agent("runs/RUN/camel_qbc_gwarm_noboot_cu2.cleanrl_model")
    action = policy(obs)  # a NumPy action in the env's units, for env.step

The actor is run with the same torch operations as the trainer's evaluation (its layers on the observation and, for a
masking-aware actor, the whole action space as its bounds), so an episode from the same start state gives the same
return as the run logged (tests/test_agent.py). It reads TD3's actor (CleanRL's or camel_td3.py's) and SAC's, which
acts with its mean action. Needs torch only: no trainer code.
"""

import numpy as np
import torch
import torch.nn.functional as F


class Agent:
    """A trained actor as a deterministic policy: obs (NumPy) -> action (NumPy, env units), with no mask."""

    def __init__(self, state):
        output = "fc_mean" if "fc_mean.weight" in state else "fc_mu"  # SAC acts with its mean, TD3 with fc_mu
        self.layers = [(state[f"{name}.weight"], state[f"{name}.bias"]) for name in ("fc1", "fc2", output)]
        self.action_scale, self.action_bias = state["action_scale"], state["action_bias"]
        self.action_dim = self.layers[2][0].shape[0]
        # the unmasked bounds: the whole normalised action space, as the trainers' evaluations give them
        self.low, self.high = -torch.ones(1, self.action_dim), torch.ones(1, self.action_dim)

    def __call__(self, obs):
        with torch.no_grad():
            x = torch.as_tensor(np.asarray(obs), dtype=torch.float32).reshape(1, -1)
            extra = self.layers[0][0].shape[1] - x.shape[1]  # a masking-aware actor reads the bounds beside obs
            if extra == 2 * self.action_dim:
                x = torch.cat([x, self.low, self.high], 1)
            elif extra != 0:
                raise ValueError(f"the agent takes {self.layers[0][0].shape[1]} inputs, which an observation of size "
                                 f"{x.shape[1]} does not fit: was it trained on another env?")  # fmt: skip
            (w1, b1), (w2, b2), (w3, b3) = self.layers
            x = F.relu(F.linear(x, w1, b1))
            x = F.relu(F.linear(x, w2, b2))
            u = torch.tanh(F.linear(x, w3, b3))
            a = self.low + (u + 1) / 2 * (self.high - self.low)  # the actors' mapping onto the bounds
            return (a * self.action_scale + self.action_bias).numpy()[0]


def load_agent(path):
    """The agent saved at path (a .cleanrl_model file: torch.save of the actor's, qf1's and qf2's state dicts)."""
    state = torch.load(path, map_location="cpu", weights_only=True)
    return Agent(state[0] if isinstance(state, (tuple, list)) else state)
