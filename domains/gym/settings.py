"""``gym.toml`` (the candidate's train feedback) and ``judge/gym.toml`` (the hidden pools).

``gym.toml`` belongs to the candidate: a version may change which environments it gets
feedback on and how many episodes it buys (each one is charged). At run seed ``s``
(``EVOTREE_SEED``) its episodes have the seeds ``first_seed + s * episodes_per_env + i``
(``i = 0 .. episodes_per_env - 1``, wrapped modulo :data:`HIDDEN_SEED_MIN`): run seed 0 plays
``first_seed, first_seed + 1, …``, and each further run seed the next block, so different run
seeds play different episodes and two versions with the same ``first_seed`` play the same ones
at the same run seed. Train seeds always stay below :data:`HIDDEN_SEED_MIN`.

``judge/gym.toml`` belongs to the champion and is never exported into a candidate's run
directory: the environments that are judged, and for each split (``validation``, ``heldout``)
and environment a fixed list of seeds drawn at random when the workspace was created, all
``>= HIDDEN_SEED_MIN`` (so disjoint from every train seed) and disjoint from each other. Task
``ENV#i`` of a split is always the episode with the split's i-th seed of ENV, so two versions
are compared on exactly the same episodes.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from evotree.domains.gym.epg import TRAIN_POOL_SIZE

__all__ = [
    "PROTOCOLS",
    "HIDDEN_SEED_MIN",
    "HIDDEN_SEED_MAX",
    "SPLITS",
    "SettingsError",
    "TrainSettings",
    "JudgeSettings",
    "References",
    "load_train_settings",
    "load_judge_settings",
    "load_references",
]

#: Seeds from here up are reserved for the judge's hidden pools; train seeds stay below.
HIDDEN_SEED_MIN = 1_000_000
HIDDEN_SEED_MAX = 2**31 - 1
SPLITS = ("validation", "heldout")
#: ``protocol`` of gym.toml / judge/gym.toml: evotree's own contract and scoring, or EvoPolicyGym's
#: (:mod:`evotree.domains.gym.epg`).
PROTOCOLS = ("evotree", "evopolicygym")


def _protocol(table: dict[str, Any], where: str) -> str:
    value = _take(table, "protocol", str, "evotree", where)
    if value not in PROTOCOLS:
        raise SettingsError(
            f"{where}.protocol: expected one of {', '.join(PROTOCOLS)}, actually: {value!r}"
        )
    return value


class SettingsError(ValueError):
    """A gym.toml or judge file that cannot be used (the message names the file and key)."""


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(f"{path.name} is missing") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path.name} is not valid TOML: {exc}") from None


def _take(
    table: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any, where: str
) -> Any:
    value = table.pop(key, default)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise SettingsError(f"{where}.{key}: expected {_kind_name(kind)}, actually: {value!r}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(
        {
            "int": "an integer",
            "float": "a number",
            "str": "a string",
            "list": "a list",
            "bool": "true or false",
        }.get(k.__name__, k.__name__)
        for k in kinds
    )


def _env_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise SettingsError(
            f"{where}: expected a non-empty list of environment ids, actually: {value!r}"
        )
    if len(set(value)) != len(value):
        raise SettingsError(f"{where}: an environment is listed twice: {value!r}")
    return list(value)


def _unknown(table: dict[str, Any], where: str) -> None:
    if table:
        raise SettingsError(f"{where}: unknown key(s) {', '.join(sorted(table))}")


def _positive(value: float, where: str) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise SettingsError(f"{where}: expected a positive number, actually: {value!r}")
    return value


@dataclass
class TrainSettings:
    envs: list[str]
    episodes_per_env: int = 8
    first_seed: int = 0
    episode_timeout_seconds: float = 30.0
    workers: int = 1
    protocol: str = "evotree"
    #: episodes each policy process plays side by side (evotree's contract; runner.Worker.play_lanes)
    lanes: int = 64
    #: EvoPolicyGym mode: the train instances (ids into its fixed pool of 64) this submit plays
    instances: list[int] | None = None

    def instance_ids(self, run_seed: int = 0) -> list[int]:
        """EvoPolicyGym mode: the instances a run plays — ``instances`` when given, else the
        ``run_seed``-th block of ``episodes_per_env`` ids, wrapped modulo the pool's 64."""

        if self.instances is not None:
            return list(self.instances)
        start = run_seed * self.episodes_per_env
        return [(start + i) % TRAIN_POOL_SIZE for i in range(self.episodes_per_env)]

    def seeds(self, run_seed: int = 0) -> list[int]:
        """The train episodes' seeds at ``run_seed`` (the run's ``EVOTREE_SEED``): the
        ``run_seed``-th block of ``episodes_per_env`` seeds from ``first_seed`` on, wrapped
        modulo :data:`HIDDEN_SEED_MIN` so they never reach the judge's range. EvoPolicyGym mode:
        the seeds of :meth:`instance_ids` in its fixed train pool (:func:`epg.train_pool`)."""
        if run_seed < 0:
            raise ValueError(f"run_seed: expected 0 or more, actually: {run_seed}")
        if self.protocol == "evopolicygym":
            from evotree.domains.gym.epg import instance_seeds

            return instance_seeds(self.instance_ids(run_seed))
        start = self.first_seed + run_seed * self.episodes_per_env
        return [(start + i) % HIDDEN_SEED_MIN for i in range(self.episodes_per_env)]

    @property
    def episodes(self) -> int:
        return self.episodes_per_env * len(self.envs)


