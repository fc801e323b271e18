# Guide policy candidate round1_candidate2 for Ant-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer2.md).
# Prompt: round1_prompt.md; raw response: round1_candidate2.response.md; details: round1_candidate2.json

import numpy as np
import math


def policy(obs):
    obs = np.asarray(obs, dtype=np.float64).reshape(-1)

    # ---------------- torso orientation ----------------
    qw, qx, qy, qz = obs[1], obs[2], obs[3], obs[4]
    qn = math.sqrt(qw * qw + qx * qx + qy * qy + qz * qz) + 1e-9
    qw, qx, qy, qz = qw / qn, qx / qn, qy / qn, qz / qn
    yaw = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    nose_up = 2.0 * (qx * qz - qw * qy)   # z-component of body x-axis
    left_up = 2.0 * (qy * qz + qw * qx)   # z-component of body y-axis
    wx, wy, wz = obs[16], obs[17], obs[18]  # body-frame angular velocity

    # ---------------- joints, legs ordered 1,2,3,4 (observation order) ----------------
    hip_q = obs[[5, 7, 9, 11]]
    ank_q = obs[[6, 8, 10, 12]]
    hip_v = obs[[19, 21, 23, 25]]
    ank_v = obs[[20, 22, 24, 26]]

    F = np.array([-1.0, -1.0, 1.0, 1.0])     # +F*hip  => foot moves toward +x
    S = np.array([1.0, -1.0, -1.0, 1.0])     # +S*ankle => foot pushes down
    SIG = np.array([1.0, -1.0, 1.0, -1.0])   # pair A = legs 1,3 ; pair B = legs 2,4
    PX = np.array([1.0, -1.0, -1.0, 1.0])    # leg at front (+1) / back (-1)
    PY = np.array([1.0, 1.0, -1.0, -1.0])    # leg at left (+1) / right (-1)

    # ---------------- parameters ----------------
    A0 = 0.30          # hip stride reference amplitude (rad)
    OMEGA = 8.0        # nominal gait frequency (rad/s)
    LEAD = 0.6         # phase lead that drives the oscillation (rad)
    KP_H, KD_H = 0.6, 0.08
    E0, PRESS, LIFT = 0.95, 0.10, 0.38
    ANK_LEAD = 0.2
    KP_A, KD_A = 1.0, 0.10
    K_YAW, K_YAWRATE, K_TURN_MAX = 0.6, 0.05, 0.35
    K_TILT, K_TILT_D, TILT_MAX = 1.0, 0.1, 0.25

    # ---------------- heading correction: left/right stride asymmetry ----------------
    k = float(np.clip(K_YAW * yaw + K_YAWRATE * wz, -K_TURN_MAX, K_TURN_MAX))
    amp = A0 * (1.0 + k * PY)   # left legs stride more when k>0 -> turn clockwise

    # ---------------- gait phase from the hip state ----------------
    h = F * hip_q
    hd = F * hip_v
    P = float(np.mean(SIG * h / amp))
    Pd = float(np.mean(SIG * hd / amp))
    phi = math.atan2(-Pd / OMEGA, P)
    phr = phi + LEAD

    h_des = SIG * amp * math.cos(phr)
    hd_des = -SIG * amp * OMEGA * math.sin(phr)
    tau_h = F * (KP_H * (h_des - h) + KD_H * (hd_des - hd))

    # ---------------- ankles: lift in swing, press in stance, level the torso ----------------
    c = SIG * math.sin(phr + ANK_LEAD)        # >0 stance (foot moving back), <0 swing
    stance = np.maximum(c, 0.0)
    swing = np.maximum(-c, 0.0)

    tilt_x = nose_up - K_TILT_D * wy          # predicted nose-up
    tilt_y = left_up + K_TILT_D * wx          # predicted left-side-up
    level = np.clip(-K_TILT * (PX * tilt_x + PY * tilt_y), -TILT_MAX, TILT_MAX)

    e = S * ank_q
    ed = S * ank_v
    e_des = np.clip(E0 + PRESS * stance - LIFT * swing + level, 0.56, 1.18)
    tau_a = S * (KP_A * (e_des - e) - KD_A * ed)

    # ---------------- map to action order: hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3
    action = np.array([
        tau_h[3], tau_a[3],
        tau_h[0], tau_a[0],
        tau_h[1], tau_a[1],
        tau_h[2], tau_a[2],
    ])
    return np.clip(action, -1.0, 1.0)
