"""The gym domain: policy-as-code evolution on Gymnasium environments (the EvoPolicyGym protocol).

A version is a ``policy.py`` (class ``Policy`` with ``reset()`` and ``act(obs)``). Its train
phase (``python -P -m evotree.domains.gym.train``) rolls it out on the candidate-visible train pool of
``gym.toml`` and records one rollout row per episode, each charged to the version's episode
budget (128). The judge (``python -P -m evotree.domains.gym.judge``, the champion's tree with the
judge store ``refs/evotree/judge`` overlaid) rolls it out on the hidden validation (and, when
asked, held-out) pools of ``judge/gym.toml`` and records normalized scores against
``judge/references.json``. ``evotree init`` moves both hidden files into the judge store: they are
in no checkout. See ``docs/domains/gym.md``.

Importing this package is cheap: gymnasium and numpy load only when something runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evotree.core.errors import EvotreeError
from evotree.domains import write_if_absent

# The policy's own process imports this package first (``python -m
# evotree.domains.gym.worker``): the judge's settings, templates, references and experts are
# imported where they are used, not here, so that it does not load (and, without bytecode,
# compile) modules it never runs (docs/benchmarks/gym-judge.md, "Policy process start-up").

__all__ = [
    "materialize",
    "refuse_ignored_judge",
    "POLICY_FILE",
    "TRAIN_FILE",
    "JUDGE_FILE",
    "REFERENCES_FILE",
]

POLICY_FILE = "policy.py"
TRAIN_FILE = "gym.toml"
JUDGE_FILE = "judge/gym.toml"
REFERENCES_FILE = "judge/references.json"


def materialize(
    root: Path,
    *,
    envs: Sequence[str] | None = None,
    train_episodes: int = 8,
    validation_episodes: int = 16,
    heldout_episodes: int = 16,
    episode_timeout: float = 30.0,
) -> list[str]:
    """Write the gym workspace files into ``root`` (never overwriting); return the paths written.

    ``policy.py`` (the v0 baseline) and ``gym.toml`` (train feedback: ``envs`` ×
    ``train_episodes`` per run) are the candidate's; ``judge/gym.toml`` (validation and
    held-out seed pools, drawn at random) and ``judge/references.json`` (random and expert mean
    returns on the validation pool, computed here by rolling both policies out) are hidden. An
    existing ``judge/gym.toml`` is kept and its pools are used for missing references.
    """

    from evotree.domains.gym.catalog import DEFAULT_ENVS, GymMissing, require_gymnasium
    from evotree.domains.gym.catalog import unavailable_reason
    from evotree.domains.gym.settings import SettingsError
    from evotree.domains.gym.templates import POLICY_PY, draw_hidden_pools
    from evotree.domains.gym.templates import render_gym_toml, render_judge_toml

    root = Path(root)
    envs = list(envs or DEFAULT_ENVS)
    refuse_ignored_judge(root)
    try:
        require_gymnasium()
    except GymMissing as exc:
        raise EvotreeError(str(exc), fix='pip install "evotree[gym]"') from None
    missing = [reason for env_id in envs if (reason := unavailable_reason(env_id))]
    if missing:
        raise EvotreeError(
            "; ".join(missing), fix="install the packages named, or choose other environments"
        )
    written: list[str] = []

    def write(rel: str, text: str) -> None:
        write_if_absent(root, rel, text, written)

    write(POLICY_FILE, POLICY_PY)
    write(
        TRAIN_FILE, render_gym_toml(envs, episodes_per_env=train_episodes, timeout=episode_timeout)
    )
    judge_path = root / JUDGE_FILE
    if not judge_path.exists():
        pools = draw_hidden_pools(
            envs, {"validation": validation_episodes, "heldout": heldout_episodes}
        )
        write(JUDGE_FILE, render_judge_toml(envs, pools, timeout=episode_timeout))
    if not (root / REFERENCES_FILE).exists():
        try:
            write(REFERENCES_FILE, references_text(root))
        except (SettingsError, RuntimeError) as exc:
            for rel in written:
                (root / rel).unlink(missing_ok=True)
            if (root / "judge").is_dir() and not any((root / "judge").iterdir()):
                (root / "judge").rmdir()
            raise EvotreeError(
                f"cannot compute the gym references: {exc}",
                fix="check judge/gym.toml, or install the environments' packages",
            ) from None
    return written


def refuse_ignored_judge(root: Path) -> None:
    """Refuse (EvotreeError, nothing written) when git ignores the judge's files in ``root``.

    ``evotree init`` stores the hidden files under ``judge/`` in the judge store, except those git
    ignores: a gym workspace made that way has no judge configuration and every judge phase fails.
    """
    import subprocess

    try:
        proc = subprocess.run(
            ["git", "check-ignore", "-q", "--no-index", "--", JUDGE_FILE],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return
    if proc.returncode == 0:
        raise EvotreeError(
            f"git ignores {JUDGE_FILE} here (a .gitignore rule), so evotree init cannot store the "
            "gym judge's hidden files in the judge store and every judge phase would fail",
            fix=f"drop the rule that ignores judge/ (git check-ignore -v {JUDGE_FILE}), then "
            "run evotree init again",
        )


def references_text(root: Path) -> str:
    """``judge/references.json`` for the judged environments of ``root/judge/gym.toml``."""
    from evotree.domains.gym.scoring import compute_references
    from evotree.domains.gym.settings import load_judge_settings

    settings = load_judge_settings(Path(root) / JUDGE_FILE)
    pools = {env_id: settings.seeds("validation", env_id) for env_id in settings.envs}
    empty = [env_id for env_id, seeds in pools.items() if not seeds]
    if empty:
        raise RuntimeError(f"the validation pool has no seeds for {', '.join(empty)}")
    return compute_references(pools).to_json()
