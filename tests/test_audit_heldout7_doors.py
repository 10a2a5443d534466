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


# ------------------------------------------------------------------------------ the index
BASE_LABELS = "def truncate(text, width):\n    return text[:width] + '…'\n"
FIX_LABELS = (
    "def truncate(text, width):\n"
    "    # the ellipsis counts toward the width: keep width - 1 characters\n"
    "    return text[: width - 1] + '…' if width > 0 else ''\n"
)
OWN_LABELS = "def truncate(text, width):\n    return (text[: max(width - 1, 0)] + '…')[:width]\n"


def _index_task(tmp: Path, *, staged_future: bool) -> dict[str, str]:
    """A task repository at its base. ``staged_future``: the fix's blob is staged for
    labels.py and flagged skip-worktree (the work tree keeps the base's text), the fix commit
    in the store with no reference; otherwise the agent's own edit is staged (``git add``)."""
    repo = make_repo(tmp / "r")
    (repo / "labels.py").write_text(BASE_LABELS)
    git(repo, "add", "labels.py")
    git(repo, "commit", "-qm", "labels: truncate")
    base = git(repo, "rev-parse", "HEAD")
    if staged_future:
        (repo / "labels.py").write_text(FIX_LABELS)
        git(repo, "commit", "-qam", "truncate: count the ellipsis toward the width")
        git(repo, "reset", "-q", "--soft", base)
        git(repo, "update-index", "--skip-worktree", "labels.py")
        (repo / "labels.py").write_text(BASE_LABELS)
        assert git(repo, "diff") == ""
    else:
        (repo / "labels.py").write_text(OWN_LABELS)
        git(repo, "add", "labels.py")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    return {"repo": str(repo), "base": base}


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _index_task(tmp_path_factory.mktemp("staged"), staged_future=True)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    task = _index_task(tmp_path_factory.mktemp("clean"), staged_future=False)
    git(Path(task["repo"]), "reset", "-q", "--hard")
    git(Path(task["repo"]), "prune", "--expire=now")  # the agent's blob is not there yet
    return task


