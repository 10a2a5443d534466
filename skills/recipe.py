"""Skills in a version's recipe: ``skills.toml`` on the version's branch, and the ledger event.

``evotree skill apply NAME --to V`` validates the skill for the workspace's domain, writes
``skills.toml`` (one ``[[skill]]`` entry per skill, with every parameter resolved) as a commit
on ``evotree/V`` (in V's worktree when it has one), then appends a ``skill.applied`` event
that also updates the version record's ``skills``. The train phase reads the committed file
at run time (:func:`load_skills_file`) and activates the skills through :mod:`evotree.harness.trl`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.skills.catalog import DOMAIN_CHOICES, SkillInfo, get_skill, parse_params
from evotree.skills.errors import (
    InvalidSkillParam,
    SkillNotApplicable,
    SkillsFileError,
    UnknownSkill,
)
from evotree.core.config_template import toml_value
from evotree.core.errors import InvalidState
from evotree.core.refs import branch_ref
from evotree.core.ledger import VersionStatus
from evotree.core.errors import DirtyState
from evotree.core.events import SkillApplied
from evotree.core.ledger import Event
from evotree.core.ledger import LedgerEntry, LedgerTxn
from evotree.core.ledger import utcnow
from evotree.core.gitio import RefRaceLost
from evotree.core.versions import abandon_version
from evotree.core.versions import create_version

if TYPE_CHECKING:  # pragma: no cover
    from evotree.core.workspace import Workspace

__all__ = [
    "SKILLS_FILE",
    "AppliedSkill",
    "ApplyResult",
    "applied_skills",
    "apply_skill",
    "branch_with_skills",
    "check_applicable",
    "load_skills_file",
    "parse_skills_text",
    "render_skills_text",
    "split_skill_params",
]

#: The recipe file, at the root of a version's tree.
SKILLS_FILE = "skills.toml"
_HEADER = (
    "# Skills this version trains with, in the order they are activated.\n"
    "# Written by `evotree skill apply` (docs/skills.md); the train phase reads it at run time.\n"
)


@dataclass
class AppliedSkill:
    """A skill named in a version's recipe, with every parameter resolved."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ApplyResult:
    """What ``evotree skill apply`` did. ``changed`` is False when the recipe already had the
    skill with these parameters (then there is no commit and no event)."""

    version: str
    skill: str
    params: dict[str, Any]
    changed: bool
    commit: str
    previous_commit: str
    file: str
    skills: list[AppliedSkill]
    ledger_commit: str | None = None
    worktree: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["v"] = 1
        return out


# ------------------------------------------------------------------------------ the file
def render_skills_text(skills: list[AppliedSkill]) -> str:
    """``skills.toml`` for ``skills`` (deterministic: same skills, same bytes)."""
    parts = [_HEADER]
    for skill in skills:
        params = ", ".join(f"{k} = {toml_value(v)}" for k, v in skill.params.items())
        table = f"{{ {params} }}" if params else "{}"
        parts.append(f"\n[[skill]]\nname = {toml_value(skill.name)}\nparams = {table}\n")
    return "".join(parts)


