"""The environments the gym domain knows: which package each needs, and whether it is here.

Classic control (CartPole, Acrobot, MountainCar, Pendulum) needs only ``gymnasium`` and is the
default set. The others need packages of the ``gym`` extra (``pip install "evotree[gym]"``):

* Box2D (``LunarLander-v3``, ``BipedalWalker-v3``, ``CarRacing-v3``: ``gymnasium[box2d]``);
* MuJoCo (``Reacher-v5``, ``Pusher-v5``, ``HalfCheetah-v5``, ``Ant-v5``: ``gymnasium[mujoco]``);
* MiniGrid (``MiniGrid-*``: ``minigrid``, which registers its ids when imported);
* highway-env (``parking-v0``, ``roundabout-v0``, ``highway-*`` …: ``highway-env``, idem);
* Gymnasium-Robotics (``Fetch*``: ``gymnasium-robotics``; registered by
  ``gymnasium.register_envs(gymnasium_robotics)``; needs MuJoCo < 3.10, hence the extra's pin).

Registration does not depend on order: :func:`ensure_registered` imports the package that
registers an id (by the catalog or by the id's family prefix) before the id is looked up, so
``MiniGrid-FourRooms-v0`` is known whether or not another MiniGrid id was made first.

:data:`CORE16` is EvoPolicyGym v0.1.0's Core-16 suite (``docs/envs/core_suite.md`` there). Any
other registered Gymnasium id can be used for training feedback; the judge scores only ids that
have references (``experts.EXPERTS``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = [
    "EnvInfo",
    "CATALOG",
    "CORE16",
    "DEFAULT_ENVS",
    "OPTIONAL_ENVS",
    "unavailable_reason",
    "make_env",
    "GymMissing",
    "require_gymnasium",
    "ensure_registered",
    "modules_for",
]

_GYM = 'pip install "evotree[gym]"'
_ALL = 'every Core-16 package: pip install "evotree[gym]"'
_BOX2D = f'pip install "gymnasium[box2d]" ({_ALL})'
_MUJOCO = f'pip install "gymnasium[mujoco]" ({_ALL})'
_MINIGRID = f"pip install minigrid ({_ALL})"
_HIGHWAY = f"pip install highway-env ({_ALL})"
_ROBOTICS = f'pip install gymnasium-robotics "mujoco>=3.9,<3.10" ({_ALL})'


@dataclass(frozen=True)
class EnvInfo:
    env_id: str
    category: str
    #: modules that must import for the environment to exist (minigrid registers its ids on import)
    modules: tuple[str, ...]
    install: str
    #: EvoPolicyGym's name for it (``gym/acrobot``), when it is in its catalog
    evopolicygym: str = ""


def _family(env_id: str) -> tuple[str, tuple[str, ...], str]:
    """(category, modules, install hint) of an id by its family (prefix)."""
    if env_id.startswith("MiniGrid-") or env_id.startswith("BabyAI-"):
        return "minigrid", ("gymnasium", "minigrid"), _MINIGRID
    if env_id.split("-")[0] in _HIGHWAY_IDS:
        return "highway", ("gymnasium", "highway_env"), _HIGHWAY
    if env_id.startswith(
        (
            "Fetch",
            "HandManipulate",
            "HandReach",
            "AdroitHand",
            "PointMaze",
            "AntMaze",
            "FrankaKitchen",
        )
    ):
        return "robotics", ("gymnasium", "mujoco", "gymnasium_robotics"), _ROBOTICS
    return "", ("gymnasium",), _GYM


_HIGHWAY_IDS = {
    "parking",
    "roundabout",
    "highway",
    "highway-fast",
    "merge",
    "intersection",
    "racetrack",
    "two-way",
    "u-turn",
    "exit",
    "lane-keeping",
}

CATALOG: dict[str, EnvInfo] = {
    info.env_id: info
    for info in (
        EnvInfo("CartPole-v1", "classic", ("gymnasium",), _GYM, "gym/cartpole"),
        EnvInfo("Acrobot-v1", "classic", ("gymnasium",), _GYM, "gym/acrobot"),
        EnvInfo("MountainCar-v0", "classic", ("gymnasium",), _GYM, "gym/mountaincar"),
        EnvInfo("MountainCarContinuous-v0", "classic", ("gymnasium",), _GYM, "gym/continuouscar"),
        EnvInfo("Pendulum-v1", "classic", ("gymnasium",), _GYM, "gym/pendulum"),
        EnvInfo("LunarLander-v3", "box2d", ("gymnasium", "Box2D"), _BOX2D, "gym/lunar"),
        EnvInfo("BipedalWalker-v3", "box2d", ("gymnasium", "Box2D"), _BOX2D, "gym/bipedal"),
        EnvInfo("CarRacing-v3", "box2d", ("gymnasium", "Box2D", "pygame"), _BOX2D, "gym/racing"),
        EnvInfo("Reacher-v5", "mujoco", ("gymnasium", "mujoco"), _MUJOCO, "gym/reacher5"),
        EnvInfo("Pusher-v5", "mujoco", ("gymnasium", "mujoco"), _MUJOCO, "gym/pusher5"),
        EnvInfo("HalfCheetah-v5", "mujoco", ("gymnasium", "mujoco"), _MUJOCO, "gym/halfcheetah5"),
        EnvInfo("Ant-v5", "mujoco", ("gymnasium", "mujoco"), _MUJOCO, "gym/ant5"),
        EnvInfo("MiniGrid-DoorKey-5x5-v0", "minigrid", ("gymnasium", "minigrid"), _MINIGRID),
        *(
            EnvInfo(env_id, "minigrid", ("gymnasium", "minigrid"), _MINIGRID, f"gymnasium/{env_id}")
            for env_id in (
                "MiniGrid-DoorKey-16x16-v0",
                "MiniGrid-KeyCorridorS4R3-v0",
                "MiniGrid-FourRooms-v0",
                "MiniGrid-ObstructedMaze-1Q-v1",
            )
        ),
        *(
            EnvInfo(
                env_id, "highway", ("gymnasium", "highway_env"), _HIGHWAY, f"gymnasium/{env_id}"
            )
            for env_id in ("parking-v0", "roundabout-v0")
        ),
        *(
            EnvInfo(
                env_id,
                "robotics",
                ("gymnasium", "mujoco", "gymnasium_robotics"),
                _ROBOTICS,
                f"gymnasium/{env_id}",
            )
            for env_id in ("FetchPush-v4", "FetchPickAndPlace-v4")
        ),
    )
}
#: EvoPolicyGym v0.1.0's Core-16 suite, in its order (two environments per capability family).
CORE16 = (
    "Acrobot-v1",
    "MountainCarContinuous-v0",
    "BipedalWalker-v3",
    "CarRacing-v3",
    "HalfCheetah-v5",
    "Ant-v5",
    "Pusher-v5",
    "Reacher-v5",
    "MiniGrid-DoorKey-16x16-v0",
    "MiniGrid-KeyCorridorS4R3-v0",
    "MiniGrid-FourRooms-v0",
    "MiniGrid-ObstructedMaze-1Q-v1",
    "parking-v0",
    "roundabout-v0",
    "FetchPush-v4",
    "FetchPickAndPlace-v4",
)
#: What a new workspace trains and judges: fast on two cores, needs only gymnasium.
DEFAULT_ENVS = ("CartPole-v1", "Acrobot-v1", "MountainCar-v0", "Pendulum-v1")
OPTIONAL_ENVS = tuple(e for e in CATALOG if e not in DEFAULT_ENVS)


class GymMissing(RuntimeError):
    """gymnasium itself is not installed."""


def require_gymnasium() -> Any:
    try:
        import gymnasium
    except ImportError as exc:
        raise GymMissing(
            f"the gym domain needs gymnasium, which does not import here ({exc}); "
            'install it with: pip install "evotree[gym]"'
        ) from None
    return gymnasium


def modules_for(env_id: str) -> tuple[tuple[str, ...], str]:
    """(the modules ``env_id`` needs, the install hint), from the catalog or the id's family."""
    info = CATALOG.get(env_id)
    if info is not None:
        return info.modules, info.install
    _, modules, install = _family(env_id)
    return modules, install


