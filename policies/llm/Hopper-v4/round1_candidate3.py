# Guide policy candidate round1_candidate3 for Hopper-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer3.md).
# Prompt: round1_prompt.md; raw response: round1_candidate3.response.md; details: round1_candidate3.json

import numpy as np
import math

def policy(obs):
    # ---- unpack observation ----
    z, th, qt, ql, qf = obs[0], obs[1], obs[2], obs[3], obs[4]
    vx, vz, dth, dqt, dql, dqf = obs[5], obs[6], obs[7], obs[8], obs[9], obs[10]

    # ---- world pitch of each segment (rotation about +y; >0 = leaning forward / toe down)
    pth = th - qt          # thigh   (joint axis is -y)
    pl = pth - ql          # shin
    pf = pl - qf           # foot
    dpth = dth - dqt
    dpl = dpth - dql
    dpf = dpl - dqf

    sT, cT = math.sin(th), math.cos(th)
    sH, cH = math.sin(pth), math.cos(pth)
    sL, cL = math.sin(pl), math.cos(pl)
    sF = math.sin(pf)

    # ---- contact detection from kinematics (torso->hip 0.2, thigh 0.45, shin 0.5,
    #      foot capsule from -0.13 to +0.26 around the ankle, radius 0.06)
    ankle_z = z - 0.2 * cT - 0.45 * cH - 0.5 * cL
    lowest = min(ankle_z - 0.26 * sF, ankle_z + 0.13 * sF) - 0.06
    stance = lowest < 0.02

    # ---- upper-body (torso+thigh+shin) COM relative to the ankle, and its rate
    mT, mH, mL = 3.67, 4.06, 2.78
    mU = mT + mH + mL
    c = (mT * (0.2 * sT + 0.45 * sH + 0.5 * sL)
         + mH * (0.225 * sH + 0.5 * sL)
         + mL * (0.25 * sL)) / mU
    cdot = (mT * (0.2 * cT * dth + 0.45 * cH * dpth + 0.5 * cL * dpl)
            + mH * (0.225 * cH * dpth + 0.5 * cL * dpl)
            + mL * (0.25 * cL * dpl)) / mU
    # absolute horizontal speed of that COM (torso velocity + relative motion)
    v = vx + (mH * (-0.2 * cT * dth - 0.225 * cH * dpth)
              + mL * (-0.2 * cT * dth - 0.45 * cH * dpth - 0.25 * cL * dpl)) / mU

    V_DES = 0.8           # target forward speed (m/s)

    # ---- hip: keep torso upright (a0>0 pitches torso forward)
    TH_REF = 0.03
    a0 = -2.0 * (th - TH_REF) - 0.25 * dth

    # ---- knee: stiff, almost straight (a1>0 extends)
    a1 = 1.5 * (-0.1 - ql) - 0.15 * dql

    # ---- ankle (a2<0 = toe down / push, a2>0 = toe up)
    if stance:
        # push earlier when too fast, later when too slow
        c_push = float(np.clip(0.14 - 0.12 * (v - V_DES), 0.05, 0.20))
        if c > c_push or pf > 0.15:
            # push-off: roll onto the toe, throw the body up, add backward spin
            push = float(np.clip(0.26 + 0.12 * cdot, 0.22, 0.42))
            a2 = -push
        else:
            # lean the body forward over the foot (CoP to heel), brake if too fast;
            # limits keep the foot flat (no heel/toe lift)
            a2 = float(np.clip(1.0 * (c_push - c) - 0.15 * (v - V_DES), -0.15, 0.10))
    else:
        # flight: bring the foot level for a flat landing
        a2 = 1.0 * (pf - 0.0) + 0.1 * dpf

    return np.clip(np.array([a0, a1, a2], dtype=np.float64), -1.0, 1.0)
