"""What the machine's git reads *beside* a task repository's own files (issue 29, red team of
ab9a8ad: holes D-L), judged for a git process that read the task repository's objects.

:func:`evotree.harness.audit.trace.judge_git_reads` allows such a process the task's HEAD and
references by identity; these rules judge what else can show it another history:

- a ``commondir`` (a linked worktree's own, writable) whose text does not resolve, as git
  resolves it (relative to its own folder), to a task repository's git directory: git then takes
  references, objects and grafts from a folder of the phase's own (E/F/G);
- a graft file (``info/grafts``) that is not the task repository's own (D, E);
- a task reference file read under another name than its own (a link elsewhere naming the task's
  ``refs/heads/future``: F/G) — references are judged by identity, so the name git read matters;
- ``GIT_COMMON_DIR`` in git's environment naming another folder than a task git directory (D);
- a git state pointer (``ORIG_HEAD``, ``MERGE_HEAD``, ``FETCH_HEAD``, ... ``rebase-*/orig-head``:
  sealed copies whose text is in the row) naming a commit beyond the base — one the task's
  references and reflogs (locked during the phase) or its state pointers before the phase reach
  and its HEAD does not (J, L). A commit of the phase's own (a merge, am or rebase of its own
  work) is none. Any other file the tracer seals and rows beside HEAD (a name under the task's
  ``.git/`` that is not git's own: ``my_head``, red team of 66d31ff K/N) is judged the same way.
- a session file's revisions judged by what git resolves them to, not how they are spelled (red
  team of 66d31ff, L/P/S): a todo command's word (``pick future``, ``pick :/the fix``,
  ``pick 1a2b^{commit}``), a file git reads as one revision (``onto``, ``head``...), a patch's
  ``index`` line. A name is resolved in the task repository (its references are locked during the
  phase: as before it); an abbreviation is every object of the store it could name, whatever
  disambiguation git applied (fails closed); a message search or reflog syntax (``:/``, ``^{/``,
  ``@{``, a leading ``:``) is resolved by state the phase can write or by a search the judge does
  not repeat: a finding whenever the repository holds anything beyond the base.
"""

from __future__ import annotations

import bisect
import os
import posixpath
import re
from collections.abc import Sequence
from typing import Any

from evotree.harness.audit.trace_written import index_file_env

__all__ = ["STATE_FILES", "beside_findings", "is_state_read"]

#: git's state pointers: each names a commit git may act on with no revision on its command line
#: (``am --abort`` resets to ORIG_HEAD, ``log --merge`` walks to MERGE_HEAD, ``commit`` takes
#: MERGE_HEAD/CHERRY_PICK_HEAD as parents ...)
STATE_FILES = frozenset(
    {
        "ORIG_HEAD",
        "MERGE_HEAD",
        "FETCH_HEAD",
        "CHERRY_PICK_HEAD",
        "REVERT_HEAD",
        "REBASE_HEAD",
        "AUTO_MERGE",
        "BISECT_HEAD",
    }
)
#: a rebase session's own pointer to the branch it started from (``rebase --abort`` resets to it)
_STATE_TAILS = ("rebase-merge/orig-head", "rebase-apply/orig-head")
#: a session's folders: every file in them is read by git to act on commits it names (a todo list:
#: ``pick <id>``, ``rebase --continue``, ``cherry-pick --continue``)
_SESSION_DIRS = frozenset({"sequencer", "rebase-merge", "rebase-apply"})
#: a todo list's commands whose first word (after ``-C``/``-c``) git resolves as a commit
_PICKS = frozenset(
    {"pick", "p", "reword", "r", "edit", "e", "squash", "s", "fixup", "f", "drop", "d", "revert"}
)
#: commands whose label words git resolves as ``refs/rewritten/<label>``, else as a revision
_LABELLED = frozenset({"reset", "t", "merge", "m"})
#: a session's files that are todo lists (one command a line)
_TODO_FILES = frozenset({"todo", "git-rebase-todo", "git-rebase-todo.backup", "done"})
#: a session's files git reads as one revision (``onto`` with get_oid: a name works too)
_REV_FILES = frozenset(
    {
        "onto",
        "head",
        "abort-safety",
        "orig-head",
        "stopped-sha",
        "amend",
        "squash-onto",
        "autostash",
        "head-name",
        "original-commit",
    }
)
#: revision syntax resolved by state the phase can write (reflogs, the index) or by a search of
#: commit messages from every reference (``:/text``, ``rev^{/text}``)
_UNSAFE = ("@{", ":/", "^{/")
#: a patch's ``index <old>..<new>`` line (``am -3`` resolves ``<old>`` as a blob: get_oid_blob)
_INDEX = re.compile(r"^index ([0-9a-fA-F]{4,64})\.\.([0-9a-fA-F]{4,64})")
#: git describe's spelling of an abbreviation: ``anything-g<hex>``
_DESCRIBED = re.compile(r"-g([0-9a-fA-F]{4,64})$")
#: a full id at a line's start, in either case (git's hex parser takes A-F too)
_ID = re.compile(r"^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})(?![0-9a-fA-F])")
#: an id or an abbreviation anywhere in a session file's line (git takes 4 hex digits or more)
_WORD = re.compile(r"(?<![0-9A-Za-z])([0-9a-fA-F]{4,64})(?![0-9A-Za-z])")
#: objects walked to tell a tree or blob of the future from the base's (past it: fails closed)
_WALK_LIMIT = 200_000


