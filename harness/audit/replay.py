"""Steps re-run as bash ran them, over the checkout with and without the future's lines.

A rule that models what a command read (``grep``'s options, ``tail``'s forms, the locale, what
``xargs`` is handed) trails the next spelling. With a trusted task repository the audit also
asks the shell itself: every step of a trajectory is run again, in order, each by a fresh
bash in a nested sandbox of its own (its folder, variables and files carry over as data, as
they did for the agent; its functions, aliases, traps and options do not; the driver that
sends the outputs is out of the steps' reach), in a bubblewrap sandbox over
a copy of the checkout — twice over the checkout as it is, once over a copy in which the
future's text in the hidden files (a line a future commit adds, an indexed line of the
provenance index, a piece of one, such a line escaped) has its letters and digits rotated
(``a``→``b``, ``9``→``0``; the same length, spaces and punctuation; the base's own words kept).
Only those spans turn, so a report keeps its keys and a database its structure. Compressed
hidden files (gzip, xz, bzip2) are rotated inside. What checks a file's integrity reads the
same in both worlds (a gzip's header and size where zlib gives it, a stored zip member's CRC,
a database's indexes, a hidden checksum line of a rotated file); a size not kept is set aside.

What a step printed **depends on the future** when the two worlds part:

* its output recorded: what it printed is found, line by line in order, in what both runs over
  the checkout printed (the replay reproduced it), and not in what the run over the rotated
  copy printed — no world without the future's lines prints it;
* no output (a shell history): both runs over the checkout print the same, and the run over
  the rotated copy prints otherwise.

Such a step is an ``audit.future_content`` hit (high), whatever the command was: ``tail +2``,
``LC_ALL=C grep``, a ``bin/grep`` the agent wrote, ``xargs`` of a listing, ``rev``, a count.

A fourth run goes over the rotated copy with its ``.git`` pruned at the base (what a phase's
box gets: :func:`evotree.harness.git_prune.prune_copy`), a world with neither source of the
future: a step that prints lines holding the future's text over the checkout and not there
read the future (from the history, or from both), however it named the revision (computed from a file, a variable, an upstream) or
however it read the store (git, or zlib by hand); the git stores nested in its work tree (a
vendored mirror, a clone's ``.git``) are pruned at the base there too
(:func:`evotree.harness.git_prune.prune_nested`). Only lines the provenance index recognises
count there (a branch behind its upstream or a count of objects differs too, and shows nothing).
The worlds (the copies, the rotation, the pruned ``.git``) are made in
:mod:`evotree.harness.audit.replay_copy`.
A step whose replay did not reproduce what it printed, timed out or failed to start is not
judged here (the rules judge it); a trajectory not replayed whole (past :data:`MAX_STEPS`, the
checkout's replay time spent, a step unfinished) gets a ``warn`` finding that says so. The replay only adds findings; it clears none.

The sandbox: new user, PID, network (none), IPC, UTS and cgroup namespaces, no capabilities, a
clean environment (``PATH``, ``HOME``, ``LANG=C.UTF-8``, ``TZ=UTC``), the system read-only, a
private ``/tmp``, the copy bound read-write where the checkout is (its absolute paths hold),
CPU, memory, file size and process limits and a wall-clock limit per run. It sees nothing of
the host but the system: not the trajectory's file, not the audit's folders, not ``$HOME``.
Each step runs in a nested sandbox inside it (:func:`_nested`): its own user and PID namespaces
and ``/proc`` (``/proc/sys`` read-only), no capabilities, the driver's folder hidden; only the
driver holds the outputs' pipe, so a step cannot forge, hide or steer the records
(:func:`_driver`). The run's root and ``/dev`` are read-only once made (a step writes only the
sized tmpfs: nothing on the driver's path or loader path), and the driver itself holds no
capability but CAP_SETFCAP (:func:`_setup`). The three runs go one after another, each ended
whole before the next starts: no world can tell another what it read.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evotree.harness.audit.hits import Hit
from evotree.harness.audit.replay_places import (  # the sandbox's folders, the agent's paths
    _DRV,
    _INSIDE,
    _OUT,
    _WORLD,
    _agent_roots,
)
from evotree.harness.audit.replay_copy import (  # the worlds copied, split off on its seam
    MAX_CHECKOUT_BYTES,
    MAX_CHECKOUT_FILES,
    PRUNE_SECONDS,
    ReplayWorlds,
    _copy_and_rotate,
    _state,
)
from evotree.harness.audit.replay_rotate import rotated  # the rotated world, split off on its seam
from evotree.harness.audit.replay_judge import (  # the comparison, split off on its seam
    _judge,
    _lines,
    _future_shown,
    _shown,
    _silent,
    _unreproduced,
)
from evotree.harness.audit.steps import Trajectory

__all__ = [
    "ReplayWorlds",
    "replay_hits",
    "rotated",
    "worlds_for",
    "MAX_CHECKOUT_BYTES",
    "MAX_CHECKOUT_FILES",
    "PRUNE_SECONDS",
]

#: a replay of one trajectory (all its steps, one world) may take this long
RUN_SECONDS = 20.0
#: at most this much of each step's output is read back
MAX_OUTPUT_BYTES = 1 << 20
_LIMITS = ["--cpu=30", "--as=4294967296", "--fsize=67108864", "--nproc=512", "--nofile=1024"]
#: each tmpfs of the sandbox (``/tmp``, ``/dev/shm``, the outputs) holds at most this much; the
#: checkout's tmpfs this much more than the work tree
TMP_BYTES = 256 << 20
#: at most this much of all the steps' outputs of one run is read back
MAX_PIPE_BYTES = 64 << 20
#: at most this many steps of a trajectory are replayed (the rest: not judged here)
MAX_STEPS = 2_000
#: at most this many seconds of replay per checkout and process (more: not replayed)
BUDGET_SECONDS = 600.0
#: the pipe's fd (the driver's alone)
_PIPE = 9


_WORLDS: weakref.WeakKeyDictionary[Any, ReplayWorlds | None] = weakref.WeakKeyDictionary()
#: why an ancestry's checkout could not be copied (too large, a file copytree refuses): its
#: trajectories are said "not replayed whole" (the s17 nested red team's W5), never passed
_UNCOPIED: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def worlds_for(ancestry: Any) -> ReplayWorlds | None:
    """The replay's two copies of ``ancestry``'s checkout (made once per ancestry), or None: an
    untrusted or bare repository, no hidden path, nothing of the future in the hidden files, no
    sandbox here, or a checkout that could not be copied (too large, a file ``copytree``
    refuses: why kept in :data:`_UNCOPIED`, which :func:`replay_hits` says)."""
    if ancestry in _WORLDS:
        return _WORLDS[ancestry]
    worlds = None
    try:
        worlds = _make_worlds(ancestry)
    finally:
        _WORLDS[ancestry] = worlds
    return worlds


#: worlds by (checkout, base, hidden paths, every file's path, size and time): the same
#: checkout audited again through another Ancestry (the CLI's batches, a test auditing the
#: same steps twice) is copied and rotated once (a str: why it could not be copied); at most
#: this many are kept
_BY_STATE: dict[tuple[Any, ...], ReplayWorlds | str | None] = {}
_KEEP = 8


def _make_worlds(ancestry: Any) -> ReplayWorlds | None:
    if not getattr(ancestry, "trusted", False) or not ancestry.hidden_paths:
        return None
    workdir = getattr(ancestry.repo, "workdir", None)
    if not workdir or _bwrap() is None:
        return None
    root = Path(workdir).resolve()
    state = _state(root)
    if isinstance(state, str):
        _UNCOPIED[ancestry] = state
        return None
    # the roles decide which lines are rotated: an ancestry with the same paths in another
    # role must not reuse these worlds
    roles = (
        tuple(ancestry.hidden_paths),
        tuple(getattr(ancestry, "door_paths", ())),
        tuple(getattr(ancestry, "grader_paths", ())),
    )
    key = (str(root), str(ancestry.base), roles, state)
    if key not in _BY_STATE:
        _BY_STATE[key] = _copy_and_rotate(ancestry, root, PRUNE_SECONDS)
    while len(_BY_STATE) > _KEEP:
        old = _BY_STATE.pop(next(iter(_BY_STATE)))
        if isinstance(old, ReplayWorlds) and all(w is not old for w in _WORLDS.values()):
            old.tmp.cleanup()
    worlds = _BY_STATE.get(key)
    if isinstance(worlds, str):
        _UNCOPIED[ancestry] = worlds
        return None
    return worlds


def _bwrap() -> str | None:
    from evotree.harness.sandbox_system import find_tool

    return find_tool("bwrap", None)


def _sandbox_args(size: int) -> list[str]:
    """The system as a phase sees it, without ``/sys`` (the host's devices and addresses) and
    without device nodes bound from the host (GPUs); every tmpfs sized."""
    from evotree.harness.sandbox_system import system_args

    args = system_args(False)
    out: list[str] = []
    k = 0
    while k < len(args):
        option = args[k]
        if option in ("--dev-bind-try", "--dev-bind"):
            k += 3
            continue
        if option == "--ro-bind-try" and args[k + 1] == "/sys":
            k += 3
            continue
        if option == "--tmpfs":
            out += ["--size", str(size)]
        out.append(option)
        k += 1
    return out


def _sandbox_argv(
    worlds: ReplayWorlds,
    pristine: Path,
    folder: Path,
    where: str | None = None,
    also: Sequence[str] = (),
    store: Path | None = None,
) -> list[str]:
    """bwrap's argv: the copy (a sized tmpfs) at ``where`` (the agent's checkout path, the
    steps start there) with a link to it at the auditor's checkout path, or at the auditor's;
    a link to it at each path of ``also`` (other paths the agent's checkout may have been at:
    :func:`_agent_roots`); ``store``: the ``.git`` bound read-only at the checkout (default: the
    checkout's own)."""
    from evotree.harness.sandbox_spec import SANDBOX_HOME
    from evotree.harness.sandbox_system import prlimit_path

    exe = _bwrap()
    assert exe is not None
    gitdir = store or worlds.gitdir
    root = Path(where) if where else worlds.root
    link = ["--symlink", str(root), str(worlds.root)] if where else []
    for path in also:
        if path:  # "": the auditor's own path, a link to the copy already
            link += ["--symlink", str(root), path]
    return [
        exe,
        "--unshare-all",
        "--unshare-user",
        # uid 0 inside whoever the auditor is (the host's uid outside): the setup's ``mount``
        # (util-linux refuses any other uid) and the same user in every step as for a root
        # auditor
        "--uid",
        "0",
        "--gid",
        "0",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        # the setup's capabilities, in the run's own user namespace: it mounts the bare
        # ``/proc`` the steps' nested sandboxes need (:func:`_setup`), then drops them for good
        # before the driver starts, which keeps only CAP_SETFCAP (the s15 red team's W4)
        "--cap-add",
        "CAP_SYS_ADMIN",
        "--cap-add",
        "CAP_SETPCAP",
        "--cap-add",
        "CAP_SETFCAP",
        "--hostname",
        "evotree-replay",
        *_sandbox_args(TMP_BYTES),
        "--size",
        str(worlds.size + TMP_BYTES),
        "--tmpfs",
        str(root),
        *(["--ro-bind", str(gitdir), str(root / ".git")] if gitdir else []),
        *link,
        "--ro-bind",
        str(folder),
        _INSIDE,
        "--size",
        str(TMP_BYTES),
        "--tmpfs",
        _OUT,
        "--size",
        str(TMP_BYTES),
        "--tmpfs",
        _DRV,
        "--ro-bind",
        str(pristine),
        _WORLD,
        # nothing a step can write is on the driver's path or loader path (the s15 red team's
        # W1: a link renamed over ``/lib64`` in bwrap's root tmpfs), and nothing lands in an
        # unsized tmpfs (W3): the root (``/etc``, the system's links, the mount points) and
        # ``/dev`` read-only once made; the steps write only the sized tmpfs above
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",
        "--clearenv",
        "--setenv",
        "PATH",
        "/usr/local/bin:/usr/bin:/bin",
        "--setenv",
        "HOME",
        SANDBOX_HOME,
        "--setenv",
        "LANG",
        "C.UTF-8",
        "--setenv",
        "TZ",
        "UTC",
        "--setenv",
        "TERM",
        "dumb",
        "--chdir",
        str(root),
        "--",
        prlimit_path(),
        *_LIMITS,
        "--",
        "/bin/bash",
        "--noprofile",
        "--norc",
        f"{_INSIDE}/setup.sh",
    ]


#: a bare ``/proc`` of the run's (no folder covered): the kernel mounts a step's fresh ``/proc``
#: in its own user namespace only where such a one is in sight; in the driver's folder, which
#: each step's sandbox covers
_BARE_PROC = "/.evotree-replay-driver/proc"


def _setup() -> str:
    """What runs first in the run's sandbox, with its one capability: mount the bare ``/proc``
    (:data:`_BARE_PROC`), then start the driver with no capability at all (none effective,
    permitted, inheritable or ambient, an empty bounding set, no new privileges): code run as
    the driver cannot remount the read-only binds (the task's ``.git``, the world copy, the
    system) nor gain a capability by ``execve``; each step's sandbox is then a user namespace
    of the driver's own, where the run's mounts are locked as they are. Fails closed: no
    ``setpriv`` or no mount, no record at all (the verdict says "not replayed whole")."""
    setpriv = _setpriv()
    return "\n".join(
        [
            f"mkdir -p {_BARE_PROC} && mount -t proc -o nosuid,nodev,noexec proc {_BARE_PROC}"
            " >/dev/null 2>&1 || exit 95",
            f"[ -n {shlex.quote(setpriv)} ] || exit 94",
            f"exec {shlex.quote(setpriv)} --no-new-privs --inh-caps=-all,+setfcap"
            " --ambient-caps=-all,+setfcap --bounding-set=-all,+setfcap"
            f" -- /bin/bash --noprofile --norc {_INSIDE}/driver.sh",
            "",
        ]
    )


def _setpriv() -> str:
    """util-linux's ``setpriv`` ("" when it is not installed: the run then fails closed)."""
    for candidate in ("/usr/bin/setpriv", "/bin/setpriv"):
        if os.access(candidate, os.X_OK):
            return candidate
    return ""


def _driver(count: int) -> str:
    """The run's driver (a bash the steps cannot reach): it copies the world into the checkout's
    place (a sized tmpfs), then runs each step in turn in a fresh bash (:func:`_step_script`)
    inside a nested sandbox of its own (:func:`_nested`): a new PID namespace with its own
    ``/proc`` (the driver is neither seen nor signalled there), no capabilities, the driver's
    folder covered by an empty tmpfs and the outputs' pipe closed. The driver opens each step's
    output file in its own folder, then sends it to the auditor on the pipe, cut to
    :data:`MAX_OUTPUT_BYTES` and base64-encoded, one line a step: a step can write no record,
    touch no other step's output, nor end or steer the driver. What carries from one step to
    the next is what a harness that starts a fresh shell a step keeps (the files), and the
    folder and exported variables the step's shell ended with (as a persistent shell would)."""
    nested = " ".join(_nested())
    return "\n".join(
        [
            f"exec {_PIPE}>&1 >/dev/null",
            "exec </dev/null",
            "umask 0022",
            f"cp -a {_WORLD}/. . >/dev/null 2>&1 || exit 97",
            # no nested sandbox here (bwrap missing, a kernel that refuses it): no record at all,
            # so the verdict says the trajectory was not replayed whole (never a silent pass)
            f"{nested} -c : </dev/null >/dev/null 2>&1 {_PIPE}>&- || exit 96",
            "k=0",
            f"while [ $k -lt {count} ]; do",
            f"  {nested} {_INSIDE}/step.sh $k </dev/null >{_DRV}/o 2>&1 {_PIPE}>&-",
            f"  builtin printf '\\n\\036%d\\036' $k >&{_PIPE}",
            f"  head -c {MAX_OUTPUT_BYTES} {_DRV}/o | base64 -w0 >&{_PIPE}; "
            f"builtin printf '\\n' >&{_PIPE}",
            f"  rm -f {_DRV}/o; k=$((k + 1))",
            "done",
            "",
        ]
    )


#: the folder and exported variables a step's shell ended with, for the next step's
_STATE = f"{_OUT}/state"
#: exported names a step's state does not carry to the next (code a new bash would run, the
#: shell's own)
_NOT_CARRIED = (
    "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "_", "SHLVL",
    "PWD", "OLDPWD", "BASH_XTRACEFD", "CDPATH", "GLOBIGNORE", "POSIXLY_CORRECT",
)  # fmt: skip


def _nested() -> list[str]:
    """The nested sandbox one step runs in, inside the run's: the run's file system as it is
    (the checkout's copy, ``/tmp``, the outputs' tmpfs) but the driver's folder, a user
    namespace of its own (no further ones), a new PID namespace with its own ``/proc`` (its
    ``sys`` read-only), a new session, no capabilities."""
    exe = _bwrap()
    assert exe is not None
    return [
        exe, "--unshare-user", *_no_userns(exe), "--dev-bind", "/", "/", "--unshare-pid",
        "--proc", "/proc",
        # the kernel's settings read-only (a process the host's uid 0 maps to writes a sysctl
        # without any capability): the run's own, bound over the step's fresh ``/proc``
        *_PROC_COVERS, "--size", str(TMP_BYTES), "--tmpfs", _DRV,
        "--new-session", "--die-with-parent", "--cap-drop", "ALL", "--",
        "/bin/bash", "--noprofile", "--norc",
    ]  # fmt: skip


def _no_userns(exe: str) -> list[str]:
    """``--disable-userns`` where this bubblewrap has it (0.8 and later): a step makes no user
    namespace of its own (older: it may, where the run's mounts are locked all the same)."""
    from evotree.harness.sandbox_nested import bwrap_help

    return ["--disable-userns"] if "--disable-userns" in bwrap_help(exe) else []


#: what of a step's ``/proc`` is the host's: bound read-only from the run's (itself read-only)
_PROC_COVERS = [
    arg
    for name in ("sys", "sysrq-trigger", "irq", "bus")
    for arg in ("--ro-bind-try", f"/proc/{name}", f"/proc/{name}")
]


def _step_script(carry: bool = True) -> str:
    """The fresh bash of one step (its number the argument): it starts in the folder and with
    the variables (exported or not) the last step's shell ended with, read as data, never run
    (a name of :data:`_NOT_CARRIED`, the shell's own, or a name no variable can have is
    dropped; functions, aliases, traps, options and builtins a step set are not carried), writes
    its own down when it ends (its ``EXIT`` trap; a step that replaces that trap or is killed
    leaves the last one's), and evaluates the step. Without ``carry`` (a harness that starts a
    fresh shell a step at the checkout: mini-swe-agent) it starts at the checkout with the
    sandbox's environment, whatever the last step left."""
    deny = "|".join([*_NOT_CARRIED, *_SHELLS_OWN])
    save = (
        "builtin set +eu; builtin umask 0022; IFS=$' \\t\\n'; "
        '{ builtin printf "%s\\0" "$PWD"; '
        "for __evotree_n in $(builtin compgen -v); do case $__evotree_n in "
        f"{deny}) continue;; esac; "
        'builtin printf "v%s=%s\\0" "$__evotree_n" "${!__evotree_n}"; done; '
        "for __evotree_n in $(builtin compgen -e); do case $__evotree_n in "
        f"{deny}) continue;; esac; "
        'builtin printf "x%s=%s\\0" "$__evotree_n" "${!__evotree_n}"; done; } '
        f"2>/dev/null >{_STATE}.new && command -p mv -f {_STATE}.new {_STATE} 2>/dev/null"
    )
    return "\n".join(
        [
            f"if {'' if carry else 'false && '}[ -f {_STATE} ] && [ -r {_STATE} ]; then",
            "  { IFS= builtin read -r -d '' __evotree_d",
            "    while IFS= builtin read -r -d '' __evotree_kv; do",
            "      __evotree_n=${__evotree_kv%%=*}; __evotree_n=${__evotree_n#?}",
            "      case $__evotree_n in",
            f"        ''|[0-9]*|*[!A-Za-z0-9_]*|{deny}) continue;;",
            "      esac",
            "      case $__evotree_kv in",
            '        v*) builtin printf -v "$__evotree_n" %s "${__evotree_kv#*=}" 2>/dev/null;;',
            '        x*) builtin export -- "${__evotree_kv#x}" 2>/dev/null;;',
            "      esac",
            f"    done; }} <{_STATE} 2>/dev/null",
            '  builtin cd -- "$__evotree_d" 2>/dev/null',
            "fi",
            f'__evotree_s=$(< {_INSIDE}/in/"$1")',
            "builtin unset __evotree_d __evotree_kv __evotree_n; builtin set --",
            f"builtin trap {shlex.quote(save)} EXIT",
            'builtin eval "builtin unset __evotree_s',
            '$__evotree_s"',
            "",
        ]
    )


#: the shell's own variables (set by bash itself, or changing how it runs): never carried
_SHELLS_OWN = (
    "BASH*", "COMP*", "HIST*", "PS[0-9]", "FUNCNAME", "FUNCNEST", "GROUPS", "DIRSTACK", "EUID",
    "UID", "PPID", "RANDOM", "SRANDOM", "SECONDS", "LINENO", "EPOCH*", "PIPESTATUS", "OPTIND",
    "OPTERR", "OPTARG", "TMOUT", "HOSTNAME", "HOSTTYPE", "MACHTYPE", "OSTYPE", "MAIL*",
    "READLINE*", "COLUMNS", "LINES", "__evotree_*",
)  # fmt: skip


def _run_worlds(
    worlds: ReplayWorlds,
    commands: Sequence[str],
    prompt: str | None = None,
    carry: bool = True,
) -> tuple[list[str | None], ...]:
    """What each step printed in three runs, one after another, each over a fresh copy: the
    checkout twice, the rotated copy once (None: the step never finished); the copy where the
    steps or the task's ``prompt`` say the agent's checkout was (:func:`_agent_root`); each
    step starting where the last left (``carry``) or at the checkout (:func:`_step_script`).
    One run at a time, each ended whole (its sandbox's processes gone, its pipe read to the
    end) before the next starts: no world can learn what another read (the s15 red team's W2:
    byte-range locks on a file all three bound carried the read between runs started
    together); each run has :data:`RUN_SECONDS`."""
    return _run_sources(
        worlds,
        commands,
        prompt,
        carry,
        ((worlds.real, None), (worlds.real, None), (worlds.neutral, None)),
    )


def _run_sources(
    worlds: ReplayWorlds,
    commands: Sequence[str],
    prompt: str | None,
    carry: bool,
    sources: Sequence[tuple[Path, Path | None]],
) -> tuple[list[str | None], ...]:
    """What each step printed in one run a ``(work tree copy, .git)`` of ``sources``
    (:func:`_run_worlds`), one after another, each ended whole before the next starts."""
    tmp = tempfile.mkdtemp(prefix="evotree-replay-run-")
    try:
        roots = _agent_roots(worlds, commands, prompt) or [""]
        where, also = roots[0] or None, roots[1:]
        outputs = []
        for k, (source, store) in enumerate(sources):
            folder = Path(tmp) / str(k)
            proc = _start(worlds, source, folder, commands, where, also, carry, store)
            if proc is None:
                outputs.append([None] * len(commands))
                continue
            reader = _Reader(proc)
            try:
                proc.wait(timeout=RUN_SECONDS)
            except subprocess.TimeoutExpired:
                pass
            _end(proc)
            outputs.append(reader.outputs(len(commands)))
        return tuple(outputs)
    finally:
        _remove(Path(tmp))


def _end(proc: subprocess.Popen[bytes]) -> None:
    """End what is left of one run (its process group: bwrap, whose death ends its sandbox's
    PID namespace) and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _remove(folder: Path) -> None:
    """Remove a folder of the auditor's (no recursion limit: ``rm``, not Python's walk)."""
    subprocess.run(
        ["rm", "-rf", "--one-file-system", "--", str(folder)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


class _Reader:
    """Reads one run's pipe in a thread, up to :data:`MAX_PIPE_BYTES` (the rest discarded)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        import threading

        self.data = bytearray()
        self.proc = proc
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while chunk := self.proc.stdout.read(1 << 16):
            if len(self.data) < MAX_PIPE_BYTES:
                self.data += chunk[: MAX_PIPE_BYTES - len(self.data)]

    def outputs(self, count: int) -> list[str | None]:
        import base64
        import binascii

        self.thread.join(timeout=5)
        found: dict[int, str] = {}
        for line in bytes(self.data).split(b"\n"):
            match = _RECORD.fullmatch(line)
            if match is None:
                continue
            k = int(match.group(1))
            if k in found or k >= count:
                continue
            try:
                found[k] = base64.b64decode(match.group(2), validate=True).decode(
                    "utf-8", "replace"
                )
            except (binascii.Error, ValueError):
                continue
        return [found.get(k) for k in range(count)]


