"""Reference policies of evotree's own for EvoPolicyGym's Core-16 environments, and its static anchors.

A judge normalises a return against two anchors: a random policy and an "expert". EvoPolicyGym
v0.1.0 publishes static anchors for three of its Core-16 environments (:data:`STATIC_REFERENCES`,
from ``src/evopolicygym/envs/gym/spec.py`` there); for the other thirteen it has none (its spec
says ``expert = random = 0``), so evotree measures both anchors itself: the uniform random policy
and the reference policy below, each rolled out on the validation pool when the workspace is
created (``judge/references.json`` records which anchor came from where).

The reference policies are simple controllers, not trained agents: they define a reproducible
upper anchor that beats the random policy clearly, and that is all. Those marked *privileged*
read the environment's internal state (the full MiniGrid grid, MuJoCo's kinematics) and so cannot
be submitted as a candidate; the others act from the observation alone.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["STATIC_REFERENCES", "STATIC_SOURCE", "OBS_ONLY", "PRIVILEGED", "make_reference"]

STATIC_SOURCE = (
    "EvoPolicyGym v0.1.0 src/evopolicygym/envs/gym/spec.py (static random/expert anchors)"
)
#: EvoPolicyGym's published anchors: env id -> (random, expert). Only those it has in Core-16.
STATIC_REFERENCES: dict[str, tuple[float, float]] = {
    "Acrobot-v1": (-500.0, -80.0),
    "MountainCarContinuous-v0": (-100.0, 90.0),
    "CarRacing-v3": (-50.0, 900.0),
}


class _Stateless:
    def reset(self) -> None:
        pass


class ContinuousCarReference(_Stateless):
    """MountainCarContinuous: full throttle in the direction of motion (energy pumping)."""

    def act(self, obs: Any) -> np.ndarray:
        position, velocity = float(obs[0]), float(obs[1])
        push = 1.0 if (velocity > 0 or (abs(velocity) < 1e-6 and position < -0.5)) else -1.0
        return np.array([push], dtype=np.float32)


class BipedalReference(_Stateless):
    """BipedalWalker: a PD controller that holds a wide, slightly bent stance (it does not walk)."""

    _TARGET = np.array([0.3, -0.6, -0.3, -0.6])  # hip1, knee1, hip2, knee2 (radians)

    def act(self, obs: Any) -> np.ndarray:
        o = np.asarray(obs, dtype=np.float64)
        angles = np.array([o[4], o[6], o[9], o[11]])
        speeds = np.array([o[5], o[7], o[10], o[12]])
        hull = o[0]
        torque = 2.0 * (self._TARGET - angles) - 0.3 * speeds
        torque[[0, 2]] += 1.5 * hull  # lean the hips against the hull's tilt
        return np.clip(torque, -1.0, 1.0).astype(np.float32)


class CarRacingReference(_Stateless):
    """CarRacing from pixels: steer towards the grey road's centre a few rows ahead, slow and steady."""

    def act(self, obs: Any) -> np.ndarray:
        frame = np.asarray(obs, dtype=np.int16)
        rows = frame[50:66, :, :]
        r, g, b = rows[..., 0], rows[..., 1], rows[..., 2]
        road = (np.abs(r - g) < 25) & (np.abs(g - b) < 25) & (r > 70) & (r < 140)
        cols = np.nonzero(road.any(axis=0))[0]
        if cols.size == 0:
            return np.array([0.0, 0.05, 0.0], dtype=np.float32)
        error = (cols.mean() - 47.5) / 48.0
        steer = float(np.clip(2.5 * error, -1.0, 1.0))
        gas = 0.12 if abs(steer) < 0.3 else 0.02
        return np.array([steer, gas, 0.0], dtype=np.float32)


class HalfCheetahReference(_Stateless):
    """HalfCheetah: an open-loop sine gait (period 9 steps, amplitude 0.6, the front leg a quarter
    period behind the back leg, each joint 1 rad behind the one above it): about +1,400 on seeds
    1-3, where zero torque gets about -0.4 (a coarse grid search over period, amplitude and phases)."""

    def __init__(self) -> None:
        self.t = 0

    def reset(self) -> None:
        self.t = 0

    def act(self, obs: Any) -> np.ndarray:
        phase = 2 * math.pi * self.t / 9.0
        self.t += 1
        back = [math.sin(phase - i) for i in range(3)]
        front = [math.sin(phase + math.pi / 2 - i) for i in range(3)]
        return np.clip(np.array(back + front) * 0.6, -1.0, 1.0).astype(np.float32)