_REGISTERED: set[str] = set()


def ensure_registered(env_id: str) -> None:
    """Import the modules that register ``env_id`` (idempotent); raises what the import raises."""
    modules, _ = modules_for(env_id)
    for module in modules:
        if module in _REGISTERED:
            continue
        imported = importlib.import_module(module)
        if module == "gymnasium_robotics":  # its ids are registered by register_envs, not on import
            import gymnasium

            gymnasium.register_envs(imported)
        _REGISTERED.add(module)


_REASONS: dict[str, str | None] = {}


def unavailable_reason(env_id: str) -> str | None:
    """None when ``env_id`` can be made here; otherwise why not and what to install."""
    if env_id in _REASONS:
        return _REASONS[env_id]
    modules, hint = modules_for(env_id)
    reason = None
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - a broken install is as unusable as a missing one
            reason = (
                f"{env_id} is skipped: it needs the `{module}` package, which does not import "
                f"here ({type(exc).__name__}: {exc}); install it with: {hint}"
            )
            break
    if reason is None:
        try:
            ensure_registered(env_id)
        except Exception as exc:  # noqa: BLE001
            reason = (
                f"{env_id} is skipped: registering its package failed ({type(exc).__name__}: {exc})"
            )
    if reason is None:
        gym = require_gymnasium()
        if env_id not in gym.registry:
            reason = f"{env_id} is not a registered Gymnasium environment id"
    _REASONS[env_id] = reason
    return reason


def make_env(env_id: str, **kwargs: Any) -> Any:
    """``gymnasium.make(env_id)`` after importing the modules that register it."""
    gym = require_gymnasium()
    reason = unavailable_reason(env_id)
    if reason is not None:
        raise RuntimeError(reason)
    ensure_registered(env_id)
    return gym.make(env_id, **kwargs)
