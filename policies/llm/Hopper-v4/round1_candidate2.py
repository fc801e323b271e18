# Guide policy candidate round1_candidate2 for Hopper-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer2.md).
# Prompt: round1_prompt.md; raw response: round1_candidate2.response.md; details: round1_candidate2.json

import numpy as np

def policy(obs):
    obs = np.asarray(obs, dtype=float)
    z, a, qt, ql, qf = obs[0], obs[1], obs[2], obs[3], obs[4]
    vx, vz, wa, wt, wl, wf = obs[5], obs[6], obs[7], obs[8], obs[9], obs[10]

    # ---- absolute segment angles (rotation about +y, >0 = top tilted forward)
    p1 = a - qt          # thigh
    p2 = p1 - ql         # shank
    p3 = p2 - qf         # foot (0 = flat, >0 = heel up / toe down)

    s0, c0 = math.sin(a), math.cos(a)
    s1, c1 = math.sin(p1), math.cos(p1)
    s2, c2 = math.sin(p2), math.cos(p2)
    s3, c3 = math.sin(p3), math.cos(p3)

    # ---- forward kinematics (x relative to torso centre, z absolute)
    hip_x, hip_z = -0.2 * s0, z - 0.2 * c0
    knee_x, knee_z = hip_x - 0.45 * s1, hip_z - 0.45 * c1
    ank_x, ank_z = knee_x - 0.5 * s2, knee_z - 0.5 * c2

    heel_z = ank_z + 0.13 * s3
    toe_z = ank_z - 0.26 * s3
    foot_low = min(heel_z, toe_z) - 0.06              # lowest point of foot capsule
    contact = float(np.clip((0.04 - foot_low) / 0.03, 0.0, 1.0))  # 1 = stance

    # ---- centre of mass (x) and foot position relative to it
    m_t, m_th, m_l, m_f = 3.665, 4.058, 2.781, 5.316
    th_x = hip_x - 0.225 * s1
    lg_x = knee_x - 0.25 * s2
    ft_x = ank_x + 0.065 * c3
    com_x = (m_th * th_x + m_l * lg_x + m_f * ft_x) / (m_t + m_th + m_l + m_f)
    foot_rel = ft_x - com_x            # >0: foot centre ahead of CoM

    v_des = 0.7                        # desired forward speed (m/s)
    a_des = 0.02                       # desired torso pitch (rad)

    # ================= STANCE =================
    late = float(np.clip((-foot_rel - 0.04) / 0.10, 0.0, 1.0))  # CoM ahead of foot -> push
    rise = float(np.clip(vz / 0.3, 0.0, 1.0))                    # moving upward -> thrust

    hip_st = 5.0 * (a_des - a) - 0.5 * wa                        # torso attitude
    knee_st = 1.5 * (0.0 - ql) - 0.1 * wl + 0.3 * rise + 0.3 * late
    ank_st = 0.25 * float(np.clip(v_des - vx, -0.6, 0.6)) - 0.45 * late - 0.03 * wf

    # ================= FLIGHT =================
    xf_des = float(np.clip(0.10 * vx + 0.08 * (vx - v_des), -0.08, 0.12))
    hip_fl = (3.0 * (xf_des - foot_rel) - 0.15 * wt
              - 1.5 * (a - a_des) - 0.15 * wa)                   # foot placement + attitude
    knee_fl = 2.0 * (-0.2 - ql) - 0.15 * wl                      # slight bend for landing
    ank_fl = 2.0 * (p3 - 0.0) - 0.15 * wf                        # keep foot level

    stance = np.array([hip_st, knee_st, ank_st])
    flight = np.array([hip_fl, knee_fl, ank_fl])
    u = contact * stance + (1.0 - contact) * flight
    return np.clip(u, -1.0, 1.0)