def is_state_read(row: dict[str, Any]) -> bool:
    """A ``gitread`` row of a state pointer: every HEAD-like file (sealed, its text in the row)
    that is not named ``HEAD`` — a state pointer, a pseudo-reference, a session's file, a name
    under ``.git/`` that is not git's own (the tracer's ``git_layout``)."""
    if row.get("what") != "head":
        return False
    return posixpath.basename(posixpath.normpath(str(row.get("path") or ""))) != "HEAD"


def _in_session(path: str) -> bool:
    """Is ``path`` a file of a sequencer, rebase or am session's folder?"""
    return bool(_SESSION_DIRS & set(posixpath.dirname(path).split("/")))


def _finding(path: str, change: str) -> dict[str, Any]:
    return {"kind": "git_state", "path": path, "change": change}


def _real(path: str) -> str:
    return posixpath.normpath(os.path.realpath(path))


def _git_dirs(repos: Sequence[dict[str, Any]]) -> set[str]:
    """Each task git directory as recorded and as its real path (the tracer's paths are real)."""
    out: set[str] = set()
    for repo in repos:
        path = str(repo.get("path") or "")
        if path:
            out |= {posixpath.normpath(path), _real(path)}
    return out


def _commondir_target(row: dict[str, Any]) -> str:
    """The folder a ``commondir`` read names, as git resolves it: relative to its own folder."""
    text = str(row.get("content", "")).strip()
    where = posixpath.dirname(str(row.get("resolved") or row.get("path") or ""))
    return posixpath.normpath(posixpath.join(where, text)) if text else ""


def beside_findings(
    reads: list[dict[str, Any]],
    exec_row: dict[str, Any] | None,
    repo: dict[str, Any],
    repos: Sequence[dict[str, Any]],
    command: str,
) -> list[dict[str, Any]]:
    """The findings of one git process that read ``repo``'s objects (module doc); ``reads``: its
    ``gitread`` rows, ``exec_row`` its exec (``None``: a fork), ``repos``: every task repository."""
    gds = _git_dirs(repos)
    own = _git_dirs([repo])
    here = f"git ({command}) read the task repository's objects ({repo.get('path')})"
    out: list[dict[str, Any]] = []
    for r in reads:
        if r.get("type") not in ("file", "other"):
            continue
        resolved = str(r.get("resolved") or r.get("path") or "")
        name = posixpath.basename(resolved)
        if r.get("what") == "pointer" and name == "commondir" and "content" in r:
            target = _commondir_target(r)
            if target not in gds and _real(target) not in gds:
                out.append(
                    _finding(
                        resolved,
                        f"{here} through a commondir naming {target[:120]!r}, no task git "
                        "directory: references, objects and grafts of a folder of its own",
                    )
                )
        elif r.get("what") == "pointer" and resolved.endswith("info/grafts"):
            if posixpath.dirname(posixpath.dirname(resolved)) not in own:
                out.append(
                    _finding(
                        resolved, f"{here} with a graft file that is not the task's: {resolved}"
                    )
                )
        elif r.get("what") == "ref":
            out += _renamed_ref(r, resolved, repo, own, here)
    out += _common_dir_env(exec_row, gds, here)
    out += index_file_env(exec_row, gds, here)
    out += _state_findings(reads, repo, here)
    return out


