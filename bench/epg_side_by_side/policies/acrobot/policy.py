"""Acrobot-v1: pump energy, torque in the direction of the second (actuated) joint's angular velocity."""


class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        pass

    def reset(self, episode_index):
        pass

    def act(self, obs):
        velocity_2 = obs[5]
        if velocity_2 > 0:
            return 2
        if velocity_2 < 0:
            return 0
        return 1