def parse_skills_text(
    text: str, *, source: str = SKILLS_FILE, domain: str | None = None
) -> list[AppliedSkill]:
    """The skills listed in a ``skills.toml``, validated: known names, each at most once,
    parameters of the right type and range (defaults filled in); with ``domain``, each must
    apply to it. Raises :class:`SkillsFileError` (exit 25) naming the file and the entry, or
    :class:`SkillNotApplicable` (exit 26)."""
    fix = (
        f"fix {source} (`evotree skill show NAME` lists a skill's parameters), or re-apply "
        "the skill with `evotree skill apply`"
    )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SkillsFileError(f"{source}: not valid TOML: {exc}", fix=fix) from None
    unknown = sorted(set(data) - {"skill"})
    if unknown:
        raise SkillsFileError(
            f"{source}: unknown top-level key(s) {', '.join(unknown)}; only "
            "[[skill]] entries are allowed",
            fix=fix,
        )
    entries = data.get("skill", [])
    if not isinstance(entries, list):
        raise SkillsFileError(f"{source}: 'skill' must be an array of tables ([[skill]])", fix=fix)
    out: list[AppliedSkill] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries, 1):
        where = f"{source}: [[skill]] #{i}"
        if not isinstance(entry, dict):
            raise SkillsFileError(f"{where} is not a table", fix=fix)
        extra = sorted(set(entry) - {"name", "params"})
        if extra:
            raise SkillsFileError(
                f"{where}: unknown key(s) {', '.join(extra)} (expected name, params)", fix=fix
            )
        name = entry.get("name")
        if not isinstance(name, str):
            raise SkillsFileError(f"{where}: 'name' must be a string, actually: {name!r}", fix=fix)
        params = entry.get("params", {})
        if not isinstance(params, dict):
            raise SkillsFileError(f"{where} ({name}): 'params' must be a table", fix=fix)
        try:
            info = get_skill(name)
            resolved = parse_params(info, params)
        except (UnknownSkill, InvalidSkillParam) as exc:
            raise SkillsFileError(f"{where}: {exc.message}", fix=exc.fix or fix) from None
        if name in seen:
            raise SkillsFileError(f"{where}: {name} is listed twice", fix=fix)
        seen.add(name)
        if domain is not None:
            try:
                check_applicable(info, domain, resolved)
            except (SkillNotApplicable, InvalidSkillParam) as exc:
                raise type(exc)(f"{where}: {exc.message}", fix=exc.fix, **exc.details) from None
        out.append(AppliedSkill(name, resolved))
    return out


