"""HalfCheetah-v5: an open-loop sine gait (back and front legs in anti-phase)."""
import math

PERIOD = 20.0  # steps
PHASES = [0.0, 0.5, 1.0, math.pi, math.pi + 0.5, math.pi + 1.0]  # bthigh, bshin, bfoot, fthigh, fshin, ffoot


class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        self.t = 0

    def reset(self, episode_index):
        self.t = 0

    def act(self, obs):
        angle = 2.0 * math.pi * self.t / PERIOD
        self.t += 1
        return [0.8 * math.sin(angle + phase) for phase in PHASES]
