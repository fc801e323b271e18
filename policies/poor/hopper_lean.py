"""Forward-leaning controller for Hopper-v4 (a deliberately poor guide).

The idea: tilt the torso forward so gravity pulls the body ahead, and push off with the foot to catch it.
The hip drives the torso to a fixed forward lean while knee and ankle hold still, so nothing ever catches
the fall and the hopper tips over: the kind of controller a language model returns when its idea of
walking is right in words and wrong in dynamics.
"""
import numpy as np

TORSO_LEAN = 0.4              # target torso angle (rad, forward)
KP_HIP, KD_HIP = 2.0, 0.2     # hip PD on the torso angle
KP_JOINT, KD_JOINT = 4.0, 0.3 # knee and ankle held at angle 0
FOOT_PUSH = 0.8               # extra ankle torque to push off


def policy(obs):
    torso_angle, torso_velocity = obs[1], obs[7]
    knee_foot = obs[3:5]
    knee_foot_velocity = obs[9:11]
    hip = -KP_HIP * (torso_angle - TORSO_LEAN) - KD_HIP * torso_velocity
    knee, foot = -KP_JOINT * knee_foot - KD_JOINT * knee_foot_velocity
    return np.clip(np.array([hip, knee, foot + FOOT_PUSH]), -1.0, 1.0)
