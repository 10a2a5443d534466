"""``evotree agent``: a trainer agent's command in a bubblewrap sandbox, its verbs served over MCP.

The agent (an agent CLI, a script) runs in a sandbox (:mod:`evotree.harness.sandbox`) that shows it

- ``/agent`` -- its desk (working directory, read-write): ``.mcp.json`` for Claude Code,
  ``AGENT.md`` (where things are), ``versions/<id>`` links to its worktrees;
- its versions' worktrees (read-write; each ``.git`` pointer file covered by an empty read-only
  file), and the session's own folder in the worktrees folder (``agent-<name>-XXXX``,
  read-write), where the server puts the worktrees of the versions it branches for the agent:
  no other worktree, existing or made during the session, is visible;
- ``/agent/champion`` -- the champion's recipe (its committed files, judge paths left out),
  read-only;
- ``/run/evotree/mcp.sock`` -- the socket of an ``evotree serve --as PRINCIPAL`` started for it
  outside the sandbox (read-only bind; connecting needs no write access);
- a private ``$HOME`` (with ``.codex/config.toml`` for Codex CLI), the Python environment and the
  system folders read-only, a private ``/tmp``; the network only with ``--network`` and
  ``[sandbox] agent_network = true`` in the champion's signed policy.

Nothing else: not the repository, ``.git``, refs, the ledger, the judge's data, the signing keys,
the user's home. Whatever the agent does to the tree goes through the server, which records the
principal it was started for as the creator and author (never a git identity the agent sets).

Library code: :func:`prepare_agent` lays the session out and returns an :class:`AgentPlan`;
:func:`agent_argv` is the bwrap command line; :func:`start_server` / :func:`run_agent` run it.
Only :mod:`evotree.cli.agent` prints.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from evotree.core.errors import ConfigError, EvotreeError, InvalidState
from evotree.core.refs import CHAMPION_REF
from evotree.core.versions import VersionStatus
from evotree.core.workspace import Workspace
from evotree.harness.sandbox import can_trace
from evotree.harness.sandbox import check_sandbox
from evotree.verbs.policy import hidden_now
from evotree.harness.sandbox_spec import SandboxSpec
from evotree.harness.sandbox import wrap
from evotree.core.workspace import ensure_state_dir
from evotree.harness.audit.trace import AGENT_SESSIONS
from evotree.harness.sandbox import finish_trace
from evotree.core.gitio import Git
from evotree.core.gitio import write_pointer

__all__ = [
    "AGENT_DESK",
    "AGENT_SOCKET",
    "AgentError",
    "AgentPlan",
    "agent_argv",
    "agent_env",
    "bridge_command",
    "client_configs",
    "prepare_agent",
    "restore_worktree_folder",
    "run_agent",
    "start_server",
]

#: The agent's working directory inside its sandbox.
AGENT_DESK = "/agent"
#: Where the server's socket appears inside the sandbox (fixed, so client configs can be written once).
AGENT_SOCKET = "/run/evotree/mcp.sock"
#: Environment variables an agent always gets (besides those named with ``--env``).
_PASSED = ("TERM", "COLORTERM", "LANG", "LC_ALL", "TZ")


class AgentError(EvotreeError):
    """``evotree agent`` cannot start the agent as asked."""

    exit_code = 10
    code = "agent_refused"


@dataclass(frozen=True)
class AgentPlan:
    """One agent session: what its sandbox shows, where each piece lives on the host."""

    workspace: Path
    principal: str
    versions: tuple[str, ...]
    champion: str
    runtime: Path  #: private folder of the session (mode 0700), removed at the end
    desk: Path
    home: Path
    champion_dir: Path
    socket_dir: Path
    worktree_base: Path
    worktrees: tuple[Path, ...]  #: the agent's own (read-write)
    #: the session's own folder inside the worktrees folder (read-write): the server puts the
    #: worktrees of the versions it branches there; nobody else's worktree ever appears in it
    session_dir: Path | None = None
    network: bool = False
    python: str = field(default_factory=lambda: sys.executable)
    #: the runtime trace's raw file (in the private folder, outside the sandbox) when the champion's
    #: ``[sandbox] trace`` is on and a tracer can run here; ``None``: the session runs untraced
    trace: Path | None = None
    #: folders the sandbox shows empty: while figures are hidden (EvoPolicyGym's protocol), the
    #: environments' packages, so every rollout goes through `run` and is charged
    masked: tuple[Path, ...] = ()

    @property
    def socket(self) -> Path:
        """The server's socket on the host."""
        return self.socket_dir / "mcp.sock"

    def to_dict(self) -> dict[str, Any]:
        """The plan as ``evotree agent --json`` reports it."""
        return {
            "v": 1,
            "principal": self.principal,
            "versions": list(self.versions),
            "champion": self.champion,
            "network": self.network,
            "desk": AGENT_DESK,
            "socket": AGENT_SOCKET,
            "worktrees": [str(p) for p in self.worktrees],
            "session_worktrees": str(self.session_dir) if self.session_dir else None,
            "runtime": str(self.runtime),
            "traced": self.trace is not None,
            "mcp": client_configs(self.python),
        }


