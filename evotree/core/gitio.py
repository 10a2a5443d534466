"""The one git access layer: pygit2 for objects and refs, the git CLI for worktree porcelain.

pygit2 writes ledger commits without a worktree and gives compare-and-swap ref updates
(:meth:`Git.cas_ref`). Worktrees go through ``git worktree`` because git's porcelain runs the
user's checkout filters (LFS, eol, sparse checkout) that libgit2 does not.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pygit2

from evotree.core.errors import (
    GitCommandError,
    MissingIdentity,
    NoCommits,
    NotAGitRepository,
)

__all__ = [
    "Git",
    "Identity",
    "RefRaceLost",
    "check_worktree_special_files",
    "status_timeout",
    "write_pointer",
]


class RefRaceLost(Exception):
    """A compare-and-swap ref update found another value than expected (retry on fresh state)."""


class _ValueChanged(Exception):
    """Inside :meth:`Git._swap_locked`: the locked ref holds another value (roll back)."""


@dataclass(frozen=True)
class Identity:
    """A git identity (``Name <email>``) used as creator, actor and commit author."""

    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"

    def signature(self) -> pygit2.Signature:
        return pygit2.Signature(self.name, self.email)


class Git:
    """A repository opened at its main worktree, whatever subdirectory or worktree we start in."""

    def __init__(self, start: str | os.PathLike[str] = ".") -> None:
        start_path = Path(start).resolve()
        found = pygit2.discover_repository(str(start_path))
        if found is None:
            raise NotAGitRepository(
                f"not a git repository (or any parent up to /): {start_path}",
                fix="run `git init` and commit your recipe first, or cd into a repository",
            )
        repo = pygit2.Repository(found)
        common = Path(repo.path)
        commondir_file = common / "commondir"
        if commondir_file.exists():  # a linked worktree: switch to the main repository
            common = (common / commondir_file.read_text().strip()).resolve()
            repo = pygit2.Repository(str(common))
        if repo.is_bare or repo.workdir is None:
            raise NotAGitRepository(
                f"{found} is a bare repository; evotree needs a repository with a working tree",
                fix="clone it (`git clone`) and run evotree inside the clone",
            )
        self.repo = repo
        self.root = Path(repo.workdir).resolve()

    # ----------------------------------------------------------------- commits and refs
    def head_commit(self) -> pygit2.Oid:
        """The commit at HEAD; :class:`NoCommits` when the repository has none yet."""
        if self.repo.head_is_unborn:
            raise NoCommits(
                f"the repository at {self.root} has no commits yet",
                fix="commit your recipe first: git add -A && git commit -m 'initial recipe'",
            )
        return self.repo.head.target

    def ref_target(self, name: str) -> pygit2.Oid | None:
        """The object a ref points to, or None when the ref does not exist."""
        try:
            return self.repo.references[name].resolve().target
        except KeyError:
            return None

    def create_ref(self, name: str, target: pygit2.Oid, message: str = "evotree") -> bool:
        """Create ``name`` -> ``target`` only if it does not exist; True when we created it."""
        return self._swap_locked(name, target, None, message)

    def cas_ref(
        self, name: str, new: pygit2.Oid, expected: pygit2.Oid | None, message: str = "evotree"
    ) -> None:
        """Set ``name`` to ``new`` if it still points at ``expected`` (None: must not exist).

        Raises :class:`RefRaceLost` when another process changed it first or holds its lock.
        """
        if not self._swap_locked(name, new, expected, message):
            raise RefRaceLost(f"{name} no longer points at {expected or 'nothing'}")

    def _swap_locked(
        self, name: str, new: pygit2.Oid, expected: pygit2.Oid | None, message: str
    ) -> bool:
        """Move ``name`` to ``new`` if it holds ``expected`` (None: absent), deciding under the
        ref's lock; False when it held something else or another process held the lock.

        libgit2's own create (``create_reference_direct`` without force) checks that the ref is
        absent *before* it takes the lock, so two processes creating one ref both "succeed" and
        the later silently replaces the earlier (two versions got one id; a memory chain was
        lost). Here the lock is taken first, the value is read while it is held, and only then
        is the new one written: every writer goes through this, so the check and the write are
        one step.
        """
        try:
            with self.repo.transaction() as txn:
                txn.lock_ref(name)
                held = self.repo.references.get(name)  # read afresh, while the lock is ours
                if (held.target if held is not None else None) != expected:
                    raise _ValueChanged  # another value (a symbolic ref's is a name: never equal)
                txn.set_target(name, new, message=message)
        except _ValueChanged:
            return False
        except pygit2.GitError as exc:
            if _is_lock_failure(exc):  # another process holds the ref's lock file
                return False
            raise
        except OSError as exc:
            if _is_lock_failure(exc):
                return False
            raise
        return True

    def delete_ref(self, name: str) -> None:
        """Delete a ref if it exists."""
        ref = self.repo.references.get(name)
        if ref is not None:
            ref.delete()

    # ----------------------------------------------------------------- identity
    def identity(self) -> Identity:
        """The author identity git itself would use (env vars first, then config)."""
        name = os.environ.get("GIT_AUTHOR_NAME")
        email = os.environ.get("GIT_AUTHOR_EMAIL")
        config = self.repo.config
        if not name:
            name = _config_get(config, "user.name")
        if not email:
            email = _config_get(config, "user.email")
        if not name or not email:
            missing = " and ".join(
                k for k, v in (("user.name", name), ("user.email", email)) if not v
            )
            raise MissingIdentity(
                f"git identity is not set: {missing} missing; evotree records who created each version",
                fix='git config user.name "Your Name" && git config user.email you@example.com',
            )
        return Identity(name, email)

    # ----------------------------------------------------------------- git CLI
    def run(
        self,
        *args: str,
        cwd: str | os.PathLike[str] | None = None,
        check: bool = True,
        timeout: float | None = None,
    ) -> str:
        """Run ``git args...`` (in the main worktree by default) and return its stdout.

        When ``cwd`` is a linked worktree (or a folder inside one), git is pointed at that
        worktree's admin folder explicitly (``--git-dir=ADMIN --work-tree=ROOT``, the admin found
        from the repository's side, :meth:`worktree_admin_dir`): git never discovers the repository
        through the worktree's ``.git`` pointer file, which whoever writes the worktree (an agent)
        can aim at a git folder of its own whose config runs programs. A ``.git`` pointer of no
        registered worktree is refused.

        ``timeout`` (seconds): git runs in a process group of its own, killed as a whole when the
        time is up (:class:`GitCommandError`): a FIFO in a worktree must not hang evotree.

        Inside :func:`evotree.core.safegit.approver_process` (a sign-off) git runs as the
        approver's: the system git, no repository setting that runs a program.
        """
        from evotree.core import safegit

        leading = []  # git's own options, before the command (``rev-parse --git-dir`` is no such)
        for a in args:
            if not a.startswith("-"):
                break
            leading.append(a)
        if cwd is not None and not any(a.startswith("--git-dir") for a in leading):
            linked = self._linked_worktree(cwd)
            if linked is not None:
                admin, top = linked
                args = (f"--git-dir={admin}", f"--work-tree={top}", *args)
        if safegit.in_approver_process():
            proc = safegit.run_git(self.root, *args, cwd=cwd)
        elif timeout is None:
            proc = subprocess.run(
                ["git", *args],
                cwd=str(cwd or self.root),
                capture_output=True,
                text=True,
                env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
            )
        else:
            proc = _run_with_timeout(["git", *args], cwd=str(cwd or self.root), timeout=timeout)
        if check and proc.returncode != 0:
            raise GitCommandError(
                f"`git {' '.join(args)}` failed ({proc.returncode}): {proc.stderr.strip() or proc.stdout.strip()}",
                fix="fix the git problem shown above and retry",
                returncode=proc.returncode,
            )
        return proc.stdout

    def _common_dir(self) -> Path:
        common = Path(self.repo.path)
        if (common / "commondir").is_file():
            common = (common / (common / "commondir").read_text().strip()).resolve()
        return common

    def linked_worktrees(self) -> list[tuple[Path, Path]]:
        """(admin folder, worktree path as registered) of every linked worktree, read from the
        repository's side (``.git/worktrees/*/gitdir``), never from a worktree's pointer file."""
        admins = self._common_dir() / "worktrees"
        out: list[tuple[Path, Path]] = []
        for admin in sorted(admins.iterdir()) if admins.is_dir() else []:
            try:
                pointer = (admin / "gitdir").read_text().strip()
            except OSError:
                continue
            if pointer:
                out.append((admin, Path(os.path.dirname(pointer))))
        return out

    def _linked_admins(self) -> list[tuple[Path, str]]:
        """(admin folder, real path of its worktree) of every linked worktree."""
        return [(admin, os.path.realpath(top)) for admin, top in self.linked_worktrees()]

    def _linked_worktree(self, cwd: str | os.PathLike[str]) -> tuple[Path, str] | None:
        """(admin, worktree root) when ``cwd`` is a linked worktree of this repository or a folder
        inside one; None in the main worktree or outside the repository. Raises
        :class:`GitCommandError` for a folder under the main worktree whose ``.git`` is a file (a
        pointer) of no registered worktree: git would follow it wherever it points."""
        here = os.path.realpath(cwd)
        by_root = {top: admin for admin, top in self._linked_admins()}
        root = os.path.realpath(self.root)
        inside = here == root or here.startswith(root.rstrip(os.sep) + os.sep)
        probe = here
        while True:
            if probe in by_root:
                return by_root[probe], probe
            if probe == root:
                return None
            dotgit = os.path.join(probe, ".git")
            if (
                inside
                and os.path.lexists(dotgit)
                and not (os.path.isdir(dotgit) and not os.path.islink(dotgit))
            ):
                raise GitCommandError(
                    f"{probe} has a .git pointer of no worktree of the repository {root}: evotree never "
                    "follows one",
                    fix="evotree worktree restore VERSION (recreates its worktree)",
                    returncode=128,
                )
            parent = os.path.dirname(probe)
            if parent == probe:
                return None
            probe = parent

    def worktree_admin_dir(self, worktree: str | os.PathLike[str]) -> Path:
        """The folder git administers ``worktree`` in, found from the repository's side.

        Never read from the worktree's own ``.git`` pointer file: whoever writes the worktree (an
        agent) could point it at a git folder of its own, whose config runs programs (fsmonitor,
        filters) in evotree's process. Raises :class:`GitCommandError` when ``worktree`` is not the
        main worktree nor one of this repository's linked worktrees.
        """
        wanted = os.path.realpath(worktree)
        common = self._common_dir()
        if (common.parent / ".git").resolve() == common and os.path.realpath(
            common.parent
        ) == wanted:
            return common
        for admin, top in self._linked_admins():
            if top == wanted:
                return admin
        raise GitCommandError(
            f"{worktree} is not a worktree of the repository {common.parent}",
            fix="evotree worktree restore VERSION (recreates its worktree)",
            returncode=128,
        )

    def status_porcelain(self, worktree: str | os.PathLike[str]) -> list[str]:
        """Paths with uncommitted changes (tracked or untracked) in ``worktree``.

        git is pointed at the worktree's admin folder explicitly (:meth:`worktree_admin_dir`), so
        a rewritten ``.git`` pointer file in the worktree is never followed. A ``.gitignore`` or
        ``.gitattributes`` at the worktree's root that is not a regular file (a FIFO blocks git's
        open) is refused up front, and git is killed after :func:`status_timeout` seconds
        (:class:`GitCommandError` naming the worktree).
        """
        admin = self.worktree_admin_dir(worktree)
        check_worktree_special_files(worktree)
        out = self.run(
            f"--git-dir={admin}",
            f"--work-tree={os.path.realpath(worktree)}",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            cwd=worktree,
            timeout=status_timeout(),
        )
        entries = [e for e in out.split("\0") if e]
        paths: list[str] = []
        skip_next = False
        for entry in entries:
            if skip_next:  # the source path of a rename
                skip_next = False
                continue
            status, path = entry[:2], entry[3:]
            if status[0] in "RC":
                skip_next = True
            paths.append(path)
        return paths

    @contextmanager
    def worktree_lock(self) -> Iterator[None]:
        """Serialize ``git worktree`` calls across processes.

        ``git worktree add`` reads every other worktree's admin files while checking that a
        branch is not checked out twice; one being written at the same moment makes it fail
        ("failed to read .git/worktrees/vN/commondir"). An ``flock`` in the common git dir
        orders them; the kernel drops it if a process dies.
        """
        with open(Path(self.repo.path) / "evotree-worktrees.lock", "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def add_worktree(self, path: Path, branch: str) -> None:
        """``git worktree add`` for an existing branch.

        ``git worktree add`` runs its checkout in a child with ``GIT_DIR=<path>/.git``, the pointer
        file it has just written in a folder whoever writes the worktrees folder (an agent) can
        change: swapped in time, git checks out with that folder's config (a smudge filter runs).
        So the worktree is added without a checkout, git's bookkeeping is set from the
        repository's side (HEAD on the branch, the pointer file rewritten), and the files are
        checked out with ``--git-dir=ADMIN --work-tree=PATH``, never through the pointer.
        """
        with self.worktree_lock():
            self.run("worktree", "add", "--quiet", "--no-checkout", str(path), branch)
            if os.path.islink(
                path
            ):  # planted since the caller checked the path: check out nothing there
                raise GitCommandError(
                    f"worktree path {path} became a symbolic link (to {os.readlink(path)}) "
                    "while the worktree was added: evotree never checks out through one",
                    fix=f"remove the link ({path}) and retry",
                    returncode=128,
                )
            admin = self.worktree_admin_dir(path)
            top = os.path.realpath(path)
            ref = branch if branch.startswith("refs/") else f"refs/heads/{branch}"
            self.run(
                f"--git-dir={admin}", f"--work-tree={top}", "symbolic-ref", "HEAD", ref, cwd=top
            )
            write_pointer(top, admin)
            self.run(
                f"--git-dir={admin}", f"--work-tree={top}", "reset", "--hard", "--quiet", cwd=top
            )

    def remove_worktree(self, path: Path, *, force: bool = False) -> None:
        """``git worktree remove`` (``--force`` discards uncommitted changes)."""
        args = ["worktree", "remove"] + (["--force", "--force"] if force else []) + [str(path)]
        with self.worktree_lock():
            self.run(*args)

    def discard_worktree(self, path: Path) -> None:
        """Remove a worktree we just created, even a half-created one (used to roll back)."""
        with self.worktree_lock():
            self.run("worktree", "remove", "--force", "--force", str(path), check=False)
            shutil.rmtree(path, ignore_errors=True)
            self.run("worktree", "prune", check=False)

    def prune_worktrees(self) -> None:
        """Drop git's bookkeeping for worktrees whose directories are gone."""
        with self.worktree_lock():
            self.run("worktree", "prune")


