"""Balance controller for Walker2d-v4: stand upright on both legs (a deliberately poor guide).

All six joints are held at their rest angles by PD controllers and both hips correct the torso's tilt. The
walker stands for the whole episode and collects the healthy reward, but it never walks: the kind of "safe"
controller a language model returns when it gets balance right and locomotion wrong.
"""
import numpy as np

KP_JOINT, KD_JOINT = 2.0, 0.1   # PD gains holding each joint at angle 0
KP_TORSO = -1.0                  # hip torque per radian of torso tilt (keeps the torso upright)


def policy(obs):
    torso_angle = obs[1]
    joint_angles = obs[2:8]         # right thigh, leg, foot, left thigh, leg, foot
    joint_velocities = obs[11:17]
    action = -KP_JOINT * joint_angles - KD_JOINT * joint_velocities
    action[0] += KP_TORSO * torso_angle
    action[3] += KP_TORSO * torso_angle
    return np.clip(action, -1.0, 1.0)
