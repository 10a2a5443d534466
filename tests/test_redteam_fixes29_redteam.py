"""Red team of the fixes to the judge-copy findings (issue 29): da99dd9, 0719d2b, fba6f4a,
36acd8c, 3bcfef7, red-teamed here by a helper who wrote none of them.

The fixes: host git gets the task's store C-quoted in ``GIT_ALTERNATE_OBJECT_DIRECTORIES``; one
recogniser of git directories (``git_guard.is_git_dir``: a ``.git`` folder, or ``HEAD`` (a
regular file) + ``objects/`` + ``refs/``) for the phases' search and the judge's copy; every
phase, the untraced judge too, binds task repositories pruned (``git_untraced.before_untraced``:
copies in a private folder of the process, removed at its exit, a dead process's swept); each
read-only root its own 100,000-entry bound, a cut there a ``git_state`` row; the copy's config an
allowlist. The attacker is the candidate (train-phase code writing the candidate folder the judge
copies; code in any phase) — and, for the changes to honest work, an honest task or operator.
The future is ``FUTURE_SECRET_42`` (``test_task_prune._task``); a host repository outside every
bind holds ``HOST_SECRET_77``. The first line is on (the default) in every attack; each asserts
its attack ran (a control). A win is ``xfail(strict=False)`` asserting the safe outcome, its
reason the mechanism; a stopped attack passes, its docstring saying by what. Results against
9be0aee:

- R1, a bare repository whose ``HEAD`` or ``objects`` is a symbolic link (WON, four ways): git
  itself reads a HEAD link naming ``refs/...`` (``git -c core.preferSymlinkRefs=true clone
  --mirror`` makes one) and follows an ``objects`` link (a store shared by checkouts), but
  ``is_git_dir`` wants a regular ``HEAD`` and an ``objects`` folder: an image's mirror of the
  task so made is no task repository to the train phase's search (bound whole: ``git log --all``
  in the box shows the future) nor to the judge's copy (the link refused, the store — every
  pack — goes across whole as plain folders: the judge's code reads the future from it).
  CLOSED: ``is_git_dir`` takes a HEAD link and ``objects``/``refs`` links, and a bare object
  store (``is_object_store``): the linked HEAD's mirror is pruned, the linked store's is
  hidden (train) or refused (judge), the store it names with it.
- R2, odd bytes around a colon in a store's path (stopped): a quote, backslashes, a trailing
  newline, an escape, non-UTF-8 bytes before ``x:/<host store>`` — ``_quote_path`` quotes what
  git's ``unquote_c_style`` reads back, so host git never falls back to the ':'-split entry.
- R3, the copy's config (stopped): ``Core.HooksPath``, ``FSMonitor``, pager, editor,
  sshCommand, gitProxy, askPass, worktree, excludes/attributes files, ``[core "x"]``,
  ``[Include]``, ``[includeIf]``, diff.external, alias, lfs filters not git-lfs's own, remote
  ``uploadpack``, ``insteadOf``: all dropped. Kept and harmless only through git's own defaults:
  ``remote.*.url`` / ``submodule.*.url`` with ``ext::`` (refused by git's
  ``protocol.ext.allow=never`` — an operator's global config allowing it would run it).
- R4, the untraced judge's read-only bound (WON, honest layout): an operator read path with
  100,000 entries before a task repository — the judge's start cuts its search there, the
  repository beyond is bound whole into the judge's box (its code reads the future); the cut is
  said only in a snapshot nothing reads (untraced: no trace, no row). CLOSED with R5.
- R5, honest work (CHANGED, 0719d2b): the same read path with no repository at all — a dataset
  of 100,000+ files — is now a ``git_state`` row in every traced phase, which the audit reads as
  git storage touched (every run with such data flagged). CLOSED: a read-only folder is searched
  to 2,000,000 entries (``os.scandir``, about a million a second here); a cut that remains
  refuses the phase, traced or not (``ReadPathCut``: the read path and the way out), and the
  operator may name read paths holding no repository in ``EVOTREE_READ_PATHS_WITHOUT_REPOS``
  (not searched).
- R6, honest work (CHANGED, 0719d2b): the judge's start prunes the copy's git directories
  again and hides all past ``MAX_PRUNED`` = 32 (an empty folder bound over each, said only in
  the unread snapshot): a candidate that made 33 repositories in training (a vendored checkout
  per dependency, say) has the 33rd empty in the judge's box, although the copy carried it;
  the copy is searched before the operator's read paths, so with 32 there the operator's own
  task repository is the one left empty. CLOSED: the copy ``copy_regular_files`` made is noted
  (its git directories pruned as it was made) and not searched or pruned again; more than 32
  repositories elsewhere refuse the judge (``PruneError``, the reason said) instead of hiding.
- R7, honest work (CHANGED, 0719d2b): an untraced phase's copies are removed only when the
  evotree process exits: each judge phase leaves one pruned copy of every task repository it
  reached in ``~/.cache/evotree/untraced-copies`` — a long search (many judge phases in one
  process) fills the disk. CLOSED: the runner hands each box's command line to
  ``release_untraced`` when the box is over, which removes that box's copies (atexit the
  backstop).
- R8, the sweep of a dead process's untraced copies (WON, two evotree processes): ``_sweep``
  takes a folder whose pid ``kill(pid, 0)`` does not find for a dead process's; a second evotree
  in another PID namespace (a container sharing the home folder; here bwrap --unshare-pid)
  removes a live process's copies — the ones its judge's box has bound. CLOSED: each folder
  of copies holds a lock file its process flocks while it lives; the sweep takes only a
  folder whose lock it can take.
- R9, a write outside the judge's folders (WON, new with 0719d2b): the pruned copy is bound
  read-write over a task repository (only HEAD, config, refs... read-only on top), one in a
  read-only root too; the judge's copies live in ``~/.cache/evotree/untraced-copies`` until the
  process exits and nothing compares them, so the judge's code writes files of any size there
  (outside ``evidence/eval``), kept after its phase. CLOSED: a repository found in a
  read-only folder is bound read-only (its copy, its store), as the original was.
- R10, honest work (CHANGED, 0719d2b): ``_untraced_root`` makes
  ``~/.cache/evotree/untraced-copies`` with ``mkdir(parents=True, mode=0o700)``: a fresh
  ``evotree/`` gets the umask's mode (0775 under the common umask 002) and fails
  ``owned_private``, so ``before_untraced`` raises ``PruneError`` (the judge:
  ``SandboxUnavailable``) whenever a task repository is in its reach — on a cache that no
  tracer build made private first (the trace off, no C compiler), every judge phase of a
  candidate holding a ``.git`` fails. CLOSED: each folder it makes is 0700, an existing one
  of this user's made 0700.
- R11, linked-worktree git directories the recogniser misses (stopped): ``HEAD`` +
  ``commondir`` (relative ``../../.git`` or the original store's host path), named by ``.git``
  files, go to the judge as plain files (no host git); in its box the relative one names the
  copy's pruned ``.git`` (its HEAD on ``fix`` names nothing there), the absolute one the masked
  original: git fails, no future.
- Leads, not tested (why): a dead process's pid reused by another keeps its copies forever
  (timing); the 300 s host-git limit is the copy's only — the judge's start prunes the copy's
  repositories again with no deadline (600 s a git call, up to 32 repositories), and
  ``before_phase`` has none either, so host time before a judge is about twice the limit (a
  slow pack under it needs minutes to show); a kept ``remote.*.url``/``submodule.*.url`` of
  ``ext::`` runs its command where the operator's global config allows ``protocol.ext``
  (not evotree's default).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_redteam_judge_copy_redteam import (
    HOST_SECRET,
    _box,
    _copy,
    _host_repo,
    _judge_spec,
    _log_all,
)
from test_task_prune import _ENV, SECRET, _commit, _git, _task

from evotree.harness import git_guard, git_phase_search, git_prune, git_untraced
from evotree.harness.sandbox import finish_trace
from evotree.harness.sandbox_spec import SandboxSpec
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture


@pytest.fixture(autouse=True)
def _first_line_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The first line on (the default); a private prune cache and a private folder of untraced
    copies (the host's are left alone)."""
    monkeypatch.delenv(git_prune.ENV_TASK_REPOS, raising=False)
    cache = tmp_path / "prune-cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setattr(git_prune, "_cache_root", lambda: cache)
    untraced = tmp_path / "untraced-copies"
    untraced.mkdir(mode=0o700)
    monkeypatch.setattr(git_untraced, "_untraced_root", lambda: untraced)