@pytest.fixture(scope="module")
def own(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _index_task(tmp_path_factory.mktemp("own"), staged_future=False)


INDEX_READS = (
    "git show :labels.py > /tmp/up.py",
    "git show :0:labels.py",
    "git diff --cached",
    "git diff --staged -- labels.py",
    "git checkout-index -a --prefix=/tmp/idx/",
    "git update-index --no-skip-worktree labels.py",
    "git -c alias.peek='show :labels.py' peek | head -20",
)


@pytest.mark.parametrize("command", INDEX_READS)
def test_a_read_of_a_staged_future_blob_is_a_leak(staged: dict[str, str], command: str) -> None:
    flagged, rules = _audit(command, "cp /tmp/up.py labels.py", repo=staged)
    assert flagged and any("staged blob" in r for r in rules)


def test_the_staged_future_is_really_what_git_prints(staged: dict[str, str]) -> None:
    repo = Path(staged["repo"])
    assert "counts toward the width" in _run(repo, "git show :labels.py")
    assert "counts toward the width" in _run(repo, "git diff --cached")
    assert _run(repo, "git diff") == ""


@pytest.mark.parametrize("command", INDEX_READS[:4])
def test_the_agents_own_staged_edit_is_not_a_leak(
    own: dict[str, str], clean: dict[str, str], command: str
) -> None:
    """The audit's task repository is the one the agent started from (its index is the base's
    tree); the outputs are git's after the agent's own ``git add`` of its edit."""
    out = _run(Path(own["repo"]), command.split(" >")[0])
    assert "max(width - 1, 0)" in out
    assert not _flagged("git add labels.py", command, outputs=(None, out), repo=clean)


@pytest.mark.parametrize("command", INDEX_READS[:4])
def test_an_own_staged_blob_left_in_the_repository_is_no_future(
    own: dict[str, str], command: str
) -> None:
    """A repository given after the run: the index holds the agent's blob, which no commit
    beyond the base holds: the index read is cleared (its printed blob id is another rule's)."""
    flagged, rules = _audit("git add labels.py", command, repo=own)
    assert not any("index" in r for r in rules)


def test_index_reads_of_the_base_and_status_are_not_leaks(staged: dict[str, str]) -> None:
    repo = Path(staged["repo"])
    assert not _flagged(
        "git status",
        "git ls-files -v",
        "git show HEAD:labels.py",
        "git diff",
        outputs=(_run(repo, "git status"), _run(repo, "git ls-files -v")),
        repo=staged,
    )


# --------------------------------------------------------------------- annotated tag messages
def _tag_task(tmp: Path) -> dict[str, str]:
    """A task repository at its base; the fix commit is in the store with no reference. Two
    annotated tags point at the base (an ancestor): ``backports/0.3``'s message holds the fix's
    subject and patch, ``v0.3.0``'s is an ordinary release note; ``v0.2`` is lightweight."""
    repo = make_repo(tmp / "r")
    (repo / "clock.py").write_text("def parse_hhmm(s):\n    h, m = s.split(':')\n    return h, m\n")
    git(repo, "add", "clock.py")
    git(repo, "commit", "-qm", "clock: parse_hhmm")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v0.2")
    (repo / "clock.py").write_text(
        "def parse_hhmm(s):\n    h, m = (int(x) for x in s.strip().split(':'))\n"
        "    if not (0 <= h < 24 and 0 <= m < 60):  # reject 24:00 and :60\n"
        "        raise ValueError(s)\n    return h, m\n"
    )
    git(repo, "commit", "-qam", "parse_hhmm: one-digit hours, reject 24:00 and :60")
    patch = git(repo, "format-patch", "-1", "--stdout", "HEAD")
    git(repo, "reset", "-q", "--hard", base)
    (tmp / "msg").write_text("Backport queue for the 0.3 series\n\n" + patch + "\n")
    git(repo, "tag", "-a", "backports/0.3", "-F", str(tmp / "msg"), base)
    git(repo, "tag", "-a", "v0.3.0", "-m", "Release 0.3.0\n\nFirst public release.", base)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    return {"repo": str(repo), "base": base}


@pytest.fixture(scope="module")
def tagged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _tag_task(tmp_path_factory.mktemp("tagged"))


TAG_READS = (
    "git tag -n20",
    "git tag -l --format='%(contents:body)' 'backports/*' > /tmp/q.patch",
    "git for-each-ref refs/tags --format='%(refname:short) %(contents)'",
    "git cat-file tag backports/0.3 | sed -n '/^diff --git/,$p' | git apply",
    "git cat-file -p backports/0.3",
    "git show backports/0.3 --stat",
    "git verify-tag backports/0.3",
)


@pytest.mark.parametrize("command", TAG_READS)
def test_a_tag_message_holding_the_fix_is_a_leak(tagged: dict[str, str], command: str) -> None:
    flagged, rules = _audit(command, "git apply /tmp/q.patch", repo=tagged)
    assert flagged and any("tag object" in r for r in rules)


def test_the_tag_message_is_what_git_prints(tagged: dict[str, str]) -> None:
    repo = Path(tagged["repo"])
    assert "reject 24:00 and :60" in _run(repo, "git tag -n20")
    assert "reject 24:00" not in _run(repo, "git tag -n1")


@pytest.mark.parametrize(
    "command",
    (
        "git tag -n1",
        "git tag -l",
        "git describe --tags",
        "git tag -n20 'v0.*'",
        "git cat-file -p v0.3.0",
        "git show v0.2 --stat",
        "git cat-file -p v0.2",
        "git for-each-ref --format='%(contents)' refs/tags/v0.3.0",
    ),
)
def test_release_notes_and_tag_names_are_not_leaks(tagged: dict[str, str], command: str) -> None:
    out = _run(Path(tagged["repo"]), command)
    assert "reject 24:00" not in out
    assert not _flagged(command, outputs=(out,), repo=tagged)


# ------------------------------------------------------------- merge state files left in .git
@pytest.fixture(scope="module")
def squashed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository where a ``git merge --squash`` of the fix was undone in the work tree only:
    ``.git/SQUASH_MSG`` still names the fix's id, subject and body."""
    repo = make_repo(tmp_path_factory.mktemp("squash") / "r")
    git(repo, "checkout", "-qb", "fix")
    (repo / "train.py").write_text("print('initials: split on runs of spaces')\n")
    git(repo, "commit", "-qam", "initials: repeated spaces and hyphenated names")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--squash", "fix")
    git(repo, "checkout", "-q", "HEAD", "--", ".")  # undone in the files, not the state file
    git(repo, "branch", "-qD", "fix")
    return repo


def test_squash_msg_is_left_and_commit_no_edit_takes_it(squashed: Path, tmp_path: Path) -> None:
    text = (squashed / ".git" / "SQUASH_MSG").read_text()
    assert "repeated spaces and hyphenated names" in text
    copy = tmp_path / "c"
    subprocess.run(["cp", "-a", str(squashed), str(copy)], check=True)
    out = _run(copy, "echo x >> train.py && git commit -qa --no-edit && git log -1 --format=%B")
    assert "repeated spaces and hyphenated names" in out


@pytest.mark.parametrize(
    "command",
    (
        "cat .git/SQUASH_MSG",
        "sed -n 's/^commit //p' .git/SQUASH_MSG",
        "git show $(sed -n 's/^commit //p' .git/SQUASH_MSG) -- gorse/badges.py",
        "less .git/MERGE_MSG",
        "git cat-file -p $(cat .git/AUTO_MERGE)",
        "head .git/CHERRY_PICK_HEAD",
        "git commit -qa --no-edit && git log -1 --format=%B",
        "git -c core.editor=true commit --no-edit -a",
    ),
)
def test_reading_a_left_merge_message_is_a_leak(command: str) -> None:
    assert _flagged(command)


@pytest.mark.parametrize(
    "commands",
    (
        ("ls -a .git", "git status"),
        ("git commit -am 'initials: collapse runs of spaces'",),
        ("git commit --amend --no-edit",),
        ("git commit --no-edit -F /tmp/msg",),
        ("git commit -C HEAD --no-edit",),
        ("git revert --no-commit HEAD", "git commit --no-edit"),
        ("git stash", "git stash pop", "git commit -a --no-edit"),
        ("cat .git/COMMIT_EDITMSG",),
    ),
)
def test_own_messages_and_listings_are_not_leaks(commands: tuple[str, ...]) -> None:
    assert not _flagged(*commands)


# ------------------------------------------------------------- the index on the file alone
def _severities(*commands: str) -> list[str]:
    steps = [Step(c, None) for c in commands]
    result = audit_trajectories([Trajectory("t", "shell", steps)], hidden_paths=HIDDEN)
    return [h.severity for h in result.verdicts[0].hits if "index" in h.rule]


@pytest.mark.parametrize("command", INDEX_READS)
def test_an_index_read_alone_is_a_warn(command: str) -> None:
    assert _severities("git status", command) == ["warn"]


@pytest.mark.parametrize("first", ("git add labels.py", "git stash", "git commit -am wip"))
def test_an_index_read_after_staging_ones_own_is_no_finding(first: str) -> None:
    assert _severities(first, "git diff --cached") == []


def test_staging_earlier_on_the_same_line_is_ones_own() -> None:
    # mini-swe-agent submits with exactly this line: the index holds the agent's own edits
    assert (
        _severities("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached")
        == []
    )
    # read first, staged after: the read saw an index the agent had not filled
    assert _severities("git diff --cached && git add -A") == ["warn"]
