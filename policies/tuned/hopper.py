# TUNED GUIDE, not written by a language model: a controller written by hand by this project, whose constants were
# then tuned by an evolution search on the environment's own reward (seeds 10-47; docs/guides.md). It was the
# default guide in policies/hopper.py until the LLM-written guides replaced it; runs named camel_tuned* use it.
"""Hand-coded hopping controller for Hopper-v4 (11-dim observation, 3-dim action).

The knee is held straight and the hop comes from the ankle, which acts as a spring: when the torso
is high the toe is raised, and as the torso sinks on landing the ankle torque turns negative and
the toe pushes off, throwing the body up and forward. The push is stronger while the leg is
swept back, so every hop drives +x. Contact is judged from the ankle height worked out from the
joint angles. On the ground the hip is a PD controller on the torso angle (slight forward lean),
and in the air it swings the leg to a landing angle that depends on forward speed.

Measured with this project's evaluator over seeds 0-4, 1000-step episodes (mean +- std):
    return            2542 +- 50
    episode length    1000 +- 0
    forward distance  12.35 +- 0.40 m   (torso x at the end minus at the start)
    falls             0 / 5   (seeds 5-14: no falls either)
    mean |action|     0.58
Command: python generate_policy.py --env-id Hopper-v4 --evaluate policies/hopper.py --seed 0 --episodes 5 --no-video
Written by hand in the way the prompts in prompts/ ask a language model to (named constants, a PD controller
for balance, a rule for forward motion); the constants were tuned by a small evolution search on seeds 10-47.
"""
import math

import numpy as np

# Torso balance on the ground (hip torque)
KP_TORSO, KD_TORSO = 4.8121, 1.0021
TORSO_REF = 0.102          # desired torso angle (rad, >0 leans forward)
K_THIGH = 0.9793           # weak spring pulling the thigh toward THIGH_REF
THIGH_REF = -0.9096        # thigh angle the spring pulls toward (rad)
# Leg placement in the air (hip torque)
AIR_HEIGHT = 0.1468        # ankle higher than this (m) counts as airborne
THIGH_AIR = -0.4519        # thigh angle to land with (rad)
K_SPEED, V_REF = -0.1204, 1.6265  # landing angle changes with forward speed
KP_AIR, KD_AIR = 3.5159, 0.47
# Knee: constant torque keeps the leg straight (pressed against its limit)
KNEE_HOLD = 0.9267
# Ankle spring: toe up when the torso is high, push off when it is low
K_FOOT_HEIGHT, HEIGHT_REF = 5.9405, 1.5656
K_FOOT_THIGH = 3.1644      # push harder while the leg is swept back
K_FOOT_ANGLE = -0.1638     # small damping-like term on the foot angle
K_FOOT_TORSO_VEL = 0.2482  # less push while the torso pitches forward
FOOT_BIAS = -0.0556


def policy(obs):
    z, torso_angle, thigh, knee, foot = obs[0:5]       # torso height, torso/joint angles
    vx, torso_vel, thigh_vel = obs[5], obs[7], obs[8]  # forward speed, angular velocities

    # Ankle height from forward kinematics (torso 0.2 m below centre, thigh 0.45 m, shin 0.5 m)
    ankle_z = (z - 0.2 * math.cos(torso_angle) - 0.45 * math.cos(torso_angle - thigh)
               - 0.5 * math.cos(torso_angle - thigh - knee))

    if ankle_z > AIR_HEIGHT:   # airborne: put the leg at its landing angle
        thigh_target = THIGH_AIR + K_SPEED * (vx - V_REF)
        hip = KP_AIR * (thigh_target - thigh) - KD_AIR * thigh_vel
    else:                      # on the ground: PD balance of the torso
        hip = (-KP_TORSO * (torso_angle - TORSO_REF) - KD_TORSO * torso_vel
               - K_THIGH * (thigh - THIGH_REF))

    ankle = (K_FOOT_HEIGHT * (z - HEIGHT_REF) + K_FOOT_THIGH * (thigh - THIGH_REF)
             + K_FOOT_ANGLE * foot - K_FOOT_TORSO_VEL * torso_vel + FOOT_BIAS)
    return np.clip(np.array([hip, KNEE_HOLD, ankle]), -1.0, 1.0)