def bridge_command(python: str | None = None) -> tuple[str, list[str]]:
    """The stdio command an MCP client inside the sandbox starts to reach the server."""
    return (python or sys.executable), ["-P", "-m", "evotree.server.bridge", AGENT_SOCKET]


def client_configs(python: str | None = None) -> dict[str, Any]:
    """MCP client configurations that point Claude Code and Codex CLI at the server.

    Claude Code reads ``.mcp.json`` in its project folder (the desk) or ``--mcp-config FILE``;
    Codex CLI reads ``$CODEX_HOME/config.toml`` (``CODEX_HOME`` is set to ``$HOME/.codex``).
    """
    command, args = bridge_command(python)
    claude = {
        "mcpServers": {"evotree": {"type": "stdio", "command": command, "args": args, "env": {}}}
    }
    codex = tomli_w.dumps({"mcp_servers": {"evotree": {"command": command, "args": list(args)}}})
    return {
        "claude_code": {"file": f"{AGENT_DESK}/.mcp.json", "content": claude},
        "codex": {"file": "$HOME/.codex/config.toml", "content": codex},
    }


# ---------------------------------------------------------------------------- laying out a session
def _worktree_base(ws: Workspace) -> Path:
    base = ws.worktree_path("v0").parent.resolve()
    root = ws.root.resolve()
    if (
        base == root
        or base in root.parents
        or (base / ".git").exists()
        or (base / "evotree.toml").exists()
    ):
        raise AgentError(
            f"[workspace].worktree_dir resolves to {base}, which holds the repository: "
            "an agent given it would see .git",
            fix="keep worktrees in their own folder (the default .evotree/worktrees)",
        )
    return base


def _choose_versions(
    ws: Workspace, principal: str, asked: Sequence[str], base: Path
) -> list[tuple[str, Path]]:
    snapshot = ws.ledger.snapshot()
    champion = str(snapshot.meta.get("champion"))
    if asked:
        records = [ws.resolve(name, snapshot) for name in asked]
    else:
        records = [
            r
            for r in ws.ledger.versions()
            if r.created_by == principal and r.status != VersionStatus.ABANDONED.value
        ]
    chosen: list[tuple[str, Path]] = []
    for record in sorted(records, key=lambda r: (len(r.id), r.id)):
        if record.id == champion:
            raise AgentError(
                f"{record.id} is the champion: an agent works on versions branched from it, never on it",
                fix="evotree branch -m ... (or let the agent call the branch tool)",
                version=record.id,
            )
        if record.status == VersionStatus.ABANDONED.value:
            raise AgentError(
                f"{record.id} is abandoned",
                fix=f"branch a new version from it: evotree branch --from {record.id}",
                version=record.id,
            )
        path = ws.absolute(record.worktree) if record.worktree else None
        if path is None or not path.is_dir():
            raise AgentError(
                f"{record.id} has no worktree",
                fix=f"evotree worktree restore {record.id}",
                version=record.id,
            )
        path = path.resolve()
        if base not in path.parents:
            raise AgentError(
                f"the worktree of {record.id} ({path}) is not in the worktrees folder {base}",
                fix=f"evotree worktree restore {record.id}",
                version=record.id,
            )
        chosen.append((record.id, path))
    return chosen