def _renamed_ref(
    row: dict[str, Any], resolved: str, repo: dict[str, Any], own: set[str], here: str
) -> list[dict[str, Any]]:
    """A task reference (by identity) read under a name that is not its own (a link)."""
    known = {tuple(k) for k in repo.get("known") or ()}
    if (row.get("dev"), row.get("ino")) not in known:
        return []
    rel = next(
        (posixpath.relpath(resolved, gd) for gd in own if resolved.startswith(gd + "/")), None
    )
    named = posixpath.normpath(str(row.get("path") or ""))
    if rel is None or named == rel or named.endswith("/" + rel):
        return []
    return [
        _finding(
            named,
            f"{here} through the task's reference {rel} read under another name ({named[:160]}): "
            "a link of the phase's own",
        )
    ]


def _common_dir_env(
    exec_row: dict[str, Any] | None, gds: set[str], here: str
) -> list[dict[str, Any]]:
    """``GIT_COMMON_DIR`` in git's environment naming no task git directory."""
    out = []
    for entry in (exec_row or {}).get("git_env") or ():
        text = str(entry)
        if not text.startswith("GIT_COMMON_DIR="):
            continue
        value = text.split("=", 1)[1]
        cwd = str((exec_row or {}).get("cwd") or "/")
        target = posixpath.normpath(posixpath.join(cwd, value)) if value else ""
        if target not in gds and _real(target) not in gds:
            out.append(
                _finding(target or "(empty)", f"{here} with {text[:160]}: another common dir")
            )
    return out


def _state_findings(
    reads: list[dict[str, Any]], repo: dict[str, Any], here: str
) -> list[dict[str, Any]]:
    """State pointers read whose text names a commit beyond the base (every id of a FETCH_HEAD
    or MERGE_HEAD; a ``ref:`` text by what the task's reference names)."""
    out: list[dict[str, Any]] = []
    judge: _Future | None = None
    for r in reads:
        if not is_state_read(r) or r.get("type") not in ("file", "other"):
            continue
        text = str(r.get("content", ""))
        if judge is None:
            judge = _Future(repo)
        name = posixpath.normpath(str(r.get("path") or ""))
        session = _in_session(name)
        ids = judge.ids(text, anywhere=session)
        unsafe: list[str] = []
        if session:
            for word in revision_words(posixpath.basename(name), text):
                named = judge.revision(word)
                if named is None:
                    unsafe.append(word)
                else:
                    ids += named
        beyond = [i for i in ids if judge.beyond(i)]
        if unsafe and judge.anything_beyond():
            out.append(
                _finding(
                    str(r.get("resolved") or name),
                    f"{here} and {posixpath.basename(name)} naming {unsafe[0][:80]!r}: a "
                    "revision resolved by a message search or by a reflog or index the phase "
                    "can write, in a repository holding commits beyond the base",
                )
            )
        elif beyond:
            out.append(
                _finding(
                    str(r.get("resolved") or name),
                    f"{here} and {posixpath.basename(name)} naming {beyond[0][:40]}, beyond "
                    "the base (a commit the task's references reach and its HEAD does not, or a "
                    "tree, blob or tag only such a commit holds)",
                )
            )
    return out


def revision_words(name: str, text: str) -> list[str]:
    """The words of session file ``name`` that git resolves as revisions: each todo command's
    commit (``pick <rev>``, ``fixup -C <rev>``, ``merge -C <rev> <label>...``, ``reset <label>``),
    the one word of a file git reads as a revision (``onto``), a patch's ``index`` ids."""
    out: list[str] = []
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        m = _INDEX.match(line)
        if m:
            out += [m.group(1), m.group(2)]
            continue
        if name in _REV_FILES and len(words) == 1:
            out.append(words[0])
        if name not in _TODO_FILES and name != "current-fixups":
            continue
        command, args = words[0].lower(), words[1:]
        if command in _PICKS or command in _LABELLED:
            # -C/-c and its commit, apart or glued (git's parser skips "-C" then blanks)
            while args and args[0][:2] in ("-C", "-c"):
                if len(args[0]) > 2:
                    out.append(args[0][2:])
                    args = args[1:]
                elif len(args) >= 2:
                    out.append(args[1])
                    args = args[2:]
                else:
                    break
            if command in _PICKS:
                out += args[:1]
            else:
                out += args[: args.index("#")] if "#" in args else args
    return out


