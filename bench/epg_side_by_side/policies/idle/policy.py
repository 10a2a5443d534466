"""highway-env's discrete meta-actions: always IDLE (action 1: keep lane and speed)."""


class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        pass

    def reset(self, episode_index):
        pass

    def act(self, obs):
        return 1
