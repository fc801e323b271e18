# Guide policy candidate round1_candidate5 for Hopper-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer5.md).
# Prompt: round1_prompt.md; raw response: round1_candidate5.response.md; details: round1_candidate5.json

import numpy as np

def policy(obs):
    obs = np.asarray(obs, dtype=np.float64)
    z, r, th, tl, tf = obs[0], obs[1], obs[2], obs[3], obs[4]
    vx, vz, dr, dth, dtl, dtf = obs[5], obs[6], obs[7], obs[8], obs[9], obs[10]

    V_DES = 0.8  # target forward speed (m/s)

    # Absolute pitch of each segment about +y (>0: lower end points backward)
    a1 = r - th          # thigh
    a2 = a1 - tl         # shank
    a3 = a2 - tf         # foot (>0: toe down)
    da1 = dr - dth
    da2 = da1 - dtl
    da3 = da2 - dtf

    # Forward kinematics (x relative to torso centre, z absolute)
    hip_x = -0.2 * np.sin(r)
    hip_z = z - 0.2 * np.cos(r)
    ank_x = hip_x - 0.45 * np.sin(a1) - 0.5 * np.sin(a2)
    ank_z = hip_z - 0.45 * np.cos(a1) - 0.5 * np.cos(a2)
    heel_z = ank_z + 0.13 * np.sin(a3)
    toe_z = ank_z - 0.26 * np.sin(a3)
    foot_clear = min(heel_z, toe_z) - 0.06      # capsule radius 0.06

    ax = ank_x - hip_x                          # ankle relative to hip (+ = ahead)
    dax = -0.45 * np.cos(a1) * da1 - 0.5 * np.cos(a2) * da2

    in_contact = foot_clear < 0.03

    if in_contact:
        # ---------------- STANCE ----------------
        # hip: keep torso upright (reaction torque on torso is +u0 about +y)
        u0 = -2.0 * (r - 0.0) - 0.25 * dr

        thrust = (vz > 0.0) or (tl < -0.3 and vz > -0.2)
        if thrust:
            # extend the knee and push off with the toe
            u1 = 0.6
            u2 = -0.25
        else:
            # compression: knee acts like a spring toward a crouch
            u1 = 1.0 * (-0.35 - tl) - 0.05 * dtl
            # ankle regulates speed by moving the centre of pressure
            u2 = float(np.clip(0.3 * (V_DES - vx), -0.12, 0.12))
    else:
        # ---------------- FLIGHT ----------------
        # foot placement: faster -> place foot further forward (brake)
        ax_des = float(np.clip(-0.15 + 0.15 * vx + 0.2 * (vx - V_DES), -0.35, 0.15))
        u0 = (1.5 * (ax_des - ax) - 0.15 * dax
              - 1.5 * (r + 0.05) - 0.15 * dr)
        # knee: nearly straight for landing
        u1 = 1.0 * (-0.2 - tl) - 0.1 * dtl
        # ankle: foot about flat (slightly toe-down) in world frame
        u2 = 0.6 * (a3 - 0.05) + 0.08 * da3

    return np.clip(np.array([u0, u1, u2], dtype=np.float64), -1.0, 1.0)
