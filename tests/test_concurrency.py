"""Many evotree processes at once: no lost or duplicated ids or events."""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import EVOTREE_BIN, git, ledger_commits

N_PROCESSES = 8


def test_eight_processes_branching_at_once(ws: Any, repo: Path) -> None:
    procs = [
        subprocess.Popen(
            [str(EVOTREE_BIN), "-C", str(repo), "branch", "-m", f"hypothesis {i}", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(N_PROCESSES)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, out + err  # --json puts the error on stdout
        results.append(json.loads(out))
    ids = sorted(r["id"] for r in results)
    assert ids == sorted(f"v{i}" for i in range(1, N_PROCESSES + 1))
    # each hypothesis landed on exactly one version
    assert sorted(r["hypothesis"] for r in results) == sorted(
        f"hypothesis {i}" for i in range(N_PROCESSES)
    )
    # the ledger: one init + one event per process, none lost, none duplicated
    assert ledger_commits(repo) == 1 + N_PROCESSES
    log = git(repo, "log", "--format=%s", "refs/evotree/ledger").splitlines()
    created = sorted(line.split()[-1] for line in log if "version.created" in line)
    assert created == ids
    tree = {
        v["id"]: v
        for v in json.loads(
            subprocess.run(
                [str(EVOTREE_BIN), "-C", str(repo), "tree", "--json"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )["versions"]
    }
    assert set(tree) == {"v0", *ids}
    for r in results:
        assert tree[r["id"]]["hypothesis"] == r["hypothesis"]
        assert Path(repo / r["worktree"]).is_dir()
    worktrees = git(repo, "worktree", "list").splitlines()
    assert len(worktrees) == 1 + N_PROCESSES


def _append_events(args: tuple[str, int, int]) -> list[str]:
    repo, worker, count = args
    from evotree.core.gitio import Git
    from evotree.core.ledger import Event, Ledger

    git_ = Git(repo)
    ledger = Ledger(git_)
    actor = git_.identity()
    commits = []
    for i in range(count):
        entry = ledger.transact(
            lambda txn, i=i: Event(
                kind="finding", version="v0", actor=str(actor), data={"w": worker, "i": i}
            ),
            actor=actor,
        )
        commits.append(entry.commit)
    return commits


def test_concurrent_ledger_appends_lose_nothing(ws: Any, repo: Path) -> None:
    per_worker = 15
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(N_PROCESSES) as pool:
        commits = pool.map(_append_events, [(str(repo), w, per_worker) for w in range(N_PROCESSES)])
    flat = [c for worker in commits for c in worker]
    assert len(set(flat)) == N_PROCESSES * per_worker
    on_ref = git(repo, "rev-list", "refs/evotree/ledger").splitlines()
    assert set(flat) <= set(on_ref)  # every reported commit is on the ledger's single chain
    assert len(on_ref) == 1 + N_PROCESSES * per_worker
    seen = sorted(
        (e["data"]["w"], e["data"]["i"])
        for e in (
            json.loads(line)
            for line in git(repo, "log", "--format=%b", "refs/evotree/ledger").splitlines()
            if line.startswith("{")
        )
        if e["kind"] == "finding"
    )
    assert seen == sorted((w, i) for w in range(N_PROCESSES) for i in range(per_worker))
    assert ws.ledger.meta()["events"] == 1 + N_PROCESSES * per_worker
    assert sys.modules  # the spawned workers imported evotree on their own


def test_append_whose_ref_update_raised_after_landing_is_not_repeated(ws: Any, repo: Path) -> None:
    """A CAS that moved the ref but then failed (e.g. on the reflog lock) must not append twice."""
    from evotree.core.gitio import RefRaceLost
    from evotree.core.ledger import Event

    git_ = ws.git
    original = git_.cas_ref
    calls = []

    def flaky(name: str, new: Any, expected: Any, message: str = "evotree") -> None:
        original(name, new, expected, message)
        calls.append(new)
        if len(calls) == 1:
            raise RefRaceLost(f"{name}: failed to lock file 'logs/{name}.lock' for writing")

    git_.cas_ref = flaky  # the real update happens; only the report of it fails
    actor = git_.identity()
    before = ledger_commits(repo)
    entry = ws.ledger.transact(
        lambda txn: Event(kind="finding", version="v0", actor=str(actor)), actor=actor
    )
    assert ledger_commits(repo) == before + 1 and len(calls) == 1
    assert git(repo, "rev-parse", "refs/evotree/ledger") == entry.commit


ROUNDS = 40


def _create_at(args: tuple[str, int, float, str]) -> list[bool]:
    """Per round: build a root commit of our own, wait for the round's start, create its ref."""
    import time

    import pygit2

    from evotree.core.gitio import Git, RefRaceLost

    repo, worker, start, how = args
    won = []
    for round_ in range(ROUNDS):
        git_ = Git(repo)
        blob = git_.repo.create_blob(f"worker {worker}".encode())
        builder = git_.repo.TreeBuilder()
        builder.insert("f", blob, pygit2.GIT_FILEMODE_BLOB)
        signature = pygit2.Signature("w", "w@example.com")
        commit = git_.repo.create_commit(None, signature, signature, "w", builder.write(), [])
        ref = f"refs/evotree/contested/{how}{round_}"
        while time.time() < start + round_ * 0.05:  # every worker checks the ref in one instant
            pass
        if how == "create":
            won.append(git_.create_ref(ref, commit, "race"))
            continue
        try:
            git_.cas_ref(ref, commit, None, "race")
        except RefRaceLost:
            won.append(False)
        else:
            won.append(True)
    return won


def test_creating_one_ref_at_once_has_one_winner(repo: Path) -> None:
    """libgit2 checks that a ref is absent before it takes the lock: created by several processes
    at once, each "won" and the last replaced the others (two versions got the id v6 in CI; a
    process's whole memory chain was lost). The check is made under the lock now."""
    import time

    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(N_PROCESSES) as pool:
        for how in ("create", "cas"):
            start = time.time() + 0.3
            won = pool.map(_create_at, [(str(repo), w, start, how) for w in range(N_PROCESSES)])
            for round_ in range(ROUNDS):
                winners = [w for w in range(N_PROCESSES) if won[w][round_]]
                assert len(winners) == 1, (how, round_, winners)
                # the one that reported winning is the one on the ref
                ref = f"refs/evotree/contested/{how}{round_}"
                assert git(repo, "cat-file", "-p", f"{ref}:f") == f"worker {winners[0]}"
