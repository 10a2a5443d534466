"""Red team (session 22) of 7cff6f4 (issue 29's H4: a linked worktree's git directory —
``HEAD`` and ``commondir`` — recognised wherever it lies), kept after the lead withdrew
7cff6f4 the same session (reverted: the red team won with two small files a candidate writes).

What it found against 7cff6f4 (its full file: commit 9b07d82c, ``git show
9b07d82c:tests/test_redteam_s22_worktree_redteam.py``): **W4** ``HEAD`` (an unborn branch)
and ``commondir`` written at the task checkout's root made the checkout read as a linked git
directory: the search stopped there, ``t/.git`` was never found, and a clone at the fix beside
it was kept at the fix (box and judge; the workspace's root too); **W6** the same two files in
a plain ``worktrees`` folder hid H4's own layout again; W1-W3 on operator layouts (the task's
worktree git directory in the shared cache, in ``.git``-folder form inside its clone at the
fix, inside its store's folder). A fix must search below a folder it takes for a linked git
directory (git makes none holding a ``.git`` or a store). Withdrawn, W4 and W6 hold again (the
search descends into such a folder), H4 is a strict xfail again.

Kept here: **W5**, older than 7cff6f4 and not documented before: ``HEAD`` and empty
``objects/``, ``refs/`` folders at the task checkout's root make it read as a bare store
(``_is_bare``): the same masking, the clone at the fix kept (strict xfail); and W4's linked
form, which holds at the withdrawn state (a plain test).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evotree.harness import git_guard
from tests.test_git_guard_nested import _git, _has, _task
from tests.test_git_prune_checkouts import _judge
from tests.test_redteam_s17_box_nested_redteam import _blob, _stores

_WHERE = ["box", "judge"]


def _binds(tmp_path: Path, phase: Path, **kw: object) -> list[tuple[str, Path, Path]]:
    return git_guard.before_phase([phase], tmp_path / "raw.trace", **kw)  # type: ignore[arg-type]


def _hidden(binds: list[tuple[str, Path, Path]]) -> list[Path]:
    return [Path(d) for _, s, d in binds if Path(s).name.endswith(".hidden")]


def _sources(binds: list[tuple[str, Path, Path]]) -> dict[Path, Path]:
    return {
        Path(d): Path(s)
        for _, s, d in binds
        if Path(s).parent.name.endswith(".git-copies") and not Path(s).name.endswith(".hidden")
    }


def _box_leaks(tmp_path: Path, phase: Path, blob: str, **kw: object) -> list[Path]:
    """The stores the box reads holding ``blob``: a bound copy's, or one on disk in the phase
    that no bind masks (a folder the search stopped at but nothing bound over)."""
    binds = _binds(tmp_path, phase, **kw)
    dsts = [Path(d) for _, _, d in binds]
    out = [Path(d) for _, s, d in binds if any(_has(x, blob) for x in _stores(Path(s)))]
    for store in _stores(phase):
        if not any(d == store or d in store.parents for d in dsts) and _has(store, blob):
            out.append(store)
    return out


def _judge_leaks(tmp_path: Path, phase: Path, blob: str) -> list[Path]:
    dst, _ = _judge(tmp_path, phase)
    return [s for s in _stores(dst) if _has(s, blob)]


def _leaks(tmp_path: Path, phase: Path, blob: str, where: str) -> list[Path]:
    if where == "box":
        return _box_leaks(tmp_path, phase, blob)
    return _judge_leaks(tmp_path, phase, blob)


def _clone_at_the_fix(tmp_path: Path, src: Path, where: Path) -> None:
    _git(tmp_path, "clone", "-q", "--no-local", str(src), str(where))
    _git(where, "checkout", "-q", "wip")


_MASKS = ["linked", "bare-junk"]


def _mask(folder: Path, how: str) -> None:
    """A candidate's files making ``folder`` read as a git directory whose HEAD names nothing:
    ``linked`` — ``HEAD`` (an unborn branch) and ``commondir`` (``.git``: a folder there, so
    the branch reads unborn, no HEAD rule); ``bare-junk`` — ``HEAD`` and empty ``objects/``,
    ``refs/`` (older than 7cff6f4)."""
    (folder / "HEAD").write_text("ref: refs/heads/nothing\n")
    if how == "linked":
        (folder / "commondir").write_text(".git\n")
    else:
        (folder / "objects").mkdir()
        (folder / "refs").mkdir()


@pytest.mark.parametrize(
    "how",
    [
        "linked",
        pytest.param(
            "bare-junk",
            marks=pytest.mark.xfail(
                strict=True,
                reason="W5: HEAD + empty objects/, refs/ at the task checkout's root make it a "
                "bare store to the search: t/.git is never found, t is masked, and the clone at "
                "the fix beside it relates to nothing: kept at the fix",
            ),
        ),
    ],
)
@pytest.mark.parametrize("where", _WHERE)
def test_w4_w5_the_task_checkout_masked_beside_a_clone_at_the_fix(
    tmp_path: Path, where: str, how: str
) -> None:
    phase = tmp_path / "phase"
    t, _, fix = _task(phase / "t")
    blob = _blob(t, fix)
    _clone_at_the_fix(tmp_path, t, phase / "cache")
    _mask(t, how)
    assert _leaks(tmp_path, phase, blob, where) == []


def test_w4_control_the_clone_at_the_fix_beside_the_task_unmasked(tmp_path: Path) -> None:
    phase = tmp_path / "phase"
    t, _, fix = _task(phase / "t")
    blob = _blob(t, fix)
    _clone_at_the_fix(tmp_path, t, phase / "cache")
    assert _box_leaks(tmp_path, phase, blob) == []
    assert _judge_leaks(tmp_path, phase, blob) == []