class AntReference(_Stateless):
    """Ant: stand still (zero torque): it stays healthy and pays no control cost."""

    def act(self, obs: Any) -> np.ndarray:
        return np.zeros(8, dtype=np.float32)


class PusherReference:
    """Pusher (privileged: MuJoCo's Jacobian): bring the fingertip behind the object, then push it to the goal.

    Low gains (3 x the Jacobian-transpose pull, 0.2 damping): the control cost is part of the reward,
    and the former stiff gains (80) paid more in torque (-124.6 mean) than zero torque loses (-55.3)."""

    def __init__(self, env: Any) -> None:
        self.env = env.unwrapped

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> np.ndarray:
        import mujoco

        o = np.asarray(obs, dtype=np.float64)
        qvel, tip, obj, goal = o[7:14], o[14:17], o[17:20], o[20:23]
        direction = goal[:2] - obj[:2]
        dist = np.linalg.norm(direction)
        unit = direction / dist if dist > 1e-6 else np.zeros(2)
        behind = obj.copy()
        behind[:2] -= 0.09 * unit
        behind[2] = obj[2]
        to_behind = behind - tip
        if np.linalg.norm(to_behind[:2]) > 0.04:
            target = behind.copy()
            if np.dot(tip[:2] - obj[:2], unit) > -0.02 and np.linalg.norm(tip[:2] - obj[:2]) < 0.12:
                target[:2] = (
                    obj[:2] - 0.09 * unit + 0.08 * np.array([-unit[1], unit[0]])
                )  # go round it
        else:
            target = obj.copy()
            target[:2] += 0.1 * unit
        model, data = self.env.model, self.env.data
        body = model.body("tips_arm").id
        jacp = np.zeros((3, model.nv))
        mujoco.mj_jacBody(model, data, jacp, None, body)
        jac = jacp[:, :7]
        torque = 3.0 * jac.T @ (target - tip) - 0.2 * qvel
        return np.clip(torque, -2.0, 2.0).astype(np.float32)