def load_skills_file(path: str | Path, *, domain: str | None = None) -> list[AppliedSkill]:
    """The skills of a ``skills.toml`` on disk (none when the file does not exist), validated
    as :func:`parse_skills_text` does. Used by train phases at run time."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillsFileError(
            f"{path}: cannot be read: {exc}", fix="commit a readable UTF-8 skills.toml"
        ) from None
    return parse_skills_text(text, source=str(path.name), domain=domain)


def check_applicable(info: SkillInfo, domain: str, params: dict[str, Any] | None = None) -> None:
    """Raise :class:`SkillNotApplicable` (exit 26) when ``info`` does not apply to ``domain``,
    and :class:`InvalidSkillParam` (exit 25) for a parameter value that domain does not offer
    (e.g. an auxiliary term the math domain does not have)."""
    why = info.why_not(domain)
    if why is not None:
        raise SkillNotApplicable(
            why,
            fix=f"`evotree skill list` shows each skill's domains; this workspace's domain "
            f"is {domain!r}",
            skill=info.name,
            domain=domain,
        )
    for key, value in (params or {}).items():
        offered = DOMAIN_CHOICES.get((info.name, key, domain))
        if offered is not None and value not in offered:
            raise InvalidSkillParam(
                f"{info.name}.{key}: the {domain} domain offers {', '.join(offered)}, not {value!r}",
                fix=f"--param {key}={offered[0]}",
                skill=info.name,
                param=key,
                domain=domain,
            )


# ------------------------------------------------------------------------------ the repository
def _tip(ws: Workspace, version_id: str) -> Any:

    tip = ws.git.ref_target(branch_ref(version_id))
    if tip is None:
        raise InvalidState(
            f"the branch of {version_id} is missing from this repository",
            fix=f"fetch it: git fetch origin {branch_ref(version_id)}:{branch_ref(version_id)}",
        )
    return tip


def _file_at(ws: Workspace, commit: Any) -> str | None:
    """The committed ``skills.toml`` at ``commit`` (None when there is none). Refuses
    (:class:`SkillsFileError`) an entry that is not a regular file: a symbolic link (its target
    text could even parse as TOML, a comment) would be checked out as a link, and writing the new
    recipe through it would overwrite whatever file it points at."""
    import pygit2

    tree = ws.git.repo[commit].tree
    if SKILLS_FILE not in tree:
        return None
    entry = tree[SKILLS_FILE]
    if entry.filemode not in (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE):
        kind = {
            pygit2.GIT_FILEMODE_LINK: "a symbolic link",
            pygit2.GIT_FILEMODE_TREE: "a folder",
            pygit2.GIT_FILEMODE_COMMIT: "a submodule",
        }.get(entry.filemode, f"mode {entry.filemode:o}")
        raise SkillsFileError(
            f"{SKILLS_FILE} at {str(commit)[:10]} is {kind}, not a regular file; "
            "evotree never reads or writes a recipe through one",
            fix=f"replace {SKILLS_FILE} with a regular file (git rm {SKILLS_FILE}, commit), "
            "then apply the skill again",
        )
    blob = ws.git.repo[entry.id]
    return blob.data.decode("utf-8", errors="replace")


def applied_skills(ws: Workspace, version: str) -> list[AppliedSkill]:
    """The skills recorded in ``version``'s committed recipe (its branch tip's ``skills.toml``)."""
    record = ws.resolve(version)
    text = _file_at(ws, _tip(ws, record.id))
    if text is None:
        return []
    return parse_skills_text(text, source=f"{SKILLS_FILE} of {record.id}")


def apply_skill(
    ws: Workspace, version: str, name: str, params: dict[str, Any] | None = None
) -> ApplyResult:
    """Record skill ``name`` with ``params`` in ``version``'s recipe: a commit on its branch
    (in its worktree if it has one) and a ``skill.applied`` ledger event.

    Refuses (nothing written): an unknown skill or parameter, a bad value (exit 25); a skill
    that does not apply to the workspace's domain (exit 26); the champion (branch from it
    instead), an abandoned version (exit 10); a version whose worktree has uncommitted
    changes (exit 8). Re-applying a skill replaces its parameters; applying it again with the
    same ones changes nothing. If the ledger append fails, the commit is undone.
    """

    info = get_skill(name)
    resolved = parse_params(info, dict(params or {}))
    domain = ws.config.workspace.domain
    check_applicable(info, domain, resolved)
    record = ws.resolve(version)
    if record.status == VersionStatus.ABANDONED.value:
        raise InvalidState(
            f"{record.id} is abandoned ({record.reason}); its recipe is negative "
            "evidence and stays as it is",
            fix=f"branch a new version: evotree branch --from {record.id} --skill {name} -m '...'",
            version=record.id,
        )
    if record.id == ws.champion():
        raise InvalidState(
            f"{record.id} is the champion; a skill changes training, so it goes "
            "on a new version that is then judged against the champion",
            fix=f"evotree branch --skill {name} -m 'why {name} should help'",
            version=record.id,
        )
    actor = ws.git.identity()
    with _version_lock(ws, record.id):
        return _apply_locked(ws, record, info, resolved, domain, actor)


@contextmanager
def _version_lock(ws: Workspace, version_id: str) -> Iterator[None]:
    """Serialize skill applies to one version across processes (an ``flock`` in the git dir,
    freed by the kernel if the process dies): each one reads the tip the previous one left."""
    import fcntl

    path = Path(ws.git.repo.path) / f"evotree-skills-{version_id}.lock"
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _apply_locked(
    ws: Workspace, record: Any, info: SkillInfo, resolved: dict[str, Any], domain: str, actor: Any
) -> ApplyResult:
    """Apply one skill under the version's lock: the new ``skills.toml``, its commit, the event."""
    record = ws.resolve(record.id)  # as of now, under the lock
    if record.status == VersionStatus.ABANDONED.value:
        raise InvalidState(f"{record.id} was abandoned meanwhile", fix="nothing was applied")
    tip = _tip(ws, record.id)
    old_text = _file_at(ws, tip)
    source = f"{SKILLS_FILE} of {record.id}"
    current = parse_skills_text(old_text, source=source) if old_text is not None else []
    skills = _with_skill(current, AppliedSkill(info.name, resolved))
    text = render_skills_text(skills)
    worktree = _checked_worktree(ws, record, tip)
    result = ApplyResult(
        version=record.id,
        skill=info.name,
        params=resolved,
        changed=False,
        commit=str(tip),
        previous_commit=str(tip),
        file=SKILLS_FILE,
        skills=skills,
        worktree=record.worktree,
    )
    if old_text is not None and old_text == text:
        return result
    shown_params = ", ".join(f"{k}={v}" for k, v in resolved.items())
    message = (
        f"evotree: skill {info.name}"
        + (f" ({shown_params})" if shown_params else "")
        + f"\n\n{info.title}.\nRecorded by `evotree skill apply`; see {SKILLS_FILE}.\n"
    )
    if worktree is not None:
        commit = _commit_in_worktree(ws, worktree, text, old_text, message)
    else:
        commit = _commit_on_branch(ws, record.id, tip, text, message)
    try:
        entry_written = _record_applied(
            ws, record.id, info.name, resolved, domain, skills, commit, tip, actor
        )
    except BaseException:
        _undo_commit(ws, record.id, worktree, tip, commit)
        raise
    return replace(result, changed=True, commit=str(commit), ledger_commit=entry_written.commit)