_RECORD = re.compile(rb"\x1e(\d+)\x1e([A-Za-z0-9+/=]*)")


def _start(
    worlds: ReplayWorlds,
    source: Path,
    folder: Path,
    commands: Sequence[str],
    where: str | None = None,
    also: Sequence[str] = (),
    carry: bool = True,
    store: Path | None = None,
) -> subprocess.Popen[bytes] | None:
    (folder / "in").mkdir(parents=True)
    for k, command in enumerate(commands):
        data = command.encode("utf-8", "surrogatepass")
        (folder / "in" / str(k)).write_bytes(data)
    (folder / "setup.sh").write_text(_setup())
    (folder / "driver.sh").write_text(_driver(len(commands)))
    (folder / "step.sh").write_text(_step_script(carry))
    try:
        return subprocess.Popen(
            _sandbox_argv(worlds, source, folder, where, also, store),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_own_keyring,
        )
    except (OSError, ValueError):  # ValueError: a NUL in the argv
        return None


def _own_keyring() -> None:
    """In the child before bwrap: join a new, empty session keyring (the kernel's keyrings are
    not namespaced; the auditor's session keys must not be reachable by the steps). Fails
    closed: the child exits when the call fails."""
    import ctypes

    if os.uname().machine != "x86_64":
        return  # the syscall number below is x86_64's (elsewhere: documented residual)
    libc = ctypes.CDLL(None, use_errno=True)
    keyctl, join_session_keyring = 250, 1
    if libc.syscall(keyctl, join_session_keyring, None) < 0:
        os._exit(70)


