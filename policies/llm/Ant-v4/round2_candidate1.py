# Guide policy candidate round2_candidate1 for Ant-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from round2_answer1.md).
# Prompt: round2_prompt.md; raw response: round2_candidate1.response.md; details: round2_candidate1.json

import math
import numpy as np


def policy(obs):
    o = np.asarray(obs, dtype=np.float64).ravel()

    # ---------------- constants (all hand-chosen) ----------------
    DT = 0.05                 # control period of the env
    OMEGA = 12.5              # gait angular frequency [rad/s]  (~2.0 Hz)
    R0 = 0.42                 # target stroke amplitude of the gait mode [rad]
    KV = 8.0                  # amplitude-regulation gain [1/s]
    INERTIA = 1.0             # hinge inertia (armature dominated) [kg m^2]
    GEAR = 150.0
    KP_HIP, KD_HIP = 75.0, 15.0     # physical units (=0.5, 0.1 normalised)
    KP_ANK, KD_ANK = 1.4, 0.12      # normalised
    M0, LIFT, LEAD = 0.85, 0.32, 0.5
    K_YAW, K_YAWRATE, KAPPA_MAX = 1.0, 0.1, 0.35
    K_TILT, K_TILTRATE = 1.1, 0.09
    HIP_CLIP, ANK_CLIP = 0.9, 0.85

    # internal leg order: A=hip_1 (+x,+y), B=hip_2 (-x,+y), C=hip_3 (-x,-y), D=hip_4 (+x,-y)
    S_HIP = np.array([-1.0, -1.0, 1.0, 1.0])   # f = S_HIP*q  (+ : foot toward +x)
    S_ANK = np.array([1.0, -1.0, -1.0, 1.0])   # m = S_ANK*q  (+ : foot down)
    PAIR = np.array([1.0, -1.0, 1.0, -1.0])    # diagonal pairs {A,C} / {B,D}
    TURN = np.array([1.0, 1.0, -1.0, -1.0])
    s2 = 1.0 / math.sqrt(2.0)
    LEG_DIR = np.array([[s2, s2], [-s2, s2], [-s2, -s2], [s2, -s2]])

    # ---------------- read the observation ----------------
    qw, qx, qy, qz = o[1], o[2], o[3], o[4]
    wx, wy, wz = o[16], o[17], o[18]
    hip_q = o[[5, 7, 9, 11]]
    ank_q = o[[6, 8, 10, 12]]
    hip_v = o[[19, 21, 23, 25]]
    ank_v = o[[20, 22, 24, 26]]

    # ---------------- gait oscillator (phase from the state) ----------------
    f = S_HIP * hip_q
    fd = S_HIP * hip_v
    x = 0.25 * float(np.dot(PAIR, f))
    xd = 0.25 * float(np.dot(PAIR, fd))
    xp = x + 0.5 * DT * xd                       # compensate zero-order-hold lag
    phi = math.atan2(-xd / OMEGA, xp)            # increases with time
    xd_ref = -R0 * OMEGA * math.sin(phi)
    ax = -OMEGA * OMEGA * xp + KV * (xd_ref - xd)

    # ---------------- heading feedback (stroke asymmetry) ----------------
    yaw = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    kappa = K_YAW * yaw + K_YAWRATE * wz
    kappa = max(-KAPPA_MAX, min(KAPPA_MAX, kappa))
    c = PAIR * (1.0 + 0.5 * kappa * TURN)

    # ---------------- hip torques ----------------
    tau_f = INERTIA * c * ax + KP_HIP * (c * x - f) + KD_HIP * (c * xd - fd)
    u_hip = np.clip(S_HIP * tau_f / GEAR, -HIP_CLIP, HIP_CLIP)

    # ---------------- ankle targets: lift swing pair, extend stance pair ----------------
    s = math.sin(phi + LEAD)
    s = max(-1.0, min(1.0, 1.4 * s))
    m_ref = M0 + LIFT * s * PAIR

    # levelling: extend legs on the low side of the torso
    gx = 2.0 * (qx * qz - qw * qy)
    gy = 2.0 * (qy * qz + qw * qx)
    h = LEG_DIR[:, 0] * gx + LEG_DIR[:, 1] * gy
    hdot = LEG_DIR[:, 0] * (-wy) + LEG_DIR[:, 1] * wx
    m_ref = m_ref - K_TILT * h - K_TILTRATE * hdot
    m_ref = np.clip(m_ref, 0.55, 1.2)

    m = S_ANK * ank_q
    md = S_ANK * ank_v
    u_ank = np.clip(S_ANK * (KP_ANK * (m_ref - m) - KD_ANK * md), -ANK_CLIP, ANK_CLIP)

    # ---------------- assemble in action order ----------------
    # [hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3]
    action = np.array([
        u_hip[3], u_ank[3],
        u_hip[0], u_ank[0],
        u_hip[1], u_ank[1],
        u_hip[2], u_ank[2],
    ])
    return np.clip(action, -1.0, 1.0)
