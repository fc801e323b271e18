"""SPEED: camel_td3.py's TD3 update computed faster, behind its --fast-update flag (on by default): the update of
camel_td3.py's update_critics, update_actor and update_actor_with_guide_bc, with their arguments and return values,
in less time on a CPU. camel_td3.py stays the one to read; this file changes how the numbers are computed, not which.
camel_sac.py uses its BatchedCritics (with autograd). It imports nothing of the project's.

Three things make it faster:
- the twin critics run as one batched network (BatchedCritics, below, made by fuse_critics): each layer's two
  weight matrices are stacked in one tensor, so both critics take one torch.baddbmm per layer, forward and backward.
  qf1's and qf2's parameters become views into the stacked tensors, so the optimiser, the target update, checkpoints
  and the .cleanrl_model file go on seeing CleanRL's qf1 and qf2 (in their own layout, as contiguous tensors);
- the gradients are written out: the networks are three dense layers, so their gradients are a few matrix products.
  Computing them directly gives autograd's gradients without its graph: no saved-tensor bookkeeping, no transposed
  copies, ReLU's derivative taken in place;
- the target action is computed on the target actor's layers directly, in place (2% of an update on an Intel Xeon).

The numbers agree with the plain update's to float32 rounding (under 1e-6 after a few updates on a fixed batch:
tests/test_camel_td3.py); they are bit for bit those of the committed runs, which were made with this path. The
CAMEL+ guide-BC actor update (update_actor_with_guide_bc) is written out the same way (tests/test_camel_plus.py); the
first CAMEL+ runs (seeds 1-2 of the screen) computed it with autograd.
"""

import weakref

import torch
import torch.nn.functional as F

import torch.nn as nn

FUSED = weakref.WeakKeyDictionary()  # qf1 -> the BatchedCritics of qf1 and qf2, for the pairs fuse_critics made


def fuse_critics(qf1, qf2):
    """Make qf1 and qf2 one batched pair (BatchedCritics: their parameters become views into stacked
    tensors): call it after .to(device) and before their optimiser is made."""
    FUSED[qf1] = BatchedCritics(qf1, qf2)


def fused(qf1, qf2=None):
    """The BatchedCritics of qf1 (and qf2), checked to be still what their parameters are views of."""
    critics = FUSED.get(qf1)
    if critics is None or qf2 not in (None, critics.qf2) or qf1.fc1.weight.data_ptr() != critics.weights[0].data_ptr():
        raise ValueError("the fast update needs critics made into one batched pair with fuse_critics(qf1, qf2) first")
    return critics


def relu_grad_(grad, out):
    """grad * 1[out > 0], written into grad: the gradient through out = relu(x)."""
    return torch.ops.aten.threshold_backward.grad_input(grad, out, 0.0, grad_input=grad)


def twin_critic_grads(critics, obs, actions, next_q_value):
    """Both critics' values (2, batch) and MSE losses (2,) against next_q_value, with the gradient of the losses' sum
    stored in qf1's and qf2's .grad, as (qf1_loss + qf2_loss).backward() would."""
    (w1, w2, w3), (b1, b2, b3) = critics.weights, critics.biases  # weights (2, out, in), as qf1's and qf2's
    x = torch.cat([obs, actions], 1).expand(2, -1, -1)
    h1 = torch.baddbmm(b1, x, w1.transpose(1, 2)).relu_()
    h2 = torch.baddbmm(b2, h1, w2.transpose(1, 2)).relu_()
    q = torch.baddbmm(b3, h2, w3.transpose(1, 2))  # (2, batch, 1)
    error = q.squeeze(-1) - next_q_value
    dq = (error * (2.0 / error.shape[1])).unsqueeze(-1)  # d(mean of squared errors)/dq
    dh2 = relu_grad_(torch.bmm(dq, w3), h2)
    dh1 = relu_grad_(torch.bmm(dh2, w2), h1)
    weight_grads = [torch.bmm(dh1.transpose(1, 2), x), torch.bmm(dh2.transpose(1, 2), h1), torch.bmm(dq.transpose(1, 2), h2)]
    bias_grads = [dh1.sum(1, keepdim=True), dh2.sum(1, keepdim=True), dq.sum(1, keepdim=True)]
    for (layer1, layer2), weight_grad, bias_grad in zip(critics.layers(), weight_grads, bias_grads):
        layer1.weight.grad, layer2.weight.grad = weight_grad[0], weight_grad[1]
        layer1.bias.grad, layer2.bias.grad = bias_grad[0, 0], bias_grad[1, 0]
    return q.squeeze(-1), (error * error).mean(1)


