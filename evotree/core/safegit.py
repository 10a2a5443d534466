"""The approver's git and ssh-keygen: absolute system programs, and no repository setting that runs code.

A person runs ``evotree promote``, ``approve-run``, ``verify`` and ``analyzers promote`` in a
repository an agent may have written to. Its ``.git/config`` and ``.git/info/attributes`` can
make git run programs (``filter.X.clean``/``smudge`` with ``* filter=X``, hooks, ``core.hooksPath``,
``core.fsmonitor``, pagers, aliases, credential helpers, diff and merge drivers), and a folder put
first on ``PATH`` can replace ``git`` or ``ssh-keygen`` themselves. Such a program would run as the
approver, next to their signing key. So every git call of those commands goes through
:func:`run_git`:

* ``git`` and ``ssh-keygen`` are absolute paths: the ones the signed policy records
  (``[tools]`` of the champion's ``evotree.toml``), else the first found in :data:`SYSTEM_DIRS`;
  either must be owned by root and not writable by group or others, as must every folder above
  it (:func:`untrusted_reason`). ``PATH`` is never consulted for them.
* git's environment has no ``GIT_*`` of the caller's (but the identity), no system or global
  configuration or attributes, no pager, editor, askpass or terminal prompt, no transport
  (``GIT_ALLOW_PROTOCOL=none`` wins over the repository's ``protocol.<name>.allow``) and no lazy
  fetch from a partial clone's promisor remote;
* command-line settings (which override the repository's) pin hooks, fsmonitor, pagers,
  editors, credential helpers, external diff, submodule recursion, automatic maintenance,
  every gpg program (``/bin/false``) and every transport off, and blank out every filter, diff
  and merge driver the configuration of the repository the command uses names
  (:func:`program_settings` lists them; :func:`split_global_options` finds the command and the
  ``--git-dir``/``--work-tree``/``-C`` that choose the repository).

``promote --merge`` goes further and refuses when the repository's configuration defines any
setting that runs a program or could start a transport (a promisor remote, a remote-helper URL,
``url.*``, ``protocol.*.allow``: :func:`refuse_program_settings`). :func:`approver_process` applies
the same environment to the whole process for the length of a command, so a git started by
other code (the ledger's background packing) cannot run them either.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from evotree.core.errors import InvalidState

__all__ = [
    "PINNED_CONFIG",
    "SYSTEM_DIRS",
    "approver_env",
    "approver_process",
    "in_approver_process",
    "program",
    "program_settings",
    "refuse_program_settings",
    "run_git",
    "split_global_options",
    "system_program",
    "untrusted_reason",
]

#: The policy's ``[tools]`` paths in force inside :func:`approver_process` (name -> path).
_RECORDED: dict[str, str] = {}
#: Where git and ssh-keygen are looked up when the policy records no path (in this order).
SYSTEM_DIRS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin")

#: Settings given on git's command line (they win over the repository's): nothing runs a program.
PINNED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.attributesFile", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("submodule.recurse", "false"),
    ("commit.gpgSign", "false"),
    ("merge.verifySignatures", "false"),
    ("log.showSignature", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("protocol.allow", "never"),
    ("gpg.format", "ssh"),
    ("gpg.ssh.defaultKeyCommand", ""),
    # git verifies a tag by its LAST signature block, whatever gpg.format says: a PGP or X.509
    # block appended to a signed tag would run these (the repository's, without the pins)
    ("gpg.program", "/bin/false"),
    ("gpg.openpgp.program", "/bin/false"),
    ("gpg.x509.program", "/bin/false"),
)

#: Repository settings that make git run a program (keys as ``git config --list`` prints them).
_RUNS_PROGRAM = re.compile(
    r"""^(?:
        filter\..+\.(?:clean|smudge|process)
      | diff\..+\.(?:textconv|command) | diff\.external
      | merge\..+\.driver
      | (?:merge|diff)tool\..+\.(?:cmd|path)
      | core\.(?:fsmonitor|hookspath|pager|editor|askpass|sshcommand|gitproxy|alternaterefscommand)
      | sequence\.editor
      | pager\..+
      | alias\..+
      | credential\.(?:.+\.)?helper
      | gpg\.(?:.+\.)?program | gpg\.ssh\.defaultkeycommand
      | hook\..+
      | trailer\..+\.(?:command|cmd)
      | uploadpack\.packobjectshook
      | remote\..+\.(?:uploadpack|receivepack)
      | (?:man|browser)\..+\.(?:cmd|path) | web\.browser
      | protocol\..+\.allow
      | extensions\.partialclone
      | remote\..+\.(?:promisor|vcs|partialclonefilter)
      | remote\..+\.(?:url|pushurl)
      | url\..+
    )$""",
    re.IGNORECASE | re.VERBOSE,
)
_FALSE = {"false", "no", "off", "0", ""}
#: A remote URL naming a remote helper (``ext::CMD``, ``fd::N``, ``X::ADDR`` runs git-remote-X):
#: only such a ``remote.*.url`` counts as running a program (a plain origin does not; with
#: GIT_ALLOW_PROTOCOL=none no transport runs anyway, and a lazy fetch needs a promisor remote).
_HELPER_URL = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9+.-]*::")
#: git commands that read or write the worktree (and so could run filters or drivers)
_WORKTREE_COMMANDS = {
    "status",
    "merge",
    "checkout",
    "switch",
    "restore",
    "reset",
    "diff",
    "add",
    "commit",
    "stash",
    "read-tree",
    "checkout-index",
    "update-index",
    "worktree",
    "rm",
    "mv",
    "apply",
    "am",
    "cherry-pick",
    "revert",
    "rebase",
    "pull",
    "diff-files",
    "diff-index",
    "ls-files",
    "grep",
    # these run diff drivers (textconv) or filters on content too
    "show",
    "log",
    "whatchanged",
    "blame",
    "annotate",
    "archive",
    "format-patch",
    "diff-tree",
}
#: git's options before the command that take their value as the next argument
_OPTIONS_WITH_VALUE = {
    "-c",
    "-C",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--attr-source",
}
#: of those, the ones that decide which repository (and so which configuration) git reads
_LOCATION_OPTIONS = {"-C", "--git-dir", "--work-tree"}
#: the caller's variables kept in git's environment (who the approver is; nothing that configures git)
_KEPT_GIT_VARIABLES = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
)


# ---------------------------------------------------------------------------- the programs
def untrusted_reason(path: str) -> str | None:
    """Why ``path`` is not a system program the workspace cannot replace (None: it is one).

    It must be absolute, an executable regular file, and it and every folder above it (links
    resolved) owned by root and not writable by group or others.
    """
    if not isinstance(path, str) or not os.path.isabs(path):
        return f"{path!r} is not an absolute path"
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        return f"{path} does not exist"
    if not stat.S_ISREG(info.st_mode) or not info.st_mode & 0o111:
        return f"{path} is not an executable file"
    current = Path(real)
    for part in (current, *current.parents):
        try:
            info = os.stat(part)
        except OSError:
            return f"{part} cannot be read"
        if info.st_uid != 0:
            return f"{part} is not owned by root"
        if info.st_mode & 0o022:
            return f"{part} is writable by group or others"
    return None


@functools.cache
def system_program(name: str) -> str:
    """The absolute path of ``name`` in the first of :data:`SYSTEM_DIRS` that holds a trusted one."""
    reasons = []
    for folder in SYSTEM_DIRS:
        candidate = os.path.join(folder, name)
        if not os.path.exists(candidate):
            continue
        reason = untrusted_reason(candidate)
        if reason is None:
            return candidate
        reasons.append(reason)
    raise InvalidState(
        f"{name} was not found as a system program in {', '.join(SYSTEM_DIRS)}"
        + (f" ({'; '.join(reasons)})" if reasons else "")
        + "; evotree never takes it from PATH for a sign-off",
        fix=f"install {name} system-wide (owned by root), or record its absolute root-owned path as "
        f"[tools].{name.replace('-', '_')} in the champion's evotree.toml",
        program=name,
    )


def program(name: str, recorded: str | None = None) -> str:
    """``recorded`` (the signed policy's ``[tools]`` path) when it is a trusted system program,
    else :class:`InvalidState`; without one, :func:`system_program`. Never looked up on PATH."""
    recorded = recorded or _RECORDED.get(name)
    if not recorded:
        return system_program(name)
    reason = untrusted_reason(recorded)
    if (
        reason is None and os.path.basename(recorded) != name
    ):  # e.g. /usr/bin/true would "verify" anything
        reason = f"{recorded} is not named {name}"
    if reason is not None:
        key = name.replace("-", "_")
        raise InvalidState(
            f"[tools].{key} of the champion's policy is not a system program: {reason}",
            fix=f"record an absolute path owned by root (e.g. /usr/bin/{name}) as [tools].{key} "
            "through a reviewed promotion",
            program=name,
            path=recorded,
        )
    return recorded


# ---------------------------------------------------------------------------- git's environment
def approver_env(
    base: dict[str, str] | None = None, *, identity: tuple[str, str] | None = None
) -> dict[str, str]:
    """An environment for git in which nothing of the workspace's configures it.

    Drops every ``GIT_*`` variable of ``base`` (default ``os.environ``) but the identity ones,
    ignores the system and global configuration and attributes, turns off pagers, editors,
    askpass and terminal prompts, and sets ``PATH`` to :data:`SYSTEM_DIRS` (for the programs git
    itself starts). ``identity`` (name, email) fills the author and committer when not set.
    """
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if not k.startswith("GIT_") or k in _KEPT_GIT_VARIABLES
    }
    for key in ("PAGER", "LESS", "EDITOR", "VISUAL", "SSH_ASKPASS", "GPG_TTY"):
        env.pop(key, None)
    env.update(
        {
            "PATH": os.pathsep.join(SYSTEM_DIRS),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_EDITOR": ":",
            "GIT_SEQUENCE_EDITOR": ":",
            "GIT_ASKPASS": "",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_OPTIONAL_LOCKS": "0",
            # no transport at all (this wins over the repository's protocol.<name>.allow), and no
            # lazy fetch of a missing object from a partial clone's promisor remote (git >= 2.45)
            "GIT_ALLOW_PROTOCOL": "none",
            "GIT_NO_LAZY_FETCH": "1",
        }
    )
    if identity is not None:
        name, email = identity
        for role in ("AUTHOR", "COMMITTER"):
            env.setdefault(f"GIT_{role}_NAME", name)
            env.setdefault(f"GIT_{role}_EMAIL", email)
    return env


def _config_args(settings: Sequence[tuple[str, str]]) -> list[str]:
    out: list[str] = []
    for key, value in settings:
        out += ["-c", f"{key}={value}"]
    return out


def _repo_identity(root: Path) -> tuple[str, str] | None:
    """user.name and user.email as evotree reads them (libgit2: global configuration included)."""
    try:
        import pygit2

        config = pygit2.Repository(str(root)).config
        return str(config["user.name"]), str(config["user.email"])
    except Exception:  # noqa: BLE001 - no identity: git will say so if it needs one
        return None


def split_global_options(args: Sequence[str]) -> tuple[list[str], str, int]:
    """``(location, command, index)`` of a git argument list: the options among those before the
    command that choose the repository (``--git-dir``, ``--work-tree``, ``-C``, each as one
    ``--opt=value`` or ``-C value`` pair, in order), the command (``""`` when none) and its index.

    Options before the command that take a value as the next argument (``-c K=V``, ``-C DIR``,
    ``--git-dir DIR``...) are skipped with their value, so the value is never taken for the command.
    """
    location: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "--":
            index += 1
            break
        if not arg.startswith("-"):
            return location, arg, index
        name, eq, value = arg.partition("=")
        if arg in _OPTIONS_WITH_VALUE:
            value = args[index + 1] if index + 1 < len(args) else ""
            if arg == "-C":
                location += ["-C", value]
            elif arg in _LOCATION_OPTIONS:
                location.append(f"{arg}={value}")
            index += 2
            continue
        if eq and name in _LOCATION_OPTIONS and name != "-C":
            location.append(arg)
        index += 1
    return location, (args[index] if index < len(args) else ""), index


def program_settings(
    root: str | os.PathLike[str], *, git: str | None = None, location: Sequence[str] = ()
) -> list[tuple[str, str, str]]:
    """``(key, value, origin)`` of every setting of the repository at ``root`` that runs a program.

    Read by git itself (includes followed) with the system and global configuration off, so
    what is listed is what the repository (and the files it includes) defines. ``location``: the
    ``--git-dir=``/``--work-tree=``/``-C DIR`` options of the command the settings are for (from
    :func:`split_global_options`), so they are read from the repository that command uses, not
    from the one git would discover from ``root`` (e.g. through a rewritten ``.git`` pointer).
    """
    exe = program("git", git)
    proc = subprocess.run(
        [
            exe,
            "--no-pager",
            *_config_args(PINNED_CONFIG),
            *location,
            "config",
            "--list",
            "-z",
            "--show-origin",
        ],
        cwd=str(root),
        env=approver_env(),
        capture_output=True,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise InvalidState(
            f"git could not read the configuration of {root}: "
            f"{proc.stderr.decode(errors='replace').strip()}",
            fix="check the repository's .git/config",
        )
    fields = proc.stdout.decode("utf-8", errors="replace").split("\0")
    found: list[tuple[str, str, str]] = []
    for origin, entry in zip(fields[0::2], fields[1::2]):
        if origin.startswith("command line:"):
            continue
        key, _, value = entry.partition("\n")
        if not _RUNS_PROGRAM.match(key):
            continue
        lowered = key.lower()
        if lowered == "core.fsmonitor" and value.strip().lower() in _FALSE:
            continue
        if lowered.startswith("remote.") and lowered.endswith(("url", ".promisor")):
            if lowered.endswith("url") and not _HELPER_URL.match(value):
                continue  # a plain remote (origin): no program, and no transport runs anyway
            if lowered.endswith(".promisor") and value.strip().lower() in _FALSE:
                continue
        found.append((key, value, origin.removeprefix("file:")))
    return found


def _neutralizers(settings: Sequence[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """Command-line settings that blank out the filters and drivers ``settings`` define."""
    out: list[tuple[str, str]] = []
    for key, _value, _origin in settings:
        section, _, rest = key.partition(".")
        name, _, variable = rest.rpartition(".")
        section, variable = section.lower(), variable.lower()
        if section == "filter" and name:
            out += [
                (f"filter.{name}.clean", ""),
                (f"filter.{name}.smudge", ""),
                (f"filter.{name}.process", ""),
                (f"filter.{name}.required", "false"),
            ]
        elif section == "diff" and name:
            out += [(f"diff.{name}.textconv", ""), (f"diff.{name}.command", "")]
        elif section == "merge" and name and variable == "driver":
            out.append((f"merge.{name}.driver", "false"))
        elif section == "pager" and not name:
            out.append((key, "false"))
    return list(dict.fromkeys(out))


def refuse_program_settings(
    root: str | os.PathLike[str], what: str, *, git: str | None = None
) -> None:
    """:class:`InvalidState` naming each setting of the repository at ``root`` that runs a program."""
    found = program_settings(root, git=git)
    if found:
        from evotree.core.text import escape_control

        listed = "; ".join(
            f"{escape_control(k)}={escape_control(v)[:60]} ({escape_control(o)})"
            for k, v, o in found
        )
        raise InvalidState(
            f"{what}: the repository's git configuration defines settings that run programs, which git would run "
            f"in your process: {listed}",
            fix="remove them (git config --unset KEY, or edit .git/config) if you did not add them yourself; "
            "nothing was changed",
            settings=[k for k, _v, _o in found],
        )


def run_git(
    root: str | os.PathLike[str],
    *args: str,
    git: str | None = None,
    ssh_keygen: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    input: Any = None,
    text: bool = True,
    identity: tuple[str, str] | None = None,
) -> subprocess.CompletedProcess[Any]:
    """``git args...`` as the approver's process runs it: the system git (or ``git``, a policy's
    recorded path), :func:`approver_env`, :data:`PINNED_CONFIG`, ``gpg.ssh.program`` the system
    ssh-keygen (or ``ssh_keygen``), and, for commands that touch the worktree, every filter and
    driver the repository names blanked out. Never raises for git's exit status."""
    exe = program("git", git)
    settings = list(PINNED_CONFIG) + [("gpg.ssh.program", program("ssh-keygen", ssh_keygen))]
    location, command, _ = split_global_options(args)
    if command in _WORKTREE_COMMANDS:
        settings += _neutralizers(program_settings(cwd or root, git=git, location=location))
    env = approver_env(identity=identity or _repo_identity(Path(root)))
    stdin = (
        {"input": input} if input is not None else {"stdin": subprocess.DEVNULL}
    )  # never the terminal
    return subprocess.run(
        [exe, "--no-pager", *_config_args(settings), *args],
        cwd=str(cwd or root),
        env=env,
        capture_output=True,
        check=False,
        text=text,
        **stdin,
    )


