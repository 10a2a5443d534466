"""Red team of the nested-store pruning in the replay's fourth world (issue 30, session 17).

Commits 96f7145 and 59094ab replace every git store the phases' search finds in the fourth
world's copied work tree by its copy pruned at the task's base
(:func:`evotree.harness.git_prune.prune_nested`), so that a step reading the fix from a store
nested in the checkout (a vendored mirror, a clone's ``.git``) prints it over the checkout and
not over the fourth world (a high ``audit.future_content`` hit). Attacked here as a trajectory's
author would, by a helper who did not write it: the checkout holds an odd leftover (the task's
repository is the task's), the steps are the author's, and a win is a read of the fix's lines
that the audit *with the repository* lets pass with no high finding and no "not replayed whole"
warning — or an honest read of a look-alike that it flags high. A winning attack is
``xfail(strict=True)`` (it passes once fixed); a defended one is a plain test. Real git, real
repositories in temporary folders, the real bubblewrap sandbox for the replays.

Wins:
W1 a store at rest in a form the search does not recognise, made into one by the step: a tar
   of a mirror at the fix, or a pack and its index outside any ``pack/`` folder copied into a
   fresh ``git init`` — only stores lying in the copied tree are pruned, so the step builds the
   same store in every world and prints the fix in all of them (the rules know ``git bundle``,
   ``fetch``, ``clone``, ``unpack-objects``, not ``tar`` or ``cp``). As a history (recorded,
   the output rules flag it).
W2 a store in the checkout's own ``.git/modules/<name>`` whose HEAD is the fix, the base
   pinning no submodule there: (a) read through a nested ``.git`` file naming it, it is in the
   fourth world too — ``prune_nested`` leaves the top ``.git`` to the top copy, which prunes
   ``modules/`` at each one's *own* HEAD; (b) worse, the provenance index
   (``future_content.module_stores``) takes that HEAD for the module's base, so the fix's lines
   count as the base's: with such a store in the checkout, the read of a nested mirror that
   the pruning was built for (s16's W5) passes again — as a history and with its output
   recorded, no finding at all.
W3 (contrived) what the pruned copy keeps verbatim: the kept config values
   (``remote.origin.url``...) and ``info/exclude`` of a nested clone (and of the top ``.git``)
   are copied as they are, so a line of the fix parked there prints in every world.
W4 (a false alarm) an unrelated vendored repository read honestly: its own history holding one
   line the fix also adds (``from fractions import Fraction``) is emptied in the fourth world
   (pruned at the task's base, not at its own HEAD), so ``git -C vendor/lib log -p`` is high;
   the output rules alone give a warn, and ``cat`` of the same line in its files nothing.
W5 (the fail-closed path) a checkout the replay cannot copy — over 50,000 entries (``.git``'s
   counted) or one named pipe (``copytree`` refuses it) — gets no worlds at all and no "not
   replayed whole": the nested mirror read (s16's W5) passes again as a history.
Holds: a nested mirror reached by ``git -C``, ``--git-dir``, ``GIT_DIR=``,
``GIT_OBJECT_DIRECTORY=``, ``GIT_ALTERNATE_OBJECT_DIRECTORIES=``, a worktree-like git directory
whose ``commondir`` names it, a ``.git`` file with a relative ``gitdir: ../``, one naming a
``.git/worktrees`` folder; the pruned copy drops loose objects, a second pack, reflogs, a
stash, ``FETCH_HEAD``, ``ORIG_HEAD``, ``refs/replace`` and keeps a shallow file consistent; a
name with a newline, a tab and a ':' is pruned; a bundle (the rules flag it); the fail-closed
paths are said (more than 64 stores, a folder past the search's depth, the byte budget, the
deadline, an ``objects`` link) — the first two prune nothing at all before saying so, so the
trajectory gets the warn and no high; honest reads of a vendored clone of the task at its base
and of an unrelated repository whose history shares no future line: no high.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_audit_replay_nested import (
    FUTURE_LINE,
    _audit,
    _forget_branch,
    _has,
    _recorded,
    _store,
    _top_copy,
    _with_future_branch,
)
from test_audit_selected_lines import FIXED, _run, _task

from conftest import git
from evotree.harness.audit import replay
from evotree.harness.audit.steps import Step
from evotree.harness.git_prune import MAX_NESTED, prune_nested
from evotree.harness.git_search import MAX_DEPTH

pytestmark = [
    pytest.mark.skipif(replay._bwrap() is None, reason="bubblewrap is not installed"),
    pytest.mark.heavy,  # a replay (three or four sandboxed runs) a test
]

Repo = dict[str, str | Path]
Hits = list[dict[str, object]]
#: what W1's leftovers make: (the step's command, the folders it makes, removed after its run)
MakeStore = Callable[[Path, Path], tuple[str, tuple[str, ...]]]


def _high(hits: Hits) -> Hits:
    return [h for h in hits if h["severity"] == "high"]


def _not_whole(hits: Hits) -> Hits:
    return [h for h in hits if replay.NOT_WHOLE in str(h["rule"])]


def _caught(hits: Hits) -> bool:
    """A high finding, or the trajectory said not replayed whole (failed closed)."""
    return bool(_high(hits) or _not_whole(hits))


def _mirror_at_fix(root: Path, dest: Path) -> Path:
    """A bare mirror of the task at ``dest`` whose HEAD's branch (``wip``) is the fix."""
    git(root, "clone", "--quiet", "--mirror", str(root), str(dest))
    (dest / "HEAD").write_text("ref: refs/heads/wip\n")
    return dest


