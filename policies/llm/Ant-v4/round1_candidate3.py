# Guide policy candidate round1_candidate3 for Ant-v4, written by Claude (Anthropic) (its answer was obtained outside generate_policy.py and read from answer3.md).
# Prompt: round1_prompt.md; raw response: round1_candidate3.response.md; details: round1_candidate3.json

import numpy as np
import math


def policy(obs):
    o = np.asarray(obs, dtype=np.float64).ravel()

    # ---------------- read the observation ----------------
    z = o[0]
    qw, qx, qy, qz = o[1], o[2], o[3], o[4]
    wx, wy, wz = o[16], o[17], o[18]          # body-frame angular velocity

    # internal leg order: leg1(+x,+y), leg2(-x,+y), leg3(-x,-y), leg4(+x,-y)
    hip_q = o[[5, 7, 9, 11]]
    ank_q = o[[6, 8, 10, 12]]
    hip_v = o[[19, 21, 23, 25]]
    ank_v = o[[20, 22, 24, 26]]

    s_fwd = np.array([-1.0, -1.0, 1.0, 1.0])    # +f  = foot moves toward +x
    s_down = np.array([1.0, -1.0, -1.0, 1.0])   # +d  = foot moves down
    pair = np.array([1.0, -1.0, 1.0, -1.0])     # diagonal pairs: A={1,3}, B={2,4}
    sx = np.array([1.0, -1.0, -1.0, 1.0])       # front(+x) / back
    sy = np.array([1.0, 1.0, -1.0, -1.0])       # left(+y) / right

    f = s_fwd * hip_q
    fd = s_fwd * hip_v
    d = s_down * ank_q
    dd = s_down * ank_v

    # ---------------- gait phase from the state ----------------
    W = 10.0                                   # nominal gait frequency (rad/s)
    x = float(np.mean(pair * f))
    xd = float(np.mean(pair * fd))
    phi = math.atan2(-xd / W, x)               # always advances (clockwise in x-xd plane)

    # ---------------- heading feedback ----------------
    yaw = math.atan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))
    turn = float(np.clip(1.2 * (yaw + 0.15 * wz), -0.4, 0.4))
    A = 0.38
    amp = A * (1.0 + turn * sy)                # yaw>0 -> longer left strides -> turn right

    # ---------------- hips: PD to a phase-advanced target ----------------
    DELTA = 0.35
    c = math.cos(phi + DELTA)
    s = math.sin(phi + DELTA)
    f_t = np.clip(pair * amp * c, -0.5, 0.5)
    fd_t = -pair * amp * W * s
    u_f = 1.2 * (f_t - f) + 0.12 * (fd_t - fd)

    # ---------------- ankles: stance press / swing lift ----------------
    ANK_LEAD = 0.75
    sa = math.sin(phi + ANK_LEAD)
    ca = math.cos(phi + ANK_LEAD)

    # levelling: height offset of each corner (third row of rotation matrix)
    R20 = 2.0 * (qx * qz - qw * qy)
    R21 = 2.0 * (qy * qz + qw * qx)
    h = R20 * sx + R21 * sy
    hdot = -wy * sx + wx * sy

    D0, DA = 0.93, 0.23
    d_t = D0 + DA * pair * sa - 1.0 * (h + 0.15 * hdot) - 2.0 * max(0.0, z - 0.75)
    d_t = np.clip(d_t, 0.56, 1.2)
    dd_t = DA * pair * ca * W
    u_d = 1.0 * (d_t - d) + 0.08 * (dd_t - dd)

    # ---------------- map back to joint torques / action order ----------------
    hip_u = s_fwd * u_f
    ank_u = s_down * u_d

    a = np.zeros(8)
    # action order: hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3
    a[2], a[4], a[6], a[0] = hip_u[0], hip_u[1], hip_u[2], hip_u[3]
    a[3], a[5], a[7], a[1] = ank_u[0], ank_u[1], ank_u[2], ank_u[3]

    return np.clip(a, -1.0, 1.0)
