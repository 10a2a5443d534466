"""Task repositories a traced phase may write: what of their ``.git`` is locked, and what changed.

The runtime trace judges git by its command lines and by opens of git storage by programs that
are not the machine's git. A phase that changes what a plain spelling means walks around both:
``.git/HEAD`` written, renamed over or replaced by a link to name another branch (then plain
``git log``), an upstream written into ``.git/config``, ``.git/objects`` renamed out of git's
layout and read by hand, a ref made a link to another. So, for every git directory found in a
traced phase's read-write folders before it starts (:func:`find_git_dirs`):

- the sandbox binds it onto itself (a mount point: it cannot be renamed, replaced or removed),
  ``HEAD``, ``config``, ``packed-refs``, ``commondir``, ``shallow``, ``refs/``, ``logs/`` and
  ``info/`` read-only, ``objects/`` onto itself (it cannot be renamed; new objects can be
  written): :func:`guard_binds`. git still reads everything, and ``status``, ``diff``, ``add``
  (the index) work; what moves a reference (``commit``, ``checkout`` of a branch, ``stash``)
  fails;
- its state is recorded outside the sandbox before the phase (:func:`snapshot`: the entries of
  the git directory with device, inode, change time and content hash, every reference's value)
  and compared after it (:func:`compare`): a git directory moved, replaced or linked, a locked
  file or reference changed, an entry that points git elsewhere (``commondir``, ``worktrees``,
  ``gitdir``) or a part that could not be locked (a linked ``HEAD``, a ``.git`` that is a link)
  is a change, which the trace seals as a ``git_state`` row and the audit flags;
- what identifies it for the trace's judgement of git's reads (:func:`task_repositories`: its
  object store, HEAD and references by device and inode, what its HEAD names): a git process
  that read its objects through a HEAD or reference of the phase's own is a finding
  (:func:`evotree.harness.audit.trace.judge_git_reads`).

The module's concerns lie in their own modules, this one binding them at a phase's start and
reading them after it: the search (:mod:`evotree.harness.git_search`), what one phase's start
searches, hides or refuses (:mod:`evotree.harness.git_phase_search`), the state record and its
comparison (:mod:`evotree.harness.git_snapshot`), and an untraced phase's copies
(:mod:`evotree.harness.git_untraced`, above this one).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from evotree.harness import git_prune
from evotree.harness.git_phase_search import ENV_NO_REPOS, ReadPathCut, _lift_long, _search
from evotree.harness.git_search import find_git_dirs
from evotree.harness.git_snapshot import (
    SNAPSHOT_SUFFIX,
    _head_commit,
    _read_small,
    compare,
    snapshot,
    snapshot_path,
)
from evotree.harness.git_stores import is_git_dir, is_object_store

__all__ = [
    "ENV_NO_REPOS",
    "SNAPSHOT_SUFFIX",
    "ReadPathCut",
    "is_git_dir",
    "is_object_store",
    "after_phase",
    "before_phase",
    "compare",
    "find_git_dirs",
    "guard_binds",
    "snapshot",
    "snapshot_path",
    "take_notes",
    "task_repositories",
]

#: Files of a git directory bound read-only when they are there (regular files).
_LOCKED_FILES = ("HEAD", "config", "packed-refs", "commondir", "shallow")
#: Folders bound read-only when they are there.
_LOCKED_DIRS = ("refs", "logs", "info")
#: How many task repositories in folders the candidate's code can write (the read-write folders,
#: a read-only one holding one: the run directory) one phase's start copies (pruned); the rest
#: are hidden, said. It bounds the host work a candidate can cause; the folders only the operator
#: writes (the judge's tree, the operator's read paths) are pruned whatever their number: the
#: operator's task (a git library's tests ship a hundred fixture repositories) sets that work.
MAX_PRUNED = 32
#: How long host git may run in all to prune one phase's start's task repositories (the judge's
#: copy has the same bound, ``sandbox_copy.PRUNE_SECONDS``); past it a repository is hidden,
#: never bound whole.
PRUNE_SECONDS = 300.0


def guard_binds(
    git_dirs: Sequence[Path | tuple[Path, Path]],
    read_only: Iterable[Path] = (),
) -> tuple[list[tuple[str, Path, Path]], list[str]]:
    """(bubblewrap binds that lock ``git_dirs`` as the module says, what could not be locked).

    Each bind is ``(option, source, destination)``; a git directory given as ``(box path,
    source)`` is bound from ``source`` (its pruned copy, :mod:`evotree.harness.git_prune`) onto
    the box path, its locks taken from the source's entries. One whose box path is in
    ``read_only`` (found in a read-only folder) is bound read-only whole, its store too: the
    phase writes nothing into its copy, as it could write nothing into the original."""
    binds: list[tuple[str, Path, Path]] = []
    problems: list[str] = []
    frozen = set(read_only)
    for item in git_dirs:
        gd, src = (item, item) if isinstance(item, Path) else item
        ro = gd in frozen
        binds.append(("--ro-bind" if ro else "--bind", src, gd))
        for name in (*_LOCKED_FILES, *_LOCKED_DIRS, "objects"):
            path = src / name
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                if name in ("HEAD", "objects", "refs"):
                    problems.append(f"{gd / name} is missing: the repository cannot be locked")
                continue
            except OSError as exc:
                problems.append(f"{gd / name} cannot be read ({exc.strerror})")
                continue
            want_dir = name in (*_LOCKED_DIRS, "objects")
            if stat.S_ISLNK(mode):
                problems.append(f"{gd / name} is a symbolic link: it cannot be locked")
            elif want_dir != stat.S_ISDIR(mode) or not (want_dir or stat.S_ISREG(mode)):
                problems.append(f"{gd / name} is not a {'folder' if want_dir else 'regular file'}")
            else:
                rw = name == "objects" and not ro
                binds.append(("--bind" if rw else "--ro-bind", path, gd / name))
    return binds, problems


def before_phase(
    read_write: Iterable[Path | str],
    trace: Path | str,
    read_only: Iterable[Path | str] = (),
    skip: Iterable[Path | str] = (),
    *,
    written: Iterable[Path | str] = (),
) -> list[tuple[str, Path, Path]]:
    """Find the task repositories in ``read_write`` and ``read_only`` (a cut search of a
    read-write folder is a problem: a row after the phase; of a read-only one,
    :class:`ReadPathCut`), bind each as a copy pruned at its base
    (:mod:`evotree.harness.git_prune`; whole with ``EVOTREE_TASK_REPOS=whole``), record their
    state beside ``trace`` (replacing any file there, never following a link) and return the
    binds that put them in place and lock them. A store nested in another's work tree, or lying
    in none (beside a checkout), that shares the history of that one (of a checkout the phase
    sees) — a vendored or sibling mirror or clone of the task, a submodule's store that is the
    task — is pruned at that one's base (:func:`~evotree.harness.git_prune.prune_related`): its
    own HEAD may be the fix. The checkouts, pruned first, are tried against one another both
    ways (:func:`~evotree.harness.git_prune.relate_checkouts`: a clone at the fix beside the
    task's checkout is pruned at the task's base); once all are pruned, every store's copy is
    tried so against every checkout's future, nested checkouts too
    (:func:`~evotree.harness.git_prune.cross_checked`). A repository that cannot be
    pruned (a HEAD of garbage, a store git cannot read, a nested one sharing the history of one
    that could not be pruned) is hidden from the phase — an empty folder bound over
    it, said in the snapshot's ``hidden`` — which leaves nothing to reach, so it is no finding.
    ``skip``: folders not searched (masked in the box). The cap :data:`MAX_PRUNED` counts the
    repositories of folders the candidate can write only; those of read-only folders only the
    operator writes are all pruned; those past it are hidden, which fails only what the
    candidate's own code left. ``written``: read-only folders the candidate's code writes
    besides those holding a read-write one (the shared cache): a cut search of one hides the
    folders beyond the cut (:func:`~evotree.harness.git_phase_search._search`). What is hidden
    is said in the snapshot's ``hidden`` and kept for the run's record (:func:`take_notes`)."""
    written = tuple(written)
    git_dirs, problems, said, frozen, operator, cut = _search(read_write, read_only, skip, written)
    git_dirs, cut = _lift_long(git_dirs, cut, [*read_write, *read_only], [*read_write, *skip])
    capped = [gd for gd in git_dirs if gd not in operator]
    git_prune.remove_copies(trace)
    sources = list(git_dirs)
    hidden: list[tuple[str, Path, Path]] = []
    notes: list[str] = []
    copies = git_prune.copies_path(trace)
    if (git_dirs and git_prune.pruning()) or cut:
        copies.mkdir(mode=0o700)
    for j, (path, why) in enumerate(cut):
        empty = copies / f"cut{j}.hidden"
        empty.mkdir(mode=0o700)
        hidden.append(("--ro-bind", empty, path))
        said.append(why)
        notes.append(why)
    if git_dirs and git_prune.pruning():
        over = set(capped[MAX_PRUNED:])
        deadline = time.monotonic() + PRUNE_SECONDS
        index = {gd: i for i, gd in enumerate(git_dirs)}
        outer = git_prune.relations(git_dirs)
        made: dict[Path, git_prune.PrunedCopy] = {}
        done: set[Path] = set()
        pending = list(git_dirs)

        def hide(gd: Path, exc: BaseException) -> None:
            empty = copies / f"{index[gd]}.hidden"
            empty.mkdir(mode=0o700)
            hidden.append(("--ro-bind" if gd in frozen else "--bind", empty, gd))
            said.append(f"{gd} could not be pruned at its base, so it was hidden: {exc}")
            notes.append(said[-1])

        # a store in a folder other versions' code writes (the shared cache) decides nothing
        # about a copy outside it: what one version writes there must not change another's task
        shared = [Path(w) for w in written]
        lenient = {gd for gd in git_dirs if any(w == gd or w in gd.parents for w in shared)}
        first = True
        while pending:
            # an enclosing repository first: a store nested in its work tree is pruned at its base
            ready = [gd for gd in pending if all(o in done for o in outer[gd])]
            for gd in ready or pending:
                i = index[gd]
                try:
                    if gd in over:
                        raise git_prune.PruneError(
                            f"a phase's start copies at most {MAX_PRUNED} task repositories of "
                            "the folders the candidate's code writes"
                        )
                    if not ready:
                        raise git_prune.PruneError(
                            "its enclosing repositories name one another (.git files): no base "
                            "to prune it at can be told"
                        )
                    # a store in the shared cache decides no base of one outside it (R3)
                    mine = [o for o in outer[gd] if o not in lenient or gd in lenient]
                    made[gd] = git_prune.prune_related(
                        gd, copies / str(i), mine, made, deadline=deadline
                    )
                # UnicodeError: a name the candidate wrote that is not UTF-8 - hidden, never a
                # crash
                except (
                    git_prune.PruneError,
                    OSError,
                    subprocess.SubprocessError,
                    UnicodeError,
                ) as exc:
                    hide(gd, exc)
                done.add(gd)
            if first and ready:
                # the checkouts (related to nothing, so ready first) tried against one another,
                # both ways, before any store related to them is pruned at their bases
                tops = {gd: made[gd] for gd in ready if gd in made}
                for gd, change in git_prune.relate_checkouts(
                    tops, deadline=deadline, lenient=lenient
                ).items():
                    if isinstance(change, git_prune.PrunedCopy):
                        made[gd] = change
                    else:
                        del made[gd]
                        hide(gd, change)
            first = False
            pending = [gd for gd in pending if gd not in done]
        if made and len(git_dirs) > 1:
            # every store's final copy tried against every store's future, nested ones too (a
            # .git file or folder above the task's checkout makes it nested: N1), hidden ones
            # at their own HEADs (a bare task store whose pruning passed the deadline)
            against, exempt = git_prune.cross_checked(git_dirs)
            final = git_prune.relate_checkouts(
                made, deadline=deadline, against=against, exempt=exempt, lenient=lenient
            )
            for gd, change in final.items():
                if isinstance(change, git_prune.PrunedCopy):
                    made[gd] = change
                else:
                    del made[gd]
                    hide(gd, change)
        git_dirs = [gd for gd in git_dirs if gd in made]
        sources = [made[gd].path for gd in git_dirs]
    binds, more = guard_binds(list(zip(git_dirs, sources, strict=True)), frozen)
    target = snapshot_path(trace)
    if target.is_symlink() or target.exists():
        target.unlink()
    with open(target, "x", encoding="utf-8") as fh:
        json.dump(snapshot(git_dirs, [*problems, *more], sources) | {"hidden": said}, fh)
    if notes:
        with _NOTES_LOCK:
            _NOTES[str(copies)] = notes
    return [*hidden, *binds]


#: What each phase's start hid (a repository past the cap or not prunable, a folder beyond a
#: cut), by the folder of its copies (which the box's command line names): for the run's record.
_NOTES: dict[str, list[str]] = {}
#: Phases run in threads of one process (the local executor): ``_NOTES`` changes under it.
_NOTES_LOCK = threading.Lock()


def take_notes(argv: Iterable[str]) -> list[str]:
    """What the start of the box whose command line is ``argv`` hid, once (for the run's
    record: the untraced judge has no trace to seal a row in, and the snapshot is read by no
    person)."""
    words = [str(word) for word in argv]
    out: list[str] = []
    with _NOTES_LOCK:
        for key in [k for k in _NOTES if any(w.startswith(k + os.sep) for w in words)]:
            out += _NOTES.pop(key)
    return out


def after_phase(trace: Path | str) -> list[dict[str, Any]]:
    """The ``git_state`` rows of the phase traced into ``trace`` (:func:`compare`); no snapshot
    where the raw trace exists is itself a row (the repositories could not be compared)."""
    path = snapshot_path(trace)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        if os.path.lexists(trace):
            return [
                {
                    "kind": "git_state",
                    "path": str(path),
                    "change": "no record of the task repositories before the phase: not compared",
                }
            ]
        return []
    except OSError as exc:
        return [
            {
                "kind": "git_state",
                "path": str(path),
                "change": f"the snapshot cannot be read: {exc}",
            }
        ]
    with os.fdopen(fd, "r", encoding="utf-8") as fh:
        try:
            before = json.load(fh)
        except ValueError:
            before = None
    if not isinstance(before, dict):
        return [
            {
                "kind": "git_state",
                "path": str(path),
                "change": "the snapshot is not a record: not compared",
            }
        ]
    return compare(before)


def _load_snapshot(trace: Path | str) -> dict[str, Any] | None:
    """The snapshot of the phase traced into ``trace``, never through a link; ``None`` when
    there is none or it is no record (:func:`after_phase` says so as rows)."""
    try:
        fd = os.open(
            snapshot_path(trace), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        )
    except OSError:
        return None
    with os.fdopen(fd, "r", encoding="utf-8") as fh:
        try:
            before = json.load(fh)
        except ValueError:
            return None
    return before if isinstance(before, dict) else None


def _is_file_entry(entry: Any) -> bool:
    return isinstance(entry, list) and len(entry) >= 3 and entry[0] == "file"


def task_repositories(trace: Path | str) -> list[dict[str, Any]]:
    """The task repositories of the phase traced into ``trace`` as the trace's judgement of git's
    reads needs them: ``path`` (the git directory), ``objects`` (device and inode of its object
    store), ``object_dirs`` (those of the store and of the folders in it, recorded before the
    phase), ``object_files`` (those of its loose objects and packs, recorded before the phase), ``known`` (device and inode of its HEAD, ``packed-refs`` and every file under
    ``refs/`` and ``logs/``, recorded before the phase), ``head`` (HEAD's text) and
    ``head_commit`` (what it names), ``head_file`` (whether HEAD was a regular file: one that is
    a link is read by git without an open), ``state_ids`` (the commits its state pointers, such
    as ``ORIG_HEAD``, named before the phase), ``pointers`` (``commondir``, ``info/grafts``: those
    that could be there before the phase, locked). Empty without a snapshot."""
    before = _load_snapshot(trace)
    out: list[dict[str, Any]] = []
    for repo in (before or {}).get("repos") or []:
        entries = repo.get("entries") or {}
        objects = entries.get("objects")
        if not isinstance(objects, list) or len(objects) < 3:
            continue
        known = [
            [e[1], e[2]]
            for e in [
                entries.get("HEAD"),
                entries.get("packed-refs"),
                *(repo.get("refs") or {}).values(),
            ]
            if isinstance(e, list) and len(e) >= 3 and e[0] == "file"
        ]
        gd = Path(str(repo.get("path")))
        src = Path(str(repo.get("source") or gd))
        head = (
            repo["head"] if isinstance(repo.get("head"), str) else _read_small(src / "HEAD") or ""
        )
        out.append(
            {
                "path": str(gd),
                "objects": [objects[1], objects[2]],
                "object_dirs": [
                    list(d) for d in repo.get("object_dirs") or () if isinstance(d, list)
                ],
                "object_files": [
                    list(f) for f in repo.get("object_files") or () if isinstance(f, list)
                ],
                "known": known,
                "state_ids": [str(i) for i in repo.get("state_ids") or ()],
                "head": head.strip(),
                "head_commit": repo.get("head_commit") or _head_commit(src, head),
                "head_file": _is_file_entry(entries.get("HEAD")),
                # what may point git elsewhere and was there (locked) before the phase
                "pointers": [
                    name
                    for name, there in (
                        ("commondir", _is_file_entry(entries.get("commondir"))),
                        ("info/grafts", isinstance(entries.get("info"), list)),
                    )
                    if there
                ],
            }
        )
    return out