def prepare_agent(
    ws: Workspace,
    principal: str,
    *,
    versions: Sequence[str] = (),
    network: bool = False,
    runtime_parent: Path | None = None,
) -> AgentPlan:
    """Lay out an agent session (a private folder with desk, home, champion recipe, socket folder).

    ``versions``: the versions whose worktrees the agent may edit (default: the principal's own
    versions that are not abandoned; versions it branches through the server during the session
    appear in the worktrees folder too). Refuses the champion, abandoned versions, versions
    without a worktree, ``network`` unless the champion's policy has ``[sandbox] agent_network``,
    and a host where bubblewrap cannot start.
    """

    _check_can_start(ws, network)
    base = _worktree_base(ws)
    base.mkdir(parents=True, exist_ok=True)
    chosen = _choose_versions(ws, principal, versions, base)
    champion_commit = ws.git.ref_target(CHAMPION_REF)
    if champion_commit is None:
        raise InvalidState(
            "refs/evotree/champion is missing", fix="re-run `evotree init` in a fresh clone"
        )
    champion = str(ws.ledger.snapshot().meta.get("champion"))
    runtime = Path(
        tempfile.mkdtemp(
            prefix="evotree-agent-", dir=str(runtime_parent) if runtime_parent else None
        )
    )
    try:
        desk, home, champion_dir, socket_dir = (
            runtime / n for n in ("desk", "home", "champion", "sock")
        )
        for folder in (desk, home / ".codex", socket_dir, desk / "versions"):
            folder.mkdir(parents=True, mode=0o700)
        from evotree.harness.export import export_tree

        export_tree(
            ws.git.repo,
            champion_commit,
            champion_dir,
            exclude=[p.rstrip("/") for p in ws.config.eval.judge_paths],
        )
        session_dir = _session_worktrees(base, principal)
        plan = AgentPlan(
            workspace=ws.root,
            principal=principal,
            versions=tuple(v for v, _ in chosen),
            champion=champion,
            runtime=runtime,
            desk=desk,
            home=home,
            champion_dir=champion_dir,
            socket_dir=socket_dir,
            worktree_base=base,
            worktrees=tuple(p for _, p in chosen),
            session_dir=session_dir,
            network=network,
            trace=runtime / "agent.trace" if ws.config.sandbox.trace and can_trace() else None,
            masked=environment_packages() if hidden_now(ws) else (),
        )
        _write_desk(plan)
        (runtime / "empty").touch(mode=0o444)
        return plan
    except BaseException:
        shutil.rmtree(runtime, ignore_errors=True)
        raise


def _check_can_start(ws: Workspace, network: bool) -> None:
    """Refuse a host where bubblewrap cannot start, and ``network`` the policy does not allow."""
    status = check_sandbox()
    if not status.ok:
        raise AgentError(
            f"evotree agent needs a bubblewrap sandbox, and it cannot start here: {status.reason}",
            fix=status.fix or "install bubblewrap (apt-get install bubblewrap)",
        )
    if network and not ws.config.sandbox.agent_network:
        raise ConfigError(
            "--network: the champion's policy does not let an agent use the network "
            "([sandbox] agent_network = false)",
            fix="set [sandbox] agent_network = true on the champion (a signed promotion), "
            "or run the agent offline",
            key="sandbox.agent_network",
        )