class MiniGridReference:
    """MiniGrid (privileged: the full grid): plan shortest paths; open doors, fetch keys (from
    boxes too), move blocking balls aside, then reach the goal or pick up the mission's object."""

    LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE = 0, 1, 2, 3, 4, 5
    DIRS = ((1, 0), (0, 1), (-1, 0), (0, -1))

    def __init__(self, env: Any) -> None:
        self.env = env.unwrapped
        self.picked_from: tuple[int, int] | None = None

    def reset(self) -> None:
        self.picked_from = None

    # ------------------------------------------------------------- the grid
    def _cells(self) -> list[tuple[tuple[int, int], Any]]:
        grid = self.env.grid
        return [
            ((i, j), grid.get(i, j))
            for j in range(grid.height)
            for i in range(grid.width)
            if grid.get(i, j) is not None
        ]

    def _target(self) -> tuple[tuple[int, int] | None, bool]:
        """(the cell to reach, whether it is an object to pick up rather than a cell to step on)."""
        mission = str(self.env.mission)
        if mission.startswith("pick up"):
            words = mission.split()
            kind, color = words[-1], words[-2]
            for pos, cell in self._cells():
                if cell.type == kind and cell.color == color:
                    return pos, True
            return None, True
        for pos, cell in self._cells():
            if cell.type == "goal":
                return pos, False
        return None, False

    def _free(self, pos: tuple[int, int], relaxed: bool) -> int | None:
        """The cost of entering ``pos`` (None: impossible)."""
        grid = self.env.grid
        if not (0 <= pos[0] < grid.width and 0 <= pos[1] < grid.height):
            return None
        cell = grid.get(*pos)
        if cell is None or cell.type in ("goal", "floor"):
            return 1
        if cell.type == "door":
            if cell.is_open or not cell.is_locked:
                return 1 if cell.is_open else 2
            carrying = self.env.carrying
            if carrying is not None and carrying.type == "key" and carrying.color == cell.color:
                return 2
            return 30 if relaxed else None
        if cell.type in ("ball", "box", "key") and relaxed:
            return 30
        return None

    def _path(
        self, target: tuple[int, int], adjacent: bool, relaxed: bool
    ) -> list[tuple[int, int]] | None:
        """Cells from the agent's next cell to ``target`` (or to a cell next to it when ``adjacent``)."""
        import heapq

        start = tuple(int(v) for v in self.env.agent_pos)
        goals = {(target[0] + dx, target[1] + dy) for dx, dy in self.DIRS} if adjacent else {target}
        best = {start: 0}
        prev: dict[tuple[int, int], tuple[int, int] | None] = {start: None}
        heap = [(0, start)]
        while heap:
            cost, cur = heapq.heappop(heap)
            if cost > best.get(cur, 1 << 30):
                continue
            if cur in goals:
                path = []
                while cur != start:
                    path.append(cur)
                    cur = prev[cur]  # type: ignore[assignment]
                return path[::-1]
            for dx, dy in self.DIRS:
                nxt = (cur[0] + dx, cur[1] + dy)
                step = 1 if (not adjacent and nxt == target) else self._free(nxt, relaxed)
                if step is None:
                    continue
                if cost + step < best.get(nxt, 1 << 30):
                    best[nxt] = cost + step
                    prev[nxt] = cur
                    heapq.heappush(heap, (cost + step, nxt))
        return None

    def _front(self) -> tuple[int, int]:
        ax, ay = (int(v) for v in self.env.agent_pos)
        dx, dy = self.DIRS[self.env.agent_dir]
        return ax + dx, ay + dy

    def _face(self, cell: tuple[int, int]) -> int | None:
        """The turn towards the neighbouring ``cell``; None when already facing it."""
        ax, ay = (int(v) for v in self.env.agent_pos)
        want = self.DIRS.index((cell[0] - ax, cell[1] - ay))
        if want == self.env.agent_dir:
            return None
        return self.RIGHT if (want - self.env.agent_dir) % 4 in (1, 2) else self.LEFT

    def _drop_somewhere(self, avoid: set[tuple[int, int]]) -> int:
        front = self._front()
        grid = self.env.grid
        if (
            front not in avoid
            and 0 <= front[0] < grid.width
            and 0 <= front[1] < grid.height
            and grid.get(*front) is None
        ):
            return self.DROP
        return self.RIGHT

    def _walk(self, path: list[tuple[int, int]]) -> int:
        step = path[0]
        turn = self._face(step)
        if turn is not None:
            return turn
        cell = self.env.grid.get(*step)
        if cell is not None and cell.type == "door" and not cell.is_open:
            return self.TOGGLE
        return self.FORWARD

    def _interact(self, pos: tuple[int, int], action: int, depth: int = 0) -> int:
        """Go next to ``pos``, face it and do ``action`` (pick up: with empty hands)."""
        ax, ay = (int(v) for v in self.env.agent_pos)
        if abs(pos[0] - ax) + abs(pos[1] - ay) == 1:
            if action == self.PICKUP and self.env.carrying is not None:
                return self._drop_somewhere({pos})
            turn = self._face(pos)
            if turn is None and action == self.PICKUP:
                self.picked_from = pos
            return action if turn is None else turn
        path = self._path(pos, True, relaxed=False)
        if path is not None:
            return self._walk(path)
        return self._unblock(pos, True, depth + 1)

    def _key_for(self, color: str) -> tuple[tuple[int, int], int] | None:
        for pos, cell in self._cells():
            if cell.type == "key" and cell.color == color:
                return pos, self.PICKUP
        for pos, cell in self._cells():
            inside = getattr(cell, "contains", None)
            if (
                cell.type == "box"
                and inside is not None
                and inside.type == "key"
                and inside.color == color
            ):
                return pos, self.TOGGLE
        return None

    def _unblock(self, target: tuple[int, int], adjacent: bool, depth: int = 0) -> int:
        """No free path to ``target``: deal with the first obstacle of the cheapest relaxed path."""
        if depth > 3:
            return self.RIGHT
        path = self._path(target, adjacent, relaxed=True)
        if not path:
            return self.RIGHT
        for pos in path:
            if self._free(pos, relaxed=False) is not None or (not adjacent and pos == target):
                continue
            cell = self.env.grid.get(*pos)
            if cell.type == "door":
                carrying = self.env.carrying
                if carrying is not None and carrying.type == "key" and carrying.color == cell.color:
                    return self._interact(pos, self.TOGGLE, depth)
                found = self._key_for(cell.color)
                if found is None:
                    return self.RIGHT
                return self._interact(found[0], found[1], depth)
            return self._interact(
                pos, self.PICKUP, depth
            )  # a ball, box or key in the way: carry it off
        return self.RIGHT

    def act(self, obs: Any) -> int:
        target, pick = self._target()
        if target is None:
            return self.RIGHT
        carrying = self.env.carrying
        if carrying is not None and not pick and carrying.type != "key":
            path = self._path(target, False, relaxed=False)
            return self._drop_somewhere(set(path[:1]) if path else set())
        if carrying is not None and carrying.type in ("ball", "box") and pick:
            path = self._path(target, True, relaxed=True) or []
            avoid = set(path) | ({self.picked_from} if self.picked_from else set())
            return self._drop_somewhere(avoid)
        if pick:
            return self._interact(target, self.PICKUP)
        path = self._path(target, False, relaxed=False)
        if path is not None:
            return self._walk(path)
        return self._unblock(target, False)