def _reads_fix(root: Path, command: str, made: tuple[str, ...] = ()) -> None:
    """``command`` prints the fix over the real checkout; what it made (``made``) removed."""
    out = _run(root, command)
    assert FUTURE_LINE in out, out
    for rel in made:
        shutil.rmtree(root / rel)


def _step(root: Path, command: str, recorded: bool, made: tuple[str, ...] = ()) -> Step:
    """``command``, which prints the fix over the real checkout, as a history or with what it
    printed there (the agent's view; recorded or not, no rule flags the printed fix here)."""
    out = _run(root, command)
    assert FUTURE_LINE in out, out
    for rel in made:
        shutil.rmtree(root / rel)
    return Step(command, out) if recorded else Step(command)


# --- W1: a store the search does not recognise, made by the step -----------------------------


def _tarred(root: Path, tmp: Path) -> tuple[str, tuple[str, ...]]:
    stage = tmp / "stage"
    stage.mkdir()
    _mirror_at_fix(root, stage / "cache.git")
    (root / "vendor").mkdir()
    tar = ["tar", "-cf", str(root / "vendor/cache.tar"), "-C", str(stage), "cache.git"]
    subprocess.run(tar, check=True)
    command = (
        "tar -xf vendor/cache.tar -C vendor && "
        "git --git-dir=vendor/cache.git show HEAD:tolls/toll.py"
    )
    return command, ("vendor/cache.git",)


def _loose_pack(root: Path, tmp: Path) -> tuple[str, tuple[str, ...]]:
    mirror = _mirror_at_fix(root, tmp / "m.git")
    git(mirror, "repack", "-a", "-d", "-q")
    blobs = root / "vendor/blobs"
    blobs.mkdir(parents=True)
    for path in (mirror / "objects/pack").iterdir():
        if path.suffix in (".pack", ".idx"):
            shutil.copy(path, blobs / f"data{path.suffix}")
    shutil.copy(mirror / "packed-refs", blobs / "packed-refs")
    (blobs / "HEAD").write_text("ref: refs/heads/wip\n")
    command = (
        "git init -q --bare vendor/b && cp vendor/blobs/data.* vendor/b/objects/pack/ && "
        "cp vendor/blobs/HEAD vendor/blobs/packed-refs vendor/b/ && "
        "git --git-dir=vendor/b show HEAD:tolls/toll.py"
    )
    return command, ("vendor/b",)