def write_pointer(worktree: str | os.PathLike[str], admin: str | os.PathLike[str]) -> None:
    """(Re)write ``worktree/.git`` as ``gitdir: ADMIN``, replacing whatever is there (a file the
    agent rewrote, a link, a folder) without following it: a new file renamed over it."""
    import tempfile

    top = os.path.realpath(worktree)
    dotgit = os.path.join(top, ".git")
    if os.path.isdir(dotgit) and not os.path.islink(dotgit):
        shutil.rmtree(dotgit)
    fd, tmp = tempfile.mkstemp(prefix=".git-pointer-", dir=top)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(f"gitdir: {os.path.realpath(admin)}\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, dotgit)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


#: Files git opens at a worktree's root while it computes the status; anything but a regular file
#: there (a FIFO blocks open() until a writer comes) is refused before git starts.
_OPENED_AT_ROOT = (".gitignore", ".gitattributes")


def check_worktree_special_files(worktree: str | os.PathLike[str]) -> None:
    """Raise :class:`GitCommandError` when the worktree's root ``.gitignore`` or ``.gitattributes``
    exists and is not a regular file (a FIFO, a device, a socket, a folder, a link)."""
    import stat

    for name in _OPENED_AT_ROOT:
        path = os.path.join(worktree, name)
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise GitCommandError(
                f"{path} cannot be inspected: {exc}", fix=f"remove {path}", returncode=128
            ) from None
        if not stat.S_ISREG(mode):
            kind = (
                "a FIFO"
                if stat.S_ISFIFO(mode)
                else "a symbolic link"
                if stat.S_ISLNK(mode)
                else "a folder"
                if stat.S_ISDIR(mode)
                else "not a regular file"
            )
            raise GitCommandError(
                f"{path} is {kind}: git would block or follow it; evotree refuses to run git status in {worktree}",
                fix=f"remove {path} (or replace it with a regular file)",
                returncode=128,
            )


def status_timeout() -> float:
    """Seconds a ``git status`` in a worktree may take (``EVOTREE_GIT_STATUS_TIMEOUT``, default 120)."""
    try:
        return max(1.0, float(os.environ.get("EVOTREE_GIT_STATUS_TIMEOUT", "120")))
    except ValueError:
        return 120.0


def _run_with_timeout(
    argv: list[str], *, cwd: str, timeout: float
) -> subprocess.CompletedProcess[str]:
    """``argv`` in a process group of its own; the whole group is killed after ``timeout`` s."""
    import signal

    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise GitCommandError(
            f"`{' '.join(argv)}` in {cwd} did not finish within {timeout:.0f} s and was killed (a FIFO or "
            "a blocking file in the worktree?)",
            fix=f"look for special files in {cwd} (find {cwd} -not -type f -not -type d -not -type l), "
            "or raise EVOTREE_GIT_STATUS_TIMEOUT",
            returncode=124,
        ) from None
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _is_lock_failure(exc: OSError) -> bool:
    message = str(exc)
    return "lock" in message and (".lock" in message or "failed to lock" in message)


def _config_get(config: pygit2.Config, key: str) -> str | None:
    try:
        value = config[key]
    except KeyError:
        return None
    return value or None
