# Guide policy candidate round1_candidate2 for Walker2d-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer2.md).
# Prompt: round1_prompt.md; raw response: round1_candidate2.response.md; details: round1_candidate2.json

import numpy as np


def policy(obs):
    obs = np.asarray(obs, dtype=np.float64)
    z, th = obs[0], obs[1]
    q = obs[2:8]
    vx, thd = obs[8], obs[10]
    dq = obs[11:17]

    # forward speed of the hip (torso centre is 0.2 above the hip)
    v = vx - 0.2 * np.cos(th) * thd
    hip_z = z - 0.2 * np.cos(th)

    psi = np.zeros(2)    # thigh angle from vertical in world (+ = foot forward)
    psid = np.zeros(2)   # its rate
    phi3 = np.zeros(2)   # foot pitch in world (+ = toes down)
    phi3d = np.zeros(2)
    low = np.zeros(2)    # lowest point of the foot
    ax = np.zeros(2)     # ankle x relative to hip
    for i in range(2):
        qh, qk, qf = q[3 * i], q[3 * i + 1], q[3 * i + 2]
        dqh, dqk, dqf = dq[3 * i], dq[3 * i + 1], dq[3 * i + 2]
        p1 = qh - th
        p2 = p1 + qk
        f3 = th - qh - qk - qf
        ankle_x = 0.45 * np.sin(p1) + 0.5 * np.sin(p2)
        ankle_z = hip_z - 0.45 * np.cos(p1) - 0.5 * np.cos(p2)
        toe_z = ankle_z - 0.2 * np.sin(f3)
        low[i] = min(ankle_z, toe_z) - 0.06
        ax[i] = ankle_x
        psi[i] = p1
        psid[i] = dqh - thd
        phi3[i] = f3
        phi3d[i] = thd - dqh - dqk - dqf

    # ---- stance / swing decision: lower foot, ties go to the front foot ----
    score = low - 0.03 * ax + np.array([-0.003, 0.0])
    st = 0 if score[0] <= score[1] else 1
    sw = 1 - st

    v_des = 0.8

    # ---- torso balance (through the stance hip) ----
    th_d = -0.15 - 0.2 * np.clip(v, 0.0, 1.2)        # lean back (hip can't flex past 0)
    T = -2.5 * (th - th_d) - 0.25 * thd              # desired torque on torso

    # ---- swing hip: foot placement ----
    psi_d = 0.55 * v - 0.19
    hi = max(-th - 0.03, -0.25)                      # respect hip limit q_hip <= 0
    psi_d = float(np.clip(psi_d, -0.25, hi))
    tau_sw_hip = 2.5 * (psi_d - psi[sw]) - 0.25 * psid[sw]
    tau_sw_hip = float(np.clip(tau_sw_hip, -0.7, 0.7))
    tau_st_hip = T - tau_sw_hip                      # cancel swing reaction on torso

    # ---- knees ----
    qk_sw, dqk_sw = q[3 * sw + 1], dq[3 * sw + 1]
    qk_st, dqk_st = q[3 * st + 1], dq[3 * st + 1]
    delta = psi[sw] - psi[st]
    f1 = np.clip((0.35 - delta) / 0.4, 0.0, 1.0)     # not yet well ahead of stance leg
    f2 = np.clip((psi_d - psi[sw]) / 0.15, 0.0, 1.0) # still short of target
    flex = min(f1, f2)
    knee_target = -0.05 - 1.0 * flex
    tau_sw_knee = 2.0 * (knee_target - qk_sw) - 0.1 * dqk_sw
    tau_st_knee = 3.0 * (-0.02 - qk_st) - 0.1 * dqk_st + 1.5 * max(1.15 - z, 0.0)

    # ---- ankles ----
    tau_sw_ank = 0.5 * (phi3[sw] + 0.1) + 0.03 * phi3d[sw]
    tau_st_ank = (0.5 * phi3[st] + 0.03 * phi3d[st]
                  - 0.25 * np.clip(v - v_des, -0.4, 1.0))

    a = np.zeros(6)
    a[3 * st + 0] = tau_st_hip
    a[3 * st + 1] = tau_st_knee
    a[3 * st + 2] = tau_st_ank
    a[3 * sw + 0] = tau_sw_hip
    a[3 * sw + 1] = tau_sw_knee
    a[3 * sw + 2] = tau_sw_ank
    return np.clip(a, -1.0, 1.0)