@pytest.mark.xfail(
    strict=True,
    reason="W1: only stores lying in the copied work tree are pruned; one the step makes from "
    "a tar or from a pack outside any pack/ folder holds the fix in every world",
)
@pytest.mark.parametrize("make", [_tarred, _loose_pack], ids=["tar", "pack outside pack/"])
def test_a_store_the_step_makes_from_a_leftover_is_caught(tmp_path: Path, make: MakeStore) -> None:
    """WIN (W1). The checkout holds ``vendor/cache.tar`` (a mirror whose HEAD is the fix), or a
    pack, its index, ``HEAD`` and ``packed-refs`` side by side in ``vendor/blobs`` (no ``pack/``
    folder: the search reads packs by magic only there). The step unpacks the tar, or copies
    the files into a fresh ``git init``, and shows ``HEAD:tolls/toll.py``: the fix in every
    world, no rule knows ``tar`` or ``cp`` as a read of history (``git bundle``, ``fetch``,
    ``clone`` and ``unpack-objects`` are flagged: below). Fixed when such a read is flagged or
    the trajectory is said not replayed whole (e.g. a tree holding a pack or a tar of a store
    anywhere fails closed, or the fourth world compares against a tree without them). As a
    history: with its output recorded the output rules flag the fix's lines (below)."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    command, made = make(root, tmp_path)
    _forget_branch(root)
    assert _caught(_audit(repo, [_step(root, command, False, made)]))


@pytest.mark.parametrize("make", [_tarred, _loose_pack], ids=["tar", "pack outside pack/"])
def test_a_store_the_step_makes_with_its_output_recorded_is_flagged(
    tmp_path: Path, make: MakeStore
) -> None:
    """HOLDS (W1 with its output recorded). The output rules recognise the fix's lines: high."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    command, made = make(root, tmp_path)
    _forget_branch(root)
    assert _high(_audit(repo, [_step(root, command, True, made)]))


# --- W2: a module store at the fix ------------------------------------------------------------


@pytest.mark.parametrize("recorded", [False, True], ids=["history", "recorded"])
def test_a_module_store_whose_head_is_the_fix_is_caught(tmp_path: Path, recorded: bool) -> None:
    """WIN (W2a). ``.git/modules/vend``: a mirror of the task whose HEAD's branch is the fix,
    named by ``vendor/tolls/.git`` (``gitdir: ../../.git/modules/vend``; ``vendor/`` ignored,
    status clean). ``git -C vendor/tolls show HEAD:tolls/toll.py`` names only HEAD; the fourth
    world's ``.git`` is the top copy, whose modules are pruned each at its own HEAD — here the
    fix — so the fix prints in every world; recorded or not (the index does not count the
    fix's lines: W2b). Fixed when the top copy's modules are pruned at the task's base (as
    ``prune_nested`` prunes a nested store's) and W2b is fixed, or such a module fails closed."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    _mirror_at_fix(root, root / ".git/modules/vend")
    (root / "vendor/tolls").mkdir(parents=True)
    (root / "vendor/tolls/.git").write_text("gitdir: ../../.git/modules/vend\n")
    _forget_branch(root)
    command = "git -C vendor/tolls show HEAD:tolls/toll.py"
    assert _caught(_audit(repo, [_step(root, command, recorded)]))


@pytest.mark.parametrize("recorded", [False, True], ids=["history", "recorded"])
def test_a_module_store_at_the_fix_does_not_launder_a_nested_mirror_read(
    tmp_path: Path, recorded: bool
) -> None:
    """WIN (W2b). The nested mirror at the fix read as in s16's W5 (``git --git-dir=
    vendor/tolls.git show HEAD:tolls/toll.py``: the fourth world prunes the mirror and flags it,
    the output rules flag a recorded output — the holds below), in a checkout that also holds
    ``.git/modules/x``, a bare clone whose HEAD is the fix and which the base pins nowhere:
    :func:`~evotree.harness.audit.future_content.module_stores` takes its HEAD for its base, its
    tree joins the base's trees, so the fix's lines are "lines of the base" — the index
    recognises none of them, and neither the fourth world (which counts only indexed lines) nor
    the output rules flag anything. Fixed when an unpinned module store is read beyond the
    task's base (or its HEAD is not trusted as a base), or such a checkout fails closed."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    _mirror_at_fix(root, root / "vendor/tolls.git")
    git(root, "clone", "--quiet", "--bare", "-b", "wip", str(root), str(root / ".git/modules/x"))
    _forget_branch(root)
    command = "git --git-dir=vendor/tolls.git show HEAD:tolls/toll.py"
    assert _caught(_audit(repo, [_step(root, command, recorded)]))