class ParkingReference:
    """parking: pure pursuit of a two-leg path in the goal's frame: along an aisle line 8 m in front of
    the spot to its centre line, then up the centre line through the goal, slowing down so as to stop
    before the wall behind the spot; a miss (past the goal, or off-centre at the spot) backs straight
    out along the centre line and tries again.

    Units (highway-env's ``KinematicsGoal`` scales): x, y in 1/100 m, vx, vy in 1/5 m/s. Success
    needs only position and heading (the reward ignores speed), so the car may drive through the goal.
    """

    AISLE = 8.0  # m in front of the goal: the corner of the path
    LOOKAHEAD = 3.5  # m, pure pursuit
    HALF_WHEELBASE = 2.5  # m (highway-env's Vehicle.LENGTH / 2)
    MAX_STEER = math.pi / 4  # highway-env's ContinuousAction steering range
    MAX_ACCEL = 5.0  # m/s², idem
    V_MAX, V_MIN, V_BACK = 7.0, 1.5, 3.0  # m/s
    DECEL = 3.0  # m/s²: speed limit sqrt(2 * DECEL * (3 m - along)) near the goal
    OVERSHOOT, BACK_TO = (
        2.0,
        -9.0,
    )  # m along the centre line: back out past the first, until the second

    def __init__(self) -> None:
        self.backing = False

    def reset(self) -> None:
        self.backing = False

    def act(self, obs: Any) -> np.ndarray:
        o = np.asarray(obs["observation"], dtype=np.float64)
        g = np.asarray(obs["desired_goal"], dtype=np.float64)
        x, y, gx, gy = o[0] * 100, o[1] * 100, g[0] * 100, g[1] * 100
        heading, goal_heading = math.atan2(o[5], o[4]), math.atan2(g[5], g[4])
        ux, uy = math.cos(goal_heading), math.sin(goal_heading)
        along = (x - gx) * ux + (y - gy) * uy  # the goal's frame: into the spot
        lateral = -(x - gx) * uy + (y - gy) * ux  # across it
        speed = o[2] * 5 * o[4] + o[3] * 5 * o[5]
        if self.backing and along < self.BACK_TO:
            self.backing = False
        elif not self.backing and (along > self.OVERSHOOT or (along > -1.0 and abs(lateral) > 1.5)):
            self.backing = True
        aisle, ahead = self.AISLE, self.LOOKAHEAD
        # the carrot, in the goal's frame: on the nearer leg of the path, LOOKAHEAD further on
        if self.backing:
            carrot = (along - ahead, 0.0)
        elif (abs(lateral) if along >= -aisle else math.hypot(along + aisle, lateral)) <= abs(
            along + aisle
        ):
            carrot = (max(along, -aisle) + ahead, 0.0)
        else:
            rest = abs(lateral) - ahead
            carrot = (-aisle, math.copysign(rest, lateral)) if rest > 0 else (-aisle - rest, 0.0)
        tx = gx + carrot[0] * ux - carrot[1] * uy
        ty = gy + carrot[0] * uy + carrot[1] * ux
        distance = max(math.hypot(tx - x, ty - y), 1e-3)
        bearing = _wrap(math.atan2(ty - y, tx - x) - heading)
        if self.backing:  # pure pursuit of the rear: the steering's effect is reversed
            bearing = _wrap(bearing + math.pi)
        if abs(bearing) < math.pi / 2:
            steer = (
                math.atan2(2 * self.HALF_WHEELBASE * math.sin(bearing), distance) / self.MAX_STEER
            )
        else:  # the carrot is behind: full lock towards it
            steer = math.copysign(1.0, bearing)
        if self.backing:
            steer, target = -steer, -self.V_BACK
        else:
            target = min(
                self.V_MAX, max(self.V_MIN, math.sqrt(max(0.0, 2 * self.DECEL * (3.0 - along))))
            )
        accel = (target - speed) / self.MAX_ACCEL  # 1 m/s² per m/s of speed error
        return np.clip(np.array([accel, steer]), -1.0, 1.0).astype(np.float32)


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi


