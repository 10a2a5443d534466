"""All-zero actions for a Box action space (does nothing: no control cost)."""


class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        size = 1
        for dim in action_space["shape"]:
            size *= int(dim)
        self.action = [0.0] * size

    def reset(self, episode_index):
        pass

    def act(self, obs):
        return list(self.action)
