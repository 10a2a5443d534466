"""Repository hygiene, the object-store scan and sanitize (harness/audit/repo.py), and the
`audit repo` subcommand, on real git repositories built the way leaky task repositories are."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from conftest import git, make_repo, validate

from evotree.diagnostics.findings import Finding
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.repo import (
    audit_repository,
    inspect_repository,
    sanitize_repository,
)
from evotree.harness.audit.repo_objects import scan_object_store

FIX = "def solve():\n    return 'REFERENCE-FIX-7f3a'\n"


def _task_repo(path: Path) -> tuple[Path, str, str]:
    """A task repository at base with the reference fix committed after it: (repo, base, fix)."""
    repo = make_repo(path)
    (repo / "solver.py").write_text("def solve():\n    raise NotImplementedError\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "task: implement solve")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "solver.py").write_text(FIX)
    git(repo, "commit", "-qam", "reference fix")
    fix = git(repo, "rev-parse", "HEAD")
    return repo, base, fix


def _scrub(repo: Path) -> None:
    """What a careless cleanup does: drop reflogs and ORIG_HEAD, keep the objects."""
    git(repo, "reflog", "expire", "--expire=now", "--all")
    (repo / ".git" / "ORIG_HEAD").unlink(missing_ok=True)


def _codes(findings: list[Finding]) -> dict[str, Finding]:
    return {f.code: f for f in findings}


def _objects(repo: Path) -> set[str]:
    out = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


def _contains_fix(repo: Path) -> bool:
    """Whether any object in the store holds the reference fix (what a curious policy would do)."""
    listing = git(
        repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"
    )
    blobs = [line.split()[0] for line in listing.splitlines() if line.endswith(" blob")]
    return any("REFERENCE-FIX" in git(repo, "cat-file", "-p", oid) for oid in blobs)


# ---------------------------------------------------------------------------- clean repositories
def test_a_clean_repository_passes(tmp_path: Path) -> None:
    repo, base, _ = _task_repo(tmp_path / "r")
    git(repo, "reset", "-q", "--hard", base)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    (repo / ".git" / "ORIG_HEAD").unlink(missing_ok=True)
    audit = inspect_repository(repo)
    assert audit.passed and audit.findings == [], [f.to_dict() for f in audit.findings]
    assert audit.base == base and audit.allowed_refs == ["HEAD", "refs/heads/main"]
    assert audit.scan.beyond == {} and audit.scan.objects == audit.scan.reachable > 0


def test_an_ordinary_repository_only_warns_about_its_reflog(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    audit = inspect_repository(repo)
    assert audit.passed
    assert [(f.code, f.severity) for f in audit.findings] == [("audit.repo_reflog", "warn")]


# ---------------------------------------------------------------------------- the leaks
def test_swe_bench_leak_deleted_refs_but_objects_stay_in_the_pack(tmp_path: Path) -> None:
    """The fix SWE-bench shipped: reset to base, drop refs and reflogs -- the fix is still packed."""
    repo, base, fix = _task_repo(tmp_path / "r")
    git(repo, "repack", "-q", "-a", "-d")  # as a clone has it: one pack with the whole history
    git(repo, "prune-packed")
    git(repo, "reset", "-q", "--hard", base)
    _scrub(repo)
    assert not list((repo / ".git" / "objects").glob("[0-9a-f][0-9a-f]/*"))  # nothing loose
    assert _contains_fix(repo)  # the policy can still read it
    audit = inspect_repository(repo)
    assert not audit.passed
    f = _codes(audit.findings)["audit.repo_unreachable_objects"]
    assert f.severity == "critical"
    assert f.evidence["by_type"] == {"commit": 1, "tree": 1, "blob": 1}
    assert f.evidence["commits"] == {"descendant": 1, "newer": 0, "older": 0}
    assert (
        f.evidence["samples"][0]["id"] == fix
        and f.evidence["samples"][0]["summary"] == "reference fix"
    )
    assert set(_codes(audit.findings)) == {"audit.repo_unreachable_objects"}


def test_loose_unreachable_objects_and_a_dangling_blob(tmp_path: Path) -> None:
    repo, base, fix = _task_repo(tmp_path / "r")
    git(repo, "reset", "-q", "--hard", base)
    _scrub(repo)
    blob = (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=repo,
            input=b"answers: 42\n",
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    scan = scan_object_store(repo)
    assert scan.beyond == {"commit": 1, "tree": 1, "blob": 2}
    assert scan.dangling == scan.beyond and scan.descendants == 1
    assert blob in scan.dangling_ids and fix in scan.dangling_ids
    assert scan.future_commits[0].id == fix and scan.future_commits[0].kind == "descendant"


def test_unrelated_future_history_is_newer_and_old_unreachable_commits_are_older(
    tmp_path: Path,
) -> None:
    repo, base, _ = _task_repo(tmp_path / "r")
    git(repo, "reset", "-q", "--hard", base)
    env = {
        **os.environ,
        "GIT_COMMITTER_DATE": "2090-01-01T00:00:00 +0000",
        "GIT_AUTHOR_DATE": "2090-01-01T00:00:00 +0000",
    }
    tree = git(repo, "write-tree")
    newer = subprocess.run(
        ["git", "commit-tree", tree, "-m", "upstream release"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    env_old = {
        **os.environ,
        "GIT_COMMITTER_DATE": "1990-01-01T00:00:00 +0000",
        "GIT_AUTHOR_DATE": "1990-01-01T00:00:00 +0000",
    }
    older = subprocess.run(
        ["git", "commit-tree", tree, "-m", "ancient"],
        cwd=repo,
        env=env_old,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # clock skew: a fix committed "in 1980" on top of base, and a child of it: both descendants
    skewed = subprocess.run(
        ["git", "commit-tree", tree, "-p", base, "-m", "skewed fix"],
        cwd=repo,
        env={**env_old, "GIT_COMMITTER_DATE": "1980-01-01T00:00:00 +0000"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    child = subprocess.run(
        ["git", "commit-tree", tree, "-p", skewed, "-m", "on top"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    _scrub(repo)
    scan = scan_object_store(repo)
    kinds = {c.id: c.kind for c in scan.future_commits}
    assert kinds[newer] == "newer" and kinds[older] == "older"
    assert kinds[skewed] == kinds[child] == "descendant"
    assert scan.future_commits[0].time >= scan.future_commits[-1].time  # newest first
    assert (scan.newer, scan.older, scan.descendants) == (1, 1, 3)  # + the reference fix
    # an explicit older base: everything after it is beyond, as descendants
    first = git(repo, "rev-list", "--max-parents=0", "HEAD")
    scan2 = scan_object_store(repo, first)
    assert scan2.descendants >= 2  # "task" and "reference fix" both come after the first commit


def test_future_tags_branches_remotes_and_special_heads(tmp_path: Path) -> None:
    repo, base, fix = _task_repo(tmp_path / "r")
    git(repo, "tag", "-a", "v2.0", "-m", "release with the fix")
    git(repo, "tag", "v0.9", base)  # a tag at base: harmless
    git(repo, "branch", "upstream-fix")
    git(repo, "reset", "-q", "--hard", base)  # leaves ORIG_HEAD and reflog entries naming the fix
    git(repo, "remote", "add", "origin", "https://github.com/example/project.git")
    audit = inspect_repository(repo)
    found = _codes(audit.findings)
    assert not audit.passed
    refs = {e["ref"]: e for e in found["audit.repo_future_ref"].evidence["refs"]}
    assert set(refs) == {"refs/tags/v2.0", "refs/heads/upstream-fix"}
    assert (
        refs["refs/tags/v2.0"]["target"] == fix and refs["refs/tags/v2.0"]["reach"] == "descendant"
    )
    assert found["audit.repo_future_ref"].severity == "critical"
    assert found["audit.repo_extra_ref"].evidence["refs"][0]["ref"] == "refs/tags/v0.9"
    assert found["audit.repo_extra_ref"].severity == "info"
    assert (
        found["audit.repo_remote"].evidence["remotes"][0]["url"]
        == "https://github.com/example/project.git"
    )
    assert found["audit.repo_remote"].severity == "high"
    special = found["audit.repo_special_head"]
    assert special.severity == "critical" and special.evidence["files"][0]["file"] == "ORIG_HEAD"
    assert special.evidence["files"][0]["commits"][0]["commit"] == fix
    assert found["audit.repo_reflog"].severity == "critical"
    assert (
        "audit.repo_unreachable_objects" not in found
    )  # refs still reach the fix: reported as refs
    assert audit.scan.descendants == 1 and audit.scan.dangling == {}


def test_filter_branch_backups_are_backup_refs(tmp_path: Path) -> None:
    repo, base, fix = _task_repo(tmp_path / "r")
    git(repo, "update-ref", "refs/original/refs/heads/main", fix)
    git(repo, "reset", "-q", "--hard", base)
    _scrub(repo)
    found = _codes(inspect_repository(repo).findings)
    assert found["audit.repo_backup_ref"].severity == "critical"
    assert found["audit.repo_backup_ref"].evidence["refs"][0] == {
        "ref": "refs/original/refs/heads/main",
        "target": fix,
        "reach": "descendant",
        "summary": "reference fix",
    }
    assert "audit.repo_future_ref" not in found and "audit.repo_stray_state" not in found


def test_fetch_head_with_a_url_stash_notes_and_replace_refs(tmp_path: Path) -> None:
    upstream, base, fix = _task_repo(tmp_path / "upstream")
    repo = tmp_path / "task"
    git(tmp_path, "clone", "-q", "--no-checkout", str(upstream), str(repo))
    git(repo, "config", "user.name", "T")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "checkout", "-q", "-B", "main", base)
    git(repo, "remote", "remove", "origin")  # the usual cleanup; FETCH_HEAD-like state stays
    (repo / ".git" / "FETCH_HEAD").write_text(
        f"{fix}\t\tbranch 'main' of https://example.com/up.git\n"
    )
    (repo / "solver.py").write_text("partial work\n")
    git(repo, "stash", "-q")
    git(repo, "notes", "add", "-m", "the answer is in the next release", base)
    git(repo, "replace", git(repo, "rev-parse", "HEAD~1"), base)
    _scrub(repo)
    for ref in git(
        repo, "for-each-ref", "--format=%(refname)", "refs/remotes", "refs/tags"
    ).split():
        git(repo, "update-ref", "-d", ref)
    found = _codes(inspect_repository(repo).findings)
    assert found["audit.repo_special_head"].evidence["files"][0]["urls"] == [
        "https://example.com/up.git"
    ]
    assert found["audit.repo_special_head"].severity == "critical"
    assert found["audit.repo_stash"].severity == "critical"
    assert found["audit.repo_notes"].severity == "high"
    assert found["audit.repo_replace_ref"].severity == "high"
    # the clone's packed objects still hold the fix, and no ref reaches it any more
    assert found["audit.repo_unreachable_objects"].evidence["samples"][0]["id"] == fix


def test_alternates_grafts_unindexed_packs_stray_state_and_the_index(tmp_path: Path) -> None:
    upstream, base, fix = _task_repo(tmp_path / "upstream")
    repo = tmp_path / "shared"
    git(tmp_path, "clone", "-q", "--shared", str(upstream), str(repo))
    git(repo, "reset", "-q", "--hard", base)
    git(repo, "remote", "remove", "origin")
    _scrub(repo)
    (repo / ".git" / "info" / "grafts").write_text(f"{base}\n")
    pack_dir = repo / ".git" / "objects" / "pack"
    pack_dir.mkdir(parents=True, exist_ok=True)
    (pack_dir / "pack-deadbeef.pack").write_bytes(b"PACK\x00\x00\x00\x02")
    (repo / ".git" / "rebase-merge").mkdir()
    (repo / ".git" / "rebase-merge" / "patch").write_text("diff --git a/solver.py b/solver.py\n")
    (repo / "solver.py").write_text(FIX)
    git(repo, "add", "solver.py")
    audit = inspect_repository(repo)
    found = _codes(audit.findings)
    assert found["audit.repo_alternates"].evidence["alternates"][0]["store"].endswith("objects")
    assert "audit.repo_grafts" in found and "audit.repo_unindexed_pack" in found
    assert found["audit.repo_stray_state"].evidence["paths"] == ["rebase-merge"]
    assert found["audit.repo_index"].evidence["paths"] == ["solver.py"]
    # the alternate's objects are scanned too: the fix commit lives only there
    assert fix in {c.id for c in audit.scan.future_commits}
    assert found["audit.repo_unreachable_objects"].severity == "critical"


def test_untracked_changed_and_ignored_files_in_the_checkout(tmp_path: Path) -> None:
    repo, base, _ = _task_repo(tmp_path / "r")
    git(repo, "reset", "-q", "--hard", base)
    _scrub(repo)
    git(repo, "gc", "-q", "--prune=now")
    (repo / ".gitignore").write_text("*.log\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore logs")
    (repo / "reference.patch").write_text("+    return 'REFERENCE-FIX-7f3a'\n")
    (repo / "train.py").write_text("print('edited')\n")
    (repo / "run.log").write_text("answer 42\n")
    found = _codes(inspect_repository(repo).findings)
    dirty = found["audit.repo_dirty"]
    assert dirty.severity == "high"
    assert dirty.evidence["untracked"] == ["reference.patch"] and dirty.evidence["changed"] == [
        "train.py"
    ]
    assert found["audit.repo_ignored_files"].evidence["paths"] == ["run.log"]
    assert found["audit.repo_ignored_files"].severity == "warn"


def test_linked_worktree_sees_the_repositorys_refs(tmp_path: Path) -> None:
    repo, base, fix = _task_repo(tmp_path / "r")
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "--detach", str(wt), base)
    audit = inspect_repository(wt)
    found = _codes(audit.findings)
    assert audit.base == base and not audit.passed
    assert found["audit.repo_future_ref"].evidence["refs"][0]["ref"] == "refs/heads/main"
    assert found["audit.repo_worktree"].evidence["worktrees"][0]["worktree"] == "(main)"
    assert found["audit.repo_worktree"].evidence["worktrees"][0]["commit"] == fix
    # from the main checkout, the worktree is another checkout of the same store
    main = _codes(inspect_repository(repo).findings)
    assert main["audit.repo_worktree"].evidence["worktrees"][0]["commit"] == base


def test_allowed_refs_accept_globs_and_an_empty_list_allows_nothing(tmp_path: Path) -> None:
    repo, base, fix = _task_repo(tmp_path / "r")
    git(repo, "branch", "evotree/v1", fix)
    git(repo, "reset", "-q", "--hard", base)
    _scrub(repo)
    found = _codes(
        audit_repository(repo, allowed_refs=["HEAD", "refs/heads/main", "refs/heads/evotree/*"])
    )
    assert found == {}
    strict = _codes(audit_repository(repo, allowed_refs=[]))
    assert {e["ref"] for e in strict["audit.repo_future_ref"].evidence["refs"]} == {
        "refs/heads/evotree/v1"
    }
    assert {e["ref"] for e in strict["audit.repo_extra_ref"].evidence["refs"]} == {
        "refs/heads/main"
    }
    # HEAD beyond the base given: HEAD itself is not allowed by default
    found = _codes(audit_repository(repo, base=git(repo, "rev-parse", "HEAD~1")))
    assert {e["ref"] for e in found["audit.repo_future_ref"].evidence["refs"]} == {
        "refs/heads/main",
        "refs/heads/evotree/v1",
    }


# ---------------------------------------------------------------------------- sanitize
def test_sanitize_writes_a_clean_copy_and_leaves_the_source_alone(tmp_path: Path) -> None:
    repo, base, fix = _task_repo(tmp_path / "r")
    git(repo, "tag", "v2.0", fix)
    git(repo, "reset", "-q", "--hard", base)
    git(repo, "remote", "add", "origin", "https://example.com/x.git")
    before = (_objects(repo), git(repo, "show-ref"), (repo / ".git" / "config").read_text())
    out = tmp_path / "clean"
    result = sanitize_repository(repo, out)
    assert result.passed and result.audit.findings == []
    assert (
        result.base == base and result.branch == "main" and result.commits == 2 and not result.bare
    )
    assert git(out, "rev-parse", "HEAD") == base
    assert git(out, "show-ref") == f"{base} refs/heads/main"
    assert git(out, "remote") == "" and not (out / ".git" / "logs").exists()
    assert (out / "solver.py").read_text() == "def solve():\n    raise NotImplementedError\n"
    assert git(out, "status", "--porcelain") == ""
    assert not _contains_fix(out) and fix not in _objects(out)
    assert _objects(out) == set(
        git(repo, "rev-list", "--objects", "--no-object-names", base).split()
    )
    assert result.removed_objects == len(before[0]) - len(_objects(out))
    assert before == (_objects(repo), git(repo, "show-ref"), (repo / ".git" / "config").read_text())
    assert not (out / ".git" / "hooks").exists()  # an empty template: no sample hooks


def test_sanitize_a_bare_repository_at_an_explicit_base(tmp_path: Path) -> None:
    repo, _, _ = _task_repo(tmp_path / "r")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    first = git(repo, "rev-list", "--max-parents=0", "HEAD")
    result = sanitize_repository(bare, tmp_path / "clean.git", base=first, branch="task")
    assert result.bare and result.passed and result.commits == 1
    assert git(tmp_path / "clean.git", "rev-parse", "HEAD") == first
    assert git(tmp_path / "clean.git", "symbolic-ref", "HEAD") == "refs/heads/task"


def test_sanitize_a_shallow_clone_keeps_it_shallow(tmp_path: Path) -> None:
    upstream, _, _ = _task_repo(tmp_path / "up")
    for i in range(3):
        (upstream / "solver.py").write_text(f"step {i}\n")
        git(upstream, "commit", "-qam", f"step {i}")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{upstream}", str(shallow))
    audit = inspect_repository(shallow)
    found = _codes(audit.findings)
    assert found["audit.repo_remote"].evidence["remotes"][0]["url"] == f"file://{upstream}"
    result = sanitize_repository(shallow, tmp_path / "clean")
    assert result.passed and result.commits == 2
    clean = tmp_path / "clean"
    assert (clean / ".git" / "shallow").read_text().split() == (
        shallow / ".git" / "shallow"
    ).read_text().split()
    assert len(git(clean, "log", "--format=%H").split()) == 2
    git(clean, "fsck", "--strict")


def test_sanitize_refuses_a_non_empty_out_and_overlaps_and_writes_nothing(tmp_path: Path) -> None:
    repo, _, _ = _task_repo(tmp_path / "r")
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    with pytest.raises(AuditInputError, match="not an empty directory"):
        sanitize_repository(repo, taken)
    assert [p.name for p in taken.iterdir()] == ["keep.txt"]
    with pytest.raises(AuditInputError, match="overlaps"):
        sanitize_repository(repo, repo / "sub")
    with pytest.raises(AuditInputError, match="does not name a commit"):
        sanitize_repository(repo, tmp_path / "new", base="no-such-rev")
    assert not (tmp_path / "new").exists()
    git(repo, "config", "extensions.partialClone", "origin")
    with pytest.raises(AuditInputError, match="partial clone"):
        sanitize_repository(repo, tmp_path / "new")  # pack-objects would fetch from the promisor
    git(repo, "config", "--unset", "extensions.partialClone")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(AuditInputError, match="not a valid git branch name"):
        sanitize_repository(repo, empty, branch="bad..name")
    assert empty.exists() and not any(empty.iterdir())


# ---------------------------------------------------------------------------- bad input
def test_bad_input_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(AuditInputError, match="does not exist"):
        inspect_repository(tmp_path / "missing")
    (tmp_path / "plain").mkdir()
    with pytest.raises(AuditInputError, match="not a git repository"):
        inspect_repository(tmp_path / "plain")
    repo = make_repo(tmp_path / "r")
    (repo / "sub").mkdir()
    with pytest.raises(AuditInputError, match="not a git repository"):
        inspect_repository(repo / "sub")  # no search upwards: a subdirectory is not the repository
    with pytest.raises(AuditInputError, match="does not name a commit"):
        inspect_repository(repo, base="v9.9")
    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", str(empty))
    with pytest.raises(AuditInputError, match="no commits"):
        inspect_repository(empty)


# ---------------------------------------------------------------------------- CLI
def _group() -> click.Group:
    from evotree.cli.audit_repo import register_repo

    @click.group()
    def audit() -> None:
        """test group"""

    register_repo(audit)
    return audit


def test_cli_json_exit_codes_and_schema(tmp_path: Path) -> None:
    repo, base, fix = _task_repo(tmp_path / "r")
    git(repo, "reset", "-q", "--hard", base)
    _scrub(repo)
    runner = CliRunner()
    group = _group()
    result = runner.invoke(group, ["repo", str(repo), "--json"])
    assert result.exit_code == 28, result.output
    data = json.loads(result.stdout)
    validate(data, "audit-repo")
    assert data["passed"] is False and data["sanitized"] is None
    assert {f["code"] for f in data["findings"]} == {"audit.repo_unreachable_objects"}
    assert data["findings"][0]["evidence"]["samples"][0]["id"] == fix

    out = tmp_path / "clean"
    result = runner.invoke(group, ["repo", str(repo), "--sanitize", "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    validate(data, "audit-repo")
    assert data["passed"] is False and data["sanitized"]["passed"] is True
    assert data["sanitized"]["audit"]["findings"] == [] and data["sanitized"]["out"] == str(
        out.resolve()
    )

    clean = runner.invoke(group, ["repo", str(out), "--json"])
    assert clean.exit_code == 0 and json.loads(clean.stdout)["passed"] is True

    text = runner.invoke(group, ["repo", str(repo)])
    assert (
        text.exit_code == 28
        and "audit.repo_unreachable_objects" in text.output
        and "FAILED" in text.output
    )
    text = runner.invoke(
        group,
        ["repo", str(repo), "--sanitize", "--out", str(tmp_path / "clean2"), "--branch", "task"],
    )
    assert text.exit_code == 0, text.output
    words = " ".join(text.output.split())  # rich wraps lines at the terminal width
    assert "sanitized copy" in words and "(branch task at" in words and "re-audited: clean" in words

    for args, message in (
        (["--sanitize"], "--sanitize needs --out"),
        (["--out", str(tmp_path / "x")], "only used with"),
    ):
        bad = runner.invoke(group, ["repo", str(repo), *args, "--json"])
        assert bad.exit_code == 29 and message in json.loads(bad.stdout)["error"]["message"]
    missing = runner.invoke(group, ["repo", str(tmp_path / "nope")])
    assert missing.exit_code == 29 and "does not exist" in missing.output


def test_registered_on_the_evotree_audit_group(tmp_path: Path) -> None:
    from evotree.cli.main import cli

    audit = cli.get_command(click.Context(cli), "audit")  # the lazy group loads it
    if not isinstance(audit, click.Group) or "repo" not in audit.commands:
        pytest.xfail("evotree/cli_audit.py does not call register_repo yet")
    repo = make_repo(tmp_path / "r")
    result = CliRunner().invoke(cli, ["audit", "repo", str(repo), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["passed"] is True