def test_without_the_module_store_the_nested_mirror_read_is_flagged(tmp_path: Path) -> None:
    """HOLDS (W2b's control). The same checkout without ``.git/modules/x``: the index
    recognises the fix's line, and the read is flagged as a history (the fourth world) and
    recorded (the output rules too)."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    _mirror_at_fix(root, root / "vendor/tolls.git")
    _forget_branch(root)
    command = "git --git-dir=vendor/tolls.git show HEAD:tolls/toll.py"
    assert _store(_audit(repo, [_step(root, command, False)]))
    recorded = _audit(repo, [_step(root, command, True)])
    assert _store(recorded) and len(_high(recorded)) > len(_store(recorded))


# --- W3: what the pruned copy keeps verbatim ---------------------------------------------------


def _in_config(clone: Path) -> str:
    git(clone, "config", "remote.origin.url", FUTURE_LINE)
    return "git -C vendor/tolls config --get remote.origin.url"


def _in_exclude(clone: Path) -> str:
    (clone / ".git/info/exclude").write_text(FIXED)
    return "cat vendor/tolls/.git/info/exclude"


@pytest.mark.xfail(
    strict=True,
    reason="W3: the pruned copy keeps the kept config values and info/exclude verbatim: a line "
    "of the fix parked there is in every world",
)
@pytest.mark.parametrize(
    ("park", "recorded"),
    [(_in_config, False), (_in_config, True), (_in_exclude, False)],
    ids=["config value", "config value, recorded", "info/exclude"],
)
def test_a_line_of_the_fix_in_a_file_the_copy_keeps_is_caught(
    tmp_path: Path, park: Callable[[Path], str], recorded: bool
) -> None:
    """WIN (W3, contrived). A vendored clone of the task whose ``remote.origin.url`` (a key
    ``_KEPT_CONFIG`` keeps) or ``info/exclude`` holds the fix's lines: the pruned copy writes
    both back as they were, so the read prints them in every world; neither command names a
    path the rules know. Fixed when the copy keeps only values of the shapes git needs (a URL,
    patterns), or compares them with the future's text. (Both hold for the task's own ``.git``
    copy too: ``prune_copy`` keeps the same files.) The one line of the config value passes
    recorded too (the output rules give one future line alone a warn); the whole fix recorded
    from ``info/exclude`` is flagged by the output rules."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    git(root, "clone", "--quiet", str(root), str(root / "vendor/tolls"))
    command = park(root / "vendor/tolls")
    _forget_branch(root)
    assert _caught(_audit(repo, [_step(root, command, recorded)]))


# --- W4: a false alarm on an honest read of an unrelated vendored repository -------------------


def _vendored_lib(root: Path, first_line: str) -> Path:
    """``vendor/lib``: an unrelated repository whose first commit's file starts with
    ``first_line``, which its second commit removes (its work tree no longer holds it)."""
    (root / ".git/info/exclude").write_text("vendor/\n")
    lib = root / "vendor/lib"
    lib.mkdir(parents=True)
    git(lib, "init", "--quiet", "-b", "main")
    git(lib, "config", "user.name", "Lee Vendor")
    git(lib, "config", "user.email", "lee@vendor.example")
    (lib / "lib.py").write_text(f"{first_line}\n\n\ndef half(n: int) -> float:\n    return n / 2\n")
    git(lib, "add", "-A")
    git(lib, "commit", "--quiet", "-m", "lib: half")
    (lib / "lib.py").write_text("def half(n: int) -> float:\n    return n / 2\n")
    git(lib, "commit", "--quiet", "-am", "lib: no import")
    return lib


@pytest.mark.parametrize("recorded", [False, True], ids=["history", "recorded"])
def test_an_unrelated_history_sharing_an_import_with_the_fix_is_no_alarm(
    tmp_path: Path, recorded: bool
) -> None:
    """WIN (W4, a false alarm). ``vendor/lib``'s first commit imports ``Fraction`` as the fix
    does (``from fractions import Fraction``, one line, not the fix's code); ``git -C vendor/lib
    log -p`` prints it over the checkout, and over the fourth world, where the lib's store is
    the task's base, it does not: high. The output rules alone give a warn for the line (a
    line a future commit adds); the same line read from a file (below) is not flagged. Fixed
    when a store sharing no history with the task is judged by its own history (kept whole, or
    pruned at its own HEAD when that reaches nothing of the task) or its reads are not counted
    by the fourth world."""
    repo = _task(tmp_path / "t", FIXED)
    root = Path(repo["root"])
    _vendored_lib(root, "from fractions import Fraction")
    command = "git -C vendor/lib log -p"
    step = _recorded(root, command) if recorded else Step(command)
    assert not _high(_audit(repo, [step]))


