"""Reference policies: the random policy and a hand-written expert per environment.

The judge normalises a return ``R`` as ``(R - random) / (expert - random)``: these two policies
define the scale. Their *returns on the hidden pools* are secret (``judge/references.json``),
their code is not: it ships with evotree (and gymnasium ships LunarLander's heuristic itself),
so a candidate that copies an expert simply scores about 1.0. Beating the expert scores up to
1.2.

Every reference policy has the candidate interface (``reset()``, ``act(obs)``) and is built by
``make(env_id, env)``; only the MiniGrid expert looks at the environment itself (it plans on
the full grid, which a candidate does not see), so its reference is an upper anchor.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np
import evotree.domains.gym.core16 as core16

__all__ = ["RandomPolicy", "EXPERTS", "make_expert"]


class RandomPolicy:
    """Uniform random actions from the action space (seeded per episode by the rollout)."""

    def __init__(self, env_id: str, observation_space: Any, action_space: Any) -> None:
        self.action_space = action_space

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> Any:
        return self.action_space.sample()


class CartPoleExpert:
    """A linear state-feedback controller (pole angle and angular velocity dominate)."""

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> int:
        x, x_dot, theta, theta_dot = (float(v) for v in obs)
        return int(theta + 0.5 * theta_dot + 0.05 * x + 0.1 * x_dot > 0.0)


class AcrobotExpert:
    """Energy pumping: elbow torque in the direction the elbow already swings."""

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> int:
        dtheta1, dtheta2 = float(obs[4]), float(obs[5])
        return 2 if dtheta2 - 0.1 * dtheta1 > 0 else 0


class MountainCarExpert:
    """Push in the direction of motion (builds energy), starting towards the nearer hill."""

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> int:
        position, velocity = float(obs[0]), float(obs[1])
        if abs(velocity) < 1e-4:
            return 0 if position > -0.5 else 2
        return 2 if velocity > 0 else 0


class PendulumExpert:
    """Energy-based swing-up, then a PD controller around the upright position."""

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> np.ndarray:
        cos_t, sin_t, theta_dot = (float(v) for v in obs)
        theta = math.atan2(sin_t, cos_t)  # 0 is upright
        if cos_t > 0.85:
            torque = -(12.0 * theta + 2.5 * theta_dot)
        else:
            energy = 0.5 * theta_dot**2 + 15.0 * cos_t  # 15 at rest upright (g=10, l=1)
            torque = (
                2.0
                * math.copysign(1.0, theta_dot if abs(theta_dot) > 1e-3 else 1.0)
                * (energy < 15.0)
            )
        return np.array([min(2.0, max(-2.0, torque))], dtype=np.float32)


class LunarLanderExpert:
    """gymnasium's own heuristic lander (discrete actions)."""

    def __init__(self, env: Any) -> None:
        self.unwrapped = env.unwrapped

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> Any:
        from gymnasium.envs.box2d.lunar_lander import heuristic

        action = heuristic(self.unwrapped, obs)
        return action if self.unwrapped.continuous else int(action)


class ReacherExpert:
    """Jacobian-transpose control of the fingertip towards the target, with damping."""

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> np.ndarray:
        o = np.asarray(obs, dtype=np.float64)
        c1, c2, s1, s2 = o[0], o[1], o[2], o[3]
        qdot = o[6:8]
        error = -o[8:10]  # obs holds fingertip - target
        c12, s12 = c1 * c2 - s1 * s2, s1 * c2 + c1 * s2
        l1, l2 = 0.1, 0.11
        jac = np.array([[-l1 * s1 - l2 * s12, -l2 * s12], [l1 * c1 + l2 * c12, l2 * c12]])
        torque = 40.0 * jac.T @ error - 0.1 * qdot
        return np.clip(torque, -1.0, 1.0).astype(np.float32)


