# Guide policy candidate round1_candidate1 for Walker2d-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer1.md).
# Prompt: round1_prompt.md; raw response: round1_candidate1.response.md; details: round1_candidate1.json

import numpy as np
import math


def policy(obs):
    o = np.asarray(obs, dtype=np.float64).ravel()
    z, r = float(o[0]), float(o[1])          # torso height, torso pitch (+ = leaning forward)
    vx, dr = float(o[8]), float(o[10])        # torso x-velocity, pitch rate

    # ---------- forward kinematics of one leg (0 = right, 1 = left) ----------
    def leg(i):
        qh, qk, qa = float(o[2 + 3 * i]), float(o[3 + 3 * i]), float(o[4 + 3 * i])
        dqh, dqk, dqa = float(o[11 + 3 * i]), float(o[12 + 3 * i]), float(o[13 + 3 * i])
        phi = qh - r                 # thigh angle from vertical, + = forward (world)
        psi = qh + qk - r            # shank angle, + = ankle ahead of knee
        gam = qh + qk + qa - r       # foot pitch, + = toes up
        hx, hz = -0.2 * math.sin(r), -0.2 * math.cos(r)            # hip rel. torso centre
        kx, kz = hx + 0.45 * math.sin(phi), hz - 0.45 * math.cos(phi)  # knee
        ax, az = kx + 0.5 * math.sin(psi), kz - 0.5 * math.cos(psi)    # ankle
        tz = az + 0.2 * math.sin(gam)                              # toe
        low = z + min(az, tz) - 0.06                               # lowest point of foot
        return {
            "qk": qk, "dqk": dqk,
            "phi": phi, "dphi": dqh - dr,
            "gam": gam, "dgam": dqh + dqk + dqa - dr,
            "ax": ax, "low": low,
        }

    legs = [leg(0), leg(1)]

    # ---------- stance / swing decision (stateless) ----------
    CONTACT = 0.025
    c0 = legs[0]["low"] < CONTACT
    c1 = legs[1]["low"] < CONTACT
    if c0 and not c1:
        st = 0
    elif c1 and not c0:
        st = 1
    else:  # double support or flight: the front leg is the stance leg
        st = 0 if legs[0]["ax"] >= legs[1]["ax"] else 1
    sw = 1 - st
    S, W = legs[st], legs[sw]

    # ---------- high-level targets ----------
    v = vx - 0.2 * math.cos(r) * dr          # forward velocity of the hip
    V_DES = 0.8
    # lean back (needed because the hip cannot flex past the torso axis), more when fast
    r_des = float(np.clip(-0.25 - 0.35 * (v - V_DES), -0.5, -0.15))
    # foot placement (world thigh angle of swing leg), capture-point style
    phi_t = float(np.clip(0.45 * v - 0.2, -0.3, 0.45))
    # hip range is q <= 0  ->  phi <= -r ; do not push into the joint stop
    phi_reach = min(phi_t, -r - 0.02)

    # ---------- swing leg ----------
    a_sw_h = float(np.clip(2.0 * (phi_reach - W["phi"]) - 0.2 * W["dphi"], -0.8, 0.8))
    s = float(np.clip((phi_reach - W["phi"] - 0.05) / 0.25, 0.0, 1.0))
    knee_t = -0.05 - 1.0 * s                  # bent early in swing, straight before landing
    a_sw_k = 1.5 * (knee_t - W["qk"]) - 0.1 * W["dqk"]
    a_sw_a = float(np.clip(0.4 * (0.05 - W["gam"]) - 0.03 * W["dgam"], -0.4, 0.4))

    # ---------- stance leg ----------
    T = -2.0 * (r - r_des) - 0.2 * dr         # torque wanted on the torso (+ = pitch forward)
    a_st_h = T - a_sw_h                       # hips' reactions on torso sum to T
    a_st_k = 3.0 * (-0.1 - S["qk"]) - 0.2 * S["dqk"] + 2.0 * max(0.0, 1.10 - z)
    a_st_a = float(np.clip(0.3 * (0.0 - S["gam"]) - 0.02 * S["dgam"]
                           + 0.4 * (V_DES - v), -0.35, 0.12))

    act = np.zeros(6)
    act[3 * st:3 * st + 3] = [a_st_h, a_st_k, a_st_a]
    act[3 * sw:3 * sw + 3] = [a_sw_h, a_sw_k, a_sw_a]
    return np.clip(act, -1.0, 1.0)