def _session_worktrees(base: Path, principal: str) -> Path:
    """The session's own worktrees folder: only the worktrees the server branches for this
    agent, named after the principal."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", principal.split("<")[0]).strip("-").lower()[:24] or "agent"
    return Path(tempfile.mkdtemp(prefix=f"agent-{slug}-", dir=base))


#: the packages that make environments playable (Gymnasium and the simulators its environments use)
ENVIRONMENT_PACKAGES = (
    "gymnasium",
    "gym",
    "mujoco",
    "Box2D",
    "highway_env",
    "minigrid",
    "ale_py",
    "pybullet",
    "pygame",
)


def environment_packages() -> tuple[Path, ...]:
    """The installed folders of :data:`ENVIRONMENT_PACKAGES` (found without importing them)."""
    import importlib.util

    found: list[Path] = []
    for name in ENVIRONMENT_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec is not None else []:
            path = Path(location).resolve()
            if path.is_dir() and path not in found:
                found.append(path)
    return tuple(found)


def _write_desk(plan: AgentPlan) -> None:
    configs = client_configs(plan.python)
    (plan.desk / ".mcp.json").write_text(
        json.dumps(configs["claude_code"]["content"], indent=2) + "\n"
    )
    (plan.home / ".codex" / "config.toml").write_text(configs["codex"]["content"])
    for version, path in zip(plan.versions, plan.worktrees):
        (plan.desk / "versions" / version).symlink_to(path)
    (plan.desk / "AGENT.md").write_text(
        "# evotree agent desk\n\n"
        f"You act as {plan.principal}. Your tools are the MCP server `evotree` (see .mcp.json; socket "
        f"{AGENT_SOCKET}).\n\n"
        f"- versions/<id>: your versions' worktrees (edit files here, then call the `commit` tool)\n"
        f"- new versions you create with the `branch` tool appear under {plan.session_dir}/<id>\n"
        f"- {AGENT_DESK}/champion: the champion ({plan.champion}) recipe, read-only\n\n"
        "There is no .git here: branch, commit, run, compare and gates go through the tools.\n"
    )


# ---------------------------------------------------------------------------- the sandbox
def agent_argv(plan: AgentPlan, argv: Sequence[str]) -> list[str]:
    """The bwrap command line that runs ``argv`` as the agent of ``plan``."""

    own = (*plan.worktrees, *((plan.session_dir,) if plan.session_dir is not None else ()))
    spec = SandboxSpec(
        cwd=plan.desk,
        read_write=(*own, plan.home, plan.desk),
        network=plan.network,
        trace=plan.trace,
    )
    args = wrap(spec, argv)
    # bwrap's options end at the first "--": the agent's own binds go in just before the
    # root is remounted read-only (after the binds and masks the spec produced)
    at = args.index("--remount-ro")
    extra = [
        "--ro-bind",
        str(plan.champion_dir),
        f"{AGENT_DESK}/champion",
        "--ro-bind",
        str(plan.socket_dir),
        str(Path(AGENT_SOCKET).parent),
    ]
    for (
        path
    ) in plan.worktrees:  # no path into .git: the pointer file reads as empty and cannot change
        extra += ["--ro-bind", str(plan.runtime / "empty"), str(path / ".git")]
    for path in plan.masked:  # EvoPolicyGym: no environment to play outside `run` (an empty folder)
        extra += ["--tmpfs", str(path), "--remount-ro", str(path)]
    # the desk appears at /agent (the spec bound it at its host path; bind it again at the fixed one)
    extra = ["--bind", str(plan.desk), AGENT_DESK] + extra
    args[at:at] = extra
    chdir = args.index("--chdir")
    args[chdir + 1] = AGENT_DESK
    return args


def agent_env(
    plan: AgentPlan,
    passthrough: Mapping[str, str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The agent's environment: a fresh one (nothing of the caller's but the terminal settings
    and the variables named in ``passthrough``), pointing at its desk, home and socket."""
    source = os.environ if environ is None else environ
    env = {k: source[k] for k in _PASSED if k in source}
    env.update(passthrough or {})
    bin_dir = str(Path(plan.python).parent)
    env.update(
        PATH=f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        HOME=str(plan.home),
        TMPDIR="/tmp",
        CODEX_HOME=str(plan.home / ".codex"),
        EVOTREE_MCP_SOCKET=AGENT_SOCKET,
        EVOTREE_AGENT_PRINCIPAL=plan.principal,
        EVOTREE_AGENT_VERSIONS=",".join(plan.versions),
        EVOTREE_AGENT_WORKTREES=str(plan.session_dir or plan.worktree_base),
        EVOTREE_CHAMPION_DIR=f"{AGENT_DESK}/champion",
    )
    env.setdefault("LANG", "C.UTF-8")
    return env


def _listening(path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def start_server(
    plan: AgentPlan, *, timeout: float = 60.0, log: Any = None
) -> subprocess.Popen[bytes]:
    """Start ``evotree serve --as PRINCIPAL --socket`` for ``plan`` outside the sandbox; return it
    once it listens (its stderr goes to ``log``, a file object, or is discarded)."""
    argv = [
        sys.executable,
        "-P",
        "-m",
        "evotree",
        "-C",
        str(plan.workspace),
        "serve",
        "--as",
        plan.principal,
        "--socket",
        str(plan.socket),
    ]
    if plan.session_dir is not None:
        argv += ["--worktrees", str(plan.session_dir)]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log if log is not None else subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=_die_with_parent,
    )
    deadline = time.monotonic() + timeout
    while not _listening(plan.socket):
        if proc.poll() is not None:
            raise AgentError(
                f"the evotree server for the agent exited with {proc.returncode} before listening",
                fix=f"run `evotree -C {plan.workspace} serve --as {plan.principal}` to see why",
            )
        if time.monotonic() > deadline:
            _stop(proc)
            raise AgentError(
                f"the evotree server for the agent did not listen within {timeout:.0f} s",
                fix="retry; if it persists, run `evotree serve` by hand to see why",
            )
        time.sleep(0.05)
    return proc


