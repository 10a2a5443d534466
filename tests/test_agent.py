"""`evotree agent`: a trainer agent in a bubblewrap sandbox, its verbs over MCP.

End to end: the agent is a Python script using the MCP SDK's own stdio client, started from the
configuration `evotree agent` wrote on its desk (.mcp.json -> the bridge -> the server's socket).
It branches, edits, commits, runs, compares and reads gates through the tools, and every forbidden
act (reading .git, writing a ref, reading the judge or a signing key, promoting, spoofing the
creator) fails. Real bwrap, real server process, real git.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from conftest import EVOTREE_BIN, Cli, git, validate  # noqa: E402
from evotree.server.agent import AGENT_SOCKET, client_configs  # noqa: E402
from test_server import IMPOSTOR, make_workspace  # noqa: E402

# tens of seconds of real runs and sandboxes: run apart (make test-heavy; CI runs it after make test)
pytestmark = pytest.mark.heavy

#: The agent: the SDK's stdio client, configured from the desk's .mcp.json; prints one JSON document.
AGENT = r"""
import asyncio, json, os, sys
from pathlib import Path
from mcp import ClientSession, StdioServerParameters, stdio_client

WS, KEY = sys.argv[1], sys.argv[2]
out = {"cwd": os.getcwd(), "errors": {}}

def attempt(name, func):
    try:
        out[name] = func()
    except Exception as exc:  # the forbidden acts: each must raise
        out["errors"][name] = type(exc).__name__

async def call(session, tool, args=None):
    result = await session.call_tool(tool, args or {})
    text = result.content[0].text
    return {"error": result.is_error, "data": json.loads(text) if text.startswith("{") else text}