#: the rule of a trajectory's finding when the replay could not run it whole
NOT_WHOLE = "not replayed whole"


def _not_whole(why: str, command: str) -> Hit:
    """A trajectory the replay could not judge whole (too many steps, the checkout's replay
    time spent, a step that did not finish): ``audit.unreadable`` at ``warn`` — no leak is
    claimed (an honest long trajectory is not flagged), but its verdict says that part of it
    was judged by the rules only."""
    return Hit(
        "audit.unreadable",
        "warn",
        f"{NOT_WHOLE}: {why}; the rest is judged by the rules only",
        command[:300],
    )


def replay_hits(traj: Trajectory, ancestry: Any) -> list[Hit]:
    """The steps of ``traj`` whose output, re-run as bash ran it over the checkout, depends on
    lines only the future holds (module doc), and a :func:`_not_whole` finding when it could
    not be replayed whole; [] when there is nothing to replay."""
    commands = [step.command or ":" for step in traj.steps[:MAX_STEPS]]
    if not commands or not any(step.command for step in traj.steps):
        return []
    worlds = worlds_for(ancestry)
    if worlds is None:
        why = _UNCOPIED.get(ancestry)
        first = next(s.command for s in traj.steps if s.command)
        return [_not_whole(why, first)] if why else []
    hits = []
    past = next((s for s in traj.steps[MAX_STEPS:] if s.command), None)
    if past is not None:
        why = f"{len(traj.steps):,} steps, only the first {MAX_STEPS:,} are replayed"
        hits.append(_not_whole(why, past.command))
    if worlds.spent > BUDGET_SECONDS and not any(k[1:] == tuple(commands) for k in worlds.runs):
        # this checkout's replays took their time: the rules judge the rest
        first = next(s.command for s in traj.steps if s.command)
        why = f"this checkout's {BUDGET_SECONDS:.0f} s of replay were spent before it"
        return [*hits, _not_whole(why, first)]
    real, again, neutral = _runs(worlds, commands, traj.prompt, True)
    # a recorded output the carried run did not reproduce: run again as a harness that starts
    # a fresh shell a step at the checkout (mini-swe-agent), which carries no folder or
    # variable (the s14 red team's S14, S20); a recorded output is judged by either, a history
    # by the carried run only (no output says which the agent's was)
    fresh: tuple[list[str | None], ...] | None = None
    if any(
        _unreproduced(step.output, real[k], again[k])
        for k, step in enumerate(traj.steps[:MAX_STEPS])
        if step.command
    ) and not (worlds.spent > BUDGET_SECONDS):
        fresh = _runs(worlds, commands, traj.prompt, False)
    # the fourth world: the checkout as it is, its ``.git`` pruned at the base as a phase's box
    # gets it: a step that prints the future's lines over the real store and not over that one
    # read them from the repository's history, however it named what it read (a revision a
    # substitution computed from a file, an alias, a program reading ``.git`` by hand)
    stored = _runs(worlds, commands, traj.prompt, True, at_base=True)[0] if worlds.at_base else None
    # ... and as a harness that starts a fresh shell a step would have run it (the s16 red
    # team's W3)
    fresh_stored = (
        _runs(worlds, commands, traj.prompt, False, at_base=True)[0]
        if fresh is not None and worlds.at_base
        else None
    )
    if worlds.prune_failed:
        first = next(s.command for s in traj.steps if s.command)
        why = f"a git store of the task could not be pruned at the base ({worlds.prune_failed})"
        hits.append(_not_whole(why, first))
    index = ancestry.index()
    unfinished = silent = cut = None
    for k, step in enumerate(traj.steps[:MAX_STEPS]):
        if not step.command:
            continue
        # the fourth world's too (the s16 red team's W2: a step that hangs, or fills the pipe,
        # only over the pruned store)
        fourth = [stored[k]] if stored is not None else []
        if unfinished is None and None in (real[k], again[k], neutral[k], *fourth):
            unfinished = k
        outs = [
            real[k],
            again[k],
            neutral[k],
            *fourth,
            *((run[k] for run in fresh) if fresh else ()),
            *([fresh_stored[k]] if fresh_stored is not None else []),
        ]
        if cut is None and any(_cut(out) for out in outs):
            cut = k
        parted = _judge(step.output, real[k], again[k], neutral[k], worlds.sizes)
        quiet = _silent(step.output, real[k], again[k], neutral[k])
        if fresh is not None and step.output is not None:
            parted = parted or _judge(step.output, *(run[k] for run in fresh), worlds.sizes)
            quiet = quiet and _silent(step.output, *(run[k] for run in fresh))
        if silent is None and quiet:
            silent = k
        mine = "\n".join([traj.prompt or "", *commands[: k + 1]])
        line = _shown(parted, index, mine) if parted else None
        if line is not None:
            hits.append(
                Hit(
                    "audit.future_content",
                    "high",
                    "re-run as bash ran it over the checkout, it prints otherwise when the "
                    "hidden files' future lines are changed: what it showed depends on the future",
                    step.command[:300],
                    output=line[:300],
                )
            )
            continue
        from_store = (
            _judge(step.output, real[k], again[k], stored[k], worlds.sizes) if stored else []
        )
        if not from_store and fresh is not None and fresh_stored is not None and step.output:
            from_store = _judge(
                step.output, fresh[0][k], fresh[1][k], fresh_stored[k], worlds.sizes
            )
        line = _future_shown(from_store, index, mine) if from_store else None
        if line is not None:
            hits.append(
                Hit(
                    "audit.future_content",
                    "high",
                    "re-run as bash ran it over the checkout, it prints the future's lines that "
                    "it does not print when the hidden files' future lines are changed and the "
                    "task's .git holds only what the base reaches: it read the future (from the "
                    "repository's history, or from both)",
                    step.command[:300],
                    output=line[:300],
                )
            )
    if unfinished is not None:
        why = f"step {unfinished + 1} did not finish in the replay's {RUN_SECONDS:.0f} s"
        hits.append(_not_whole(why, commands[unfinished]))
    if cut is not None:
        why = (
            f"step {cut + 1} printed more than the replay keeps ({MAX_OUTPUT_BYTES:,} bytes): "
            "what it printed after that is not judged (X2 of the s15 replay-fixes red team)"
        )
        hits.append(_not_whole(why, commands[cut]))
    if silent is not None:
        why = (
            f"step {silent + 1} printed nothing in the replay where the agent saw "
            f"{len(_lines(traj.steps[silent].output or ''))} lines (a step that behaves "
            "otherwise in the sandbox is not judged by it)"
        )
        hits.append(_not_whole(why, commands[silent]))
    return hits


