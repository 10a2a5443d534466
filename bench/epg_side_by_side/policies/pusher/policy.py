"""Pusher-v5: zero torque (keeps the arm still: no control cost, the object stays where it is)."""


class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        self.size = int(action_space["shape"][0])

    def reset(self, episode_index):
        pass

    def act(self, obs):
        return [0.0] * self.size
