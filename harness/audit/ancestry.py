"""Hash ancestry in the task repository: is a commit the trajectory named or saw the task's base or
an ancestor of it, or from the task's future?

:class:`Ancestry` resolves revision expressions and reference scopes as git does and judges them
by ancestry; :func:`resolve_refs` judges every revision a hit rests on; :func:`future_hashes`
finds hex words of the outputs, commands and text that name future commits; :func:`content_hits`
finds outputs showing what only the future holds (:mod:`evotree.harness.audit.future_content`).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evotree.harness.audit.commands import Hit
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.future_content import HIDDEN_SOURCE, at_hash_place, scan_outputs
from evotree.harness.audit.future_stores import module_stores
from evotree.harness.audit.git_scopes import SCOPE
from evotree.harness.audit.repo_objects import allow_read_extensions, open_repo
from evotree.harness.audit.steps import Trajectory

__all__ = ["Ancestry", "content_hits", "future_hashes", "resolve_refs"]

#: a hex word: git takes a hash in either case (``git show 1A2B3C4`` is ``1a2b3c4``)
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{7,40}(?![0-9A-Za-z])")
_STASH = re.compile(r"^(?:refs/)?stash(?:@\{\d+\})?(?:[~^]\d*|\^\{\w*\})*$")


class Ancestry:
    """Answers "is this hash the base or an ancestor of it?" for one task repository."""

    def __init__(
        self,
        repo: str | os.PathLike[str],
        base: str | None = None,
        *,
        trusted: bool = True,
        hidden_paths: Sequence[str] = (),
        door_paths: Sequence[str] = (),
        grader_paths: Sequence[str] = (),
    ) -> None:
        """``trusted=False`` for a repository and base the candidate's own train phase recorded:
        such an ancestry may find future hashes but never clears a hit (the candidate could have
        named the reference fix itself as the base). ``hidden_paths``: files of the work tree
        the task hides (a ``.rej``, a wheel, an editor's auto-save): their distinctive lines
        join the provenance index. ``door_paths``: hidden paths the task declares doors (a
        tool's leftovers, no grader's data): only the committed future they carry is indexed
        (:func:`~evotree.harness.audit.future_content.build_index`); ``grader_paths``: the
        grader's data, every distinctive line indexed; both join ``hidden_paths``."""
        import pygit2

        self.trusted = trusted
        # a path declared twice takes the stricter role: the grader's, then hidden, then door
        graders = {_clean(g) for g in grader_paths}
        secret = {_clean(h) for h in hidden_paths} | graders
        self.grader_paths = tuple(grader_paths)
        self.door_paths = tuple(d for d in door_paths if _clean(d) not in secret)
        self.hidden_paths = (*hidden_paths, *self.door_paths, *self.grader_paths)

        try:
            allow_read_extensions()
            self.repo = pygit2.Repository(str(repo))
        except (pygit2.GitError, KeyError, ValueError) as exc:
            raise AuditInputError(
                f"{repo}: not a git repository ({exc})",
                fix="pass the task repository (--repo) the trajectory ran in",
            ) from None
        try:
            obj = self.repo.revparse_single(base or "HEAD")
            self.base = obj.peel(pygit2.Commit).id
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise AuditInputError(
                f"{repo}: base {base or 'HEAD'!r} is not a commit ({exc})",
                fix="pass the task's base commit (--base HASH)",
            ) from None
        self.path = str(repo)
        self._cache: dict[str, str] = {}
        self._index: Any = None
        self._modules: dict[str, Ancestry] | None = None
        #: where revision names resolve: this repository, or the one ``git -C`` ran in
        self.names: Any = self.repo
        self._head_is_base = True
        #: read replaced commits as their replacements, as git does by default
        self.replace_objects = True

    def modules(self) -> dict[str, Ancestry]:
        """The ancestry of each submodule's own store, by its path in the task repository, at
        the commit the base pins for it (read once)."""
        if self._modules is None:
            self._modules = {}
            try:
                r = open_repo(self.path)
            except AuditInputError:
                return self._modules
            for sub in module_stores(r.commondir, r.repo, str(self.base)):
                if sub.path:
                    self._modules[sub.path] = Ancestry(sub.gitdir, sub.base, trusted=self.trusted)
        return self._modules

    def run_in(self, folder: str) -> list[Ancestry] | None:
        """Where ``git -C folder`` resolves revisions: this repository (``.``, a folder of its
        own work tree), a submodule's store (its path; ``$sm_path`` of ``git submodule
        foreach``: every submodule), or None for a repository kept inside ``.git`` (a mirror,
        a submodule's store named by its folder), which only content provenance judges."""
        text = folder.strip().rstrip("/")
        root = str(Path(self.repo.workdir or self.repo.path).resolve()).rstrip("/")
        if text.startswith(root + "/"):
            text = text[len(root) + 1 :]
        while text.startswith("./"):
            text = text[2:]
        if text in ("$sm_path", "${sm_path}", "$displaypath", "$path"):
            return list(self.modules().values())
        if text in self.modules():
            return [self.modules()[text]]
        folder_path = Path(root) / text if not text.startswith("/") else Path(text)
        if text == ".git" or text.startswith(".git/") or "/.git/" in text:
            return self._elsewhere(folder_path)
        if self._borrowed(folder_path):
            return self._elsewhere(folder_path)
        return [self]

    def _elsewhere(self, folder: Path) -> list[Ancestry] | None:
        """This ancestry with revision names resolved in the repository at ``folder`` (a store
        kept inside ``.git`` or borrowed as an alternate: its HEAD and branches are its own),
        the commits they name judged against this base; None when it is no repository."""
        import copy

        import pygit2

        allow_read_extensions()
        try:
            names = pygit2.Repository(str(folder), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        except (pygit2.GitError, KeyError, ValueError):
            return None
        other = copy.copy(self)
        other.names, other._head_is_base = names, False
        other._cache, other._modules = {}, {}
        return [other]

    def _borrowed(self, folder: Path) -> bool:
        """Is ``folder`` a repository whose object store this one borrows (an alternate, or an
        alternate's alternate, up to git's own depth of 5)?"""
        try:
            target = folder.resolve()
        except OSError:
            return False
        for store in alternate_stores(Path(self.repo.path)):
            repo_dir = store.parent.parent if store.parent.name == ".git" else store.parent
            if target in (store, store.parent, repo_dir):
                return True
        return False

    def resolve(self, expr: str, *, both_ends: bool = False) -> tuple[str, str | None]:
        """Resolve a revision expression as git does, in this repository, and judge it by
        ancestry: ('ancestor' | 'future' | 'unknown', the future commit's id or None).

        ``rev:path`` is judged by ``rev``; ``A..B`` by ``B`` (what log shows; ``both_ends`` for
        diff, which shows both), ``A...B`` by both; ``^A`` excludes and is not judged. HEAD and
        ``@`` (and ``HEAD~2``, ``@^``) are the trajectory's HEAD: the base. Everything else —
        tags, branches, ``ORIG_HEAD``, ``FETCH_HEAD``, ``stash@{n}``, reflog selectors,
        ``@{-1}``, ``^{}`` — is what the repository says it is."""
        text = expr.strip()
        if text.startswith(SCOPE):
            return self._scope(text)
        if text.startswith(":/") and len(text) > 2:
            return self._resolve_one(text)  # a message search over every reference
        if text.startswith(":"):
            return "ancestor", None  # the index: the working copy's own
        depth = 0
        for at, ch in enumerate(text):  # rev:path — the first colon outside @{...}
            depth += ch == "{"
            depth -= ch == "}"
            if ch == ":" and depth <= 0:
                text = text[:at]
                break
        if "..." in text:
            ends = [e for e in text.split("...", 1)]
        elif ".." in text:
            left, right = text.split("..", 1)
            ends = [left, right] if both_ends else [right]
        else:
            ends = [text]
        states = []
        for end in ends:
            end = end or "HEAD"
            if end.startswith("^"):
                continue
            # X^{tree} / X^{commit} / X^{}: an object of commit X, judged by X
            end = re.sub(r"(?:\^\{(?:tree|commit|object|)\})+$", "", end) or "HEAD"
            states.append(self._resolve_one(end))
        future = next((cid for st, cid in states if st == "future"), None)
        if future is not None:
            return "future", future
        if states and all(st == "absent" for st, _ in states):
            return "absent", None
        if states and all(st in ("ancestor", "absent") for st, _ in states):
            return "ancestor", None
        return "unknown", None

    def _commit_state(self, oid: Any) -> tuple[str, str | None]:
        """The ancestry of the commit an object peels to ('unknown' when it peels to none). As
        git reads objects: a commit with a replace reference (``refs/replace/<id>``) is read
        as its replacement, unless the command turned replacement off."""
        import pygit2

        try:
            commit = self.repo.get(oid).peel(pygit2.Commit)
            if self.replace_objects:
                for _ in range(5):  # git follows a chain of replacements, bounded
                    ref = f"refs/replace/{commit.id}"
                    if ref not in self.names.references:
                        break
                    target = self.names.references[ref].resolve().target
                    commit = self.repo.get(target).peel(pygit2.Commit)
        except (KeyError, ValueError, AttributeError, pygit2.GitError, pygit2.InvalidSpecError):
            return "unknown", None
        cid = commit.id
        if cid == self.base or self.repo.descendant_of(self.base, cid):
            return "ancestor", None
        return "future", str(cid)

    def without_replace(self) -> Ancestry:
        """This ancestry as ``git --no-replace-objects`` resolves (replace references off)."""
        import copy

        other = copy.copy(self)
        other.replace_objects, other._cache = False, {}
        return other

    def _scope(self, token: str) -> tuple[str, str | None]:
        """A reference scope (:data:`evotree.harness.audit.rules.SCOPE`): 'future' when one of the
        references it reads (or the note it shows) is beyond the base, 'absent' when it reads
        none, 'ancestor' when every one is the base or behind it."""
        import pygit2

        kind, _, rest = token[1:].partition(":")
        if kind == "notes":
            ref, _, obj = rest.partition(":")
            if ref not in self.repo.references:
                return "absent", None
            if obj:
                spec = re.sub(r"^(HEAD|@)(?=$|[~^])", str(self.base), obj)
                try:
                    target = self.repo.revparse_single(spec).id
                    self.repo.lookup_note(str(target), ref)
                except KeyError:
                    return "absent", None  # no note on it: git printed an error, nothing shown
                except (ValueError, pygit2.GitError, pygit2.InvalidSpecError):
                    return "unknown", None
            # a note's text is in no commit of the base: reading one reads beyond it
            return "future", str(self.repo.references[ref].resolve().target)
        if kind == "bisect-start":
            return self._bisect_start()
        if kind == "index":
            return self._index_state(rest)
        if kind in ("tagmsg", "tagmsg-rev"):
            return self._tag_messages(kind, rest)
        if kind == "submodule-remote":
            states = [a._scope("*refs:refs/remotes/") for a in self.modules().values()]
            return _combined(states) if states else ("absent", None)
        if kind == "session":
            return self._session(rest)
        if kind == "refs":
            prefixes, tails = [p for p in rest.split(",") if p], []
        elif kind == "show-ref":
            head, _, tail = rest.partition(";")
            prefixes, tails = [p for p in head.split(",") if p], [t for t in tail.split(",") if t]
        else:
            return "unknown", None
        names = [
            n
            for n in self.names.references
            if n.startswith("refs/")
            and (not prefixes or any(_ref_matches(n, p) for p in prefixes))
            and (not tails or any(n == t or n.endswith("/" + t) for t in tails))
        ]
        if not names:
            return "absent", None
        for name in names:
            try:
                oid = self.names.references[name].resolve().target
            except (KeyError, ValueError, pygit2.GitError):
                return "unknown", None
            state = self._commit_state(oid)
            if state[0] != "ancestor":
                return state
        return "ancestor", None

    def _session(self, which: str) -> tuple[str, str | None]:
        """The commit a stopped ``git am`` (``which`` 'am') or rebase holds as its current
        patch: ``rebase-apply/NNNN``'s ``From <id>`` line, ``rebase-merge/stopped-sha``, or
        ``rebase-apply/original-commit``, judged by ancestry ('absent' when no session is
        stopped, 'unknown' when it names no commit of the store)."""
        git_dir = Path(self.repo.path)
        folders = ("rebase-apply",) if which == "am" else ("rebase-merge", "rebase-apply")
        present = [git_dir / f for f in folders if (git_dir / f).is_dir()]
        if not present:
            return "absent", None  # no stopped session: git printed an error, nothing shown
        states = []
        for folder in present:
            for oid in _session_commits(folder):
                try:
                    states.append(self._commit_state(self.repo.revparse_single(oid).id))
                except Exception:  # noqa: BLE001 - not in the store, or not a commit
                    continue
        future = next((st for st in states if st[0] == "future"), None)
        return future or ("unknown", None)

    def _index_state(self, path: str) -> tuple[str, str | None]:
        """What a read of the index (under ``path``; '' for all of it) shows: 'future' (and the
        blob's id) when an entry holds a blob that the base's tree does not hold at that path and
        a commit beyond the base holds there (a staged future, not the working copy's own edit);
        'ancestor' when every entry read is no such blob, 'absent' when none is read."""
        import pygit2

        try:
            entries = list(self.repo.index)
            tree = self.repo.get(self.base).peel(pygit2.Commit).tree
        except (pygit2.GitError, ValueError, AttributeError, KeyError):
            return "unknown", None
        future = self.index().objects
        prefix = path.strip("/")
        read = False
        for entry in entries:
            if prefix and entry.path != prefix and not entry.path.startswith(prefix + "/"):
                continue
            read = True
            try:
                in_base = tree[entry.path].id == entry.id
            except (KeyError, ValueError):
                in_base = False
            if not in_base and self._in_future_tree(entry.path, entry.id, future):
                return "future", str(entry.id)
        return ("ancestor", None) if read else ("absent", None)

    def _tag_messages(self, kind: str, rest: str) -> tuple[str, str | None]:
        """What reading annotated tags' text shows: 'future' (and the tag object's id) when a
        tag's message holds a line, a subject or an id that only history beyond the base holds
        (the commit it points at may be an ancestor: its text is not); 'ancestor' when every
        tag read holds none, 'absent' when no annotated tag is read."""
        import pygit2

        tags = []
        if kind == "tagmsg-rev":
            try:
                obj = self.names.revparse_single(rest)
            except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
                obj = None
            tags = [obj] if obj is not None and obj.type_str == "tag" else []
        else:
            patterns = [p for p in rest.split(",") if p]
            for name in self.names.references:
                if patterns and not any(_ref_matches(name, p) for p in patterns):
                    continue
                try:
                    obj = self.repo.get(self.names.references[name].target)
                except (KeyError, ValueError, pygit2.GitError):
                    continue
                if obj is not None and obj.type_str == "tag":
                    tags.append(obj)
        if not tags:
            return "absent", None
        index = self.index()
        for tag in tags:
            if scan_outputs(index, [tag.message or ""]):
                return "future", str(tag.id)
        return "ancestor", None

    def _in_future_tree(self, path: str, oid: Any, future: dict[str, str]) -> bool:
        """Whether a commit beyond the base holds blob ``oid`` at ``path`` (a blob the working
        copy wrote itself is in no such commit, though the base does not reach it either)."""
        if future.get(str(oid)) != "blob":
            return False
        for cid, kind in future.items():
            if kind != "commit":
                continue
            try:
                if self.repo.get(cid).tree[path].id == oid:
                    return True
            except (KeyError, ValueError, AttributeError):
                continue
        return False

    def _bisect_start(self) -> tuple[str, str | None]:
        """Where ``git bisect reset`` returns: the branch or commit ``BISECT_START`` names
        ('absent' when no bisect is in progress)."""
        import pygit2

        try:
            name = (Path(self.repo.path) / "BISECT_START").read_text().strip()
        except OSError:
            return "absent", None
        for spec in (f"refs/heads/{name}", name):
            try:
                return self._commit_state(self.repo.revparse_single(spec).id)
            except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
                continue
        return "unknown", None

    def _resolve_one(self, rev: str) -> tuple[str, str | None]:
        import pygit2

        key = "\x00" + rev
        cached = self._cache.get(key)
        if cached is not None:
            state, _, cid = cached.partition(" ")
            return state, cid or None
        spec = rev
        if self._head_is_base:
            spec = re.sub(r"^(HEAD|@)(?=$|[~^])", str(self.base), rev)
        if _STASH.match(rev) and "refs/stash" not in self.names.references:
            self._cache[key] = "absent "
            return "absent", None  # the task repository holds no stash: there was nothing to read
        obj = None
        try:
            obj = self.names.revparse_single(spec)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError, AttributeError):
            result: tuple[str, str | None] = self._object_state(spec, obj)
        else:
            result = self._commit_state(commit.id)
        self._cache[key] = f"{result[0]} {result[1] or ''}"
        return result

    def index(self) -> Any:
        """The :class:`~evotree.harness.audit.future_content.ProvenanceIndex` of this repository and
        base (built once, on first use)."""
        if self._index is None:
            from evotree.harness.audit.future_content import build_index

            self._index = build_index(
                self.path, str(self.base), self.hidden_paths, self.door_paths, self.grader_paths
            )
        return self._index

    def _object_state(self, word: str, obj: Any = None) -> tuple[str, str | None]:
        """A hex word naming a blob or a tree (no commit to peel to): 'future' (and its id)
        when only history beyond the base holds it (the provenance index's objects);
        'ancestor' for a blob or tree the repository holds that is no such object (the base's
        history reaches it); 'unknown' otherwise."""
        if not re.fullmatch(r"[0-9a-fA-F]{7,40}", word):
            return "unknown", None
        index = self.index()
        if obj is not None and getattr(obj, "type_str", "") in ("blob", "tree"):
            oid = str(obj.id)
            return ("future", oid) if oid in index.objects else ("ancestor", None)
        found = index.object_for(word)
        if found is not None and found[1] in ("blob", "tree"):
            return "future", found[0]
        return "unknown", None

    def status(self, word: str) -> str:
        """'ancestor' (the base or before it), 'future' (a commit not behind the base, or a blob
        or tree that only history beyond it holds), or 'unknown' (no such object, ambiguous, or
        an object of the base's that is no commit)."""
        cached = self._cache.get(word)
        if cached is not None:
            return cached
        import pygit2

        obj = None
        try:
            obj = self.repo.revparse_single(word)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            result = self._object_state(word, obj)[0]
        else:
            cid = commit.id
            result = (
                "ancestor"
                if cid == self.base or self.repo.descendant_of(self.base, cid)
                else "future"
            )
        self._cache[word] = result
        return result


def _without_commands(text: str | None, commands: Sequence[str]) -> str | None:
    """The observation text without the commands the trajectory typed (each where it occurs in
    order): a line of its own command is its own work, not something an output showed."""
    if not text:
        return text
    parts, pos = [], 0
    for command in commands:
        at = text.find(command, pos) if command else -1
        if at < 0:
            continue
        parts.append(text[pos:at])
        pos = at + len(command)
    return "".join(parts) + text[pos:]


#: git follows alternates this deep (its own limit)
MAX_ALTERNATE_DEPTH = 5


def alternate_stores(git_dir: Path) -> list[Path]:
    """The object stores ``git_dir`` borrows (``objects/info/alternates``, followed the way git
    follows them: relative to the store that names them, nested up to
    :data:`MAX_ALTERNATE_DEPTH`)."""
    found: list[Path] = []
    todo = [(git_dir / "objects", 0)]
    while todo:
        store, depth = todo.pop()
        if depth >= MAX_ALTERNATE_DEPTH:
            continue
        try:
            lines = (store / "info" / "alternates").read_text().splitlines()[:64]
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                path = (store / line).resolve() if not line.startswith("/") else Path(line)
            except OSError:
                continue
            if path not in found:
                found.append(path)
                todo.append((path, depth + 1))
    return found


_FROM_LINE = re.compile(r"^From ([0-9a-f]{40}) ", re.M)


def _session_commits(folder: Path) -> list[str]:
    """The commit ids a stopped am / rebase folder names for its patches (bounded reads)."""
    found: list[str] = []
    for name in ("stopped-sha", "original-commit"):
        try:
            found += re.findall(r"\b[0-9a-f]{7,40}\b", (folder / name).read_text()[:200])
        except OSError:
            continue
    try:
        patches = sorted(p for p in folder.iterdir() if re.fullmatch(r"\d{4}", p.name))[:64]
    except OSError:
        patches = []
    for patch in patches:
        try:
            with open(patch, encoding="utf-8", errors="replace") as fh:
                found += _FROM_LINE.findall(fh.read(200))
        except OSError:
            continue
    return found


def _ref_matches(name: str, pattern: str) -> bool:
    """``git for-each-ref``'s pattern match: a glob, or a prefix ending at a ``/``."""
    if any(c in pattern for c in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return name == pattern or name.startswith(pattern.rstrip("/") + "/")


_NO_REPLACE = re.compile(r"--no-replace-objects|GIT_NO_REPLACE_OBJECTS=(?!0|false|no)")
_GLOBAL = r"(?:-c\s+\S+|--[\w-]+(?:=\S+)?|-[pP])\s+"
_RUN_IN = re.compile(rf"^git\s+(?:{_GLOBAL})*-C\s+(\"[^\"]*\"|'[^']*'|\S+)")
_GIT_SUB = re.compile(rf"^git\s+(?:{_GLOBAL}|-C\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s+)*")


def resolve_refs(hit: Hit, ancestry: Ancestry) -> tuple[str, str | None]:
    """The ancestry of every revision a hit rests on: 'future' (and the commit) when one is beyond
    the base, 'ancestor' when all are the base or behind it, 'unknown' otherwise. A command run
    with ``git -C DIR`` resolves where git would: in a submodule's store for a submodule's path
    (every submodule for ``git submodule foreach``'s ``$sm_path``)."""
    if _NO_REPLACE.search(hit.command):
        ancestry = ancestry.without_replace()
    m = _RUN_IN.match(hit.command)
    if m:
        where = ancestry.run_in(m.group(1).strip("'\""))
        if where is None:
            return "unknown", None
        if where != [ancestry]:
            states = [_resolve_hit(hit, a) for a in where] or [("absent", None)]
            return _combined(states)
    return _resolve_hit(hit, ancestry)


def _resolve_hit(hit: Hit, ancestry: Ancestry) -> tuple[str, str | None]:
    both = _GIT_SUB.sub("git ", hit.command).startswith(
        ("git diff", "git difftool", "git range-diff")
    )
    return _combined([ancestry.resolve(ref, both_ends=both) for ref in hit.refs])


def _combined(states: list[tuple[str, str | None]]) -> tuple[str, str | None]:
    future = next((s for s in states if s[0] == "future"), None)
    if future is not None:
        return future
    if states and all(s[0] == "absent" for s in states):
        return "absent", None
    if states and all(s[0] in ("ancestor", "absent") for s in states):
        return "ancestor", None
    return "unknown", None


def _clean(path: str) -> str:
    """A declared hidden path as the index reads it (no surrounding blanks or slashes)."""
    return path.strip().strip("/")


def content_hits(traj: Trajectory, ancestry: Ancestry) -> list[Hit]:
    """Content provenance (:mod:`evotree.harness.audit.future_content`): outputs showing what only
    the task's future holds, whatever command printed them."""

    found = scan_outputs(
        ancestry.index(),
        [s.output for s in traj.steps],
        [s.command for s in traj.steps],
        _without_commands(traj.text, [s.command for s in traj.steps]),
    )
    hits = []
    for c in found:
        command = traj.steps[c.step].command if c.step >= 0 else "(observation text)"
        if c.kind == "object":
            kind = ancestry.index().objects.get(c.commit, "object")
            if kind in ("commit", "tag") and c.commit not in ancestry.index().foreign:
                # hash ancestry reports these (audit.future_hash), with commands and text too
                continue
            where = " of a submodule's store" if c.commit in ancestry.index().foreign else ""
            rule = f"output shows future {kind}{where} {c.commit[:12]}"
        elif c.kind == "line" and c.commit.startswith(HIDDEN_SOURCE):
            rule = f"output shows a line only the hidden {c.commit[len(HIDDEN_SOURCE) :]} holds: "
            rule += repr(c.what[:80])
        elif c.kind == "line":
            rule = f"output shows a line future commit {c.commit[:12]} adds: {c.what[:80]!r}"
        elif c.kind == "tag":
            rule = f"output shows tag {c.what} of future commit {c.commit[:12]}"
        else:
            rule = f"output shows the subject of future commit {c.commit[:12]}: {c.what[:80]!r}"
        named = () if c.commit.startswith(HIDDEN_SOURCE) else (c.commit,)
        hits.append(Hit("audit.future_content", c.severity, rule, command[:300], named, c.line))
    return hits


def future_hashes(traj: Trajectory, ancestry: Ancestry) -> list[str]:
    """The hex words (in either case, as git reads them) of the outputs, commands and text that
    name commits beyond the base."""
    words: dict[str, None] = {}
    texts = [s.output for s in traj.steps if s.output] + [s.command for s in traj.steps]
    if traj.text:
        texts.append(traj.text)
    for text in texts:
        for m in _HEX.finditer(text):
            word = m.group(0).lower()
            if not word.isdigit() or at_hash_place(text, m.start()):
                words.setdefault(word, None)
    return [w for w in words if ancestry.status(w) == "future"]