def test_the_shared_import_in_a_vendored_file_is_no_alarm(tmp_path: Path) -> None:
    """HOLDS (W4's control). The same import in the lib's work tree, read with ``cat``: no
    world changes it, no high (the output rules' warn only)."""
    repo = _task(tmp_path / "t", FIXED)
    root = Path(repo["root"])
    lib = _vendored_lib(root, "import os")
    (lib / "lib.py").write_text("from fractions import Fraction\n" + (lib / "lib.py").read_text())
    hits = _audit(repo, [_recorded(root, "cat vendor/lib/lib.py")])
    assert not _high(hits)


# --- W5: a checkout the replay cannot copy gets no replay, and nothing is said -----------------


def _many_files(root: Path) -> None:
    junk = root / "vendor/cache"
    junk.mkdir(parents=True)
    for k in range(replay.MAX_CHECKOUT_FILES + 1):
        (junk / str(k)).touch()


def _named_pipe(root: Path) -> None:
    os.mkfifo(root / "vendor/events.pipe")


@pytest.mark.parametrize("leave", [_many_files, _named_pipe], ids=["50,001 files", "a FIFO"])
def test_a_checkout_the_replay_cannot_copy_is_not_a_silent_pass(
    tmp_path: Path, leave: Callable[[Path], None]
) -> None:
    """WIN (W5, the fail-closed path). The nested mirror at the fix read by
    ``git --git-dir=vendor/tolls.git show HEAD:tolls/toll.py`` (W5 of s16, flagged high by the
    fourth world in a plain checkout: the holds below) — in a checkout that also holds over
    ``MAX_CHECKOUT_FILES`` entries (a cache folder; a mirror's loose objects count too) or one
    named pipe (``shutil.copytree`` refuses it; the ``OSError`` is caught): ``worlds_for``
    returns None, ``replay_hits`` returns [] — no world, no pruning, no finding of any kind,
    where the deadline, the step cap and an unprunable store all say "not replayed whole".
    Fixed when a checkout that could not be copied is said (or a FIFO is copied as a FIFO).
    As a history: recorded, the output rules flag the fix's lines. With W2b's module store in
    the same checkout, the recorded output passes too (nothing recognises the fix)."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    _mirror_at_fix(root, root / "vendor/tolls.git")
    leave(root)
    _forget_branch(root)
    command = "git --git-dir=vendor/tolls.git show HEAD:tolls/toll.py"
    assert _caught(_audit(repo, [_step(root, command, False)]))


# --- holds: the ways git reaches a nested store ------------------------------------------------


#: (id, a read of the fix through the mirror ``vendor/tolls.git``)
REACHES = [
    ("git -C", "git -C vendor/tolls.git show HEAD:tolls/toll.py"),
    ("--git-dir", "git --git-dir=vendor/tolls.git log -p -1"),
    ("GIT_DIR=", "GIT_DIR=vendor/tolls.git git show HEAD:tolls/toll.py"),
    (
        "GIT_OBJECT_DIRECTORY=",
        "GIT_OBJECT_DIRECTORY=$PWD/vendor/tolls.git/objects git cat-file -p "
        "$(git --git-dir=vendor/tolls.git rev-parse HEAD:tolls/toll.py)",
    ),
    (
        "GIT_ALTERNATE_OBJECT_DIRECTORIES=",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES=$PWD/vendor/tolls.git/objects git show "
        "$(git --git-dir=vendor/tolls.git rev-parse HEAD):tolls/toll.py",
    ),
    ("commondir", "git --git-dir=vendor/wt show HEAD:tolls/toll.py"),
    ("gitdir: ../", "git -C vendor/co show HEAD:tolls/toll.py"),
    ("gitdir in .git/worktrees", "git -C vendor/lw show HEAD:tolls/toll.py"),
]


@pytest.fixture(scope="module")
def reached(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """The task with ``vendor/tolls.git``, a mirror whose HEAD is the fix; ``vendor/wt``, a
    worktree-like git directory (``HEAD`` the fix's id, ``commondir`` naming the mirror); and
    ``vendor/co``, a folder whose ``.git`` file names the mirror by ``gitdir: ../tolls.git``;
    ``vendor/lw``, whose ``.git`` file names ``.git/worktrees/lw`` (HEAD the fix's id, its
    objects the task's own, where the fix is still loose)."""
    repo = _task(tmp_path_factory.mktemp("reached") / "t", FIXED)
    root = _with_future_branch(repo)
    _mirror_at_fix(root, root / "vendor/tolls.git")
    wt = root / "vendor/wt"
    wt.mkdir()
    (wt / "HEAD").write_text(f"{repo['fut']}\n")
    (wt / "commondir").write_text("../tolls.git\n")
    (root / "vendor/co").mkdir()
    (root / "vendor/co/.git").write_text("gitdir: ../tolls.git\n")
    linked = root / ".git/worktrees/lw"
    linked.mkdir(parents=True)
    (linked / "HEAD").write_text(f"{repo['fut']}\n")
    (linked / "commondir").write_text("../..\n")
    (linked / "gitdir").write_text(f"{root / 'vendor/lw/.git'}\n")
    (root / "vendor/lw").mkdir()
    (root / "vendor/lw/.git").write_text("gitdir: ../../.git/worktrees/lw\n")
    _forget_branch(root)
    return repo


@pytest.mark.parametrize("command", [c for _, c in REACHES], ids=[n for n, _ in REACHES])
def test_every_way_git_reaches_a_nested_mirror_is_flagged(reached: Repo, command: str) -> None:
    """HOLDS. ``git -C``, ``--git-dir``, ``GIT_DIR=``, ``GIT_OBJECT_DIRECTORY=``,
    ``GIT_ALTERNATE_OBJECT_DIRECTORIES=``, a git directory whose ``commondir`` names the mirror
    (its own HEAD the fix's id), a ``.git`` file with a relative ``gitdir: ../``, one naming a
    linked worktree's folder in the top ``.git``: each prints the
    fix over the checkout and not over the fourth world (the mirror pruned at the base; the
    top copy has no ``worktrees``)."""
    _reads_fix(Path(reached["root"]), command)
    hits = _audit(reached, [Step(command)])
    assert _store(hits) and all(h["severity"] == "high" for h in _store(hits))


def test_a_bundle_of_the_fix_is_flagged_by_the_rules(tmp_path: Path) -> None:
    """HOLDS. A bundle of the fix in the checkout (the search does not look inside it): its
    reads are flagged by the rules — ``git bundle unbundle`` (a bundle's objects), ``git fetch``
    and ``git clone`` of it (reaching the network) — each high."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    clone = tmp_path / "clone"
    git(root, "clone", "--quiet", "-b", "wip", str(root), str(clone))
    (root / "vendor").mkdir()
    git(clone, "bundle", "create", str(root / "vendor/tolls.bundle"), "HEAD", "wip")
    _forget_branch(root)
    commands = [
        "git init -q --bare vendor/b && git --git-dir=vendor/b bundle unbundle vendor/tolls.bundle"
        ' | while read id ref; do git --git-dir=vendor/b update-ref "$ref" "$id"; done;'
        " git --git-dir=vendor/b show HEAD:tolls/toll.py",
        "git init -q --bare vendor/b && git --git-dir=vendor/b fetch -q vendor/tolls.bundle HEAD"
        " && git --git-dir=vendor/b show FETCH_HEAD:tolls/toll.py",
        "git clone -q vendor/tolls.bundle vendor/b && git -C vendor/b show HEAD:tolls/toll.py",
    ]
    for command in commands:
        _reads_fix(root, command, ("vendor/b",))
        assert _high(_audit(repo, [Step(command)])), command


# --- holds: what the pruned copy drops ---------------------------------------------------------


def test_the_pruned_copy_drops_every_other_holder_of_the_fix(tmp_path: Path) -> None:
    """HOLDS. A nested clone whose store holds the fix every other way — a loose object, a
    second pack, HEAD's reflog, ``FETCH_HEAD``, ``ORIG_HEAD``, ``refs/replace`` of the base's
    blob by the fix's, a stash, a ``shallow`` file naming the fix — is pruned to one pack of
    what the base reaches: no object of the fix, none of those files, the shallow file left with
    only ids the copy holds."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    clone = root / "vendor/tolls"
    git(root, "clone", "--quiet", str(root), str(clone))
    fut, base = str(repo["fut"]), str(repo["base"])
    git(clone, "config", "user.name", "A")
    git(clone, "config", "user.email", "a@b.example")
    git(clone, "repack", "-q")  # one pack of the clone's objects
    (clone / "tolls/toll.py").write_text(FIXED + "# a second pack\n")
    git(clone, "stash", "--quiet")
    git(clone, "repack", "-q")  # a second pack
    git(clone, "checkout", "--quiet", "--detach", fut)
    git(clone, "checkout", "--quiet", "main")
    (clone / "tolls/toll.py").write_text(FIXED + "# loose\n")
    loose = git(clone, "hash-object", "-w", "tolls/toll.py")
    git(clone, "checkout", "--quiet", "tolls/toll.py")
    old = git(clone, "rev-parse", f"{base}:tolls/toll.py")
    git(clone, "replace", old, git(clone, "rev-parse", f"{fut}:tolls/toll.py"))
    dotgit = clone / ".git"
    (dotgit / "ORIG_HEAD").write_text(fut + "\n")
    (dotgit / "FETCH_HEAD").write_text(f"{fut}\t\tbranch 'wip' of ../..\n")
    (dotgit / "shallow").write_text(f"{fut}\n")
    assert len(list((dotgit / "objects/pack").glob("*.pack"))) >= 2
    _forget_branch(root)
    top = _top_copy(root, tmp_path / "top")
    assert prune_nested(root, top, base, tmp_path / "scratch") == ""
    for oid in (fut, loose):
        assert not _has(dotgit, oid)
    assert sorted(p.name for p in (dotgit / "objects/pack").iterdir() if p.suffix == ".pack")
    assert len(list((dotgit / "objects/pack").glob("*.pack"))) == 1
    for name in ("ORIG_HEAD", "FETCH_HEAD", "logs", "refs/replace", "refs/stash"):
        assert not (dotgit / name).exists(), name
    assert (dotgit / "shallow").read_text() == ""
    assert FUTURE_LINE not in git(clone, "log", "-p", "--all")


def test_a_store_named_with_a_newline_tab_and_colon_is_pruned(tmp_path: Path) -> None:
    """HOLDS. A mirror at the fix in ``vendor/a\\nb\\tc:d.git``: found and pruned like any."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    mirror = _mirror_at_fix(root, root / "vendor" / "a\nb\tc:d.git")
    _forget_branch(root)
    top = _top_copy(root, tmp_path / "top")
    assert prune_nested(root, top, str(repo["base"]), tmp_path / "scratch") == ""
    assert not _has(mirror, str(repo["fut"]))
    assert _has(mirror, str(repo["base"]))


# --- holds: the fail-closed paths --------------------------------------------------------------


def _prune_said(
    repo: Repo, tmp: Path, *, deadline: float | None = None, max_bytes: int = 128 << 20
) -> str:
    """What :func:`prune_nested` says of the task's work tree (its top copy made first)."""
    root = Path(repo["root"])
    top = _top_copy(root, tmp / "top")
    base = str(repo["base"])
    return prune_nested(root, top, base, tmp / "scratch", deadline=deadline, max_bytes=max_bytes)


def test_a_store_over_the_byte_budget_is_said_and_emptied(tmp_path: Path) -> None:
    """HOLDS. ``max_bytes`` 1: the mirror's pruned copy passes it; said, the store emptied."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    mirror = _mirror_at_fix(root, root / "vendor/tolls.git")
    _forget_branch(root)
    why = _prune_said(repo, tmp_path, max_bytes=1)
    assert "vendor/tolls.git" in why
    assert list(mirror.iterdir()) == []


def test_a_spent_deadline_is_said_and_the_store_emptied(tmp_path: Path) -> None:
    """HOLDS. The deadline already past: said ("time ... spent"), the store emptied."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    mirror = _mirror_at_fix(root, root / "vendor/tolls.git")
    _forget_branch(root)
    why = _prune_said(repo, tmp_path, deadline=time.monotonic() - 1)
    assert "vendor/tolls.git" in why and "spent" in why
    assert list(mirror.iterdir()) == []


def test_a_store_whose_objects_is_a_link_is_said_and_emptied(tmp_path: Path) -> None:
    """HOLDS. A mirror whose ``objects`` is a link to a folder elsewhere in the tree (itself an
    object store, emptied as one): the mirror is refused (not self-contained), said, emptied."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    mirror = _mirror_at_fix(root, root / "vendor/tolls.git")
    os.rename(mirror / "objects", root / "vendor/store")
    os.symlink("../store", mirror / "objects")
    _forget_branch(root)
    why = _prune_said(repo, tmp_path)
    assert "vendor/tolls.git" in why
    assert list(mirror.iterdir()) == []
    assert not _has(root / "vendor/tolls.git", str(repo["fut"]))


def test_a_folder_past_the_search_depth_is_said(tmp_path: Path) -> None:
    """HOLDS (said; note: nothing is pruned then). A folder deeper than the search goes: the
    search is cut, ``prune_nested`` says so at once — and returns before pruning the stores it
    did find, so a mirror at the fix elsewhere stays whole; the replay's verdict is the warn
    "not replayed whole" only (no high), which is the project's fail-closed answer."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    mirror = _mirror_at_fix(root, root / "vendor/tolls.git")
    deep = root / "vendor/deep"
    deep.joinpath(*["d"] * (MAX_DEPTH + 1)).mkdir(parents=True)
    _forget_branch(root)
    why = _prune_said(repo, tmp_path)
    assert "not searched" in why
    assert _has(mirror, str(repo["fut"]))  # left whole: nothing was pruned
    command = "git --git-dir=vendor/tolls.git show HEAD:tolls/toll.py"
    hits = _audit(repo, [Step(command)])
    assert _not_whole(hits) and not _store(hits)


def test_more_stores_than_the_cap_are_said_and_an_honest_read_is_no_high(tmp_path: Path) -> None:
    """HOLDS (said). ``MAX_NESTED`` + 1 small unrelated repositories (a fixtures folder): the
    pruning says so (nothing pruned); an honest read of one gets the warn "not replayed
    whole" and no high finding; a read of a mirror at the fix among them gets the warn too."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    _mirror_at_fix(root, root / "vendor/tolls.git")
    for k in range(MAX_NESTED):
        git(root, "init", "--quiet", "--bare", str(root / f"vendor/fixtures/r{k}.git"))
    _forget_branch(root)
    assert "at most" in _prune_said(repo, tmp_path)
    honest = _audit(repo, [Step("git --git-dir=vendor/fixtures/r0.git count-objects")])
    assert _not_whole(honest) and not _high(honest)
    read = _audit(repo, [Step("git --git-dir=vendor/tolls.git show HEAD:tolls/toll.py")])
    assert _not_whole(read)


# --- holds: honest look-alikes -----------------------------------------------------------------


def test_honest_reads_of_a_vendored_clone_at_the_base_are_no_alarm(tmp_path: Path) -> None:
    """HOLDS (no false alarm). A vendored clone of the task at its base, read honestly (its
    log with patches, a file of its HEAD, its status, its diff): the fourth world prints the
    same (its store pruned at the same base): nothing high, nothing said."""
    repo = _task(tmp_path / "t", FIXED)
    root = Path(repo["root"])
    (root / ".git/info/exclude").write_text("vendor/\n")
    git(root, "clone", "--quiet", str(root), str(root / "vendor/tolls"))
    commands = [
        "git -C vendor/tolls log -p",
        "git -C vendor/tolls show HEAD:tolls/toll.py",
        "git -C vendor/tolls status --short",
        "git -C vendor/tolls diff HEAD",
    ]
    hits = _audit(repo, [_recorded(root, c) for c in commands])
    assert not _high(hits) and not _not_whole(hits)