# ---------------------------------------------------------------------------- the whole process
_MARK = "EVOTREE_APPROVER_PROCESS"


def in_approver_process() -> bool:
    """True inside :func:`approver_process` (:meth:`evotree.core.gitio.Git.run` then uses :func:`run_git`)."""
    return os.environ.get(_MARK) == "1"


@contextmanager
def approver_process(tools: Any = None) -> Iterator[None]:
    """For the length of the block, every git this process starts runs as :func:`run_git` would:
    ``PATH`` is :data:`SYSTEM_DIRS`, no ``GIT_*`` of the caller's configures it, and
    :data:`PINNED_CONFIG` is given as command-line settings (``GIT_CONFIG_COUNT``); ``tools`` (a
    trusted policy's ``[tools]``) names the git and ssh-keygen :func:`program` returns. The
    environment is restored afterwards. Not for threads sharing the process (the server)."""
    saved = dict(os.environ)
    saved_tools = dict(_RECORDED)
    for name, key in (("git", "git"), ("ssh-keygen", "ssh_keygen")):
        if getattr(tools, key, None):
            _RECORDED[name] = getattr(tools, key)
    env = approver_env()
    env[_MARK] = "1"
    env["GIT_CONFIG_COUNT"] = str(len(PINNED_CONFIG))
    for index, (key, value) in enumerate(PINNED_CONFIG):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    try:
        os.environ.clear()
        os.environ.update(env)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        _RECORDED.clear()
        _RECORDED.update(saved_tools)
