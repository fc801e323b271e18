# TUNED GUIDE, not written by a language model: a controller written by hand by this project, whose constants were
# then tuned by an evolution search on the environment's own reward (seeds 10-47; docs/guides.md). It was the
# default guide in policies/ant.py until the LLM-written guides replaced it; runs named camel_tuned* use it.
"""Hand-coded trot gait for Ant-v4 (27-dim observation without contact forces, 8-dim action).

The legs move in two diagonal pairs: A = front-left + back-right, B = back-left + front-right.
A relay oscillator on the hip angles sets the rhythm: while pair A swings forward (feet lifted),
pair B sweeps backward with its feet pressed down, which pushes the body forward (+x). When the
pairs are far enough apart the roles swap; in between, the sign of the hip velocity keeps the
current half-cycle going. Hips and ankles follow their targets with soft PD control, which keeps
the motion smooth and the torso level, and a small yaw term on the hip targets holds the heading along +x.

Measured with this project's evaluator over seeds 0-4, 1000-step episodes (mean +- std):
    return            2078 +- 12
    episode length    1000 +- 0
    forward distance  59.43 +- 0.58 m   (torso x at the end minus at the start)
    falls             0 / 5   (seeds 5-14: no falls either)
    mean |action|     0.10
Command: python generate_policy.py --env-id Ant-v4 --evaluate policies/ant.py --seed 0 --episodes 5 --no-video
Written by hand in the way the prompts in prompts/ ask a language model to (named constants, a PD controller
for balance, a rule for forward motion); the constants were tuned by a small evolution search on seeds 10-47.
"""
import math

import numpy as np

# Legs: 1 front-left (+x,+y), 2 back-left (-x,+y), 3 back-right (-x,-y), 4 front-right (+x,-y).
# obs[0] torso height, obs[1:5] torso quaternion, obs[5:13:2] hip angles, obs[6:13:2] ankle angles,
# obs[19:27:2] hip velocities, obs[20:27:2] ankle velocities (all in leg order 1-4).
FORWARD = np.array([-1.0, -1.0, 1.0, 1.0])  # hip direction that swings each foot toward +x
DOWN = np.array([1.0, -1.0, -1.0, 1.0])     # ankle direction that pushes each foot down
PAIR = np.array([1.0, -1.0, 1.0, -1.0])     # +1 for diagonal pair A (legs 1, 3), -1 for pair B (legs 2, 4)
PAIR_FORWARD = PAIR * FORWARD
ACT_ORDER = [6, 7, 0, 1, 2, 3, 4, 5]  # actuators are ordered leg 4, leg 1, leg 2, leg 3 (hip, ankle each)

SWITCH = 0.28       # pair separation (rad) at which swing and stance swap
HIP_TARGET = 0.57   # hip target (rad): forward for swing legs, backward for stance legs
KP_HIP, KD_HIP = 0.32, 0.05
ANKLE_STANCE = 0.85  # ankle bend (rad) of stance legs: foot pressed down, body held up
ANKLE_SWING = 0.43   # ankle bend of swing legs: foot lifted
KP_ANKLE, KD_ANKLE = 0.32, 0.09
K_YAW = 0.3          # heading correction (per rad of yaw)


def policy(obs):
    hips, ankles = obs[5:13:2], obs[6:13:2]
    hip_vel, ankle_vel = obs[19:27:2], obs[20:27:2]
    qw, qx, qy, qz = obs[1:5]  # torso orientation quaternion
    yaw = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))

    # Relay oscillator: phase > 0 means pair A is ahead of pair B.
    phase = PAIR_FORWARD @ hips / 4.0
    if phase > SWITCH:
        direction = -1.0   # pair A now pushes back, pair B swings forward
    elif phase < -SWITCH:
        direction = 1.0    # pair A swings forward, pair B pushes back
    else:                  # keep going the way the legs are moving
        direction = 1.0 if PAIR_FORWARD @ hip_vel >= 0.0 else -1.0
    swinging = PAIR * direction > 0.0

    # Swing legs reach forward with lifted feet; stance legs sweep back with feet pressed down.
    hip_target = PAIR_FORWARD * (direction * HIP_TARGET) - K_YAW * yaw
    ankle_target = DOWN * np.where(swinging, ANKLE_SWING, ANKLE_STANCE)
    act = np.empty(8)
    act[0::2] = KP_HIP * (hip_target - hips) - KD_HIP * hip_vel
    act[1::2] = KP_ANKLE * (ankle_target - ankles) - KD_ANKLE * ankle_vel
    return np.clip(act[ACT_ORDER], -1.0, 1.0)
