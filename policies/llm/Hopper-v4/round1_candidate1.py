# Guide policy candidate round1_candidate1 for Hopper-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer1.md).
# Prompt: round1_prompt.md; raw response: round1_candidate1.response.md; details: round1_candidate1.json

import numpy as np
import math

# geometry from hopper.xml
L_HIP, L_THIGH, L_SHANK = 0.20, 0.45, 0.50
TOE, HEEL, R_FOOT = 0.26, 0.13, 0.06
G = 9.81

V_DES = 1.0      # desired forward speed [m/s]
Z_APEX = 1.30    # desired torso height at hop apex [m]


def policy(obs):
    obs = np.asarray(obs, dtype=np.float64)
    z, th, q1, q2, q3 = obs[0], obs[1], obs[2], obs[3], obs[4]
    vx, vz, w, dq1, dq2, dq3 = obs[5], obs[6], obs[7], obs[8], obs[9], obs[10]

    # absolute link angles about +y (positive = lower end of the link behind its upper end)
    phi_t = th - q1          # thigh
    phi_s = phi_t - q2       # shank
    phi_f = phi_s - q3       # foot: 0 = flat, >0 = toes down

    # forward kinematics: foot clearance and ankle position relative to hip
    hip_z = z - L_HIP * math.cos(th)
    ank_z = hip_z - L_THIGH * math.cos(phi_t) - L_SHANK * math.cos(phi_s)
    toe_z = ank_z - TOE * math.sin(phi_f)
    heel_z = ank_z + HEEL * math.sin(phi_f)
    foot_h = min(toe_z, heel_z) - R_FOOT
    ank_back = L_THIGH * math.sin(phi_t) + L_SHANK * math.sin(phi_s)  # >0: ankle behind hip

    stance = foot_h < 0.03
    dv = V_DES - vx

    # ---- hip: torso attitude PD (works in stance and in flight) ----
    th_ref = min(max(0.02 + 0.05 * dv, -0.04), 0.08)
    u_hip = -2.5 * (th - th_ref) - 0.3 * w

    if stance:
        # ---- knee: spring around -0.3, thrust when rising or in late stance ----
        late = ank_back > 0.35
        push = (vz > 0.0) or late
        thrust = 0.0
        if push:
            e_apex = z + max(vz, 0.0) ** 2 / (2.0 * G)   # predicted apex if we left now
            thrust = min(max(5.0 * (Z_APEX - e_apex), 0.0), 0.8)
            if late:
                thrust += 0.2
        u_knee = 1.5 * (-0.30 - q2) - 0.2 * dq2 + thrust

        # ---- ankle: keep foot flat, shift centre of pressure for speed, toe push-off ----
        u_ankle = 0.6 * phi_f - 0.05 * dq3 + min(max(0.2 * dv, -0.2), 0.15)
        if push:
            u_ankle -= 0.3
    else:
        # ---- knee: foot placement for touchdown (Raibert-style, via knee) ----
        dx_des = min(max(0.20 - 0.15 * (vx - V_DES), 0.05), 0.32)
        s = (dx_des - L_THIGH * math.sin(phi_t)) / L_SHANK
        s = min(max(s, -0.9), 0.9)
        phi_s_des = math.asin(s)
        q2_des = min(max(phi_t - phi_s_des, -1.0), -0.05)
        q2_des -= 0.3 * min(max(vz, 0.0), 1.0)          # tuck while rising for clearance
        u_knee = 1.5 * (q2_des - q2) - 0.2 * dq2

        # ---- ankle: land with the foot flat ----
        q3_des = min(max(phi_s, -0.7), 0.7)
        u_ankle = 2.0 * (q3_des - q3) - 0.15 * dq3

    return np.clip(np.array([u_hip, u_knee, u_ankle], dtype=np.float64), -1.0, 1.0)
