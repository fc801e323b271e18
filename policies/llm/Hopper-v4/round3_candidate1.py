# Guide policy candidate round3_candidate1 for Hopper-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from round3_answer1.md).
# Prompt: round3_prompt.md; raw response: round3_candidate1.response.md; details: round3_candidate1.json

import numpy as np
import math

def policy(obs):
    # ---------- observation ----------
    z, th, qt, ql, qf = obs[0], obs[1], obs[2], obs[3], obs[4]
    vx, vz, w, dqt, dql, dqf = obs[5], obs[6], obs[7], obs[8], obs[9], obs[10]

    # ---------- parameters ----------
    v_des  = 0.7     # desired forward COM speed [m/s]
    L_trig = 0.12    # COM ahead of ankle that triggers push-off [m]
    L_nom  = 0.05
    kv, kL = 0.35, 0.6
    lean   = 0.04    # small forward torso lean: margin against backward spin

    # ---------- segment tilts (world, + = top towards +x) ----------
    p1 = th - qt          # thigh
    p2 = p1 - ql          # shank
    p3 = p2 - qf          # foot (+ = toe down)
    p1d = w - dqt
    p2d = p1d - dql
    p3d = p2d - dqf

    s0, c0 = math.sin(th), math.cos(th)
    s1, c1 = math.sin(p1), math.cos(p1)
    s2, c2 = math.sin(p2), math.cos(p2)
    s3, c3 = math.sin(p3), math.cos(p3)

    # ---------- forward kinematics (relative to torso centre) ----------
    hx, hz = -0.2 * s0, -0.2 * c0            # hip
    kx, kz = hx - 0.45 * s1, hz - 0.45 * c1  # knee
    ax, az = kx - 0.5 * s2, kz - 0.5 * c2    # ankle
    hxd = -0.2 * c0 * w
    kxd = hxd - 0.45 * c1 * p1d
    axd = kxd - 0.5 * c2 * p2d

    mT, mH, mL, mF = 3.665, 4.058, 2.781, 5.316
    M = mT + mH + mL + mF
    com_x = (mH * (hx - 0.225 * s1) + mL * (kx - 0.25 * s2)
             + mF * (ax + 0.065 * c3)) / M
    com_xd = (mH * (hxd - 0.225 * c1 * p1d) + mL * (kxd - 0.25 * c2 * p2d)
              + mF * (axd - 0.065 * s3 * p3d)) / M
    L = com_x - ax          # COM ahead of ankle
    Ld = com_xd - axd       # its rate (= COM speed when the foot is planted)
    Vc = vx + com_xd        # absolute COM forward speed

    ankle_z = z + az
    foot_low = min(ankle_z + 0.13 * s3, ankle_z - 0.26 * s3) - 0.06
    contact = foot_low < 0.012

    # ---------- hip: keep the torso slightly forward (never fight the hip limit) ----------
    th_ref = max(min(lean, p1), -0.08)
    a0 = 3.0 * (th_ref - th) - 0.3 * w

    # ---------- knee: locked straight (rigid leg) ----------
    a1 = 0.15 + 2.0 * (0.0 - ql) - 0.1 * dql

    # ---------- ankle ----------
    if contact:
        # do not start a push (which adds backward spin) while already falling back
        can_push = (th > -0.10) and (w > -0.8)
        start_push = can_push and (L > L_trig) and (Ld > 0.05)
        # continue only while the push is actually lifting the body / rolling the foot
        keep_push = (0.05 < p3 < 0.6) and (th > -0.14) and ((vz > 0.05) or (p3d > 0.4))
        if start_push or keep_push:
            push = (0.32 + 0.8 * (L - L_trig) + 0.2 * (Ld - v_des)
                    + 0.3 * th + 0.03 * w)
            push = min(max(push, 0.26), 0.6)
            a2 = -push                       # toe down: hop
        else:
            # centre-of-pressure balance / speed regulation on a flat foot
            p_star = L + kv * (Vc - v_des) + kL * (L - L_nom)
            p_star = min(max(p_star, -0.07), 0.21)
            a2 = -0.776 * p_star + 0.017     # 0.776 = m*g/200
            a2 += 0.3 * p3 - 0.02 * p3d      # keep the sole flat
    else:
        # flight: hold the foot flat to the ground for a flat landing
        qf_ref = min(max(p2, -0.7), 0.7)
        a2 = 1.5 * (qf_ref - qf) - 0.1 * dqf

    return np.clip(np.array([a0, a1, a2], dtype=np.float64), -1.0, 1.0)
