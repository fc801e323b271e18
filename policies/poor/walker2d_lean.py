"""Forward-leaning controller for Walker2d-v4 (a deliberately poor guide).

The idea: tilt the torso forward so gravity pulls the body ahead, and push off with both feet to catch it.
Both hips drive the torso to a fixed forward lean while knees and ankles hold still, so the legs never step
and the walker tips over: the kind of controller a language model returns when its idea of walking is right
in words and wrong in dynamics.
"""
import numpy as np

TORSO_LEAN = 0.4              # target torso angle (rad, forward)
KP_HIP, KD_HIP = 2.0, 0.2     # hip PD on the torso angle
KP_JOINT, KD_JOINT = 4.0, 0.3 # knees and ankles held at angle 0
FOOT_PUSH = 0.3               # extra ankle torque to push off


def policy(obs):
    torso_angle, torso_velocity = obs[1], obs[10]
    hip = -KP_HIP * (torso_angle - TORSO_LEAN) - KD_HIP * torso_velocity
    knees_feet = obs[[3, 4, 6, 7]]
    knees_feet_velocity = obs[[12, 13, 15, 16]]
    right_knee, right_foot, left_knee, left_foot = -KP_JOINT * knees_feet - KD_JOINT * knees_feet_velocity
    action = [hip, right_knee, right_foot + FOOT_PUSH, hip, left_knee, left_foot + FOOT_PUSH]
    return np.clip(np.array(action), -1.0, 1.0)