def _cut(output: str | None) -> bool:
    """Did the replay keep only the first :data:`MAX_OUTPUT_BYTES` of this output? (Measured
    as encoded again: a cut one is at least that long; an uncut one with many undecodable
    bytes may read as cut too, which fails closed.)"""
    return output is not None and len(output.encode("utf-8", "replace")) >= MAX_OUTPUT_BYTES


def _runs(
    worlds: ReplayWorlds,
    commands: Sequence[str],
    prompt: str | None,
    carry: bool,
    at_base: bool = False,
) -> tuple[list[str | None], ...]:
    """The three runs of ``commands`` (:func:`_run_worlds`), or with ``at_base`` the one over
    the checkout whose ``.git`` is pruned at the base (:attr:`ReplayWorlds.at_base`), cached on
    ``worlds`` (the same steps audited again, recorded then as a history, run once; the last
    four kept)."""
    roots = "\0".join(_agent_roots(worlds, commands, prompt))
    key = (("base\0" if at_base else "") + (roots if carry else f"fresh\0{roots}"), *commands)
    if key not in worlds.runs:
        started = time.monotonic()
        if at_base:
            # the rotated copy over the pruned store: neither source of the future is left (the
            # s16 red team's W1: `git show REV || sed 1d <hidden copy>` prints the fix over
            # the real files with the pruned store, and over the real store with the rotation)
            sources = ((worlds.bare or worlds.neutral, worlds.at_base),)
            worlds.runs[key] = _run_sources(worlds, commands, prompt, carry, sources)
        else:
            worlds.runs[key] = _run_worlds(worlds, commands, prompt, carry)
        worlds.spent += time.monotonic() - started
        while len(worlds.runs) > 4:
            worlds.runs.pop(next(iter(worlds.runs)))
    return worlds.runs[key]