class MiniGridExpert:
    """Plans on the full grid (privileged): fetch the key, open the door, reach the goal."""

    _LEFT, _RIGHT, _FORWARD, _PICKUP, _DROP, _TOGGLE = 0, 1, 2, 3, 4, 5
    _DIRS = ((1, 0), (0, 1), (-1, 0), (0, -1))  # minigrid: 0 right, 1 down, 2 left, 3 up

    def __init__(self, env: Any) -> None:
        self.env = env.unwrapped

    def reset(self) -> None:
        pass

    def _find(self, kind: str) -> tuple[int, int] | None:
        grid = self.env.grid
        for j in range(grid.height):
            for i in range(grid.width):
                cell = grid.get(i, j)
                if cell is not None and cell.type == kind:
                    return (i, j)
        return None

    def _passable(self, pos: tuple[int, int], goal: tuple[int, int]) -> bool:
        if pos == goal:
            return True
        cell = self.env.grid.get(*pos)
        return cell is None or cell.can_overlap()

    def _path_first_step(self, target: tuple[int, int], adjacent: bool) -> tuple[int, int] | None:
        """The first cell of a shortest path to ``target`` (or to a cell facing it when ``adjacent``)."""
        start = tuple(self.env.agent_pos)
        goals = (
            {target}
            if not adjacent
            else {(target[0] + dx, target[1] + dy) for dx, dy in self._DIRS}
        )
        prev: dict[tuple[int, int], tuple[int, int] | None] = {start: None}
        queue = deque([start])
        while queue:
            cur = queue.popleft()
            if cur in goals:
                while prev[cur] is not None and prev[cur] != start:
                    cur = prev[cur]  # type: ignore[assignment]
                return cur
            for dx, dy in self._DIRS:
                nxt = (cur[0] + dx, cur[1] + dy)
                if nxt in prev or not (
                    0 <= nxt[0] < self.env.grid.width and 0 <= nxt[1] < self.env.grid.height
                ):
                    continue
                if self._passable(nxt, target if not adjacent else (-1, -1)):
                    prev[nxt] = cur
                    queue.append(nxt)
        return None

    def _turn_towards(self, cell: tuple[int, int]) -> int:
        ax, ay = self.env.agent_pos
        want = self._DIRS.index((cell[0] - ax, cell[1] - ay))
        if want == self.env.agent_dir:
            return -1
        return self._RIGHT if (want - self.env.agent_dir) % 4 in (1, 2) else self._LEFT

    def _go(self, target: tuple[int, int], adjacent: bool, then: int) -> int:
        ax, ay = self.env.agent_pos
        if adjacent and abs(target[0] - ax) + abs(target[1] - ay) == 1:
            turn = self._turn_towards(target)
            return then if turn < 0 else turn
        step = self._path_first_step(target, adjacent)
        if step is None:
            return self._RIGHT
        if step == (ax, ay):
            return then
        turn = self._turn_towards(step)
        return self._FORWARD if turn < 0 else turn

    def act(self, obs: Any) -> int:
        carrying = self.env.carrying
        door_pos = self._find("door")
        door = self.env.grid.get(*door_pos) if door_pos else None
        if door is not None and not door.is_open:
            if carrying is None or carrying.type != "key":
                key = self._find("key")
                if key is not None:
                    return self._go(key, True, self._PICKUP)
            return self._go(door_pos, True, self._TOGGLE)  # type: ignore[arg-type]
        goal = self._find("goal")
        return self._go(goal, False, self._FORWARD) if goal else self._FORWARD


_SIMPLE = {
    "CartPole-v1": CartPoleExpert,
    "Acrobot-v1": AcrobotExpert,
    "MountainCar-v0": MountainCarExpert,
    "Pendulum-v1": PendulumExpert,
    "Reacher-v5": ReacherExpert,
}
_WITH_ENV = {
    "LunarLander-v3": LunarLanderExpert,
    "MiniGrid-DoorKey-5x5-v0": MiniGridExpert,
}


def _core16() -> Any:

    return core16


#: Environment ids that have an expert (and so can be judged): the classic ones above and
#: EvoPolicyGym's Core-16 (:mod:`evotree.domains.gym.core16`).
EXPERTS = tuple(sorted({*_SIMPLE, *_WITH_ENV, *_core16().OBS_ONLY, *_core16().PRIVILEGED}))


def make_expert(env_id: str, env: Any) -> Any:
    """The expert policy of ``env_id`` (``KeyError`` naming the known ones if there is none)."""
    if env_id in _SIMPLE:
        return _SIMPLE[env_id]()
    if env_id in _WITH_ENV:
        return _WITH_ENV[env_id](env)
    core16 = _core16()
    if env_id in core16.OBS_ONLY or env_id in core16.PRIVILEGED:
        return core16.make_reference(env_id, env)
    raise KeyError(f"no expert policy for {env_id}; experts exist for: {', '.join(EXPERTS)}")