def load_train_settings(path: Path) -> TrainSettings:
    data = _read_toml(path)
    train = data.pop("train", None)
    if not isinstance(train, dict):
        raise SettingsError(f"{path.name}: the [train] table is missing")
    _unknown(data, path.name)
    where = f"{path.name} [train]"
    envs = _env_list(train.pop("envs", None), f"{where}.envs")
    has_first_seed = "first_seed" in train
    has_episodes = "episodes_per_env" in train
    instances = train.pop("instances", None)
    settings = TrainSettings(
        envs=envs,
        episodes_per_env=_take(train, "episodes_per_env", int, 8, where),
        first_seed=_take(train, "first_seed", int, 0, where),
        episode_timeout_seconds=float(
            _take(train, "episode_timeout_seconds", (int, float), 30.0, where)
        ),
        workers=_take(train, "workers", int, 1, where),
        protocol=_protocol(train, where),
        lanes=_take(train, "lanes", int, 64, where),
    )
    _unknown(train, where)
    _instances(
        settings, instances, has_first_seed=has_first_seed, has_episodes=has_episodes, where=where
    )
    if settings.episodes_per_env < 0:
        raise SettingsError(
            f"{where}.episodes_per_env: expected 0 or more, actually: {settings.episodes_per_env}"
        )
    if settings.first_seed < 0 or settings.first_seed + settings.episodes_per_env > HIDDEN_SEED_MIN:
        raise SettingsError(
            f"{where}: train seeds must lie in [0, {HIDDEN_SEED_MIN}) (larger seeds are reserved for the "
            f"judge), but first_seed = {settings.first_seed} with {settings.episodes_per_env} episodes per env"
        )
    _positive(settings.episode_timeout_seconds, f"{where}.episode_timeout_seconds")
    if not 1 <= settings.workers <= 64:
        raise SettingsError(f"{where}.workers: expected 1 to 64, actually: {settings.workers}")
    _lanes(settings.lanes, where)
    return settings


def _lanes(value: int, where: str) -> None:
    if not 1 <= value <= 256:
        raise SettingsError(f"{where}.lanes: expected 1 to 256, actually: {value}")


def _instances(
    settings: TrainSettings, instances: Any, *, has_first_seed: bool, has_episodes: bool, where: str
) -> None:
    """EvoPolicyGym mode's train instances: ids into its fixed pool, never a ``first_seed``."""

    if settings.protocol != "evopolicygym":
        if instances is not None:
            raise SettingsError(
                f'{where}.instances: only in the EvoPolicyGym mode (protocol = "evopolicygym"); '
                "here the episodes are first_seed + run_seed * episodes_per_env + i"
            )
        return
    if has_first_seed:
        raise SettingsError(
            f"{where}.first_seed: the EvoPolicyGym mode plays instances of its fixed train pool of "
            f"{TRAIN_POOL_SIZE}, not seeds: remove first_seed and name the instances "
            f"(instances = [0, 5, 17], ids 0 to {TRAIN_POOL_SIZE - 1})"
        )
    if instances is None:
        return
    if (
        not isinstance(instances, list)
        or not instances
        or any(
            isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < TRAIN_POOL_SIZE
            for i in instances
        )
    ):
        raise SettingsError(
            f"{where}.instances: expected a non-empty list of ids in [0, {TRAIN_POOL_SIZE}), "
            f"actually: {instances!r}"
        )
    if has_episodes and settings.episodes_per_env != len(instances):
        raise SettingsError(
            f"{where}: episodes_per_env = {settings.episodes_per_env} but {len(instances)} "
            "instances are named: drop episodes_per_env (the instances say how many)"
        )
    settings.instances = list(instances)
    settings.episodes_per_env = len(instances)


@dataclass
class JudgeSettings:
    envs: list[str]
    pools: dict[str, dict[str, list[int]]]  # split -> env -> seeds
    episode_timeout_seconds: float = 30.0
    workers: int = 1
    max_timeouts_per_env: int = 3
    #: accepted and ignored: the environment runs in the judge's process, nothing is replayed
    replay_fraction: float = 0.25
    clip_max: float = 1.2
    protocol: str = "evotree"
    #: episodes each policy process plays side by side (evotree's contract; runner.Worker.play_lanes)
    lanes: int = 256

    def seeds(self, split: str, env_id: str) -> list[int]:
        return self.pools.get(split, {}).get(env_id, [])


