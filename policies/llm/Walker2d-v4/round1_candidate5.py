# Guide policy candidate round1_candidate5 for Walker2d-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer5.md).
# Prompt: round1_prompt.md; raw response: round1_candidate5.response.md; details: round1_candidate5.json

import numpy as np
import math


def policy(obs):
    obs = np.asarray(obs, dtype=np.float64)
    z, th = obs[0], obs[1]
    vx, thd = obs[8], obs[10]
    qR, qL = obs[2:5], obs[5:8]
    dR, dL = obs[11:14], obs[14:17]

    V_T = 0.8                                   # target walking speed [m/s]

    # forward velocity of the hip (torso centre sits 0.2 m above it)
    v = vx - 0.2 * math.cos(th) * thd

    # ---- foot placement (capture-point style speed feedback) ----
    s = float(np.clip(0.30 * v + 0.15 * (v - V_T), 0.0, 0.45))
    phi_des = -math.asin(min(s / 0.95, 0.6))   # world thigh angle, <0 = forward

    # ---- torso lean: back enough that the hip can reach the foot target ----
    th_des = float(np.clip(phi_des - 0.10, -0.50, -0.08))
    T = 2.0 * (th_des - th) - 0.2 * thd        # desired torque on torso (+ = pitch fwd)

    # ankle speed assist for the stance foot (+ = toes up = body tips forward)
    push = float(np.clip(0.2 * (V_T - v), -0.2, 0.12))

    # ---- planar forward kinematics, relative to the hip ----
    def kin(q, dq):
        a1 = th - q[0]          # thigh world pitch (+ = foot behind)
        a2 = a1 - q[1]          # shin world pitch
        a3 = a2 - q[2]          # foot world pitch (+ = toes down)
        a1d = thd - dq[0]
        kx, kz = -0.45 * math.sin(a1), -0.45 * math.cos(a1)
        ax, az = kx - 0.5 * math.sin(a2), kz - 0.5 * math.cos(a2)
        tz = az - 0.2 * math.sin(a3)
        h = min(az, tz) - 0.06  # lowest point of the foot
        return a1, a2, a1d, ax, h

    aR1, aR2, aR1d, xR, hR = kin(qR, dR)
    aL1, aL2, aL1d, xL, hL = kin(qL, dL)

    # ---- per-role joint commands ----
    def swing(q, dq, a1, a2, a1d):
        phi_t = max(phi_des, th + 0.03)        # never drive the hip into its 0 stop
        e = a1 - phi_t                          # >0: thigh still behind its target
        hip = float(np.clip(1.2 * e + 0.2 * a1d, -0.7, 0.7))
        k_des = -1.1 * float(np.clip((e + 0.05) / 0.25, 0.0, 1.0))
        knee = 1.5 * (k_des - q[1]) - 0.15 * dq[1]
        f_des = float(np.clip(a2 + 0.15, -0.7, 0.7))   # foot 0.15 rad toes-up
        ank = 0.5 * (f_des - q[2]) - 0.03 * dq[2]
        return hip, knee, ank

    def stance(q, dq, a2, hip_sw):
        hip = T - hip_sw                        # SIMBICON torso compensation
        knee = (2.0 * (-0.05 - q[1]) - 0.1 * dq[1]
                + float(np.clip(3.0 * (1.12 - z), 0.0, 0.5)))
        f_des = float(np.clip(a2, -0.75, 0.75))        # keep foot flat
        ank = 0.6 * (f_des - q[2]) - 0.02 * dq[2] + push
        return hip, knee, ank

    # case A: right swings, left supports
    sR = swing(qR, dR, aR1, aR2, aR1d)
    tL = stance(qL, dL, aL2, sR[0])
    A = np.array([sR[0], sR[1], sR[2], tL[0], tL[1], tL[2]])

    # case B: left swings, right supports
    sL = swing(qL, dL, aL1, aL2, aL1d)
    tR = stance(qR, dR, aR2, sL[0])
    B = np.array([tR[0], tR[1], tR[2], sL[0], sL[1], sL[2]])

    # ---- stateless role choice: higher foot swings; if both down, rear foot swings ----
    score = (hR - hL) + 0.06 * (xL - xR) + 0.004
    w = 1.0 / (1.0 + math.exp(-float(np.clip(score / 0.01, -50.0, 50.0))))

    action = w * A + (1.0 - w) * B
    return np.clip(action, -1.0, 1.0)
