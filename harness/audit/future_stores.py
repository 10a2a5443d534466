"""The submodule stores a task repository holds, and the base each is judged from (split off
:mod:`evotree.harness.audit.future_content` on its seam).

The provenance index reads, beside the task repository's own store, every submodule's store under
its git directory's ``modules/`` (nested, bounded by :data:`MAX_MODULE_DEPTH` and
:data:`MAX_MODULE_STORES`), each beyond the commit the base pins for that submodule
(:func:`module_stores`). A store the base pins nothing for is judged by :func:`_unpinned_base`:
one sharing history with the task by the task's base, one holding the task's future never from
its own HEAD, one sharing neither from its own HEAD.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evotree.harness.audit.repo_objects import all_objects, rev_list_objects

__all__ = ["ModuleStore", "module_stores", "MAX_MODULE_DEPTH", "MAX_MODULE_STORES"]


@dataclass(frozen=True)
class ModuleStore:
    """A submodule's own repository under the superproject's ``modules/``, and its base: the
    commit the superproject's base pins at the submodule's path (the module's HEAD when the base
    pins none)."""

    gitdir: Path
    repo: Any
    base: str
    path: str  # the submodule's path in the superproject ("" when the base pins none)


#: how deep ``modules/`` nests (a submodule's submodules) and how many stores are read at most
MAX_MODULE_DEPTH = 4
MAX_MODULE_STORES = 64


def module_stores(commondir: Path, repo: Any, base_id: str, depth: int = 0) -> list[ModuleStore]:
    """Every submodule store under ``commondir/modules`` (nested ones too, up to
    :data:`MAX_MODULE_DEPTH` levels and :data:`MAX_MODULE_STORES` stores), each with the commit
    ``base_id`` pins for it."""
    import pygit2

    root = commondir / "modules"
    if depth >= MAX_MODULE_DEPTH or not root.is_dir():
        return []
    pins = _gitlinks(repo, base_id)
    names = _module_paths(repo, base_id)
    history: list[str] = []  # base_id's history in ``repo``, nearest first (walked once)
    future: list[frozenset[bytes]] = []  # ``repo``'s objects base_id does not reach (listed once)
    found: list[ModuleStore] = []
    todo = [root]
    while todo and len(found) < MAX_MODULE_STORES:
        folder = todo.pop()
        for child in sorted(folder.iterdir()):
            if not child.is_dir() or child.is_symlink():
                continue
            if not ((child / "HEAD").is_file() and (child / "objects").is_dir()):
                todo.append(child)  # a name with slashes: vendor/isodur
                continue
            name = child.relative_to(root).as_posix()
            try:
                sub = pygit2.Repository(str(child), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
            except (pygit2.GitError, KeyError):
                continue
            path = names.get(name, name)
            pin = pins.get(path)
            if pin is None or pin not in sub:
                path, pin = (
                    "",
                    _unpinned_base(sub, child, repo, base_id, history, (commondir, future)),
                )
            if pin is None:
                continue
            found.append(ModuleStore(child, sub, pin, path))
            found += module_stores(child, sub, pin, depth + 1)
            if len(found) >= MAX_MODULE_STORES:
                break
    return found[:MAX_MODULE_STORES]


#: how many commits of a base's history :func:`_unpinned_base` looks through for one a store holds
_MAX_HISTORY = 200_000


def _unpinned_base(
    sub: Any,
    gitdir: Path,
    repo: Any,
    base_id: str,
    history: list[str],
    task: tuple[Path, list[frozenset[bytes]]] | None = None,
) -> str | None:
    """The base of a module store the superproject's base pins nothing for (or a commit it
    lacks). One sharing history with ``repo`` is judged by ``base_id``, never by its own HEAD
    (a deinit'ed module whose HEAD is the fix would make the fix's lines the base's, the s17
    red team's W2b): ``base_id`` when it holds it, else the nearest commit of ``base_id``'s
    history it holds (what the base reaches), else None — it holds only commits of ``repo``
    the base does not reach, and no commit of it is a base (not indexed from it: its shared
    commits are ``repo``'s own). One holding the task's future — any object of ``repo``'s
    store (``task``: its git directory, and the list it is kept in once read,
    :func:`_task_future`) that ``base_id`` does not reach, the empty blob and tree aside — is
    never a base either (an orphan history of the fix's tree, the s17 second red team's R5):
    None. One sharing neither: its own HEAD, as before. ``history``: ``base_id``'s history in
    ``repo``, filled on first use."""
    import pygit2

    from evotree.harness.audit.errors import AuditInputError

    if base_id in sub:
        return base_id
    if not history:
        walker = repo.walk(base_id, pygit2.enums.SortMode.TOPOLOGICAL)
        history.extend(str(c.id) for _, c in zip(range(_MAX_HISTORY), walker))
    nearest = next((oid for oid in history if oid in sub), None)
    if nearest is not None:
        try:
            return str(sub[nearest].peel(pygit2.Commit).id)
        except (KeyError, ValueError, pygit2.GitError):
            return None
    try:
        objects = all_objects(gitdir)
        future = _task_future(Path(repo.path) if task is None else task[0], base_id, task)
    except AuditInputError:
        return None  # a store git cannot list: not trusted for a base
    if any(kind == b"commit" and oid.decode() in repo for oid, kind in objects.items()):
        return None
    if not future.isdisjoint(objects):
        return None
    return _head_of(sub)


#: Objects any store may hold that tell nothing of a task's future: the empty blob and tree.
_EMPTY_OBJECTS = frozenset(
    {
        b"e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
        b"4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        b"473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813",
        b"6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
    }
)


def _task_future(
    commondir: Path, base_id: str, task: tuple[Path, list[frozenset[bytes]]] | None
) -> frozenset[bytes]:
    """The objects of the task's store ``commondir`` that ``base_id`` does not reach (one
    ``cat-file --batch-all-objects`` and one ``rev-list --objects``), the empty blob and tree
    aside; kept in ``task``'s list for the next module store of the same task."""
    if task is not None and task[1]:
        return task[1][0]
    future = frozenset(
        set(all_objects(commondir)) - rev_list_objects(commondir, [base_id]) - _EMPTY_OBJECTS
    )
    if task is not None:
        task[1].append(future)
    return future


def _head_of(repo: Any) -> str | None:
    import pygit2

    try:
        return str(repo.revparse_single("HEAD").peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _gitlinks(repo: Any, base_id: str) -> dict[str, str]:
    """The submodule commits ``base_id``'s tree pins: path -> commit id."""
    import pygit2

    pins: dict[str, str] = {}
    stack = [("", repo.revparse_single(base_id).peel(pygit2.Commit).tree)]
    while stack:
        prefix, tree = stack.pop()
        for entry in tree:
            if entry.filemode == pygit2.GIT_FILEMODE_COMMIT:
                pins[prefix + entry.name] = str(entry.id)
            elif entry.type_str == "tree":
                stack.append((prefix + entry.name + "/", repo[entry.id]))
    return pins


_MODULE_LINE = re.compile(r'^\s*\[submodule\s+"(?P<name>[^"]+)"\]|^\s*path\s*=\s*(?P<path>.+?)\s*$')


def _module_paths(repo: Any, base_id: str) -> dict[str, str]:
    """Submodule name -> path, from the base's ``.gitmodules`` (a name without an entry is its
    own path, git's default)."""
    import pygit2

    try:
        tree = repo.revparse_single(base_id).peel(pygit2.Commit).tree
        text = repo[tree[".gitmodules"].id].data.decode("utf-8", "replace")
    except (KeyError, ValueError, pygit2.GitError):
        return {}
    out: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        m = _MODULE_LINE.match(line)
        if m and m.group("name"):
            name = m.group("name")
        elif m and name:
            out[name] = m.group("path")
    return out