def load_judge_settings(path: Path) -> JudgeSettings:
    data = _read_toml(path)
    judge = data.pop("judge", None)
    pools = data.pop("pools", None)
    if not isinstance(judge, dict):
        raise SettingsError(f"{path.name}: the [judge] table is missing")
    if not isinstance(pools, dict):
        raise SettingsError(f"{path.name}: the [pools.<split>] tables are missing")
    _unknown(data, path.name)
    where = f"{path.name} [judge]"
    settings = JudgeSettings(
        envs=_env_list(judge.pop("envs", None), f"{where}.envs"),
        pools={},
        episode_timeout_seconds=float(
            _take(judge, "episode_timeout_seconds", (int, float), 30.0, where)
        ),
        workers=_take(judge, "workers", int, 1, where),
        max_timeouts_per_env=_take(judge, "max_timeouts_per_env", int, 3, where),
        replay_fraction=float(_take(judge, "replay_fraction", (int, float), 0.25, where)),
        clip_max=float(_take(judge, "clip_max", (int, float), 1.2, where)),
        protocol=_protocol(judge, where),
        lanes=_take(judge, "lanes", int, 256, where),
    )
    _unknown(judge, where)
    _positive(settings.episode_timeout_seconds, f"{where}.episode_timeout_seconds")
    _positive(settings.clip_max, f"{where}.clip_max")
    if not 1 <= settings.workers <= 64:
        raise SettingsError(f"{where}.workers: expected 1 to 64, actually: {settings.workers}")
    _lanes(settings.lanes, where)
    if not 0.0 <= settings.replay_fraction <= 1.0:
        raise SettingsError(
            f"{where}.replay_fraction: expected a number in [0, 1], actually: "
            f"{settings.replay_fraction}"
        )
    seen: dict[tuple[str, int], str] = {}
    for split, table in pools.items():
        if split not in SPLITS:
            raise SettingsError(
                f"{path.name} [pools.{split}]: unknown split; expected one of {', '.join(SPLITS)}"
            )
        if not isinstance(table, dict):
            raise SettingsError(
                f"{path.name} [pools.{split}]: expected a table of env id = [seeds]"
            )
        settings.pools[split] = {}
        for env_id, seeds in table.items():
            key = f"{path.name} [pools.{split}].{env_id}"
            if not isinstance(seeds, list) or not all(
                isinstance(s, int) and not isinstance(s, bool) for s in seeds
            ):
                raise SettingsError(f"{key}: expected a list of integer seeds")
            for seed in seeds:
                if not HIDDEN_SEED_MIN <= seed <= HIDDEN_SEED_MAX:
                    raise SettingsError(
                        f"{key}: seed {seed} is outside the hidden range "
                        f"[{HIDDEN_SEED_MIN}, {HIDDEN_SEED_MAX}]"
                    )
                other = seen.get((env_id, seed))
                if other is not None:
                    raise SettingsError(
                        f"{key}: seed {seed} is also in the {other} pool; pools must be disjoint"
                    )
                seen[(env_id, seed)] = split
            settings.pools[split][env_id] = list(seeds)
    return settings


@dataclass
class References:
    """Per environment: the random policy's and the expert's mean return on the validation pool."""

    envs: dict[str, dict[str, float]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    def pair(self, env_id: str) -> tuple[float, float]:
        entry = self.envs.get(env_id)
        if entry is None:
            raise SettingsError(
                f"references.json has no entry for {env_id}; recompute it with "
                "`python -m evotree.domains.gym references` in the champion's checkout"
            )
        return float(entry["random"]), float(entry["expert"])

    def to_json(self) -> str:
        return json.dumps({"v": 1, **self.meta, "envs": self.envs}, indent=1, sort_keys=True) + "\n"


def load_references(path: Path) -> References:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SettingsError(
            f"{path} is missing: `python -m evotree.domains.gym references` writes it"
        ) from None
    except ValueError as exc:
        raise SettingsError(f"{path.name} is not valid JSON: {exc}") from None
    envs = data.pop("envs", None)
    if not isinstance(envs, dict):
        raise SettingsError(f'{path.name}: no "envs" object')
    for env_id, entry in envs.items():
        try:
            random_ret, expert_ret = float(entry["random"]), float(entry["expert"])
        except (KeyError, TypeError, ValueError):
            raise SettingsError(
                f'{path.name}: {env_id} needs numbers "random" and "expert"'
            ) from None
        if (
            not (math.isfinite(random_ret) and math.isfinite(expert_ret))
            or expert_ret <= random_ret
        ):
            raise SettingsError(
                f"{path.name}: {env_id}: the expert ({expert_ret}) must score above the "
                f"random policy ({random_ret})"
            )
    return References(envs=envs, meta=data)
