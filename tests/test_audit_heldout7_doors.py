"""Doors to the future that no rule named before the seventh held-out set (now a development
set), each tested with a leak beside its look-alike, outputs taken from real git:

* a partial clone (``extensions.partialClone``, a promisor pack) opens as the task repository:
  its remote-tracking branch past the base is future history, the base's own history is not;
  a repository declaring an extension nobody knows is still refused.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import git, make_repo
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

HIDDEN = ("judge/",)


def _run(repo: Path, command: str) -> str:
    proc = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True)
    return proc.stdout + proc.stderr


def _audit(
    *commands: str, outputs: tuple[str | None, ...] = (), repo: dict[str, str] | None = None
) -> tuple[bool, list[str]]:
    steps = [Step(c, outputs[k] if k < len(outputs) else None) for k, c in enumerate(commands)]
    extra = {"repo": repo["repo"], "base": repo["base"]} if repo else {}
    result = audit_trajectories([Trajectory("t", "shell", steps)], hidden_paths=HIDDEN, **extra)
    verdict = result.verdicts[0]
    return verdict.flagged, [h.rule for h in verdict.hits if h.severity in ("high", "critical")]


def _flagged(*commands: str, **kw: object) -> bool:
    return _audit(*commands, **kw)[0]  # type: ignore[arg-type]


# ------------------------------------------------------------------------ partial clone
@pytest.fixture(scope="module")
def partial(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A real partial clone (``--filter=blob:limit=1m``) at the base; a later ``git fetch``
    brought upstream's fix into a promisor pack and ``origin/main`` onto it."""
    tmp = tmp_path_factory.mktemp("partial")
    src = make_repo(tmp / "upstream")
    git(src, "config", "uploadpack.allowFilter", "true")
    (src / "chunks.py").write_text("def chunked(xs, n):\n    return [xs[i:i+n] for i in []]\n")
    git(src, "add", "chunks.py")
    git(src, "commit", "-qm", "chunks: first cut")
    dst = tmp / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--filter=blob:limit=1m", f"file://{src}", str(dst)], check=True
    )
    base = git(dst, "rev-parse", "HEAD")
    (src / "chunks.py").write_text(
        "def chunked(xs, n):\n    return [xs[i:i + n] for i in range(0, len(xs), n)]  # keep tail\n"
    )
    git(src, "commit", "-qam", "chunked: keep the short last chunk")
    git(dst, "fetch", "-q", "origin")
    # git 2.39 marks the promisor remote in remote.origin.promisor; older git's clone --filter
    # (and the set's fennick) also write the extension, which libgit2 used to refuse
    git(dst, "config", "extensions.partialClone", "origin")
    assert list((dst / ".git" / "objects" / "pack").glob("*.promisor"))
    return {"repo": str(dst), "base": base, "fix": git(src, "rev-parse", "HEAD")}


def test_partial_clone_opens_and_its_fetched_future_is_seen(partial: dict[str, str]) -> None:
    repo = Path(partial["repo"])
    out = _run(repo, "git log -p origin/main -1")
    assert "keep tail" in out
    flagged, rules = _audit("git log -p origin/main -1", outputs=(out,), repo=partial)
    assert flagged and rules


def test_partial_clone_base_history_is_not_a_leak(partial: dict[str, str]) -> None:
    repo = Path(partial["repo"])
    out = _run(repo, "git log --oneline -3")
    assert "first cut" in out
    assert not _flagged("git log --oneline -3", "cat chunks.py", outputs=(out,), repo=partial)


def test_unknown_extension_still_refuses_the_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.evotreeunknownthing", "true")
    assert "unknown repository extension" in _run(repo, "git log --oneline")
    with pytest.raises(AuditInputError):
        _audit("git log --oneline", repo={"repo": str(repo), "base": base})
