"""Reacher-v5: Jacobian-transpose pull of the fingertip to the target, with joint damping."""
import math

LINK_1, LINK_2 = 0.1, 0.11
GAIN, DAMPING = 20.0, 0.1


class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        pass

    def reset(self, episode_index):
        pass

    def act(self, obs):
        cos_1, cos_2, sin_1, sin_2 = obs[0], obs[1], obs[2], obs[3]
        velocity_1, velocity_2 = obs[6], obs[7]
        error_x, error_y = -obs[8], -obs[9]  # target minus fingertip
        q_1 = math.atan2(sin_1, cos_1)
        q_12 = q_1 + math.atan2(sin_2, cos_2)
        j_11 = -LINK_1 * math.sin(q_1) - LINK_2 * math.sin(q_12)
        j_12 = -LINK_2 * math.sin(q_12)
        j_21 = LINK_1 * math.cos(q_1) + LINK_2 * math.cos(q_12)
        j_22 = LINK_2 * math.cos(q_12)
        torque_1 = GAIN * (j_11 * error_x + j_21 * error_y) - DAMPING * velocity_1
        torque_2 = GAIN * (j_12 * error_x + j_22 * error_y) - DAMPING * velocity_2
        return [max(-1.0, min(1.0, torque_1)), max(-1.0, min(1.0, torque_2))]
