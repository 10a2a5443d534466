"""Uniform random actions from Python's global ``random`` generator, never seeded by the policy.

Shows a difference between the judges that is not about the environments: evotree's judge seeds
``random`` and ``numpy.random`` with the episode's seed before each episode (so this policy is
reproducible there); EvoPolicyGym's judge does not (Python seeds ``random`` from the OS at start-up).
"""
import random


def _flat(value, size):
    if isinstance(value, dict):  # a {shape, min, max} summary of a long bound
        return [float(value["min"])] * size
    if isinstance(value, list):
        return [float(v) for v in value]
    return [float(value)] * size


class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        self.space = action_space

    def reset(self, episode_index):
        pass

    def act(self, obs):
        space = self.space
        if space["type"] == "Discrete":
            return int(space.get("start", 0)) + random.randrange(int(space["n"]))
        size = 1
        for dim in space["shape"]:
            size *= int(dim)
        low, high = _flat(space["low"], size), _flat(space["high"], size)
        return [random.uniform(lo, hi) for lo, hi in zip(low, high)]
