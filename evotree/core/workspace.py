"""The workspace: a git repository with an evotree ledger, and ``evotree init``.

A workspace is recognised by its ledger ref, not by a local folder, so a fresh clone that
fetched ``refs/evotree/*`` is a workspace too (``.evotree/`` is created on demand).
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

import pygit2

from evotree.core.config import CONFIG_FILE, Config, parse_config, read_config_text
from evotree.core.config_template import render_template
from evotree.core.errors import (
    AlreadyExists,
    AlreadyInitialized,
    ConfigError,
    EvotreeError,
    NotAWorkspace,
    UnknownVersion,
)
from evotree.core.gitio import Git, Identity
from evotree.core.events import WorkspaceInitialized
from evotree.core.ledger import (
    Event,
    Ledger,
    LedgerEntry,
    LedgerTxn,
    VersionRecord,
    VersionStatus,
    utcnow,
)
from evotree.core.refs import (
    CHAMPION_ALIAS,
    CHAMPION_REF,
    JUDGE_REF,
    LEDGER_REF,
    VersionId,
    branch_name,
    branch_ref,
)
from evotree.core.refstore import RefStore, write_file_tree

__all__ = [
    "STATE_DIR",
    "Workspace",
    "InitResult",
    "init_workspace",
    "judge_path_problem",
    "under_paths",
    "write_judge_commit",
]

STATE_DIR = ".evotree"
ROOT_VERSION = "v0"


class Workspace:
    """An evotree workspace: the repository, its ledger and its (champion's) configuration."""

    def __init__(self, git: Git) -> None:
        self.git = git
        self.ledger = Ledger(git)
        #: the champion commit a verb pinned after verifying the signed chain (gates.trust.in_force)
        self.pinned_commit: str | None = None
        #: how ``run.voided`` events are judged, passed in by the verb layer (the signed policy's
        #: check, evotree.gates.voids.check_void); None: every void is rejected (fail closed)
        self.void_checker: Callable[..., list[str]] | None = None
        #: runs whose driving process had died, marked crashed when the workspace was opened
        self.recovered: list[str] = []

    def pin_in_force(self, commit: str) -> None:
        """Read the configuration from ``commit`` (the verified end of the signed chain) from now
        on, not from ``refs/evotree/champion`` as it may stand later."""
        if commit != self.pinned_commit:
            self.__dict__.pop("config", None)
        self.pinned_commit = commit

    @classmethod
    def open(cls, start: str | os.PathLike[str] = ".") -> Workspace:
        """Open the workspace containing ``start``; :class:`NotAWorkspace` if there is none."""
        git = Git(start)
        ws = cls(git)
        if not ws.ledger.exists():
            raise NotAWorkspace(
                f"{git.root} is a git repository but not an evotree workspace (no {LEDGER_REF})",
                fix="run `evotree init`, or fetch the tree of a shared one: "
                "git fetch origin 'refs/evotree/*:refs/evotree/*' 'refs/heads/evotree/*:refs/heads/evotree/*'",
            )
        return ws

    @property
    def root(self) -> Path:
        return self.git.root

    @property
    def state_dir(self) -> Path:
        """``.evotree/`` (created on first use, with a ``.gitignore`` that ignores all of it)."""
        return ensure_state_dir(self.root)

    @cached_property
    def config(self) -> Config:
        """The configuration in force: ``evotree.toml`` of the champion's commit (never a candidate's)."""
        target = (
            self.git.repo[self.pinned_commit].id
            if self.pinned_commit
            else self.git.ref_target(CHAMPION_REF)
        )
        if target is None:
            champion = self.ledger.meta().get("champion")
            record = self.ledger.snapshot().version(champion) if champion else None
            if record is None:
                return Config()
            target = self.git.repo[record.base_commit].id
        tree = self.git.repo[target].tree
        if CONFIG_FILE not in tree:
            return Config()
        text = self.git.repo[tree[CONFIG_FILE].id].data.decode("utf-8", errors="replace")
        return parse_config(text, source=f"{CONFIG_FILE} (champion {str(target)[:10]})")

    def config_drift(self) -> str | None:
        """A note when the checkout's ``evotree.toml`` differs from the one in force (the champion's):
        an edit there changes nothing until a version carrying it is promoted. None when equal or absent."""
        local = self.root / CONFIG_FILE
        target = (
            self.git.repo[self.pinned_commit].id
            if self.pinned_commit
            else self.git.ref_target(CHAMPION_REF)
        )
        if target is None or not local.is_file() or local.is_symlink():
            return None
        tree = self.git.repo[target].tree
        in_force = self.git.repo[tree[CONFIG_FILE].id].data if CONFIG_FILE in tree else b""
        try:
            if local.read_bytes() == in_force:
                return None
        except OSError:
            return None
        return (
            f"{CONFIG_FILE} in {self.root} differs from the champion's, which is the one in force: the edit "
            "changes nothing until a version that carries it is promoted (commit it on a version: "
            "`evotree branch`, then `evotree promote`)"
        )

    def champion(self) -> str:
        """The id of the current champion version."""
        champion = self.ledger.meta().get("champion")
        if not champion:
            raise NotAWorkspace("the ledger names no champion", fix="re-run `evotree init`")
        return str(champion)

    def resolve(self, name: str, txn: LedgerTxn | None = None) -> VersionRecord:
        """The record of ``name`` (a version id or ``champion``); a clear error if unknown."""
        view = txn or self.ledger.snapshot()
        if name == CHAMPION_ALIAS:
            name = str(view.meta.get("champion"))
        else:
            VersionId.parse(name)
        record = view.version(name)
        if record is None:
            known = sorted(r.id for r in self.ledger.versions())
            close = difflib.get_close_matches(name, known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UnknownVersion(
                f"unknown version {name!r}{hint}",
                fix="`evotree tree` lists the versions",
                version=name,
            )
        return record

    def worktree_path(self, version: str) -> Path:
        """Default worktree location of ``version`` (``[workspace].worktree_dir``/id)."""
        base = Path(self.config.workspace.worktree_dir)
        if not base.is_absolute():
            base = self.root / base
        return base / version

    def display_path(self, path: Path) -> str:
        """A path as stored in the ledger: relative to the root when inside it."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path.resolve())

    def absolute(self, stored: str) -> Path:
        """The absolute path of a path stored by :meth:`display_path`."""
        path = Path(stored)
        return path if path.is_absolute() else self.root / path


def ensure_state_dir(root: Path) -> Path:
    """Create ``.evotree/`` with a ``.gitignore`` of ``*`` so git never tracks evotree's files."""
    state = root / STATE_DIR
    state.mkdir(exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# evotree's local state: worktrees, runs, caches. Never committed.\n*\n")
    return state


def _differs_from_head(git: Git, head_tree: object, rel: str) -> bool:
    path = git.root / rel
    try:
        entry = head_tree[rel]  # type: ignore[index]
    except KeyError:
        return True
    return git.repo[entry.id].data != path.read_bytes()


# ---------------------------------------------------------------------------- the judge store's tree
def under_paths(path: str, patterns: Iterable[str]) -> bool:
    """True when ``path`` (posix, relative) is one of ``patterns`` or inside one of them."""
    for pattern in patterns:
        prefix = pattern.rstrip("/")
        if prefix in ("", ".") or path == prefix or path.startswith(prefix + "/"):
            return True
    return False


def judge_path_problem(rel: str) -> str | None:
    """Why ``rel`` may not be a path of the judge store (None: it may): the hardening of an export."""
    if not rel or "\0" in rel or "\\" in rel:
        return "an empty path or one with a NUL or backslash"
    if rel.startswith("/") or PurePosixPath(rel).is_absolute():
        return "an absolute path"
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "a path with an empty, '.' or '..' component"
    if any(part.lower() == ".git" for part in parts):
        return "a path inside a .git directory"
    return None


def write_judge_commit(
    git: Git,
    files: Mapping[str, tuple[bytes, int]],
    *,
    parent: pygit2.Oid | None,
    message: str,
    identity: Identity,
) -> pygit2.Oid:
    """A commit (no ref moved) whose tree holds ``files`` (repository-relative path -> (bytes, filemode)).

    Only regular files (``GIT_FILEMODE_BLOB`` / ``_EXECUTABLE``) at paths that pass
    :func:`judge_path_problem`: the judge store never holds a symlink, a submodule or a ``..``.
    """
    if not files:
        raise EvotreeError(
            "a judge commit needs at least one file", fix="put the judge's files in the directory"
        )
    for rel, (_, mode) in sorted(files.items()):
        problem = judge_path_problem(rel)
        if problem:
            raise EvotreeError(
                f"{rel!r} cannot be a judge file: {problem}", fix="rename or remove it"
            )
        if mode not in (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE):
            raise EvotreeError(
                f"{rel!r} cannot be a judge file: not a regular file", fix="keep regular files only"
            )
    tree = write_file_tree(git.repo, files)
    parents = [parent] if parent is not None else []
    return judge_ref_store(git).new_commit(identity.signature(), message, tree, parents)


def judge_ref_store(git: Git) -> RefStore:
    """The judge store's ref (``refs/evotree/judge``): it follows the ledger's ``judge`` record."""
    return RefStore(git, JUDGE_REF)


@dataclass
class _JudgeFiles:
    """What init moves into the judge store."""

    files: dict[str, tuple[bytes, int]] = field(default_factory=dict)
    tracked: list[str] = field(
        default_factory=list
    )  # committed in HEAD: init commits their removal
    on_disk: list[str] = field(default_factory=list)  # in the working tree: init deletes them
    ignored: list[str] = field(default_factory=list)  # ignored by git: left alone


def _tree_files(
    repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = ""
) -> Iterable[tuple[str, pygit2.Object]]:
    for entry in tree:
        rel = f"{prefix}{entry.name}"
        if entry.filemode == pygit2.GIT_FILEMODE_TREE:
            yield from _tree_files(repo, repo[entry.id], rel + "/")
        else:
            yield rel, entry


def _collect_judge_files(git: Git, head_tree: pygit2.Tree, judge_paths: list[str]) -> _JudgeFiles:
    """The files under ``judge_paths``: committed in HEAD, and in the working tree unless git ignores them.

    The working tree's copy wins (it is what the owner and the domain template left there). A
    symlink, a submodule or a path an export would refuse stops init with the path named.
    """
    found = _JudgeFiles()
    if not judge_paths:
        return found
    whole = [p for p in judge_paths if p.strip("/") in ("", ".")]
    if whole:
        raise EvotreeError(
            f"[eval].judge_paths lists {whole[0]!r}: the whole repository cannot be hidden data",
            fix='list the judge\'s folders and files only, e.g. judge_paths = ["judge/"]',
        )
    specs = [p.rstrip("/") or "." for p in judge_paths]
    for rel, entry in _tree_files(git.repo, head_tree):
        if not under_paths(rel, judge_paths):
            continue
        found.tracked.append(rel)
        if entry.filemode not in (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE):
            raise EvotreeError(
                f"{rel} (under [eval].judge_paths) is committed as a symlink or submodule; the judge "
                "store holds regular files only",
                fix=f"replace {rel} by a regular file and commit it",
            )
        found.files[rel] = (git.repo[entry.id].data, entry.filemode)
    listed = git.run("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *specs)
    for rel in sorted({p for p in listed.split("\0") if p}):
        path = git.root / rel
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue  # deleted in the working tree: the committed copy (if any) is kept
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            raise EvotreeError(
                f"{rel} (under [eval].judge_paths) is a symlink or not a regular file; the judge store "
                "holds regular files only",
                fix=f"replace {rel} by a regular file or remove it",
            )
        mode = (
            pygit2.GIT_FILEMODE_BLOB_EXECUTABLE
            if info.st_mode & 0o100
            else pygit2.GIT_FILEMODE_BLOB
        )
        found.files[rel] = (path.read_bytes(), mode)
        found.on_disk.append(rel)
    ignored = git.run("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", *specs)
    found.ignored = sorted(p for p in ignored.split("\0") if p)
    for rel in found.files:
        problem = judge_path_problem(rel)
        if problem:
            raise EvotreeError(
                f"{rel!r} cannot go into the judge store: {problem}", fix="rename or remove it"
            )
    return found


def _remove_empty_dirs(root: Path, rels: Iterable[str]) -> None:
    """Remove the now-empty parent directories of ``rels`` (deepest first), never ``root`` itself."""
    parents = {p for rel in rels for p in PurePosixPath(rel).parents if str(p) != "."}
    for parent in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        try:
            (root / parent).rmdir()
        except OSError:
            pass  # not empty (an ignored file, the user's own) or already gone


@dataclass
class InitResult:
    """What ``evotree init`` did (schema: ``init.schema.json``)."""

    root: str
    champion: str
    commit: str
    branch: str
    config_path: str
    config_committed: bool
    ledger_commit: str
    #: files init wrote and committed on the branch (evotree.toml, the domain's visible files)
    files: list[str]
    #: the first judge commit on refs/evotree/judge (None: nothing under [eval].judge_paths)
    judge_commit: str | None = None
    #: the files of that judge commit (hidden: never in the branch, the checkout or a worktree)
    judge_files: list[str] = field(default_factory=list)
    #: judge files that were committed before init: init's commit removes them from the branch tip
    judge_removed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


#: Writes a domain's workspace files under a root (never overwriting); returns the paths written.
DomainTemplate = Callable[[Path], Iterable[str]]


_KEY_TYPES = (
    "ssh-ed25519",
    "ssh-rsa",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "sk-ssh-ed25519@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
)


def signer_line(spec: str) -> tuple[str, str]:
    """(principal, allowed-signers line) of ``--signer`` ``[EMAIL=]KEY.pub``.

    The principal is ``EMAIL`` when given, else the public key's comment when it is an address.
    Raises :class:`ConfigError` for a file that is not one SSH public key, or no address.
    """
    email, _, path = spec.rpartition("=") if "=" in spec else ("", "", spec)
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"--signer {spec}: cannot read the public key ({exc})",
            fix="pass the .pub file of an SSH key, e.g. --signer ~/.ssh/id_ed25519.pub",
        ) from None
    fields = text.split()
    if (
        "\n" in text
        or len(fields) < 2
        or fields[0] not in _KEY_TYPES
        or not re.fullmatch(r"[A-Za-z0-9+/=]+", fields[1])
    ):
        raise ConfigError(
            f"--signer {spec}: not one SSH public key (expected 'ssh-ed25519 AAAA... comment')",
            fix="pass the .pub file, not the private key: --signer ~/.ssh/id_ed25519.pub",
        )
    email = email.strip() or (fields[2] if len(fields) > 2 and "@" in fields[2] else "")
    if not email or not re.fullmatch(r"[^\s<>\"]+@[^\s<>\"]+", email):
        raise ConfigError(
            f"--signer {spec}: whose key is it? the key's comment is not an email address",
            fix="name the person: --signer you@example.org=~/.ssh/id_ed25519.pub",
        )
    return email, f"{email} {fields[0]} {fields[1]}"


def init_workspace(
    start: str | os.PathLike[str] = ".",
    *,
    domain: str = "custom",
    template: DomainTemplate | None = None,
    signers: Sequence[str] = (),
) -> InitResult:
    """Turn the repository at ``start`` into a workspace with ``v0`` = HEAD as root and champion.

    Writes a commented ``evotree.toml`` when there is none (an existing one is validated) and
    commits it alone if it is not committed yet, so the champion's tree holds the policy.
    ``template`` writes the domain's files (:func:`evotree.domains.domain_template` gives it; the
    core layer does not import the domains); a domain other than ``custom`` needs one.

    Hidden data never stays in the branch or the checkout: every file under ``[eval].judge_paths``
    (written by the template, committed before, or present but uncommitted; not files git
    ignores) goes into a first judge commit on ``refs/evotree/judge``, recorded in the ledger as
    the judge in force; init's commit removes committed ones from the branch tip (they stay in
    history: see ``InitResult.notes``) and the files are deleted from the working tree.
    On any failure nothing evotree created is left behind, and files it deleted are restored.
    """
    if domain != "custom" and template is None:
        raise EvotreeError(
            f"the {domain} domain's files need its template",
            fix=f"call evotree.init(path, domain={domain!r}) (the Python API) or `evotree init "
            f"--domain {domain}`; the core init_workspace takes template=domain_template(domain)",
        )
    git = Git(start)
    unborn = (
        git.repo.head_is_unborn
    )  # `git init` and nothing else: init makes the first commit itself
    state = _InitState(
        head=None if unborn else git.head_commit(), config_path=git.root / CONFIG_FILE
    )
    actor = git.identity()
    ledger = Ledger(git)
    _refuse_existing(git, ledger)
    signer_lines, signers_rel = _check_init_inputs(git, state.config_path, domain, signers)
    _write_and_commit(
        git,
        state,
        domain=domain,
        template=template,
        actor=actor,
        signer_lines=signer_lines,
        signers_rel=signers_rel,
    )
    entry = _create_refs_and_ledger(git, ledger, state, domain=domain, actor=actor)
    ensure_state_dir(git.root)
    head, judge = state.head, state.judge
    return InitResult(
        root=str(git.root),
        champion=ROOT_VERSION,
        commit=str(head),
        branch=branch_name(ROOT_VERSION),
        config_path=str(state.config_path),
        config_committed=state.committed,
        ledger_commit=entry.commit,
        files=sorted(p for p in state.created if not under_paths(p, state.judge_paths)),
        judge_commit=str(state.judge_oid) if state.judge_oid is not None else None,
        judge_files=sorted(judge.files),
        judge_removed=list(judge.tracked),
        notes=_init_notes(git, state, unborn=unborn),
    )


@dataclass
class _InitState:
    """What init has done so far: what a failure undoes, and what the result reports."""

    head: pygit2.Oid | None
    config_path: Path
    #: files init wrote (the template's, evotree.toml, the allowed signers)
    created: list[str] = field(default_factory=list)
    #: init committed evotree.toml or the judge files' removal
    committed: bool = False
    judge: _JudgeFiles = field(default_factory=lambda: _JudgeFiles())
    judge_oid: pygit2.Oid | None = None
    judge_paths: list[str] = field(default_factory=list)
    #: the owner's files init deleted: restored on failure
    deleted: dict[str, tuple[bytes, int]] = field(default_factory=dict)


def _refuse_existing(git: Git, ledger: Ledger) -> None:
    """Refuse a workspace already made, or a leftover v0 branch or judge ref without a ledger."""
    if ledger.exists():
        champion = ledger.meta().get("champion")
        raise AlreadyInitialized(
            f"{git.root} is already an evotree workspace (champion {champion})",
            fix="use `evotree tree` to see it; nothing was changed",
        )
    if git.ref_target(branch_ref(ROOT_VERSION)) is not None:
        raise AlreadyExists(
            f"branch {branch_name(ROOT_VERSION)} already exists but there is no ledger",
            fix=f"rename or delete it (git branch -m {branch_name(ROOT_VERSION)} old/v0) and re-run init",
        )
    if git.ref_target(JUDGE_REF) is not None:
        raise AlreadyExists(
            f"{JUDGE_REF} already exists but there is no ledger",
            fix=f"inspect it (git ls-tree -r {JUDGE_REF}); if it is a leftover, delete it "
            f"(git update-ref -d {JUDGE_REF}) and re-run init",
        )


def _check_init_inputs(
    git: Git, config_path: Path, domain: str, signers: Sequence[str]
) -> tuple[list[str], str]:
    """Validate the policy (or the domain's template) and every ``--signer`` before anything is
    written; the allowed-signers lines and the file they go to."""
    if config_path.exists():
        parse_config(
            read_config_text(config_path, source=CONFIG_FILE), source=CONFIG_FILE
        )  # raises ConfigError with line
    else:
        render_template(domain)  # validates the domain before anything is written
    signer_lines = [
        signer_line(spec)[1] for spec in signers
    ]  # every key checked before anything is written
    signers_rel = (
        parse_config(read_config_text(config_path, source=CONFIG_FILE), source=CONFIG_FILE)
        if config_path.exists()
        else parse_config(render_template(domain), source=CONFIG_FILE)
    ).gates.allowed_signers
    if signer_lines and (git.root / signers_rel).exists():
        raise AlreadyInitialized(
            f"--signer: {signers_rel} exists already; init writes it only in a new workspace",
            fix=f"add the line to {signers_rel} in a version and promote it (a signed change)",
        )
    return signer_lines, signers_rel


def _write_and_commit(
    git: Git,
    state: _InitState,
    *,
    domain: str,
    template: DomainTemplate | None,
    actor: Identity,
    signer_lines: list[str],
    signers_rel: str,
) -> None:
    """Write the workspace's files, move the judge paths into a judge commit and commit the
    policy; on any failure undo every file written or deleted, and re-raise."""
    try:
        _write_files(
            git,
            state,
            domain=domain,
            template=template,
            signer_lines=signer_lines,
            signers_rel=signers_rel,
        )
        _store_judge_files(git, state, domain=domain, actor=actor)
        _commit_init(git, state, domain=domain)
    except BaseException:
        if state.created:
            git.run("reset", "--quiet", "--", *state.created, check=False)
            for rel in state.created:
                target = git.root / rel
                if target.is_dir():
                    shutil.rmtree(target, ignore_errors=True)
                else:
                    target.unlink(missing_ok=True)
        if state.judge.tracked and not state.committed:
            git.run("reset", "--quiet", "--", *state.judge.tracked, check=False)
        _restore_files(git.root, state.deleted)
        raise


def _write_files(
    git: Git,
    state: _InitState,
    *,
    domain: str,
    template: DomainTemplate | None,
    signer_lines: list[str],
    signers_rel: str,
) -> None:
    """The domain's files, ``evotree.toml`` when there is none, the first allowed signers."""
    if template is not None:
        state.created += list(template(git.root))
    if not state.config_path.exists():
        state.config_path.write_text(render_template(domain))
        state.created.append(CONFIG_FILE)
    if signer_lines:  # the first allowed signers: a solo researcher can sign promotions from v0 on
        target = git.root / signers_rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            "# Allowed signers of evotree sign-offs (EMAIL KEY), written by evotree init --signer.\n"
            + "".join(f"{line}\n" for line in signer_lines)
        )
        state.created.append(signers_rel)


def _store_judge_files(git: Git, state: _InitState, *, domain: str, actor: Identity) -> None:
    """Every file under ``[eval].judge_paths`` into a first judge commit (no ref moved yet)."""
    config = parse_config(
        read_config_text(state.config_path, source=CONFIG_FILE), source=CONFIG_FILE
    )
    state.judge_paths = judge_paths = list(config.eval.judge_paths)
    head = state.head
    head_tree = git.repo[git.repo.TreeBuilder().write()] if head is None else git.repo[head].tree
    state.judge = _collect_judge_files(git, head_tree, judge_paths)
    if state.judge.files:
        state.judge_oid = write_judge_commit(
            git,
            state.judge.files,
            parent=None,
            identity=actor,
            message=f"evotree: judge store at init ({domain} domain)\n\nThe hidden files of "
            f"[eval].judge_paths ({', '.join(judge_paths)}): never checked out.\n",
        )


def _commit_init(git: Git, state: _InitState, *, domain: str) -> None:
    """Delete the judge files from the working tree, commit the policy (and the judge files'
    removal from the branch) and unstage every judge path; ``state.head`` becomes that commit."""
    head, judge, judge_paths, created = state.head, state.judge, state.judge_paths, state.created
    head_tree = git.repo[git.repo.TreeBuilder().write()] if head is None else git.repo[head].tree
    paths = [
        CONFIG_FILE,
        *[p for p in created if p != CONFIG_FILE and not under_paths(p, judge_paths)],
    ]
    changed = [p for p in paths if _differs_from_head(git, head_tree, p)]
    for rel in judge.on_disk:  # hidden data leaves the working tree (it is in the judge commit)
        if rel not in created:
            state.deleted[rel] = judge.files[rel]
        (git.root / rel).unlink(missing_ok=True)
    _remove_empty_dirs(git.root, judge.on_disk)
    if changed or judge.tracked:
        if changed:
            git.run("add", "--", *changed)
        message = f"evotree: initialize workspace ({domain} domain)"
        if head is None:
            message += "\n\nThe repository had no commits: this is its first commit.\n"
        if judge.tracked:
            message += (
                f"\n\nThe judge files ({', '.join(judge.tracked)}) move to {JUDGE_REF}: "
                "hidden data stays out of every checkout.\n"
            )
        git.run("commit", "--quiet", "-m", message, "--", *changed, *judge.tracked)
        state.committed = True
        state.head = git.head_commit()
    if (
        state.head is None
    ):  # cannot happen (an unborn HEAD always gets evotree.toml committed), but never guess
        raise EvotreeError(
            "init made no first commit in a repository without commits",
            fix="commit your recipe (git commit) and re-run evotree init",
        )
    if judge.files:  # no judge path stays staged either (a staged, never committed judge file)
        git.run(
            "rm",
            "-r",
            "-q",
            "--cached",
            "--ignore-unmatch",
            "--",
            *[p.rstrip("/") or "." for p in judge_paths],
        )


def _create_refs_and_ledger(
    git: Git, ledger: Ledger, state: _InitState, *, domain: str, actor: Identity
) -> LedgerEntry:
    """The v0 branch, the champion and judge refs, the ledger's first event; on failure the refs
    made are deleted again."""
    head, judge, judge_oid = state.head, state.judge, state.judge_oid
    assert head is not None
    # reflogs for every ref, refs/evotree/* included: `evotree verify` reads the champion's and
    # the ledger's reflogs to see a ref moved and moved back (git logs only branches by default)
    git.run("config", "core.logAllRefUpdates", "always")
    created_refs: list[str] = []
    try:
        if not git.create_ref(branch_ref(ROOT_VERSION), head, "evotree init: v0"):
            raise AlreadyExists(
                f"branch {branch_name(ROOT_VERSION)} appeared while initializing",
                fix="another evotree init ran at the same time; run `evotree tree`",
            )
        created_refs.append(branch_ref(ROOT_VERSION))
        git.cas_ref(CHAMPION_REF, head, git.ref_target(CHAMPION_REF), "evotree init: champion v0")
        created_refs.append(CHAMPION_REF)
        if judge_oid is not None:
            judge_ref_store(git).follow(judge_oid, None, "evotree init: the judge store")
            created_refs.append(JUDGE_REF)
        now = utcnow()
        record = VersionRecord(
            id=ROOT_VERSION,
            parents=[],
            branch=branch_name(ROOT_VERSION),
            status=VersionStatus.ACTIVE.value,
            hypothesis="root: the recipe at init",
            created_by=str(actor),
            created_at=now,
            base_commit=str(head),
            worktree=None,
        )

        def change(txn: LedgerTxn) -> Event:
            if txn.head is not None:
                raise AlreadyInitialized(
                    f"{git.root} was initialized concurrently", fix="run `evotree tree`"
                )
            txn.meta.update({"champion": ROOT_VERSION, "last_number": 0, "created_at": now})
            data: dict[str, object] = {
                "commit": str(head),
                "domain": domain,
                "config_committed": state.committed,
            }
            if judge_oid is not None:
                # the judge in force: followed by runs from the ledger, never from the ref alone
                txn.meta["judge"] = {"commit": str(judge_oid)}
                data["judge"] = {
                    "commit": str(judge_oid),
                    "files": sorted(judge.files),
                    "removed_from_branch": list(judge.tracked),
                }
            txn.put(record)
            return Event.of(
                WorkspaceInitialized(**data), version=ROOT_VERSION, actor=str(actor), at=now
            )

        return ledger.transact(change, actor=actor, create=True)
    except BaseException:
        for ref in created_refs:
            git.delete_ref(ref)
        raise


def _init_notes(git: Git, state: _InitState, *, unborn: bool) -> list[str]:
    """What the owner should know: judge files left in history, a first commit made, ignored files."""
    head, judge, judge_paths = state.head, state.judge, state.judge_paths
    notes = []
    if judge.tracked:
        notes.append(
            f"{len(judge.tracked)} judge file(s) were committed before init ({', '.join(judge.tracked[:5])}"
            f"{' …' if len(judge.tracked) > 5 else ''}): init's commit removes them from the branch and they now "
            f"live in {JUDGE_REF}, but they remain in git history (commits before {str(head)[:10]}) and in every "
            "clone already made. To purge them, rewrite the history in a fresh copy made before init (e.g. "
            f"git filter-repo --invert-paths {' '.join('--path ' + p for p in judge_paths)}; every later commit "
            "id changes), put the judge files back there uncommitted and run evotree init in it: it stores them "
            "in the judge ref (docs/cli.md, `evotree judge`)"
        )
    if unborn:
        left = [
            p for p in git.run("ls-files", "-z", "--others", "--exclude-standard").split("\0") if p
        ]
        notes.append(
            f"the repository had no commits: init made the first one ({str(head)[:10]}) with the files it "
            "wrote"
            + (
                f"; {len(left)} file(s) of yours are not committed ({', '.join(left[:5])}"
                f"{' …' if len(left) > 5 else ''}): commit them in a version (evotree branch)"
                if left
                else ""
            )
        )
    if judge.ignored:
        notes.append(
            f"left in place, not in the judge store (git ignores them): {', '.join(judge.ignored[:10])}"
        )
    return notes


def _restore_files(root: Path, files: Mapping[str, tuple[bytes, int]]) -> None:
    """Write back files init deleted (after a failure)."""
    for rel, (data, mode) in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        if mode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE:
            target.chmod(0o755)