def _store_text(objects: Path, tmp_path: Path) -> str:
    """Every object of the store ``objects`` as git prints it, read through a fresh repository
    that names it as an alternate (works with no ``HEAD`` or references beside the store)."""
    reader = tmp_path / f"reader-{len(list(tmp_path.glob('reader-*')))}"
    _git(tmp_path, "init", "-q", "--bare", str(reader))
    (reader / "objects" / "info" / "alternates").write_text(f"{objects}\n")
    proc = subprocess.run(
        ["git", "--git-dir", str(reader), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        env=_ENV,
    )
    return proc.stdout.decode("utf-8", "replace")


def _linked_head_mirror(candidate: Path) -> Path:
    """The image's mirror of the task (all its branches) at candidate/upstream.git, made with
    ``core.preferSymlinkRefs``: its HEAD is a link ``-> refs/heads/main``, which git reads."""
    _git(
        candidate,
        "-c",
        "core.preferSymlinkRefs=true",
        "clone",
        "-q",
        "--no-hardlinks",
        "--mirror",
        "task",
        "upstream.git",
    )
    store = candidate / "upstream.git"
    assert os.readlink(store / "HEAD") == "refs/heads/main"
    return store


def _linked_objects_mirror(candidate: Path) -> Path:
    """The image's mirror of the task whose store is shared: candidate/upstream.git/objects a
    link to candidate/objstore (a plain folder), which git follows."""
    _git(candidate, "clone", "-q", "--no-hardlinks", "--mirror", "task", "upstream.git")
    store = candidate / "upstream.git"
    os.rename(store / "objects", candidate / "objstore")
    os.symlink("../objstore", store / "objects")
    return store


_MIRRORS = {"head-link": _linked_head_mirror, "objects-link": _linked_objects_mirror}


# ------------------------------------------------- R1: a bare repository whose HEAD is a link


@pytest.mark.heavy
@pytest.mark.parametrize("layout", sorted(_MIRRORS))
def test_a_mirror_with_a_linked_head_or_store_is_bound_whole_in_the_train_box(
    tmp_path: Path, seccomp: None, layout: str
) -> None:
    """Stopped (was WON at 9be0aee): ``is_git_dir`` takes a ``HEAD`` link and ``objects``/
    ``refs`` links, and a bare object store (``is_object_store``): the mirror with a linked
    HEAD is pruned at its base (git in the box reads the base, no future); the one whose
    ``objects`` is a link is not self-contained, so it is hidden, and the store it names
    (``objstore/``) is hidden too (git in the box finds no repository)."""
    work = tmp_path / "run" / "candidate"
    _task(work / "task")
    store = _MIRRORS[layout](work)
    spec = SandboxSpec(
        cwd=work, read_only=(tmp_path / "run",), read_write=(work,), trace=tmp_path / "raw.trace"
    )
    proc = _box(spec, _log_all(store))
    snap = json.loads(git_guard.snapshot_path(spec.trace).read_text())
    (tmp_path / "ev").mkdir()
    finish_trace(spec, tmp_path / "ev")
    found = [r["path"] for r in snap["repos"]]
    assert str(work / "task" / ".git") in found, found  # control: the task itself was guarded
    if layout == "head-link":  # pruned: git reads the base
        assert proc.stdout.startswith("rc 0") and "base" in proc.stdout, proc.stdout
        assert str(store) in found, found
    else:  # hidden, with the store it names
        assert not proc.stdout.startswith("rc 0"), proc.stdout + proc.stderr
        said = " ".join(snap["hidden"])
        assert f"{store} could not be pruned" in said, said
        assert f"{work / 'objstore'} could not be pruned" in said, said
    assert SECRET not in proc.stdout, found


@pytest.mark.parametrize("layout", sorted(_MIRRORS))
def test_a_mirror_with_a_linked_head_or_store_goes_whole_into_the_judges_copy(
    tmp_path: Path, layout: str
) -> None:
    """Stopped (was WON at 9be0aee): the copy takes the mirror for a git directory
    (``is_git_dir``: a HEAD link, an ``objects`` link): the linked HEAD's goes across pruned at
    its base; the linked store's is refused (not self-contained), and the store it names
    (``objstore/``, a bare object store) is refused too, never copied as plain folders."""
    candidate = tmp_path / "run" / "candidate"
    _task(candidate / "task")
    _MIRRORS[layout](candidate)
    copy, refused = _copy(candidate, tmp_path)
    assert (copy / "task" / "a.txt").read_text() == "base\n"  # control: the copy ran
    if layout == "head-link":  # pruned: the copy's git reads the base
        assert _git(copy / "upstream.git", "log", "--oneline", "-1").endswith("base"), refused
    else:
        for name in ("upstream.git", "objstore"):
            assert any(
                r.startswith(f"{name}: a git directory that cannot be pruned") for r in refused
            ), refused
    assert SECRET not in _store_text(copy / "task" / ".git" / "objects", tmp_path)  # pruned
    carried = copy / ("upstream.git/objects" if layout == "head-link" else "objstore")
    assert not carried.exists() or SECRET not in _store_text(carried, tmp_path)


# ------------------------------------------------ R2: odd bytes around a colon (host git quoting)

_ODD = {
    "quote-backslashes": 'q"b\\c\\"',
    "trailing-newline": "nl\n",
    "escape-tab-cr": "\x1b[31m\t\r",
    "non-utf8": os.fsdecode(b"\xff\xfe\\"),
    "octal-lookalike": "\\101\\",
}


@pytest.mark.parametrize("odd", sorted(_ODD))
def test_odd_bytes_before_a_colon_never_split_the_store_for_host_git(
    tmp_path: Path, odd: str
) -> None:
    """Stopped: a git directory the candidate made under ``<odd>x:/<host store's path>`` (its
    HEAD the host repository's commit) would, split at ':', point host git at the host's store;
    ``_quote_path`` C-quotes the path (quote, backslash, newline, tab, other control bytes in
    octal, the rest raw) as git's ``unquote_c_style`` reads it, so the entry is never split:
    HEAD names no commit of the store, the directory is refused. Control: an honest clone under
    ``<odd>y:`` goes across pruned, git reads it."""
    candidate = tmp_path / "run" / "candidate"
    _task(candidate / "task")
    head = _host_repo(tmp_path / "host")
    name = _ODD[odd]
    evil = candidate / f"{name}x:" / (tmp_path / "host").relative_to("/")
    evil.mkdir(parents=True)
    _git(evil, "init", "-q", "-b", "main")
    (evil / ".git" / "HEAD").write_text(head + "\n")
    honest = candidate / f"{name}y:" / "proj"
    honest.parent.mkdir()
    _git(candidate, "clone", "-q", "--no-hardlinks", "task", str(honest))
    copy, refused = _copy(candidate, tmp_path)
    carried = copy / honest.relative_to(candidate)
    assert (carried / ".git").is_dir(), refused  # control: the quoted path reached host git whole
    assert _git(carried, "log", "--oneline", "-1").endswith("base")
    evil_copy = copy / evil.relative_to(candidate) / ".git"
    text = _store_text(evil_copy / "objects", tmp_path) if evil_copy.exists() else ""
    assert HOST_SECRET not in text, text[-300:]


# ----------------------------------------------------------- R3: the copy's config (allowlist)

_ARMED = """\
[Core]
\tHooksPath = {hooks}
\tFSMonitor = {prog}
\tpager = {prog}
\teditor = {prog}
\tsshCommand = {prog}
\tgitProxy = {prog}
\taskPass = {prog}
\tworktree = {host}
\texcludesFile = {host}/h.txt
\tattributesFile = {host}/h.txt
[core "x"]
\thooksPath = {hooks}
\tfsmonitor = {prog}
[Include]
\tPath = {inc}
[includeIf "gitdir:/"]
\tpath = {inc}
[remote "origin"]
\turl = ext::sh -c touch% {marker}
\tuploadpack = {prog}
\tfetch = +refs/heads/*:refs/remotes/origin/*
[url "ext::sh -c touch% {marker}% #"]
\tinsteadOf = https://
[filter "lfs"]
\tclean = git-lfs clean -- %f; {prog}
\tprocess = {prog}
\trequired = true
[filter "LFS"]
\tclean = git-lfs clean -- %f
[diff]
\texternal = {prog}
[alias]
\tst = !{prog}
[submodule "s"]
\turl = ext::sh -c touch% {marker}
\tupdate = !{prog}
[user]
\tname = "a\\"\\n[core]\\n\\tfsmonitor = {prog}"
"""
#: The keys the copy's config may hold (git-lfs's own filters aside).
_ALLOWED_KEYS = {
    "core.repositoryformatversion",
    "core.bare",
    "core.filemode",
    "core.logallrefupdates",
    "remote.origin.url",
    "remote.origin.fetch",
    "submodule.s.url",
    "filter.lfs.clean",
    "filter.lfs.required",
    "user.name",
}


def test_the_copys_config_runs_no_program_under_any_spelling(tmp_path: Path) -> None:
    """Stopped: the candidate's repository arms every program and file key under odd case,
    subsections and includes; the judge's copy keeps only ``_KEPT_CONFIG`` (git's own lower-cased
    listing, without includes, so no spelling passes), and a value or subsection that would break
    out of its line is quoted. git's status, diff, log, commit, fetch and submodule update in
    the copy (what a judge would run) run nothing: the kept ``ext::`` urls are refused by git's
    own default (``protocol.ext.allow`` never)."""
    candidate = tmp_path / "run" / "candidate"
    candidate.mkdir(parents=True)
    _git(candidate, "init", "-q", "-b", "main")
    _commit(candidate, "solution.py", "x = 1\n", "base")
    marker = tmp_path / "RAN"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "post-commit", "reference-transaction", "post-checkout"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / hook).chmod(0o755)
    host = tmp_path / "hostdir"
    host.mkdir()
    (host / "h.txt").write_text("*\n")
    inc = tmp_path / "inc.cfg"
    prog = f"touch {marker}; false"
    inc.write_text(f"[core]\n\tfsmonitor = {prog}\n")
    config = candidate / ".git" / "config"
    config.write_text(
        config.read_text()
        + _ARMED.format(hooks=hooks, prog=prog, host=host, inc=inc, marker=marker)
    )
    armed = _git(candidate, "config", "--list", "--show-origin")
    assert "fsmonitor" in armed.lower() and "includeif" in armed.lower()  # control: armed
    (candidate / "solution.py").write_text("x = 2\n")
    copy, refused = _copy(candidate, tmp_path)
    assert not refused, refused
    listed = _git(copy, "config", "--file", ".git/config", "--null", "--list").split("\0")
    kept = dict(item.partition("\n")[::2] for item in listed if item)
    keys = set(kept)
    assert "remote.origin.url" in keys  # control: the config was read, its kept entries kept
    # an unquoted ';' starts a comment: the armed clean filter reads as git-lfs's own, kept
    assert kept.get("filter.lfs.clean", "git-lfs clean -- %f") == "git-lfs clean -- %f"
    assert kept["user.name"].startswith('a"\n[core]')  # one value, its newlines quoted
    env = {**_ENV, "HOME": str(tmp_path), "GIT_CONFIG_GLOBAL": os.devnull}
    for argv in (
        ["status"],
        ["diff", "--stat"],
        ["log", "-1"],
        ["commit", "-q", "-am", "judge"],
        ["fetch", "-q", "origin"],
        ["fetch", "-q", "https://example.invalid/x"],
        ["submodule", "update", "--init"],
    ):
        subprocess.run(["git", "-C", str(copy), *argv], env=env, capture_output=True, timeout=60)
    assert not marker.exists(), "a program of the candidate's config ran"
    assert keys <= _ALLOWED_KEYS, keys - _ALLOWED_KEYS


