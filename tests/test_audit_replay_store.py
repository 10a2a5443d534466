"""The replay's fourth world: the checkout as it is, its ``.git`` pruned at the base.

A step that prints the future's lines over the task repository's real store and not over a copy
of it holding only what the base reaches (as a phase's box gets it,
:func:`evotree.harness.git_prune.prune_copy`) read them from the history, however it named what
it read: a revision a substitution computed from a file that is not hidden (heldout28's t21:
``git show $(awk ... job.log)``), a loose object read by hand. Look-alikes whose output differs
between the two stores without showing any line of the future (a branch behind its upstream, a
count of objects, a ref's name) are not flagged by it. Real git, real files, the real sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_audit_selected_lines import FIXED, HIDDEN, _task

from conftest import git
from evotree.harness.audit import replay
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

STORE_RULE = "holds only what the base reaches"

pytestmark = [
    pytest.mark.skipif(replay._bwrap() is None, reason="bubblewrap is not installed"),
    pytest.mark.heavy,  # ~20 s of replays: make test-heavy
]

Repo = dict[str, str | Path]


@pytest.fixture(scope="module")
def tolls(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """The selected-lines task (its fix a commit no ref reaches), an upstream that has the fix
    (``main`` is behind it by one commit), and a CI note outside the hidden paths naming the
    fix's commit."""
    repo = _task(tmp_path_factory.mktemp("store") / "tolls", FIXED)
    root = Path(repo["root"])
    git(root, "update-ref", "refs/remotes/origin/main", str(repo["fut"]))
    git(root, "config", "remote.origin.url", "/nowhere/tolls.git")
    git(root, "config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
    git(root, "config", "branch.main.remote", "origin")
    git(root, "config", "branch.main.merge", "refs/heads/main")
    (root / "ci-note.txt").write_text(f"queued\ntesting {repo['fut']} on runner-3\n")
    return repo


def _store_hits(repo: Repo, commands: list[str]) -> list[dict[str, object]]:
    """The fourth world's hits on ``commands`` as a history (no outputs)."""
    traj = Trajectory("t", "shell", [Step(c) for c in commands])
    audit = audit_trajectories(
        [traj], hidden_paths=HIDDEN, repo=repo["root"], base=str(repo["base"])
    )
    return [h.to_dict() for h in audit.verdicts[0].hits if STORE_RULE in h.rule]


@pytest.mark.parametrize(
    "commands",
    [
        ["cat ci-note.txt", "git show $(awk '/^testing/ {print $2}' ci-note.txt) -- tolls"],
        ["R=$(tail -1 ci-note.txt | cut -d' ' -f2)", 'git cat-file -p "$R:tolls/toll.py"'],
        ["git show $(git rev-parse origin/main):tolls/toll.py"],
        [
            'python3 -c "import zlib, glob\n'
            "for p in glob.glob('.git/objects/??/*'):\n"
            "    print(zlib.decompress(open(p, 'rb').read()).decode('utf-8', 'replace'))\"",
        ],
    ],
    ids=["a revision computed from a file", "a variable", "an upstream", "loose objects by hand"],
)
def test_a_read_of_the_history_however_named_is_flagged(tolls: Repo, commands: list[str]) -> None:
    hits = _store_hits(tolls, commands)
    assert hits and hits[0]["severity"] == "high"
    assert hits[0]["command"] == commands[-1][:300]


@pytest.mark.parametrize(
    "command",
    [
        "git status",  # "behind 'origin/main' by 1 commit" over the real store only
        "git branch -a",  # origin/main is not kept in the pruned copy
        "git count-objects -v",
        "git log --oneline -3",
        "git show --stat HEAD",
        "git show $(git rev-parse HEAD):tolls/toll.py",  # computed, but the base's
        "cat ci-note.txt",
        "ls .git .git/refs",
    ],
)
def test_what_differs_without_the_futures_lines_is_not_flagged(tolls: Repo, command: str) -> None:
    assert _store_hits(tolls, [command]) == []


def test_the_pruned_store_is_made_once_and_only_at_the_base(tolls: Repo, tmp_path: Path) -> None:
    """The fourth world exists for a checkout at its base; a checkout whose HEAD moved past it
    gets none (the pruning is at HEAD: the future would be in it)."""
    from evotree.harness.audit.ancestry import Ancestry

    at_base = replay.worlds_for(Ancestry(tolls["root"], str(tolls["base"]), hidden_paths=HIDDEN))
    assert at_base is not None and at_base.at_base is not None
    assert (at_base.at_base / "objects" / "pack").is_dir()
    moved = _task(tmp_path / "moved", FIXED)
    root = Path(moved["root"])
    git(root, "reset", "--quiet", "--soft", str(moved["fut"]))
    worlds = replay.worlds_for(Ancestry(root, str(moved["base"]), hidden_paths=HIDDEN))
    assert worlds is None or worlds.at_base is None
