"""EvoPolicyGym's train pool and task descriptions: a run plays instances of a
fixed pool of 64 (ids, never seeds; no first_seed in this mode), and every Core-16 environment
has its task.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from evotree.domains.gym.catalog import CORE16
from evotree.domains.gym.epg import TRAIN_POOL_SIZE, instance_seeds, train_pool
from evotree.domains.gym.epg_tasks import TASKS, render
from evotree.domains.gym.settings import HIDDEN_SEED_MIN, SettingsError, load_train_settings


def _settings(tmp_path: Path, body: str, protocol: str = "evopolicygym") -> object:
    path = tmp_path / "gym.toml"
    path.write_text(f'[train]\nprotocol = "{protocol}"\nenvs = ["Acrobot-v1"]\n{body}')
    return load_train_settings(path)


def test_the_pool_is_fixed_distinct_and_below_the_hidden_range() -> None:
    pool = train_pool()
    assert len(pool) == TRAIN_POOL_SIZE == 64 == len(set(pool))
    assert all(0 <= s < HIDDEN_SEED_MIN for s in pool) and pool == train_pool()
    assert pool[:8] != list(range(8))  # not first_seed + i
    assert instance_seeds([5, 5, 63]) == [pool[5], pool[5], pool[63]]
    with pytest.raises(ValueError):
        instance_seeds([64])


def test_runs_play_named_instances_or_blocks_of_the_pool(tmp_path: Path) -> None:
    pool = train_pool()
    named = _settings(tmp_path, "instances = [0, 5, 17, 5]\n")
    assert named.episodes_per_env == 4 and named.seeds(0) == named.seeds(7) == [
        pool[i] for i in (0, 5, 17, 5)
    ]
    blocks = _settings(tmp_path, "episodes_per_env = 8\n")
    assert blocks.seeds(0) == pool[:8] and blocks.seeds(1) == pool[8:16]
    assert blocks.seeds(9) == pool[8:16]  # 72..79 wraps to 8..15: never outside the pool
    assert set(blocks.seeds(3)) <= set(pool)


@pytest.mark.parametrize(
    "body,match",
    [
        ("first_seed = 0\n", "instances of its fixed train pool"),
        ("first_seed = 123\nepisodes_per_env = 2\n", "not seeds"),
        ("instances = [64]\n", r"ids in \[0, 64\)"),
        ("instances = [-1]\n", r"ids in \[0, 64\)"),
        ("instances = []\n", "non-empty"),
        ("instances = [true]\n", r"ids in \[0, 64\)"),
        ("instances = [1, 2]\nepisodes_per_env = 3\n", "drop episodes_per_env"),
    ],
)
def test_seeds_and_bad_instances_are_refused(tmp_path: Path, body: str, match: str) -> None:
    with pytest.raises(SettingsError, match=match):
        _settings(tmp_path, body)


def test_instances_belong_to_the_evopolicygym_mode_only(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="only in the EvoPolicyGym mode"):
        _settings(tmp_path, "instances = [1]\n", protocol="evotree")
    plain = _settings(tmp_path, "first_seed = 100\nepisodes_per_env = 2\n", protocol="evotree")
    assert plain.seeds(0) == [100, 101]  # evotree's own mode keeps its rule


def test_every_core16_environment_has_a_task_description() -> None:
    assert set(CORE16) <= set(TASKS)
    for env_id in CORE16:
        text = render(env_id, max_episode_steps=500)
        assert text.startswith(f"# {TASKS[env_id].title}\n") and f"`{env_id}`" in text
        for part in (
            "## Objective",
            "## Observation",
            "## Action",
            "## Reward",
            "instances",
            "hidden",
        ):
            assert part in text, (env_id, part)
        assert "seed" not in text.lower().replace("never its seed", "")  # no seed is named
    assert "Maximize the total" in render("CartPole-v1")


def test_init_writes_task_md_and_a_gym_toml_without_first_seed(tmp_path: Path) -> None:
    pytest.importorskip("gymnasium")
    from evotree.domains.gym.epg_init import materialize_evopolicygym

    root = tmp_path / "w"
    root.mkdir()
    written = materialize_evopolicygym(
        root, "Acrobot-v1", validation_episodes=4, heldout_episodes=4, reference_episodes=2
    )
    assert "task.md" in written
    task = (root / "task.md").read_text()
    assert task.startswith("# Acrobot") and "Step limit per episode: 500." in task
    settings = load_train_settings(root / "gym.toml")
    assert settings.protocol == "evopolicygym" and settings.instances is None
    assert settings.seeds(0) == train_pool()[:8]
    assert "first_seed" not in (root / "gym.toml").read_text().replace("# ", "")