# --------------------------------------- R4/R5: a read-only root's bound (judge, honest dataset)


#: The dataset's size: one past the read-only bound the red team found (100,000 at 0719d2b)
_FLOOD = 100_001


def _dataset(data: Path) -> None:
    """An operator's read path: ``aaa/`` of 100,001 files (a dataset), then ``zzz/``."""
    flood = data / "aaa"
    flood.mkdir(parents=True)
    for i in range(_FLOOD):
        os.close(os.open(flood / f"{i:06d}", os.O_CREAT | os.O_WRONLY, 0o644))
    (data / "zzz").mkdir()


@pytest.mark.heavy
def test_the_judge_binds_a_repository_beyond_the_read_only_bound_whole(
    tmp_path: Path, seccomp: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped (was WON at 9be0aee: the judge's start cut a read path at 100,000 entries and
    bound the repository beyond whole): each read-only folder is searched to
    ``MAX_READ_ONLY_ENTRIES`` = 2,000,000 entries (``os.scandir``, subfolders only sorted: about
    a million entries a second on a warm cache), so the repository behind the dataset is
    pruned; where a cut remains (the bound set below the dataset here), the judge is refused
    (``ReadPathCut``, said as ``SandboxUnavailable`` naming the read path and the way out,
    ``EVOTREE_READ_PATHS_WITHOUT_REPOS``), never started with the repository whole."""
    from evotree.harness.sandbox_spec import SandboxUnavailable

    root = tmp_path / "run"
    (root / "candidate").mkdir(parents=True)
    data = tmp_path / "data"
    _dataset(data)
    _task(data / "00")  # before the dataset: found (a .git is taken as its folder is read)
    _task(data / "zzz" / "task")
    copy = tmp_path / "judge-candidate"
    copy.mkdir()
    script = _log_all(data / "00" / ".git") + _log_all(data / "zzz" / "task" / ".git")
    proc = _box(_judge_spec(root, copy, (data,)), script)
    first, _, second = proc.stdout.partition("\nrc ")
    assert first.startswith("rc 0") and "base" in first, proc.stdout + proc.stderr
    assert SECRET not in first  # control: the judge's start pruned the repository it found
    assert second.startswith("0") and "base" in second, proc.stdout  # control: git read it
    assert SECRET not in second
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", _FLOOD // 2)
    with pytest.raises(SandboxUnavailable) as refused:
        _box(_judge_spec(root, copy, (data,)), script)
    assert f"the read path {data} could not be searched whole" in refused.value.message
    assert git_guard.ENV_NO_REPOS in str(refused.value.fix)


@pytest.mark.heavy  # 100,001 files made (about 10-17 s)
def test_an_honest_dataset_over_the_bound_is_no_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped (was CHANGED at 0719d2b: a cut in a read-only root was a ``git_state`` row,
    flagging every traced phase of a run reading a dataset of over 100,000 entries): the
    dataset is searched whole (no cut, no row); past the bound (set below it here) the phase is
    refused with the way out (``ReadPathCut``), and a read path the operator names in
    ``EVOTREE_READ_PATHS_WITHOUT_REPOS`` is not searched: no refusal, no row."""
    work = tmp_path / "work"
    work.mkdir()
    data = tmp_path / "data"
    _dataset(data)
    (data / "zzz" / "images").mkdir()
    trace = tmp_path / "raw.trace"
    git_guard.before_phase([work], trace, read_only=[data])
    trace.write_text("")  # the phase ran (its raw trace is there)
    rows = git_guard.after_phase(trace)
    snap = json.loads(git_guard.snapshot_path(trace).read_text())
    assert snap["repos"] == [] and snap["problems"] == [] and snap["hidden"] == [], snap
    assert rows == [], rows
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", _FLOOD // 2)
    with pytest.raises(git_guard.ReadPathCut, match="could not be searched whole"):
        git_guard.before_phase([work], trace, read_only=[data])
    monkeypatch.setenv(git_guard.ENV_NO_REPOS, str(data))
    git_guard.before_phase([work], trace, read_only=[data])
    assert git_guard.after_phase(trace) == []


# ------------------------------------------- R6/R7: the untraced judge's start (honest work)

_MANY = git_guard.MAX_PRUNED + 1


@pytest.mark.parametrize("hidden_one", ["candidates-33rd", "operators-after-32"])
def test_no_repository_is_hidden_in_the_judges_box_by_the_32_cap(
    tmp_path: Path, hidden_one: str
) -> None:
    """Stopped (was CHANGED at 0719d2b: the judge's start pruned the copy's repositories again,
    at most MAX_PRUNED in all, the copy's first, and hid the rest): the copy
    ``copy_regular_files`` made is noted (``note_pruned_copy``: every git directory in it was
    pruned as it was made), and the judge's start neither searches nor prunes it again; the
    cap counts the other folders' repositories only. The copy's 33 repositories stay as the copy
    carried them (pruned, readable); the operator's task repository is bound pruned, none
    hidden."""
    root = tmp_path / "run"
    candidate = root / "candidate"
    candidate.mkdir(parents=True)
    many = _MANY if hidden_one == "candidates-33rd" else _MANY - 1
    for i in range(many):
        repo = candidate / "vendor" / f"dep{i:02d}"
        repo.mkdir(parents=True)
        _git(repo, "init", "-q", "-b", "main")
        _commit(repo, "lib.py", f"v = {i}\n", f"dep {i}")
    copy, refused = _copy(candidate, tmp_path)
    assert not refused and len(list((copy / "vendor").glob("*/.git"))) == many, refused
    fresh = root.parent / "judge-fresh"
    fresh.mkdir()
    planted = root / "evidence" / "eval"
    planted.mkdir(parents=True)
    extra = []
    if hidden_one == "operators-after-32":
        extra = [tmp_path / "data"]
        _task(extra[0] / "task")
    binds = git_untraced.before_untraced([planted], [root, fresh, copy, *extra], [candidate])
    try:
        bound = [dst for _, _, dst in binds if str(dst).endswith("/.git")]
        assert bound == ([extra[0] / "task" / ".git"] if extra else []), binds  # control
        assert not [dst for _, _, dst in binds if copy in dst.parents], binds  # the copy as made
        last = copy / "vendor" / f"dep{many - 1:02d}"
        assert _git(last, "log", "--oneline", "-1").endswith(f"dep {many - 1}")
        hidden = [str(dst) for _, src, dst in binds if str(src).endswith(".hidden")]
        assert hidden == [], hidden
    finally:
        git_untraced.release_untraced([str(src) for _, src, _ in binds])


def test_a_judge_phases_copies_are_gone_when_the_phase_is_over(tmp_path: Path) -> None:
    """Stopped (was CHANGED at 0719d2b: each untraced phase's copies lived until the evotree
    process exited): the runner hands each box's command line to ``release_untraced`` when the
    box is over (``phases.run_phase``), which removes the copies that box bound; another box's,
    still running, are left; atexit stays the backstop. Three judge boxes, one after the other,
    in this process, with a fourth started before them and still running."""
    from evotree.harness.sandbox import release_untraced, wrap
    from evotree.harness.sandbox_launch import accounted, sandbox_env

    data = tmp_path / "data"
    _task(data / "task")
    untraced = tmp_path / "untraced-copies"
    spec = SandboxSpec(cwd=tmp_path, read_only=(data,))
    made = []
    try:
        running = accounted(wrap(spec, ["true"]))  # a box not over yet: its copies stay
        for _ in range(3):
            argv = accounted(wrap(spec, ["git", "--git-dir", str(data / "task" / ".git"), "log"]))
            proc = subprocess.run(argv, capture_output=True, text=True, env=sandbox_env({}))
            assert "base" in proc.stdout and SECRET not in proc.stdout, proc  # control: pruned
            made.append(sorted(p.name for p in untraced.iterdir()))
            release_untraced(argv)
        left = sorted(untraced.iterdir())
        size = sum(p.stat().st_size for d in left for p in d.rglob("*") if p.is_file())
        assert len(left) == 1, f"{len(left)} phases' copies left ({size} bytes): {made}"
        assert [str(d) for d in left if any(w.startswith(str(d)) for w in running)], left
        release_untraced(running)
        assert list(untraced.iterdir()) == []
    finally:
        for folder in list(git_untraced._UNTRACED):
            if untraced in folder.parents:
                git_untraced._UNTRACED.remove(folder)
                shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------- R8: the sweep of dead processes' untraced copies

_SWEEPER = """\
import os, sys
from pathlib import Path
from evotree.harness import git_untraced
print("pid", os.getpid())
git_untraced._sweep(Path(sys.argv[1]))
print("swept", sorted(os.listdir(sys.argv[1])))
"""


@pytest.mark.heavy
def test_the_sweep_leaves_a_live_processs_copies(tmp_path: Path, seccomp: None) -> None:
    """Stopped (was WON at 0719d2b: ``_sweep`` took a pid ``kill(pid, 0)`` could not see for a
    dead process's): each folder of copies holds a lock file its process flocks while it lives
    (``_locked_folder``); the sweep removes only a folder whose lock it can take, whatever PID
    namespace it runs in. Set up as ``before_untraced`` leaves them: the live folder's lock
    held by this process, the dead one's lock file free (its process gone)."""
    import fcntl

    untraced = tmp_path / "untraced-copies"
    live = untraced / f"{os.getpid()}-live"  # this process: alive, its judge phase running
    (live / "phase.git-copies" / "0").mkdir(parents=True)
    (live / "phase.git-copies" / "0" / "HEAD").write_text("ref: refs/heads/main\n")
    held = os.open(live / git_untraced._LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    dead = untraced / "999999999-dead"  # no process holds its lock: swept (control)
    dead.mkdir()
    (dead / git_untraced._LOCK_NAME).write_text("")
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    proc = subprocess.run(
        [
            bwrap,
            "--unshare-pid",
            "--dev-bind",
            "/",
            "/",
            "--proc",
            "/proc",
            sys.executable,
            "-c",
            _SWEEPER,
            str(untraced),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert proc.stdout.startswith("pid "), proc.stdout + proc.stderr[-2000:]  # it ran
    assert int(proc.stdout.split()[1]) != os.getpid()  # another PID namespace
    os.close(held)
    assert not dead.exists(), proc.stdout  # control: a dead process's copies are swept
    assert live.exists(), proc.stdout


# ------------------------------------- R9: the judge writes into its untraced copies (host side)

_WRITE = """\
import os
gd = "{gd}"
with open(os.path.join(gd, "evil.bin"), "wb") as fh:
    fh.write(b"x" * (1 << 20))
with open(os.path.join(gd, "objects", "pack", "evil.pack"), "wb") as fh:
    fh.write(b"y" * (1 << 20))
print("wrote", sorted(os.listdir(gd))[:20])
"""


@pytest.mark.heavy
def test_the_judges_box_writes_nothing_that_outlives_it_outside_its_folders(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped (was WON at 0719d2b: the pruned copy of a repository in a read-only root was
    bound read-write): ``guard_binds`` binds the copy of a repository found in a read-only
    folder read-only, its store too, so the judge's writes there fail (as they would on the
    original). Control: the script ran and tried."""
    root = tmp_path / "run"
    (root / "candidate").mkdir(parents=True)
    data = tmp_path / "data"
    _task(data / "task")
    copy = tmp_path / "judge-candidate"
    copy.mkdir()
    gd = data / "task" / ".git"
    proc = _box(_judge_spec(root, copy, (data,)), _WRITE.format(gd=gd))
    assert "Read-only file system" in proc.stderr, proc.stdout + proc.stderr[-2000:]  # it ran
    assert not (gd / "evil.bin").exists()  # control: the operator's repository is untouched
    untraced = tmp_path / "untraced-copies"
    kept = [str(p.relative_to(untraced)) for p in untraced.rglob("evil.*")]
    assert kept == [], kept


# ------------------------------------------ R10: a group-writable cache folder (honest work)

#: the real private folder of untraced copies (the autouse fixture replaces it in every test)
_REAL_UNTRACED_ROOT = git_untraced._untraced_root


def test_a_fresh_cache_under_umask_002_still_lets_the_judge_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped (was CHANGED at 0719d2b: a fresh ``evotree/`` got the umask's 0775, failed
    ``owned_private``, and ``before_untraced`` raised ``PruneError``): ``_untraced_root`` makes
    each folder it makes 0700 and makes an existing one of this user's 0700, as the tracer
    build does, so the judge's start prunes the repository in its reach."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(git_untraced, "_untraced_root", _REAL_UNTRACED_ROOT)
    data = tmp_path / "data"
    _task(data / "task")
    old = os.umask(0o002)
    try:
        root = git_untraced._untraced_root()
        evotree = tmp_path / "xdg" / "evotree"
        mode = oct(os.lstat(evotree).st_mode & 0o777)
        assert (evotree / "untraced-copies").is_dir()  # control: it was made here, now
        try:
            binds = git_untraced.before_untraced([], [data], [])
        except git_prune.PruneError as exc:
            binds = [("refused", Path(str(exc)), Path())]
    finally:
        os.umask(old)
    assert root is not None, f"evotree/ made {mode}: not private"
    assert any(dst == data / "task" / ".git" for _, _, dst in binds), binds


# ------------------------------- R11: a worktree's git directory the recogniser misses (stopped)


@pytest.mark.heavy
def test_a_worktree_pointer_left_in_the_candidate_reads_nothing_in_the_judges_box(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped: the train phase leaves linked-worktree git directories the recogniser does not
    take (``HEAD`` and ``commondir``, no ``objects/`` or ``refs/``: no git directory to
    ``is_git_dir``, so copied as plain files, no host git run on them), each named by a ``.git``
    file: ``rel`` with ``commondir`` ``../.git`` and ``abs`` with the original task store's host
    path, both HEADs on ``refs/heads/fix`` (or main, the control). In the judge's box the
    relative one names the copy's pruned ``.git`` (no ``fix`` there: only the base) and the
    absolute one the masked original (an empty folder): git finds no future."""
    root = tmp_path / "run"
    candidate = root / "candidate"
    _task(candidate)
    for name, common, head in (
        ("rel", "../../.git", "main"),
        ("relfix", "../../.git", "fix"),
        ("abs", str(candidate / ".git"), "fix"),
    ):
        gd = candidate / "wts" / name
        gd.mkdir(parents=True)
        (gd / "HEAD").write_text(f"ref: refs/heads/{head}\n")
        (gd / "commondir").write_text(common + "\n")
        (gd / "gitdir").write_text(str(candidate / f"wt-{name}" / ".git") + "\n")
        (candidate / f"wt-{name}").mkdir()
        (candidate / f"wt-{name}" / ".git").write_text(f"gitdir: ../wts/{name}\n")
    assert _git(candidate / "wt-relfix", "log", "-1", "-p").find(SECRET) >= 0  # on the host
    copy, refused = _copy(candidate, tmp_path)
    assert (copy / "wts" / "abs" / "commondir").is_file(), refused  # copied as plain files
    script = (
        "import subprocess\n"
        "for name in ('rel', 'relfix', 'abs'):\n"
        f'    out = subprocess.run(["git", "-C", "{copy}/wt-" + name, "log", "-1", "-p"],'
        " capture_output=True, text=True)\n"
        '    print(name, out.returncode, out.stdout.replace("\\n", " | ")[-1500:],'
        " out.stderr[-200:].replace(\"\\n\", ' '))\n"
    )
    proc = _box(_judge_spec(root, copy), script)
    assert proc.stdout.startswith("rel 0") and "base" in proc.stdout, proc.stdout + proc.stderr
    rcs = {line.split(" ")[0]: line.split(" ")[1] for line in proc.stdout.splitlines()}
    assert rcs.get("relfix") not in (None, "0") and rcs.get("abs") not in (None, "0"), rcs
    assert SECRET not in proc.stdout, proc.stdout