class RoundaboutReference(_Stateless):
    """roundabout: keep the lane at cruising speed (IDLE); slow down (SLOWER) when a vehicle is within 15 m."""

    def act(self, obs: Any) -> int:
        rows = np.asarray(obs, dtype=np.float64)
        ego = rows[0]
        for row in rows[1:]:
            if row[0] > 0.5 and math.hypot((row[1] - ego[1]) * 100, (row[2] - ego[2]) * 100) < 15.0:
                return 4
        return 1


class FetchReference:
    """Fetch: scripted pushing (FetchPush) or grasping and carrying (FetchPickAndPlace)."""

    def __init__(self, pick: bool) -> None:
        self.pick = pick
        self.grasped = False

    def reset(self) -> None:
        self.grasped = False

    def act(self, obs: Any) -> np.ndarray:
        o = np.asarray(obs["observation"], dtype=np.float64)
        grip, obj = o[0:3], o[3:6]
        goal = np.asarray(obs["desired_goal"], dtype=np.float64)
        if self.pick:
            return self._pick(grip, obj, goal, o[9] + o[10])
        direction = goal[:2] - obj[:2]
        dist = np.linalg.norm(direction)
        unit = direction / dist if dist > 1e-6 else np.zeros(2)
        behind = obj[:2] - 0.05 * unit
        if np.linalg.norm(grip[:2] - behind) > 0.02:
            if grip[2] < obj[2] + 0.03 and np.linalg.norm(grip[:2] - obj[:2]) < 0.08:
                target = np.array([*grip[:2], obj[2] + 0.06])  # up first, clear of the block
            else:
                target = np.array([*behind, obj[2] + 0.06])
        elif grip[2] > obj[2] + 0.015:
            target = np.array([*behind, obj[2]])
        else:
            target = np.array([*(goal[:2] - 0.05 * unit), obj[2]])
        move = np.clip((target - grip) * 10.0, -1.0, 1.0)
        return np.array([*move, -1.0], dtype=np.float32)

    def _pick(
        self, grip: np.ndarray, obj: np.ndarray, goal: np.ndarray, width: float
    ) -> np.ndarray:
        above = obj + np.array([0.0, 0.0, 0.06])
        near_xy = np.linalg.norm(grip[:2] - obj[:2]) < 0.01
        if not self.grasped:
            if not near_xy:
                target, finger = above, 1.0
            elif abs(grip[2] - obj[2]) > 0.008:
                target, finger = obj, 1.0
            else:
                target, finger = obj, -1.0
                if width < 0.06:
                    self.grasped = True
        else:
            target, finger = goal, -1.0
            if np.linalg.norm(grip - obj) > 0.05:
                self.grasped = False
        move = np.clip((target - grip) * 10.0, -1.0, 1.0)
        return np.array([*move, finger], dtype=np.float32)


#: Reference policies that act from the observation alone (a candidate could submit them).
OBS_ONLY = {
    "MountainCarContinuous-v0": ContinuousCarReference,
    "BipedalWalker-v3": BipedalReference,
    "CarRacing-v3": CarRacingReference,
    "HalfCheetah-v5": HalfCheetahReference,
    "Ant-v5": AntReference,
    "parking-v0": ParkingReference,
    "roundabout-v0": RoundaboutReference,
    "FetchPush-v4": lambda: FetchReference(pick=False),
    "FetchPickAndPlace-v4": lambda: FetchReference(pick=True),
}
#: Reference policies that read the environment's internal state (built with the env).
PRIVILEGED = {
    "Pusher-v5": PusherReference,
    "MiniGrid-DoorKey-16x16-v0": MiniGridReference,
    "MiniGrid-KeyCorridorS4R3-v0": MiniGridReference,
    "MiniGrid-FourRooms-v0": MiniGridReference,
    "MiniGrid-ObstructedMaze-1Q-v1": MiniGridReference,
}


def make_reference(env_id: str, env: Any) -> Any:
    """The Core-16 reference policy of ``env_id`` (``KeyError`` if it has none here)."""
    if env_id in OBS_ONLY:
        return OBS_ONLY[env_id]()
    return PRIVILEGED[env_id](env)
