"""The environments the gym domain knows: which package each needs, and whether it is here.

Classic control (CartPole, Acrobot, MountainCar, Pendulum) needs only ``gymnasium`` and is the
default set. The others are used when their package imports and are otherwise skipped with a
message saying what to install:

* ``LunarLander-v3`` — Box2D (``pip install "gymnasium[box2d]"``; a prebuilt ``box2d`` wheel
  exists for CPython 3.11 on x86-64 Linux, elsewhere it builds from source with swig);
* ``MiniGrid-DoorKey-5x5-v0`` — ``pip install minigrid``;
* ``Reacher-v5`` — MuJoCo (``pip install "gymnasium[mujoco]"``).

Any other registered Gymnasium id can be used for training feedback; the judge needs reference
returns for an environment, so it scores only ids that have an expert (``experts.EXPERTS``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = ["EnvInfo", "CATALOG", "DEFAULT_ENVS", "OPTIONAL_ENVS", "unavailable_reason", "make_env",
           "GymMissing", "require_gymnasium"]


@dataclass(frozen=True)
class EnvInfo:
    env_id: str
    category: str
    #: modules that must import for the environment to exist (minigrid registers its ids on import)
    modules: tuple[str, ...]
    install: str


CATALOG: dict[str, EnvInfo] = {
    info.env_id: info
    for info in (
        EnvInfo("CartPole-v1", "classic", ("gymnasium",), 'pip install "evotree[gym]"'),
        EnvInfo("Acrobot-v1", "classic", ("gymnasium",), 'pip install "evotree[gym]"'),
        EnvInfo("MountainCar-v0", "classic", ("gymnasium",), 'pip install "evotree[gym]"'),
        EnvInfo("Pendulum-v1", "classic", ("gymnasium",), 'pip install "evotree[gym]"'),
        EnvInfo("LunarLander-v3", "box2d", ("gymnasium", "Box2D"), 'pip install "gymnasium[box2d]"'),
        EnvInfo("MiniGrid-DoorKey-5x5-v0", "minigrid", ("gymnasium", "minigrid"), "pip install minigrid"),
        EnvInfo("Reacher-v5", "mujoco", ("gymnasium", "mujoco"), 'pip install "gymnasium[mujoco]"'),
    )
}
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


_REASONS: dict[str, str | None] = {}


def unavailable_reason(env_id: str) -> str | None:
    """None when ``env_id`` can be made here; otherwise why not and what to install."""
    if env_id in _REASONS:
        return _REASONS[env_id]
    info = CATALOG.get(env_id)
    reason = None
    for module in info.modules if info else ("gymnasium",):
        try:
            importlib.import_module(module)
        except Exception as exc:  # noqa: BLE001 - a broken install is as unusable as a missing one
            hint = info.install if info else 'pip install "evotree[gym]"'
            reason = (f"{env_id} is skipped: it needs the `{module}` package, which does not import "
                      f"here ({type(exc).__name__}: {exc}); install it with: {hint}")
            break
    if reason is None and info is None:
        gym = require_gymnasium()
        if env_id not in gym.registry:
            reason = f"{env_id} is not a registered Gymnasium environment id"
    _REASONS[env_id] = reason
    return reason


def make_env(env_id: str) -> Any:
    """``gymnasium.make(env_id)`` after importing the modules that register it."""
    gym = require_gymnasium()
    reason = unavailable_reason(env_id)
    if reason is not None:
        raise RuntimeError(reason)
    return gym.make(env_id)