def actor_forward(actor, x):
    """The actor's layers on its input x (obs, or obs with the bounds): both hidden activations and u = tanh(...)."""
    h1 = F.linear(x, actor.fc1.weight, actor.fc1.bias).relu_()
    h2 = F.linear(h1, actor.fc2.weight, actor.fc2.bias).relu_()
    return h1, h2, F.linear(h2, actor.fc_mu.weight, actor.fc_mu.bias).tanh_()


def actor_backward(actor, x, h1, h2, dz3):
    """Store in the actor's .grad the gradient of a loss whose derivative by the pre-tanh output is dz3."""
    dh2 = relu_grad_(dz3 @ actor.fc_mu.weight, h2)
    dh1 = relu_grad_(dh2 @ actor.fc2.weight, h1)
    grads = [dh1.T @ x, dh1.sum(0), dh2.T @ h1, dh2.sum(0), dz3.T @ h2, dz3.sum(0)]
    for param, grad in zip([actor.fc1.weight, actor.fc1.bias, actor.fc2.weight, actor.fc2.bias, actor.fc_mu.weight, actor.fc_mu.bias], grads):
        param.grad = grad


def q1_and_action_grad(critics, obs, action):
    """qf1's value of (obs, action), shape (batch, 1), and the gradient of -mean Q1 by the action (weights fixed)."""
    (w1, w2, w3), (b1, b2, b3) = critics.weights, critics.biases  # qf1's layers are w1[0], b1[0], ...
    g1 = torch.addmm(b1[0], torch.cat([obs, action], 1), w1[0].T).relu_()
    g2 = torch.addmm(b2[0], g1, w2[0].T).relu_()
    q = torch.addmm(b3[0], g2, w3[0].T)
    dg2 = relu_grad_(w3[0].expand(q.shape[0], -1) * (-1.0 / q.shape[0]), g2)  # dloss/dq = -1/batch
    dg1 = relu_grad_(dg2 @ w2[0], g1)
    return q, dg1 @ w1[0][:, obs.shape[1] :]


def actor_grads(actor, critics, obs, low, high):
    """TD3's actor loss -mean Q1(s, actor(s, low, high)), with its gradient stored in the actor's .grad (the critic's
    weights held fixed), as camel_td3.update_actor's backward() would."""
    x = torch.cat([obs, low, high], 1) if actor.masking_aware else obs
    h1, h2, u = actor_forward(actor, x)
    half_width = (high - low) / 2
    action = (low + (u + 1) * half_width) * actor.action_scale + actor.action_bias  # Actor.forward's mapping
    q, daction = q1_and_action_grad(critics, obs, action)
    actor_backward(actor, x, h1, h2, daction * actor.action_scale * half_width * (1 - u * u))  # through the map and tanh
    return -q.mean()