def _with_skill(current: list[AppliedSkill], entry: AppliedSkill) -> list[AppliedSkill]:
    """``current`` with ``entry`` in place of the skill of its name, or appended."""
    skills = list(current)
    for i, skill in enumerate(skills):
        if skill.name == entry.name:
            skills[i] = entry
            return skills
    return skills + [entry]


def _checked_worktree(ws: Workspace, record: Any, tip: Any) -> Path | None:
    """The version's worktree when it exists, refused unless clean, on its branch, at ``tip``."""
    worktree = ws.absolute(record.worktree) if record.worktree else None
    if worktree is None or not worktree.is_dir():
        return None
    dirty = ws.git.status_porcelain(worktree)
    if dirty:
        shown = ", ".join(dirty[:10]) + (" …" if len(dirty) > 10 else "")
        raise DirtyState(
            f"the worktree of {record.id} ({record.worktree}) has uncommitted changes: {shown}",
            fix=f"commit or discard them in {record.worktree} first; the skill is recorded "
            "as a commit of its own",
            paths=dirty,
        )
    head = ws.git.run("rev-parse", "HEAD", cwd=worktree).strip()
    on = ws.git.run("symbolic-ref", "--quiet", "HEAD", cwd=worktree, check=False).strip()
    if on != f"refs/heads/{record.branch}":
        raise InvalidState(
            f"the worktree of {record.id} ({record.worktree}) is not on its branch "
            f"{record.branch} (HEAD: {on or 'detached'})",
            fix=f"git -C {record.worktree} switch {record.branch}",
            version=record.id,
        )
    if head != str(tip):
        raise InvalidState(
            f"the worktree of {record.id} is at {head[:10]}, not at the tip of "
            f"{record.branch} ({str(tip)[:10]})",
            fix=f"check out {record.branch} in {record.worktree}",
            version=record.id,
        )
    return worktree


def _record_applied(
    ws: Workspace,
    version: str,
    skill: str,
    resolved: dict[str, Any],
    domain: str,
    skills: list[AppliedSkill],
    commit: Any,
    tip: Any,
    actor: Any,
) -> LedgerEntry:
    """Append ``skill.applied`` and the version's new skill list (refused if it was abandoned)."""
    now = utcnow()

    def change(txn: LedgerTxn) -> Event:
        current_record = txn.require(version)
        if current_record.status == VersionStatus.ABANDONED.value:
            raise InvalidState(f"{version} was abandoned meanwhile", fix="nothing was applied")
        current_record.skills = [s.name for s in skills]
        current_record.updated_at = now
        txn.put(current_record)
        applied = SkillApplied(
            skill=skill,
            params=resolved,
            commit=str(commit),
            previous_commit=str(tip),
            file=SKILLS_FILE,
            domain=domain,
            skills=[s.name for s in skills],
        )
        return Event.of(applied, version=version, actor=str(actor), at=now)

    return ws.ledger.transact(change, actor=actor)


