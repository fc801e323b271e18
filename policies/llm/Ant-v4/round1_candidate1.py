# Guide policy candidate round1_candidate1 for Ant-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer1.md).
# Prompt: round1_prompt.md; raw response: round1_candidate1.response.md; details: round1_candidate1.json

import numpy as np
import math

def policy(obs):
    obs = np.asarray(obs, dtype=float)

    # ---------------- unpack observation ----------------
    qw, qx, qy, qz = obs[1], obs[2], obs[3], obs[4]
    # legs ordered 1..4 : 1=(+x,+y) 2=(-x,+y) 3=(-x,-y) 4=(+x,-y)
    hip  = np.array([obs[5],  obs[7],  obs[9],  obs[11]])
    ank  = np.array([obs[6],  obs[8],  obs[10], obs[12]])
    hipv = np.array([obs[19], obs[21], obs[23], obs[25]])
    ankv = np.array([obs[20], obs[22], obs[24], obs[26]])
    wz = obs[18]

    # ---------------- constants ----------------
    s_h = np.array([-1.0, -1.0, 1.0, 1.0])    # +hip*s_h  => foot moves forward (+x)
    s_a = np.array([ 1.0, -1.0, -1.0, 1.0])   # +ank*s_a  => foot moves down
    pair = np.array([1.0, -1.0, 1.0, -1.0])   # pair A = legs 1,3 ; pair B = legs 2,4
    side = np.array([1.0, 1.0, -1.0, -1.0])   # left legs (y>0) = +1
    cx = np.array([1.0, -1.0, -1.0, 1.0]) * 0.7071
    cy = np.array([1.0, 1.0, -1.0, -1.0]) * 0.7071

    H = 0.5        # hip stroke target (rad)
    P = 0.25       # relay switching threshold on phase variable
    KP_H, KD_H = 1.0, 0.08
    KP_A, KD_A = 1.0, 0.08
    M_ST, M_SW = 1.0, 0.55   # ankle "down" magnitude for stance / swing
    K_LVL = 1.5
    K_YAW, K_WZ = 1.0, 0.1

    # ---------------- leg coordinates ----------------
    h  = s_h * hip      # + = foot forward
    hv = s_h * hipv
    m  = s_a * ank      # + = foot lower (leg extended)
    mv = s_a * ankv

    # ---------------- gait phase (stateless relay oscillator) ----------------
    p  = float(np.dot(pair, h)) / 4.0
    pv = float(np.dot(pair, hv)) / 4.0
    if p > P:
        d = -1.0
    elif p < -P:
        d = 1.0
    else:
        d = 1.0 if pv >= 0.0 else -1.0
    leg_dir = d * pair        # +1: swing forward (in air), -1: stance (push back)

    # ---------------- heading correction (stride asymmetry) ----------------
    yaw = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    c = float(np.clip(K_YAW * yaw + K_WZ * wz, -0.4, 0.4))
    amp = H * (1.0 + side * c)        # yaw>0 -> longer left strides -> turn clockwise

    # ---------------- hips ----------------
    h_target = leg_dir * amp
    u_h = KP_H * (h_target - h) - KD_H * hv
    hip_act = s_h * u_h

    # ---------------- ankles ----------------
    swing = leg_dir > 0
    frac = np.clip(h / 0.5, 0.0, 1.0)                 # lower swing foot near end of swing
    m_swing = M_SW + 0.4 * (M_ST - M_SW) * frac
    m_target = np.where(swing, m_swing, M_ST)

    # levelling: height of each leg's corner in world frame
    R20 = 2.0 * (qx * qz - qw * qy)
    R21 = 2.0 * (qy * qz + qw * qx)
    e = R20 * cx + R21 * cy               # >0: that corner is high
    m_target = m_target - K_LVL * e
    m_target = np.clip(m_target, 0.5, 1.25)

    u_m = KP_A * (m_target - m) - KD_A * mv
    ank_act = s_a * u_m

    # ---------------- assemble in action order ----------------
    # [hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3]
    action = np.array([
        hip_act[3], ank_act[3],
        hip_act[0], ank_act[0],
        hip_act[1], ank_act[1],
        hip_act[2], ank_act[2],
    ])
    return np.clip(action, -1.0, 1.0)