class _Future:
    """Whether a commit is beyond a task repository's base: reached from one of its references or
    reflog entries (locked during the phase: as they were before it) or from what its state
    pointers named before the phase (``state_ids``), and not from what its HEAD names."""

    def __init__(self, repo: dict[str, Any]) -> None:
        self.base = str(repo.get("head_commit") or "")
        self.repo: Any = None
        self.tips: list[Any] = []
        self._future_objects: set[str] | None = None
        self._walk_failed = False
        self._all_ids: list[str] | None = None
        try:
            import pygit2

            from evotree.harness.audit.repo_objects import allow_read_extensions

            allow_read_extensions()
            self.repo = pygit2.Repository(
                str(repo.get("path")), pygit2.enums.RepositoryOpenFlag.NO_SEARCH
            )
            for ref in [*self.repo.references.objects, self.repo.references.get("HEAD")]:
                self.tips += self._tips(ref, pygit2)
            for word in repo.get("state_ids") or ():
                try:
                    self.tips.append(pygit2.Oid(hex=str(word)))
                except (ValueError, TypeError):
                    continue
        except Exception:  # noqa: BLE001 - an unreadable repository: judged closed below
            self.repo = None

    @staticmethod
    def _tips(ref: Any, pygit2: Any) -> list[Any]:
        """What a reference names and every commit of its reflog (``logs/`` is locked: as
        before the phase): an image's reset leaves the future in HEAD's reflog only."""
        out: list[Any] = []
        if ref is None:
            return out
        try:
            out.append(ref.peel(pygit2.Commit).id)
        except Exception:  # noqa: BLE001 - a reference naming no commit
            pass
        try:
            for entry in ref.log():
                out += [entry.oid_old, entry.oid_new]
        except Exception:  # noqa: BLE001 - no reflog
            pass
        return [o for o in out if o and str(o).strip("0")]

    def ids(self, text: str, *, anywhere: bool = False) -> list[str]:
        """The object ids a state pointer's text names (a full id at a line's start, either case;
        ``ref: NAME`` resolved); ``anywhere`` (a session's file: a todo list), every id or
        abbreviation of 4 hex digits or more in a line, resolved in the task's store."""
        out = []
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("ref:"):
                target = self._ref(line[4:].strip())
                if target:
                    out.append(target)
                continue
            if anywhere:
                out += [i for w in _WORD.findall(line) if (i := self._full(w.lower()))]
                continue
            m = _ID.match(line)
            if m:
                out.append(m.group(1).lower())
        return out

    def _full(self, word: str) -> str | None:
        """The full id of the one object ``word`` abbreviates in the task's store (None: none,
        or ambiguous)."""
        if len(word) in (40, 64):
            return word
        if self.repo is None:
            return None
        try:
            obj = self.repo.git_object_lookup_prefix(word)
        except Exception:  # noqa: BLE001 - ambiguous or malformed: names nothing for sure
            return None
        return str(obj.id) if obj is not None else None

    def revision(self, word: str) -> list[str] | None:
        """Every object ``word`` could name as git resolves a revision in the task repository:
        a name (its references, locked during the phase), every object an abbreviation could
        name (ambiguous: all of them, whatever ``core.disambiguate`` or a peel would pick), a
        describe spelling (``x-g<hex>``). ``None``: resolved by state the phase can write or by a
        message search (:data:`_UNSAFE`, a leading ``:``), which the judge does not repeat."""
        if any(u in word for u in _UNSAFE) or word.startswith(":"):
            return None
        if self.repo is None:
            return []
        out: list[str] = []
        try:
            out.append(str(self.repo.revparse_single(word).id))
        except Exception:  # noqa: BLE001 - no such name, ambiguous or bad syntax: below
            pass
        head = re.split(r"[~^:]", word, maxsplit=1)[0]
        rest = word[len(head) :]
        hexes = [head] if re.fullmatch(r"[0-9a-fA-F]{4,64}", head) else []
        m = _DESCRIBED.search(head)
        if m:
            hexes.append(m.group(1))
        for prefix in hexes:
            for oid in self._candidates(prefix.lower()):
                try:
                    out.append(str(self.repo.revparse_single(oid + rest).id))
                except Exception:  # noqa: BLE001 - a peel or path that fails: the object itself
                    out.append(oid)
        return out

    def _candidates(self, prefix: str) -> list[str]:
        """Every object id of the store that starts with ``prefix`` (the one object when it is
        unique; every one when it is ambiguous)."""
        if len(prefix) in (40, 64):
            return [prefix]
        try:
            obj = self.repo.git_object_lookup_prefix(prefix)
            return [str(obj.id)] if obj is not None else []
        except KeyError:
            return []
        except Exception:  # noqa: BLE001 - ambiguous: every object it could name
            if self._all_ids is None:
                self._all_ids = sorted(str(o) for o in self.repo.odb)
            at = bisect.bisect_left(self._all_ids, prefix)
            out = []
            while at < len(self._all_ids) and self._all_ids[at].startswith(prefix):
                out.append(self._all_ids[at])
                at += 1
            return out

    def anything_beyond(self) -> bool:
        """Does the repository hold a commit beyond the base (a tip the base does not reach)?"""
        return self.repo is None or any(self.beyond(str(t)) for t in self.tips)

    def _ref(self, name: str) -> str | None:
        if self.repo is None:
            return None
        try:
            import pygit2

            return str(self.repo.references[name].peel(pygit2.Commit).id)
        except Exception:  # noqa: BLE001 - a name the task does not have: judged by its own read
            return None

    def beyond(self, commit: str) -> bool:
        """Beyond the base (an unreadable repository: every id but the base's, fails closed)."""
        if not commit or commit == self.base:
            return False
        if self.repo is None:
            return True
        try:
            import pygit2

            oid = pygit2.Oid(hex=commit)
            obj = self.repo.get(oid)
            if obj is None:
                return False  # not in the store: names no task object
            if obj.type == pygit2.enums.ObjectType.TAG:
                oid = obj.peel(pygit2.Commit).id  # a tag of the future is the future
            elif obj.type != pygit2.enums.ObjectType.COMMIT:
                return self._future_only(str(oid))  # a tree or blob git can check out
            if self.base and self.repo.descendant_of(pygit2.Oid(hex=self.base), oid):
                return False
            return any(t == oid or self.repo.descendant_of(t, oid) for t in self.tips)
        except Exception:  # noqa: BLE001 - unreadable: fails closed
            return True

    def _future_only(self, oid: str) -> bool:
        """Is tree or blob ``oid`` held by a commit beyond the base (reached by the tips, not by
        the base) and by no commit of the base's history? Past :data:`_WALK_LIMIT` objects, or an
        unreadable store: yes (fails closed)."""
        if self._future_objects is None:
            try:
                self._future_objects = self._objects(self.tips, hide=self.base) - self._objects(
                    [self.base] if self.base else [], hide=""
                )
            except _TooMany:
                self._future_objects = set()
                self._walk_failed = True
        return self._walk_failed or oid in self._future_objects

    def _objects(self, tips: Sequence[Any], hide: str) -> set[str]:
        """Every tree and blob of the commits ``tips`` reach (``hide``'s history left out)."""
        import pygit2

        seen: set[str] = set()
        walker = None
        for tip in tips:
            try:
                if walker is None:
                    walker = self.repo.walk(pygit2.Oid(hex=str(tip)), pygit2.enums.SortMode.NONE)
                else:
                    walker.push(pygit2.Oid(hex=str(tip)))
            except Exception:  # noqa: BLE001 - a tip that is no commit
                continue
        if walker is None:
            return seen
        if hide:
            walker.hide(pygit2.Oid(hex=hide))
        stack = [c.tree for c in walker]
        while stack:
            tree = stack.pop()
            if str(tree.id) in seen:
                continue
            seen.add(str(tree.id))
            if len(seen) > _WALK_LIMIT:
                raise _TooMany
            for entry in tree:
                if entry.type_str == "tree":
                    stack.append(self.repo[entry.id])
                elif entry.type_str == "blob":
                    seen.add(str(entry.id))
        return seen


class _TooMany(Exception):
    """More objects than :data:`_WALK_LIMIT`: the walk stops and the judgement fails closed."""
