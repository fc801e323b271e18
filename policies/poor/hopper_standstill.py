"""Balance controller for Hopper-v4: stand upright on the single leg (a deliberately poor guide).

Every joint is held at its rest angle by a PD controller and the hip corrects the torso's tilt. The hopper
stands for the whole episode and collects the healthy reward, but it never moves forward: the kind of
"safe" controller a language model returns when it gets balance right and locomotion wrong.
"""
import numpy as np

KP_JOINT, KD_JOINT = 8.0, 1.0   # PD gains holding thigh, leg and foot at angle 0
KP_TORSO = -3.0                  # hip torque per radian of torso tilt (keeps the torso upright)


def policy(obs):
    torso_angle = obs[1]
    joint_angles = obs[2:5]         # thigh, leg, foot
    joint_velocities = obs[8:11]
    action = -KP_JOINT * joint_angles - KD_JOINT * joint_velocities
    action[0] += KP_TORSO * torso_angle
    return np.clip(action, -1.0, 1.0)