def actor_grads_with_guide_bc(actor, critics, data, bc_weight):
    """CAMEL+: camel_td3.update_actor_with_guide_bc's loss and gradient (stored in the actor's .grad): TD3's actor loss
    plus the guide-BC term on the unmasked actor's action. The actor runs once on the batch twice over, with its bounds
    and with [-1, 1], so one backward pass serves both terms."""
    obs, low, high = data.observations, data.low, data.high
    batch = obs.shape[0]
    free_low, free_high = -torch.ones_like(low), torch.ones_like(high)
    if actor.masking_aware:
        x = torch.cat([torch.cat([obs, low, high], 1), torch.cat([obs, free_low, free_high], 1)], 0)
    else:
        x = torch.cat([obs, obs], 0)
    h1, h2, u = actor_forward(actor, x)
    u_masked, u_free = u[:batch], u[batch:]
    half_width = (high - low) / 2
    action = (low + (u_masked + 1) * half_width) * actor.action_scale + actor.action_bias
    free_action = u_free * actor.action_scale + actor.action_bias  # the mapping with low = -1, high = 1
    q, daction = q1_and_action_grad(critics, obs, action)
    # the Q-filter: where min(Q1, Q2) of the guide's action is at least that of the unmasked actor's
    q_both = critics(torch.cat([obs, obs], 0), torch.cat([data.guide_actions, free_action], 0)).min(0).values
    rows = data.has_guide * (q_both[:batch] >= q_both[batch:]).float().unsqueeze(1)
    row_count = rows.sum().clamp(min=1.0)
    scaled_gap = (free_action - data.guide_actions) / actor.action_scale
    bc_loss = (scaled_gap.pow(2).mean(1, keepdim=True) * rows).sum() / row_count
    bc_scale = bc_weight * q.abs().mean()  # mean|Q1| held fixed, as TD3+BC does
    dfree_action = scaled_gap * (bc_scale * 2.0 / scaled_gap.shape[1] / row_count) * rows / actor.action_scale
    dz3 = torch.cat([daction * actor.action_scale * half_width, dfree_action * actor.action_scale], 0) * (1 - u * u)
    actor_backward(actor, x, h1, h2, dz3)
    return -q.mean() + bc_scale * bc_loss, bc_loss, rows.mean()


def target_action(data, target_actor, policy_noise, noise_clip):
    """camel_td3.target_action (CAMEL: the target actor acts, and its noise is clamped, inside the bounds stored for
    s'), the same operations in the same order, on the target actor's layers directly and in place: the same numbers,
    without the module calls and fresh tensors of a forward pass."""
    clipped_noise = (torch.randn_like(data.actions) * policy_noise).clamp(-noise_clip, noise_clip) * target_actor.action_scale
    low, high = data.next_low, data.next_high
    x = torch.cat([data.next_observations, low, high], 1) if target_actor.masking_aware else data.next_observations
    u = actor_forward(target_actor, x)[2]
    action = u.add_(1).div_(2).mul_(high - low).add_(low)  # Actor.forward's low + (u + 1) / 2 * (high - low)
    action = action.mul_(target_actor.action_scale).add_(target_actor.action_bias).add_(clipped_noise)  # in env units
    return action.clamp_(target_actor.to_env_units(low), target_actor.to_env_units(high))


def update_critics(data, target_actor, qf1, qf2, qf1_target, qf2_target, q_optimizer, gamma, policy_noise, noise_clip):
    """camel_td3.update_critics, computed on the fused pairs with the gradients written out."""
    critics, critics_target = fused(qf1, qf2), fused(qf1_target, qf2_target)
    with torch.no_grad():
        next_state_actions = target_action(data, target_actor, policy_noise, noise_clip)
        min_qf_next_target = critics_target(data.next_observations, next_state_actions).min(0).values
        next_q_value = data.rewards.flatten() + (1 - data.dones.flatten()) * gamma * min_qf_next_target
        qf_a_values, qf_losses = twin_critic_grads(critics, data.observations, data.actions, next_q_value)
    q_optimizer.step()
    return qf_a_values[0], qf_a_values[1], qf_losses[0], qf_losses[1]


def update_actor(data, actor, qf1, actor_optimizer):
    """camel_td3.update_actor, with the gradient written out (qf1 must be half of a fused pair)."""
    with torch.no_grad():
        actor_loss = actor_grads(actor, fused(qf1), data.observations, data.low, data.high)
    actor_optimizer.step()
    return actor_loss


def update_actor_with_guide_bc(data, actor, qf1, qf2, actor_optimizer, bc_weight):
    """camel_td3.update_actor_with_guide_bc (CAMEL+ Q-filtered guide BC), with the gradient written out (qf1 and qf2
    must be a fused pair)."""
    with torch.no_grad():
        actor_loss, bc_loss, bc_rows = actor_grads_with_guide_bc(actor, fused(qf1, qf2), data, bc_weight)
    actor_optimizer.step()
    return actor_loss, bc_loss, bc_rows


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
