# TUNED GUIDE, not written by a language model: a controller written by hand by this project, whose constants were
# then tuned by an evolution search on the environment's own reward (seeds 10-47; docs/guides.md). It was the
# default guide in policies/walker2d.py until the LLM-written guides replaced it; runs named camel_tuned* use it.
"""Hand-coded alternating gait for Walker2d-v4 (17-dim observation, 6-dim action).

A relay oscillator on the difference of the two thigh angles decides which leg swings: the rear
leg swings until it is ahead of the other by SWITCH rad, then the legs swap roles; in between,
the sign of the thigh velocity difference keeps the current step going. The swing leg is driven
to a landing angle that reaches further forward the faster the walker moves (speed feedback),
with the knee bent while it is behind the other leg. The stance leg's hip is a PD controller on
the torso angle (balance), its knee is held almost straight, and its ankle pushes off once the
leg is behind the hip. The result is a fast alternating running gait with short flight phases.

Measured with this project's evaluator over seeds 0-4, 1000-step episodes (mean +- std):
    return            2785 +- 124
    episode length    1000 +- 0
    forward distance  14.30 +- 0.99 m   (torso x at the end minus at the start)
    falls             0 / 5   (seeds 0-29: 1 fall out of 30; the least robust of the three)
    mean |action|     0.54   (the hips often saturate, so actions switch sharply)
Command: python generate_policy.py --env-id Walker2d-v4 --evaluate policies/walker2d.py --seed 0 --episodes 5 --no-video
Written by hand in the way the prompts in prompts/ ask a language model to (named constants, a PD controller
for balance, a rule for forward motion); the constants were tuned by a small evolution search on seeds 10-47.
"""
import numpy as np

SWITCH = 0.4244            # thigh separation (rad) at which the legs swap roles
# Stance leg
TORSO_REF = -0.0968        # desired torso angle (rad, >0 leans forward)
KP_TORSO, KD_TORSO = 5.9062, 0.7942
KNEE_STANCE = -0.0476      # stance knee almost straight
PUSH = -0.7117             # ankle push-off torque (toe down)
PUSH_ANGLE = 0.1911        # push once the leg is this far behind vertical (rad)
# Swing leg
LAND_ANGLE = -0.3088       # leg angle from vertical at landing (rad, <0 = foot ahead)
K_SPEED = 0.4156           # reach further forward when moving faster
KP_SWING, KD_SWING = 4.9586, 0.2269
KNEE_SWING = -0.5481       # swing knee bend while the leg is behind (ground clearance)
FOOT_SWING = 0.5305        # toe raised during swing
# Joint PD gains shared by both roles
KP_KNEE, KD_KNEE = 3.0291, 0.3586
KP_FOOT, KD_FOOT = 1.1655, 0.0617


def leg_action(thigh, knee, foot, thigh_vel, knee_vel, foot_vel, swing, behind, torso_angle, torso_vel, vx):
    """Hip, knee and ankle torques for one leg; joint angles follow the Gymnasium convention."""
    leg_angle = torso_angle - thigh  # thigh angle from vertical (>0: foot behind the hip)
    if swing:
        target = torso_angle - (LAND_ANGLE - K_SPEED * vx)  # thigh angle that gives the landing angle
        hip = KP_SWING * (target - thigh) - KD_SWING * thigh_vel
        knee_target = KNEE_SWING if behind else 0.0
        ankle = KP_FOOT * (FOOT_SWING - foot) - KD_FOOT * foot_vel
    else:
        hip = -KP_TORSO * (torso_angle - TORSO_REF) - KD_TORSO * torso_vel
        knee_target = KNEE_STANCE
        ankle = PUSH if leg_angle > PUSH_ANGLE else -KD_FOOT * foot_vel
    knee_cmd = KP_KNEE * (knee_target - knee) - KD_KNEE * knee_vel
    return [hip, knee_cmd, ankle]


def policy(obs):
    torso_angle, vx, torso_vel = obs[1], obs[8], obs[10]
    # obs[2:5] right thigh/knee/foot angles, obs[5:8] left; obs[11:14] and obs[14:17] their velocities
    gap = obs[2] - obs[5]          # >0: right leg ahead of the left
    gap_vel = obs[11] - obs[14]
    if gap > SWITCH:
        right_swings = False       # right leg has landed in front: left leg swings next
    elif gap < -SWITCH:
        right_swings = True
    else:
        right_swings = gap_vel > 0.0  # keep swinging the leg that is moving forward
    right = leg_action(obs[2], obs[3], obs[4], obs[11], obs[12], obs[13], right_swings, gap < 0.0,
                       torso_angle, torso_vel, vx)
    left = leg_action(obs[5], obs[6], obs[7], obs[14], obs[15], obs[16], not right_swings, gap > 0.0,
                      torso_angle, torso_vel, vx)
    return np.clip(np.array(right + left), -1.0, 1.0)
