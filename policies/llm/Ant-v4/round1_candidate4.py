# Guide policy candidate round1_candidate4 for Ant-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer4.md).
# Prompt: round1_prompt.md; raw response: round1_candidate4.response.md; details: round1_candidate4.json

import numpy as np
import math


def policy(obs):
    obs = np.asarray(obs, dtype=np.float64)

    # ---- gait parameters ----
    A_F = 0.40      # hip swing amplitude (rad), "foot forward" coordinate
    D0 = 0.87       # mean ankle "down" angle (rad)
    A_D = 0.28      # ankle lift amplitude (rad)
    OMEGA = 9.0     # gait angular frequency (rad/s)
    KP_H, KD_H = 1.0, 0.10
    KP_A, KD_A = 1.0, 0.10
    FF = 0.007      # ~ joint inertia / gear

    # ---- read state (legs ordered 1,2,3,4 as in the XML) ----
    w, qx, qy, qz = obs[1], obs[2], obs[3], obs[4]
    hip = np.array([obs[5], obs[7], obs[9], obs[11]])
    ank = np.array([obs[6], obs[8], obs[10], obs[12]])
    hipv = np.array([obs[19], obs[21], obs[23], obs[25]])
    ankv = np.array([obs[20], obs[22], obs[24], obs[26]])
    wz = obs[18]

    # sign of hip angle that moves the foot toward +x
    s = np.array([-1.0, -1.0, 1.0, 1.0])
    # sign of ankle angle that moves the foot down (leg steeper)
    t = np.array([1.0, -1.0, -1.0, 1.0])
    # horizontal unit direction of each leg in the torso frame
    r2 = 1.0 / math.sqrt(2.0)
    ux = np.array([1.0, -1.0, -1.0, 1.0]) * r2
    uy = np.array([1.0, 1.0, -1.0, -1.0]) * r2
    # diagonal pairs: A = legs 1,3 (+1), B = legs 2,4 (-1)
    pair_sign = np.array([1.0, -1.0, 1.0, -1.0])
    pair_shift = np.array([0.0, math.pi, 0.0, math.pi])

    # ---- heading feedback (yaw) ----
    yaw = math.atan2(2.0 * (w * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    c = float(np.clip(0.5 * yaw + 0.1 * wz, -0.1, 0.1))

    # ---- levelling feedback (roll / pitch) ----
    gx = 2.0 * (qx * qz - w * qy)   # world-up expressed in body frame (x)
    gy = 2.0 * (qy * qz + w * qx)   # world-up expressed in body frame (y)
    h = ux * gx + uy * gy           # relative height of each leg's corner
    dd = np.clip(-0.8 * h, -0.15, 0.15)

    # ---- phase estimation from joint state ----
    d = t * ank                      # foot-down coordinate
    dv = t * ankv
    x = s * hip / A_F
    y = (d - dd - D0) / A_D
    X = 0.5 * np.sum(pair_sign * x)
    Y = 0.5 * np.sum(pair_sign * y)
    theta = math.atan2(Y, X)
    th = theta + pair_shift
    cth = np.cos(th)
    sth = np.sin(th)

    # ---- hip control (raw joint coordinates) ----
    amp_h = s * A_F - c              # yaw correction changes stride per side
    amp_h = np.clip(amp_h, -0.5, 0.5)
    hip_t = amp_h * cth
    hipv_t = -amp_h * OMEGA * sth
    hipa_t = -amp_h * OMEGA * OMEGA * cth
    tau_h = KP_H * (hip_t - hip) + KD_H * (hipv_t - hipv) + FF * hipa_t

    # ---- ankle control (in foot-down coordinate, then mapped by t) ----
    d_t = np.clip(D0 + A_D * sth + dd, 0.55, 1.20)
    dv_t = A_D * OMEGA * cth
    da_t = -A_D * OMEGA * OMEGA * sth
    tau_d = KP_A * (d_t - d) + KD_A * (dv_t - dv) + FF * da_t
    tau_a = t * tau_d

    # ---- map to action order: hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3 ----
    action = np.array([
        tau_h[3], tau_a[3],
        tau_h[0], tau_a[0],
        tau_h[1], tau_a[1],
        tau_h[2], tau_a[2],
    ])
    return np.clip(action, -1.0, 1.0)