def _commit_in_worktree(
    ws: Workspace, worktree: Path, text: str, old_text: str | None, message: str
) -> str:
    """Write ``skills.toml`` in the (clean) worktree and commit it there; restore on failure.

    git runs with ``--git-dir=ADMIN --work-tree=WORKTREE`` (:meth:`evotree.core.gitio.Git.run`
    with ``cwd`` a linked worktree), never through the worktree's ``.git`` pointer file."""
    _write_in_worktree(
        worktree, text, create=True
    )  # refuses (a link, a special file) before writing
    try:
        ws.git.run("add", "--", SKILLS_FILE, cwd=worktree)
        ws.git.run(
            "commit", "--quiet", "--no-verify", "-m", message, "--", SKILLS_FILE, cwd=worktree
        )
    except BaseException:
        ws.git.run("reset", "--quiet", "--", SKILLS_FILE, cwd=worktree, check=False)
        try:
            if old_text is None:
                _unlink_in_worktree(worktree)
            else:
                _write_in_worktree(worktree, old_text, create=True)
        except (OSError, SkillsFileError):
            pass  # the original error is the one to report; nothing is written through a link
        raise
    return ws.git.run("rev-parse", "HEAD", cwd=worktree).strip()


def _open_worktree_dir(worktree: Path) -> int:
    """A descriptor of the worktree folder itself (never a link put in its place)."""
    import os

    try:
        return os.open(worktree, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise SkillsFileError(
            f"{worktree} is not a plain folder ({exc.strerror}); evotree writes "
            f"{SKILLS_FILE} only into a worktree's own folder",
            fix="evotree worktree restore VERSION (recreates its worktree)",
        ) from None


def _write_in_worktree(worktree: Path, text: str, *, create: bool) -> None:
    """Write ``worktree/skills.toml`` without following a link: the folder and the file are opened
    with ``O_NOFOLLOW``, the file must be a regular file with one name (no hard link to a file
    elsewhere), and nothing is truncated or written before those checks pass."""
    import os
    import stat

    data = text.encode("utf-8")
    dir_fd = _open_worktree_dir(worktree)
    try:
        flags = (
            os.O_WRONLY
            | os.O_NOFOLLOW
            | os.O_NONBLOCK
            | os.O_CLOEXEC
            | (os.O_CREAT if create else 0)
        )
        try:
            fd = os.open(SKILLS_FILE, flags, 0o644, dir_fd=dir_fd)
        except OSError as exc:
            raise SkillsFileError(
                f"{worktree / SKILLS_FILE} cannot be written safely ({exc.strerror}): "
                "evotree never writes the recipe through a symbolic link or into a "
                "special file",
                fix=f"remove {worktree / SKILLS_FILE} and retry",
            ) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
                raise SkillsFileError(
                    f"{worktree / SKILLS_FILE} is not a regular file of the worktree "
                    "(a special file or a hard link); nothing was written",
                    fix=f"remove {worktree / SKILLS_FILE} and retry",
                )
            os.set_blocking(fd, True)
            os.ftruncate(fd, 0)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
    finally:
        os.close(dir_fd)


def _unlink_in_worktree(worktree: Path) -> None:
    """Remove ``worktree/skills.toml`` (the name only, whatever it is; never a link's target)."""
    import os

    dir_fd = _open_worktree_dir(worktree)
    try:
        os.unlink(SKILLS_FILE, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(dir_fd)


def _commit_on_branch(ws: Workspace, version_id: str, tip: Any, text: str, message: str) -> str:
    """A commit of ``skills.toml`` on the branch without a worktree (pygit2, compare-and-swap)."""
    import pygit2

    repo = ws.git.repo
    builder = repo.TreeBuilder(repo[tip].tree)
    builder.insert(SKILLS_FILE, repo.create_blob(text.encode("utf-8")), pygit2.GIT_FILEMODE_BLOB)
    signature = ws.git.identity().signature()
    commit = repo.create_commit(None, signature, signature, message, builder.write(), [tip])
    try:
        ws.git.cas_ref(branch_ref(version_id), commit, tip, f"evotree skill apply {version_id}")
    except RefRaceLost:
        raise InvalidState(
            f"the branch of {version_id} moved while the skill was being applied",
            fix="retry `evotree skill apply`",
        ) from None
    return str(commit)


def _undo_commit(
    ws: Workspace, version_id: str, worktree: Path | None, tip: Any, commit: str
) -> None:
    """Put the branch (and the worktree, which was clean) back where it was."""
    import pygit2

    if worktree is not None:
        head = ws.git.run("rev-parse", "HEAD", cwd=worktree, check=False).strip()
        if head == commit:
            ws.git.run("reset", "--hard", "--quiet", str(tip), cwd=worktree, check=False)
        return
    try:
        ws.git.cas_ref(
            branch_ref(version_id),
            pygit2.Oid(hex=str(tip)),
            pygit2.Oid(hex=commit),
            f"evotree skill apply {version_id}: undone",
        )
    except RefRaceLost:
        pass  # someone moved the branch on: leave their commit alone


def branch_with_skills(
    ws: Workspace,
    *,
    hypothesis: str,
    parent: str = "champion",
    name: str | None = None,
    worktree: str | Path | None = None,
    requested: list[tuple[str, dict[str, Any]]],
    creator: Any = None,
    worktree_parent: Path | None = None,
) -> Any:
    """``evotree branch --skill NAME [--param NAME.k=v]``: a new version with skills applied.

    Every skill, parameter and the domain are checked before the version is created, so a
    bad request creates nothing. Then the version is created and each skill applied (one
    commit and one ``skill.applied`` event each). Should an apply still fail (a git or ledger
    failure), the new version is abandoned with the reason, worktree removed: never left
    looking like a version that has its skills. Returns the version's record.
    """

    domain = ws.config.workspace.domain
    names = [n for n, _ in requested]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InvalidSkillParam(
            f"--skill {', '.join(twice)} given more than once",
            fix="name each skill once; its parameters go in --param NAME.k=v",
        )
    for skill_name, params in requested:
        info = get_skill(skill_name)
        check_applicable(info, domain, parse_params(info, params))
    record = create_version(
        ws,
        hypothesis=hypothesis,
        parent=parent,
        name=name,
        worktree=worktree,
        creator=creator,
        worktree_parent=worktree_parent,
    )
    try:
        for skill_name, params in requested:
            apply_skill(ws, record.id, skill_name, params)
    except BaseException as exc:
        reason = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        try:
            abandon_version(
                ws, record.id, reason=f"`evotree branch --skill` failed: {reason}", force=True
            )
        except Exception:  # noqa: BLE001, S110 - the original error is the one to report
            pass
        raise
    return ws.resolve(record.id)


def split_skill_params(
    skill_names: list[str], options: list[str]
) -> list[tuple[str, dict[str, str]]]:
    """``--skill`` names and ``--param NAME.k=v`` options as (skill, params) pairs.

    A ``--param`` must name one of the ``--skill`` skills; raises :class:`InvalidSkillParam`
    otherwise, or when it is not of the form ``NAME.k=v``.
    """
    grouped: dict[str, dict[str, str]] = {n: {} for n in skill_names}
    for option in options:
        target, sep, value = option.partition("=")
        skill_name, dot, key = target.partition(".")
        if not sep or not dot or not skill_name or not key:
            raise InvalidSkillParam(
                f"--param {option!r} is not SKILL.KEY=VALUE",
                fix="e.g. --skill StdGroupFilter --param StdGroupFilter.min_std=0.1",
            )
        if skill_name not in grouped:
            raise InvalidSkillParam(
                f"--param {option!r} is for {skill_name}, which is not among the --skill "
                f"options ({', '.join(skill_names) or 'none'})",
                fix=f"add --skill {skill_name}, or fix the skill name in --param",
            )
        grouped[skill_name][key.strip()] = value
    return [(n, grouped[n]) for n in skill_names]
