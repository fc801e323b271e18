# Guide policy candidate round1_candidate4 for Walker2d-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer4.md).
# Prompt: round1_prompt.md; raw response: round1_candidate4.response.md; details: round1_candidate4.json

import numpy as np


def policy(obs):
    o = np.nan_to_num(np.asarray(obs, dtype=np.float64).ravel())

    def sig(x):
        return 1.0 / (1.0 + np.exp(-np.clip(x, -40.0, 40.0)))

    # ---- observation ----
    z, th = o[0], o[1]            # torso height, torso pitch (+ = leaning forward)
    vx, wy = o[8], o[10]          # forward speed, torso pitch rate
    q = (o[2:5], o[5:8])          # (hip, knee, ankle) right, left
    dq = (o[11:14], o[14:17])

    # ---- parameters ----
    V_D = 0.8                     # target forward speed (m/s)
    HIP_FWD_MAX = -0.03           # stay just inside the hip limit (0 rad)
    ev = vx - V_D

    # ---- torso balance: lean back when fast (longer reach), forward when slow ----
    th_d = np.clip(-0.2 - 0.3 * ev, -0.5, 0.12)
    T_des = -2.0 * (th - th_d) - 0.2 * wy          # total hip torque wanted on torso

    # world thigh angles (+ = foot forward of hip)
    phi = (q[0][0] - th, q[1][0] - th)
    dphi = (dq[0][0] - wy, dq[1][0] - wy)

    # ---- phase: the rear leg swings (velocity term gives hysteresis) ----
    s = (phi[0] - phi[1]) - 0.1 * (dphi[0] - dphi[1]) + 0.02
    wR = sig(-s / 0.015)                            # weight of "right leg is swing"
    w_sw = (wR, 1.0 - wR)

    # swing foot placement (world thigh angle), capped by the hip limit below
    phi_sw_d = np.clip(0.35 + 0.3 * ev, -0.4, 0.6)

    # ---- swing commands for each leg ----
    sw = []
    for i in (0, 1):
        qh, qk, qf = q[i]
        dqh, dqk, dqf = dq[i]
        qh_d = np.clip(phi_sw_d + th, -1.4, HIP_FWD_MAX)
        t_h = np.clip(3.0 * (qh_d - qh) - 0.3 * dqh, -1.0, 1.0)
        # knee: bent while the thigh still has far to travel, straight near the target
        err = (qh_d - qh) - 0.05 * dqh
        qk_d = -0.05 - 0.9 * sig((err - 0.12) / 0.04)
        t_k = 2.0 * (qk_d - qk) - 0.15 * dqk
        # foot: toes slightly up in world frame (psi = phi + qk + qf)
        qf_d = np.clip(0.1 - phi[i] - qk, -0.75, 0.75)
        t_f = 0.5 * (qf_d - qf) - 0.03 * dqf
        sw.append(np.array([t_h, t_k, t_f]))

    # ---- stance commands for each leg ----
    st = []
    for i in (0, 1):
        j = 1 - i
        qh, qk, qf = q[i]
        dqh, dqk, dqf = dq[i]
        # hip: torso PD, cancelling the reaction of the other (swing) hip
        t_h = T_des - sw[j][0]
        # knee: straight (into its limit) + height feedback
        t_k = 0.2 + 2.0 * (0.0 - qk) - 0.1 * dqk + 2.0 * max(0.0, 1.15 - z)
        # ankle: keep foot flat, brake when too fast (CoP toward the toe)
        psi = phi[i] + qk + qf
        dpsi = dphi[i] + dqk + dqf
        t_f = np.clip(-0.2 * psi - 0.02 * dpsi - 0.3 * ev - 0.05, -0.45, 0.1)
        st.append(np.array([t_h, t_k, t_f]))

    # ---- blend roles ----
    a = np.concatenate([w_sw[i] * sw[i] + (1.0 - w_sw[i]) * st[i] for i in (0, 1)])
    a = np.nan_to_num(a)
    return np.clip(a, -1.0, 1.0)
