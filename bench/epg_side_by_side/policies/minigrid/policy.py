"""MiniGrid (any): head for the goal when it is in view, else wander forward, turning at walls.

The observation is MiniGrid's egocentric 7x7 view: ``image[x][y] = [object, colour, state]``,
the agent at x=3, y=6 facing up (decreasing y). Objects: 2 wall, 8 goal. Actions: 0 left,
1 right, 2 forward. Seeded by the episode index.
"""
import random

WALL, GOAL = 2, 8
LEFT, RIGHT, FORWARD = 0, 1, 2


class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        self.rng = random.Random(0)

    def reset(self, episode_index):
        self.rng = random.Random(7 + int(episode_index))

    def act(self, obs):
        image = obs["image"]
        goals = [(x, y) for x in range(7) for y in range(7) if image[x][y][0] == GOAL]
        if goals:
            x, y = min(goals, key=lambda g: abs(g[0] - 3) + abs(g[1] - 6))
            if x == 3 and y < 6:
                return FORWARD if image[3][5][0] != WALL else self.rng.choice((LEFT, RIGHT))
            if y == 6:  # beside the agent: turn towards it
                return LEFT if x < 3 else RIGHT
            if image[3][5][0] != WALL and self.rng.random() < 0.5:
                return FORWARD
            return LEFT if x < 3 else RIGHT
        if image[3][5][0] == WALL:
            return self.rng.choice((LEFT, RIGHT))
        return FORWARD if self.rng.random() < 0.8 else self.rng.choice((LEFT, RIGHT))
