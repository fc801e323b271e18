# Guide policy candidate round1_candidate3 for Walker2d-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer3.md).
# Prompt: round1_prompt.md; raw response: round1_candidate3.response.md; details: round1_candidate3.json

import numpy as np
import math


def policy(obs):
    o = np.nan_to_num(np.asarray(obs, dtype=np.float64))
    z, th = o[0], o[1]
    vx, wt = o[8], o[10]

    # [right, left]
    hip = np.array([o[2], o[5]])
    knee = np.array([o[3], o[6]])
    ank = np.array([o[4], o[7]])
    dhip = np.array([o[11], o[14]])
    dknee = np.array([o[12], o[15]])
    dank = np.array([o[13], o[16]])

    # World-frame segment angles (positive = swung forward / toes up).
    # rooty turns about +y, leg hinges about -y  ->  world = joint - torso.
    a_th = hip - th
    a_sh = a_th + knee
    a_ft = a_sh + ank

    # Forward kinematics: height of the lowest point of each foot.
    hip_z = z - 0.2 * np.cos(th)
    ankle_z = hip_z - 0.45 * np.cos(a_th) - 0.5 * np.cos(a_sh)
    toe_z = ankle_z + 0.2 * np.sin(a_ft)
    foot_h = np.minimum(ankle_z, toe_z) - 0.06

    # Stance weight: lower foot, else front leg / straighter knee; small bias to the right.
    s = ((foot_h[1] - foot_h[0]) / 0.02
         + 1.0 * (hip[0] - hip[1])
         + 0.5 * (knee[0] - knee[1])
         + 0.1)
    wR = 0.5 + 0.5 * math.tanh(4.0 * s)
    w = np.array([wR, 1.0 - wR])          # stance weight of [right, left]

    # Gait parameters with speed feedback.
    step = float(np.clip(0.05 + 0.25 * vx, -0.2, 0.4))    # swing-thigh world angle at landing
    th_des = float(np.clip(-0.05 - step, -0.45, -0.1))     # lean back so the hip can reach 'step'
    T = 2.0 * (th_des - th) - 0.25 * wt                    # torque wanted on the torso (via hips)

    # ---- swing role ----
    hip_sw_des = np.minimum(step + th, -0.03)              # hip range is [-150 deg, 0]
    tau_hip_sw = np.clip(2.5 * (hip_sw_des - hip) - 0.25 * dhip, -0.8, 0.8)

    delta = hip - hip[::-1]                                # lead of this thigh over the other
    ext = np.clip((delta - 0.05) / 0.30, 0.0, 1.0)
    knee_sw_des = -1.1 + 1.0 * ext                         # bent early, straight before landing
    tau_knee_sw = 2.0 * (knee_sw_des - knee) - 0.15 * dknee

    ank_sw_des = np.clip(0.1 - a_sh, -0.7, 0.7)            # foot slightly toes-up
    tau_ank_sw = 1.0 * (ank_sw_des - ank) - 0.05 * dank

    # ---- stance role ----
    tau_hip_st = T - tau_hip_sw[::-1]                      # torso PD, cancel swing-hip reaction

    height_push = float(np.clip(2.0 * (1.12 - z), 0.0, 0.3))
    tau_knee_st = 3.0 * (-0.05 - knee) - 0.15 * dknee + height_push

    ank_st_des = np.clip(-a_sh, -0.7, 0.7)                 # keep foot flat
    speed_term = float(np.clip(0.3 * (1.0 - vx), -0.3, 0.15))
    tau_ank_st = 1.0 * (ank_st_des - ank) - 0.05 * dank + speed_term

    # ---- blend roles ----
    tau_hip = w * tau_hip_st + (1.0 - w) * tau_hip_sw
    tau_knee = w * tau_knee_st + (1.0 - w) * tau_knee_sw
    tau_ank = w * tau_ank_st + (1.0 - w) * tau_ank_sw

    action = np.array([tau_hip[0], tau_knee[0], tau_ank[0],
                       tau_hip[1], tau_knee[1], tau_ank[1]])
    return np.clip(action, -1.0, 1.0)