def _die_with_parent() -> None:
    """In the server's child process: SIGTERM when ``evotree agent`` dies (even by SIGKILL), so no
    server outlives its session (prctl PR_SET_PDEATHSIG)."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)


def _stop(proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@contextlib.contextmanager
def _forwarded_signals(proc: subprocess.Popen[bytes]) -> Iterator[None]:
    """SIGINT/SIGTERM to this process go to the sandbox (which ends every process in it)."""

    def forward(signum: int, _frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def run_agent(
    plan: AgentPlan,
    argv: Sequence[str],
    *,
    passthrough: Mapping[str, str] | None = None,
    server_log: Any = None,
    keep: bool = False,
) -> int:
    """Run ``argv`` as the agent of ``plan`` (server started and stopped around it); its exit code.

    The session's private folder is removed at the end unless ``keep``.
    """
    if not argv:
        raise AgentError("no command to run", fix="evotree agent --as NAME -- CMD [ARGS...]")
    server = start_server(plan, log=server_log)
    started = time.time()
    code: int | None = None
    try:
        # the first process (the tracer, or bwrap) dies with this one; bwrap follows its parent
        agent = subprocess.Popen(
            agent_argv(plan, argv),
            env=agent_env(plan, passthrough),
            start_new_session=False,
            preexec_fn=_die_with_parent,
        )
        with _forwarded_signals(agent):
            code = agent.wait()
            return code
    finally:
        _stop(server)
        if plan.trace is not None:
            save_session_trace(plan, started=started, exit_code=code)
        try:
            restore_worktree_folder(plan)
        finally:
            if not keep:
                shutil.rmtree(plan.runtime, ignore_errors=True)


def save_session_trace(plan: AgentPlan, *, started: float, exit_code: int | None) -> Path | None:
    """After a traced session: its runtime trace as ``.evotree/agent-sessions/<session>/exec_trace.jsonl``
    and ``session.json`` (principal, the versions it could touch — its own and those it branched —,
    times, exit code), where ``evotree audit V`` reads it. Returns the folder (``None``: untraced)."""

    if plan.trace is None:
        return None
    folder = ensure_state_dir(plan.workspace) / AGENT_SESSIONS / plan.runtime.name
    folder.mkdir(parents=True, exist_ok=True)
    rows = finish_trace(SandboxSpec(cwd=Path(AGENT_DESK), trace=plan.trace), folder)
    versions = set(plan.versions)
    with contextlib.suppress(Exception):  # the versions the agent branched through the server
        ws = Workspace.open(plan.workspace)
        versions |= {v.id for v in ws.ledger.versions() if v.created_by == plan.principal}
    record = {
        "v": 1,
        "principal": plan.principal,
        "versions": sorted(versions),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "ended_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "exit_code": exit_code,
        "programs": sum(1 for r in rows if r.get("kind") == "exec"),
    }
    tmp = folder / "session.json.tmp"
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    os.replace(tmp, folder / "session.json")
    return folder


def restore_worktree_folder(plan: AgentPlan) -> list[str]:
    """After a session, undo what the agent could leave in the (read-write) worktrees folder for
    the user's own git: every registered worktree's ``.git`` pointer file is rewritten from the
    repository's side (``gitdir: ADMIN``, the admin whose ``gitdir`` names that worktree; a pointer
    the agent aimed at a git folder of its own would run that folder's fsmonitor, filters, pager
    as the user), and a ``.git`` or ``evotree.toml`` the agent planted in the folder itself (which
    would make git or evotree take it for a repository) is removed. Returns what it changed."""

    changed: list[str] = []
    base = plan.worktree_base
    real_base = os.path.realpath(base)
    for name in (".git", "evotree.toml"):  # _worktree_base refused a session where either existed
        planted = base / name
        if os.path.lexists(planted):
            if planted.is_dir() and not planted.is_symlink():
                shutil.rmtree(planted, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    planted.unlink()
            changed.append(str(planted))
    git = Git(plan.workspace)
    for admin, registered in git.linked_worktrees():
        top = Path(os.path.abspath(registered))  # git registered its real path when it was added
        parent = str(top.parent)
        inside = parent == real_base or parent.startswith(real_base.rstrip(os.sep) + os.sep)
        if not inside or os.path.realpath(parent) != parent or top.is_symlink() or not top.is_dir():
            continue  # not in the worktrees folder, or a folder on the way was swapped: never follow it
        pointer = top / ".git"
        want = f"gitdir: {os.path.realpath(admin)}\n"
        try:
            current = (
                pointer.read_text() if pointer.is_file() and not pointer.is_symlink() else None
            )
        except OSError:
            current = None
        if current == want:
            continue
        try:
            write_pointer(top, admin)
            changed.append(str(pointer))
        except OSError:
            pass  # best effort: Git.run never follows a pointer evotree did not register anyway
    return changed