async def main():
    server = json.load(open(".mcp.json"))["mcpServers"]["evotree"]
    params = StdioServerParameters(command=server["command"], args=server["args"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out["tools"] = [t.name for t in (await session.list_tools()).tools]
        made = (await call(session, "branch", {"hypothesis": "more skill"}))["data"]
        out["branch"] = made
        worktree = Path(os.environ["EVOTREE_AGENT_WORKTREES"]) / made["id"]
        (worktree / "recipe.toml").write_text("skill = 0.875\nsteps = 2\n")
        out["commit"] = (await call(session, "commit", {"version": made["id"], "message": "skill 0.875"}))["data"]
        out["run"] = (await call(session, "run", {"versions": ["v0", made["id"]], "seeds": 1}))["data"]
        out["compare"] = await call(session, "compare", {"a": "v0", "b": made["id"]})
        out["gates"] = await call(session, "gates", {"version": made["id"]})
        out["show"] = (await call(session, "show", {"version": made["id"]}))["data"]
        out["promote"] = await call(session, "promote", {"version": made["id"]})
        # forbidden acts, from inside the sandbox
        attempt("read_git_pointer", lambda: (worktree / ".git").read_text())
        attempt("rewrite_git_pointer", lambda: (worktree / ".git").write_text("gitdir: /tmp/evil\n"))
        attempt("read_repo_git", lambda: (Path(WS) / ".git" / "config").read_text())
        attempt("write_ref", lambda: (Path(WS) / ".git" / "refs" / "heads" / "evil").write_text("0" * 40))
        attempt("read_ledger", lambda: os.listdir(Path(WS) / ".git" / "refs" / "evotree"))
        attempt("read_judge", lambda: (Path(WS) / "judge" / "eval.py").read_text())
        attempt("read_champion_judge", lambda: Path("champion/judge/eval.py").read_text())
        attempt("read_key", lambda: Path(KEY).read_text())
        attempt("write_champion", lambda: Path("champion/recipe.toml").write_text("skill = 1\n"))
        out["champion_recipe"] = Path("champion/recipe.toml").read_text()
        out["workspace_listing"] = sorted(os.listdir(WS)) if os.path.isdir(WS) else None

asyncio.run(main())
print("AGENT-RESULT " + json.dumps(out))
"""


def _agent(
    repo: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    full.update(env or {})
    return subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), "agent", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _result(proc: subprocess.CompletedProcess[str]) -> dict:
    for line in proc.stdout.splitlines():
        if line.startswith("AGENT-RESULT "):
            return json.loads(line[len("AGENT-RESULT ") :])
    raise AssertionError(f"no result (rc {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


def test_an_agent_works_through_the_tools_and_cannot_cross_the_sandbox(
    repo: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_ed25519"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY----- secret\n")
    proc = _agent(
        repo,
        "--as",
        "Bot <bot@example.org>",
        "--",
        sys.executable,
        "-c",
        AGENT,
        str(repo),
        str(key),
        env={"HOME": str(home), **IMPOSTOR},
    )
    assert proc.returncode == 0, proc.stderr
    got = _result(proc)
    assert got["cwd"] == "/agent"
    assert "promote" not in got["tools"] and {"branch", "commit", "run", "gates"} <= set(
        got["tools"]
    )
    # the work went through: branched, committed, ran, compared, gated
    vid = got["branch"]["id"]
    assert got["commit"]["changed"] and {r["status"] for r in got["run"]["runs"]} == {"succeeded"}
    assert not got["compare"]["error"], got["compare"]
    assert not got["gates"]["error"], got["gates"]
    assert git(repo, "show", f"evotree/{vid}:recipe.toml").startswith("skill = 0.875")
    # the creator is the server's principal, whatever identity the environment claimed
    assert got["show"]["version"]["created_by"] == "Bot <bot@example.org>"
    assert "mallory" not in git(repo, "log", "-1", "--format=%an %ae", f"evotree/{vid}").lower()
    # promotion is not a tool
    assert got["promote"]["error"]
    # every forbidden act failed
    forbidden = {
        "read_repo_git",
        "write_ref",
        "read_ledger",
        "read_judge",
        "read_champion_judge",
        "read_key",
        "write_champion",
    }
    assert forbidden <= set(got["errors"]), got["errors"]
    assert got["champion_recipe"].startswith("skill = 0.5")
    assert got["workspace_listing"] in (None, [".evotree"])  # only the path down to the worktrees
    # a worktree branched during the session has a writable pointer (its sandbox was laid out
    # before it existed): the agent may rewrite it, evotree never follows it, and the session's end
    # writes it back from the repository's side (the user's own git must not follow it either)
    assert "rewrite_git_pointer" not in got["errors"]
    worktree = repo / Cli(repo).json("show", vid)["version"]["worktree"]
    assert worktree.parent.name.startswith("agent-bot-")  # the session's own worktrees folder
    pointer = (worktree / ".git").read_text()
    assert pointer.startswith("gitdir: ") and "/tmp/evil" not in pointer, pointer
    assert Path(pointer.split(":", 1)[1].strip()).parent == (repo / ".git" / "worktrees").resolve()
    assert Cli(repo).json("show", vid)["uncommitted"] == []
    assert not (repo / ".git" / "refs" / "heads" / "evil").exists()


def test_other_versions_worktrees_are_hidden_and_network_needs_the_policy(repo: Path) -> None:
    cli = Cli(repo)
    mine = cli.json("branch", "-m", "the agent's")["id"]
    other = cli.json("branch", "-m", "someone else's")["id"]
    other_wt = repo / ".evotree" / "worktrees" / other
    (other_wt / "notes.txt").write_text("private\n")
    probe = (
        "import os, sys; own = os.path.join('versions', sys.argv[1]); "
        "print(sorted(os.listdir(own)), os.path.exists(sys.argv[2]), "
        "repr(open(os.path.join(own, '.git')).read()))\n"
        "try:\n open(os.path.join(own, '.git'), 'w').write('gitdir: /tmp/x')\n"
        "except OSError as exc: print('refused', type(exc).__name__)"
    )
    proc = _agent(repo, "--versions", mine, "--", sys.executable, "-c", probe, mine, str(other_wt))
    assert proc.returncode == 0, proc.stderr
    listing, refusal = proc.stdout.strip().splitlines()
    own, rest = listing.split("] ")
    hidden, pointer = rest.split(" ", 1)
    assert "recipe.toml" in own and hidden == "False"  # the other worktree is not there at all
    assert pointer == "''" and refusal.startswith(
        "refused"
    )  # its own .git pointer: empty, read-only
    assert (repo / ".evotree" / "worktrees" / mine / ".git").read_text().startswith("gitdir:")
    refused = _agent(repo, "--network", "--json", "--", "true")
    assert refused.returncode == 6
    assert json.loads(refused.stdout)["error"]["code"] == "config_error"
    assert "agent_network" in refused.stdout


def test_the_champion_and_unknown_versions_are_refused_and_the_exit_code_is_the_agents(
    repo: Path,
) -> None:
    champion = _agent(repo, "--versions", "v0", "--json", "--", "true")
    assert (
        champion.returncode == 10 and "champion" in json.loads(champion.stdout)["error"]["message"]
    )
    unknown = _agent(repo, "--versions", "v9", "--json", "--", "true")
    assert unknown.returncode == 5
    nothing = _agent(repo, "--json")
    assert nothing.returncode == 10 and "no command" in nothing.stdout
    assert _agent(repo, "--", "sh", "-c", "exit 7").returncode == 7


def test_the_printed_configuration_points_at_the_bridge() -> None:
    proc = subprocess.run(
        [str(EVOTREE_BIN), "agent", "--print-config", "--json"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    validate(json.loads(proc.stdout), "agent-config")
    got = json.loads(proc.stdout)["mcp"]
    assert got == client_configs()
    server = got["claude_code"]["content"]["mcpServers"]["evotree"]
    assert server["args"][-1] == AGENT_SOCKET and server["args"][:3] == [
        "-P",
        "-m",
        "evotree.server.bridge",
    ]
    assert f'"{AGENT_SOCKET}"' in got["codex"]["content"]


def test_a_rewritten_worktree_pointer_is_never_followed_by_evotree(
    repo: Path, tmp_path: Path
) -> None:
    """An agent that rewrites a worktree's .git pointer (one branched after its sandbox started)
    must not get evotree's own git to read a config of its choosing (core.fsmonitor runs a program)."""
    cli = Cli(repo)
    vid = cli.json("branch", "-m", "target")["id"]
    worktree = repo / ".evotree" / "worktrees" / vid
    evil = tmp_path / "evil.git"
    subprocess.run(["git", "init", "-q", "--bare", str(evil)], check=True)
    marker = tmp_path / "pwned"
    (evil / "config").write_text(f"[core]\n\tbare = false\n\tfsmonitor = touch {marker}; false\n")
    (worktree / ".git").write_text(f"gitdir: {evil}\n")
    shown = cli.json("show", vid)
    assert shown["uncommitted"] == [] and not marker.exists()
    assert not marker.exists()


def test_a_killed_session_takes_its_server_and_agent_with_it(repo: Path, tmp_path: Path) -> None:
    import signal
    import time

    # a duration of this test's own, so that no other process's ``sleep 300`` on the machine
    # (the test looks at every process) is taken for the agent
    sleep = f"sleep 300.{os.getpid() % 1000:03d}{int(time.monotonic() * 1000) % 1000:03d}"
    proc = subprocess.Popen(
        [str(EVOTREE_BIN), "-C", str(repo), "agent", "--", *sleep.split()],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not _pids(f"{repo} serve") or not _pids(sleep, exact=True):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
        servers = _pids(f"{repo} serve")
        assert servers
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 30
    while (_pids(f"{repo} serve") or _pids(sleep, exact=True)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _pids(f"{repo} serve") and not _pids(sleep, exact=True), (
        _pids(f"{repo} serve"),
        _pids(sleep, exact=True),
        [(p, open(f"/proc/{p}/cmdline").read()[:200]) for p in _pids("evotree-agent")],
    )


def _pids(needle: str, *, exact: bool = False) -> list[int]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if (
            cmdline.strip() == needle if exact else needle in cmdline
        ) and "-m pytest" not in cmdline:
            found.append(int(entry.name))
    return found


def test_a_link_planted_where_the_next_worktree_goes_is_refused(repo: Path, tmp_path: Path) -> None:
    """From inside the sandbox the agent can write its session's worktrees folder: a link named
    after the next version id must not make the server check files out where it points."""
    from evotree.core.errors import AlreadyExists
    from evotree.server.verbs import Principal, Verbs

    target = tmp_path / "elsewhere"
    target.mkdir()
    plant = (
        "import os; base = os.environ['EVOTREE_AGENT_WORKTREES']; "
        f"os.symlink({str(target)!r}, os.path.join(base, 'v1')); print('planted')"
    )
    proc = _agent(repo, "--as", "bot", "--", sys.executable, "-c", plant)
    assert proc.returncode == 0 and "planted" in proc.stdout, proc.stderr
    (session,) = (repo / ".evotree" / "worktrees").glob("agent-bot-*")
    assert (session / "v1").is_symlink()
    with pytest.raises(
        AlreadyExists, match="symbolic link"
    ):  # the session's server, branching next
        Verbs(repo, Principal.parse("bot"), worktree_dir=session).branch("next")
    assert list(target.iterdir()) == []
    assert git(repo, "branch", "--list", "evotree/v1").strip() == ""  # nothing half-made


def test_every_program_the_agent_runs_is_traced_and_audited(repo: Path) -> None:
    """The agent's sandbox runs under the runtime tracer (the champion's [sandbox]
    trace, on by default); git started from Python, from eval of a base64 string and by absolute
    path is recorded in .evotree/agent-sessions/<session>/exec_trace.jsonl, whatever the agent
    does to git's own tracing, and `evotree audit V` reads it for the versions the session touched."""
    cli = Cli(repo)
    mine = cli.json("branch", "-m", "the agent's")["id"]
    script = "\n".join(
        [
            "export GIT_TRACE2=0 GIT_CONFIG_NOSYSTEM=1",
            "cd versions/" + mine,
            "python3 -c \"import subprocess; subprocess.run(['git', 'log', '--all', '--oneline'])\" 2>/dev/null",
            'eval "$(echo Z2l0IHJlZmxvZw== | base64 -d)" 2>/dev/null',  # git reflog
            "/usr/bin/git -c trace2.eventTarget=/dev/null rev-list --all 2>/dev/null",
            "exit 3",
        ]
    )
    proc = _agent(repo, "--versions", mine, "--", "bash", "-c", script)
    assert proc.returncode == 3, proc.stderr
    sessions = sorted((repo / ".evotree" / "agent-sessions").glob("*/session.json"))
    assert len(sessions) == 1
    info = json.loads(sessions[0].read_text())
    assert info["versions"] == [mine] and info["exit_code"] == 3 and info["principal"]
    rows = [
        json.loads(line)
        for line in (sessions[0].parent / "exec_trace.jsonl").read_text().splitlines()
    ]
    argvs = [r["argv"] for r in rows if r["kind"] == "exec"]
    assert ["git", "log", "--all", "--oneline"] in argvs
    assert ["git", "reflog"] in argvs
    assert ["/usr/bin/git", "-c", "trace2.eventTarget=/dev/null", "rev-list", "--all"] in argvs
    audit = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), "audit", mine, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(audit.stdout)
    assert audit.returncode != 0, report  # a leak fails the audit
    assert "1 agent session trace(s)" in report["checks"]["runtime_traces"], report["checks"]
    leaks = [f for f in report["findings"] if f["code"] == "audit.git_history_leak"]
    assert leaks and any("agent:" in json.dumps(f) for f in leaks), report["findings"]
