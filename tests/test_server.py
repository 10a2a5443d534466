"""`evotree serve`: the agent's verbs over MCP, with the SDK's real client.

The server runs as a real subprocess (the console script), over stdio (``mcp.stdio_client``) and
over a unix socket (:func:`evotree.server.transport.unix_socket_client`); the workspace is a
custom-domain one whose train and judge commands are tiny scripts, so runs take about a second.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

# tens of seconds of real runs: run apart (make test-heavy; CI runs it after make test)
pytestmark = pytest.mark.heavy

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402

from conftest import EVOTREE_BIN, Cli, git, make_repo, validate  # noqa: E402
from evotree.core.workspace import init_workspace  # noqa: E402
from evotree.server.agent import _listening  # noqa: E402 - the probe evotree agent waits with
from evotree.server.tools import FORBIDDEN_WORDS, TOOL_NAMES  # noqa: E402
from evotree.server.transport import unix_socket_client  # noqa: E402
from evotree.server.verbs import Principal, PrincipalError  # noqa: E402

TRAIN = """\
import json, time, tomllib
from evotree.harness import get_recorder
rec = get_recorder()
recipe = tomllib.load(open("recipe.toml", "rb"))
for step in range(1, recipe["steps"] + 1):
    rec.signal(step, reward_mean=recipe["skill"])
    rec.rollout_group(step, group_id=f"g{step}", task_id="t", rewards=[recipe["skill"], 0.0, 1.0, 0.5])
    time.sleep(recipe.get("sleep", 0))
json.dump({"skill": recipe["skill"]}, open("model.json", "w"))
"""

JUDGE = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
tasks = [f"task-{i}" for i in range(8)]
for split in os.environ.get("EVOTREE_JUDGE_SPLITS", "validation").split(","):
    for i, task in enumerate(tasks):
        rec.eval_result(split, task, 1.0 if i < model["skill"] * len(tasks) else 0.0)
"""

CONFIG = """\
[train]
command = "python train.py"

[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
"""

#: what the agent's environment tries to pass off as the author of its work
IMPOSTOR = {
    "GIT_AUTHOR_NAME": "Mallory",
    "GIT_AUTHOR_EMAIL": "mallory@example.com",
    "GIT_COMMITTER_NAME": "Mallory",
    "GIT_COMMITTER_EMAIL": "mallory@example.com",
}


def make_workspace(path: Path) -> Path:
    repo = make_repo(path)
    (repo / "recipe.toml").write_text("skill = 0.5\nsteps = 2\n")
    (repo / "train.py").write_text(TRAIN)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text(JUDGE)
    (repo / "evotree.toml").write_text(CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recipe, trainer and judge")
    init_workspace(repo)
    return repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


def _server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(extra or {})
    return env


@asynccontextmanager
async def stdio_session(repo: Path, *, principal: str = "alice", env: dict[str, str] | None = None):
    params = StdioServerParameters(
        command=str(EVOTREE_BIN),
        args=["-C", str(repo), "serve", "--as", principal],
        env=_server_env(env),
        cwd=str(repo),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextmanager
def socket_server(
    repo: Path, path: Path, *, principal: str = "alice", env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [str(EVOTREE_BIN), "-C", str(repo), "serve", "--as", principal, "--socket", str(path)],
        env=_server_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not _listening(path):
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the server did not start listening"
            time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        print(err.decode(errors="replace"))  # the server's log, shown by pytest when a test fails


@asynccontextmanager
async def socket_session(path: Path):
    async with unix_socket_client(path) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(
    session: ClientSession, tool: str, args: dict[str, Any] | None = None, **options: Any
) -> Any:
    """The tool's JSON document (one text block); asserts it is not an error."""
    result = await session.call_tool(tool, args or {}, **options)
    (content,) = result.content
    assert content.type == "text" and not result.is_error, f"{tool}: {content.text}"
    return json.loads(content.text)


async def call_error(
    session: ClientSession, tool: str, args: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The tool error's ``{"error": ...}`` document (validated against the `error` schema)."""
    result = await session.call_tool(tool, args or {})
    text = result.content[0].text
    assert result.is_error, text
    data = json.loads(text)
    validate(data, "error")
    return data["error"]


def _socket_path(tmp_path: Path) -> Path:
    return tmp_path / "evotree.sock"  # short: unix socket paths have a ~100-byte limit


# --------------------------------------------------------------------------------------------
def test_the_tools_are_the_agent_verbs_and_nothing_that_promotes(repo: Path) -> None:
    async def main() -> list[Any]:
        async with stdio_session(repo) as session:
            return (await session.list_tools()).tools

    tools = anyio.run(main)
    names = [t.name for t in tools]
    assert names == list(TOOL_NAMES)
    for forbidden in (
        "promote",
        "approve-run",
        "approve_run",
        "harness_promote",
        "harness",
        "analyzers",
        "analyzers_promote",
        "judge",
        "judge_promote",
        "config",
        "policy",
        "signoff",
        "verify",
    ):
        assert forbidden not in names
    assert not [n for n in names for word in FORBIDDEN_WORDS if word in n.lower()]
    for tool in tools:  # every tool documents itself and publishes its arguments' schema
        assert tool.description and tool.input_schema["type"] == "object", tool.name
    readonly = {t.name for t in tools if t.annotations and t.annotations.read_only_hint}
    assert {"tree", "show", "log", "compare", "sql"} <= readonly and not {
        "branch",
        "commit",
        "run",
    } & readonly


def test_stdio_results_are_the_cli_json(repo: Path) -> None:
    """Same documents as `evotree CMD --json`, also after the tree changed under a warm server
    (the server keeps the ledger's read side per ledger head)."""
    cli = Cli(repo)
    made = cli.json("branch", "-m", "made by the CLI")
    worktree = repo / made["worktree"]
    (worktree / "recipe.toml").write_text("skill = 0.6\nsteps = 2\n")
    git(worktree, "commit", "-qam", "skill 0.6")
    (worktree / "scratch.txt").write_text("not committed\n")
    before = {
        "tree": cli.json("tree"),
        "show": cli.json("show", "v1"),
        "log": cli.json("log", "-n", "5"),
    }
    # another principal's uncommitted files are not listed to the server's (v1 is the CLI user's)
    before["show"]["uncommitted"] = []

    async def main() -> dict[str, Any]:
        async with stdio_session(repo) as session:
            out = {
                "tree": await call(session, "tree"),
                "show": await call(session, "show", {"version": "v1"}),
                "log": await call(session, "log", {"limit": 5}),
                "skill_list": await call(session, "skill_list"),
                "skill_show": await call(session, "skill_show", {"name": "StdGroupFilter"}),
                "memory_search": await call(session, "memory_search", {"query": "dead groups"}),
            }
            cli.json("branch", "--from", "v1", "-m", "made meanwhile")  # the ledger moves on
            cli.json("abandon", "v1", "--reason", "superseded", "--force")
            out["tree2"] = await call(session, "tree")
            out["show2"] = await call(session, "show", {"version": "v2"})
            out["show_champion"] = await call(session, "show", {"version": "champion"})
            out["log2"] = await call(session, "log")
            out["log_v1"] = await call(session, "log", {"version": "v1"})
            return out

    got = anyio.run(main)
    assert {k: got[k] for k in before} == before
    assert got["tree2"] == cli.json("tree") and len(got["tree2"]["versions"]) == 3
    assert got["show2"] == cli.json("show", "v2")
    assert got["show_champion"] == cli.json("show", "champion")
    assert got["log2"] == cli.json("log") and got["log_v1"] == cli.json("log", "--version", "v1")
    assert [e["kind"] for e in got["log_v1"]["events"]] == ["version.abandoned", "version.created"]
    assert got["show"]["uncommitted"] == [] and [c["summary"] for c in got["show"]["commits"]] == [
        "skill 0.6"
    ]
    assert got["log"]["events"] == got["log2"]["events"][2:7]
    assert got["skill_list"] == cli.json("skill", "list")
    assert got["skill_show"] == cli.json("skill", "show", "StdGroupFilter")
    assert got["memory_search"] == cli.json("memory", "search", "dead", "groups")
    for name in ("tree", "show", "log", "skill_list", "skill_show", "memory_search"):
        validate(got[name], name)


def test_branch_commit_run_compare_gates_over_the_socket(repo: Path, tmp_path: Path) -> None:
    """The whole loop through the unix socket, as an agent drives it; each result is the CLI's."""
    path = _socket_path(tmp_path)
    cli = Cli(repo)
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with socket_session(path) as session:
            out["branch"] = version = await call(
                session, "branch", {"hypothesis": "more skill", "parent": "v0"}
            )
            recipe = repo / version["worktree"] / "recipe.toml"
            recipe.write_text("skill = 0.75\nsteps = 2\n")
            (repo / version["worktree"] / "notes.md").write_text("why 0.75\n")
            out["commit"] = await call(
                session, "commit", {"version": version["id"], "message": "skill 0.75"}
            )
            out["recommit"] = await call(
                session, "commit", {"version": version["id"], "message": "nothing new"}
            )
            out["run"] = await call(
                session,
                "run",
                {"versions": ["v0", version["id"]], "seeds": 2},
                progress_callback=on_progress,
            )
            one = out["run"]["runs"][0]["run_id"]
            out["status"] = await call(session, "runs", {"run_id": one})
            out["runs"] = await call(session, "runs")
            out["compare"] = await call(session, "compare", {"a": "v0", "b": version["id"]})
            out["gates"] = await call(session, "gates", {"version": version["id"]})
            out["sql"] = await call(
                session,
                "sql",
                {
                    "query": "SELECT version, avg(score) AS s FROM evals "
                    "GROUP BY version ORDER BY version"
                },
            )
            out["diagnose"] = await call(
                session, "diagnose", {"version": version["id"], "layers": ["score"]}
            )
            out["report"] = await call(
                session, "report", {"version": version["id"], "audit": False}
            )
        return out

    with socket_server(repo, path):
        got = anyio.run(main)

    version = got["branch"]
    validate(version, "version")
    assert version["id"] == "v1" and version["created_by"] == "alice <alice>"
    commit = got["commit"]
    assert commit["changed"] and sorted(f["path"] for f in commit["files"]) == [
        "notes.md",
        "recipe.toml",
    ]
    assert git(repo, "rev-parse", "evotree/v1") == commit["commit"]
    assert (
        git(repo, "log", "-1", "--format=%an <%ae>|%s", "evotree/v1") == "alice <alice>|skill 0.75"
    )
    assert (
        git(repo / version["worktree"], "status", "--porcelain") == ""
    )  # the index matches the commit
    assert not got["recommit"]["changed"] and got["recommit"]["commit"] == commit["commit"]
    show = cli.json("show", "v1")
    assert [c["summary"] for c in show["commits"]] == ["skill 0.75"] and not show["uncommitted"]

    runs = got["run"]["runs"]
    for record in runs:
        validate(record, "run")
    assert [(r["version"], r["seed"], r["status"]) for r in runs] == [
        ("v0", 0, "succeeded"),
        ("v0", 1, "succeeded"),
        ("v1", 0, "succeeded"),
        ("v1", 1, "succeeded"),
    ]
    assert [r["headline"]["value"] for r in runs] == [0.5, 0.5, 0.75, 0.75]
    assert got["runs"] == cli.json("runs")
    assert got["status"] == {"v": 1, "runs": [runs[0]]}
    # progress notifications: strictly increasing, up to the number of runs, naming runs
    values = [p[0] for p in progress]
    assert progress and all(b > a for a, b in zip(values, values[1:])), progress
    assert {p[1] for p in progress} == {4.0} and values[-1] == pytest.approx(4.0)
    assert sum("succeeded" in (p[2] or "") for p in progress) == 4

    assert got["compare"] == cli.json("compare", "v0", "v1")
    validate(got["compare"], "compare")
    assert got["compare"]["delta"] == pytest.approx(0.25)
    validate(got["gates"], "gates")
    assert (
        got["gates"]["version"] == "v1"
        and got["gates"]["passed"] == cli.json("gates", "v1")["passed"]
    )
    assert got["sql"]["rows"] == [{"version": "v0", "s": 0.5}, {"version": "v1", "s": 0.75}]
    validate(got["diagnose"], "diagnose")
    validate(got["report"], "report")


def test_the_creator_is_the_principal_not_the_environment(repo: Path) -> None:
    """--as alice: versions, their ledger events and commits name alice, even though the server's
    environment says Mallory (GIT_AUTHOR_* and GIT_COMMITTER_*)."""

    async def main() -> tuple[Any, Any]:
        async with stdio_session(repo, principal="alice", env=IMPOSTOR) as session:
            made = await call(
                session,
                "branch",
                {"hypothesis": "who made me?", "skills": {"StdGroupFilter": {"min_std": 0.1}}},
            )
            return made, await call(session, "log", {"version": made["id"]})

    made, log = anyio.run(main)
    assert made["created_by"] == "alice <alice>"
    actors = {e["kind"]: e["actor"] for e in log["events"]}
    assert actors == {"version.created": "alice <alice>", "skill.applied": "alice <alice>"}
    ledger_author = git(repo, "log", "-1", "--format=%an <%ae>", "refs/evotree/ledger")
    assert ledger_author == "alice <alice>"
    assert "Mallory" not in git(repo, "log", "--format=%an %ae %cn %ce", "evotree/" + made["id"])
    assert Cli(repo).json("show", made["id"])["version"]["created_by"] == "alice <alice>"


@pytest.mark.parametrize(
    ("given", "name", "email"),
    [
        ("alice", "alice", "alice"),
        ("alice@example.org", "alice", "alice@example.org"),
        ("Alice Liddell <alice@example.org>", "Alice Liddell", "alice@example.org"),
    ],
)
def test_principal_forms(given: str, name: str, email: str) -> None:
    principal = Principal.parse(given)
    assert (principal.name, principal.email) == (name, email)


@pytest.mark.parametrize("bad", ["", "  ", "al\x1bice", "a <b", "x" * 300])
def test_a_bad_principal_is_refused(bad: str, repo: Path) -> None:
    with pytest.raises(PrincipalError):
        Principal.parse(bad)
    proc = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), "serve", "--as", bad],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 2 and "--as" in proc.stderr


def test_commit_runs_no_program_of_the_repository(repo: Path, tmp_path: Path) -> None:
    """Hooks, an fsmonitor and a clean filter configured in the repository (where an agent can
    write) never run when the server branches or commits; the files are committed as they are."""
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\ncat\n')
    script.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in (
        "pre-commit",
        "commit-msg",
        "post-commit",
        "post-checkout",
        "reference-transaction",
    ):
        (hooks / hook).write_text(f"#!/bin/sh\necho {hook} >> {marker}\n")
        (hooks / hook).chmod(0o755)
    git(repo, "config", "core.hooksPath", str(hooks))
    git(repo, "config", "core.fsmonitor", str(script))
    git(repo, "config", "filter.evil.clean", str(script))

    async def main() -> tuple[Any, Any]:
        async with stdio_session(repo) as session:
            made = await call(session, "branch", {"hypothesis": "filters and hooks"})
            worktree = repo / made["worktree"]
            (worktree / ".gitattributes").write_text("*.txt filter=evil\n")
            (worktree / "data.txt").write_text("raw content\n")
            return made, await call(session, "commit", {"version": made["id"], "message": "data"})

    made, commit = anyio.run(main)
    assert commit["changed"] and not marker.exists(), marker.read_text()
    import pygit2

    tree = pygit2.Repository(str(repo))[commit["commit"]].tree
    assert tree["data.txt"].data == b"raw content\n"


def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(repo: Path) -> None:
    async def main() -> dict[str, Any]:
        async with stdio_session(repo) as session:
            errors = {
                "unknown_version": await call_error(session, "show", {"version": "v99"}),
                "missing_argument": await call_error(session, "show", {}),
                "wrong_type": await call_error(session, "run", {"versions": "v0", "seeds": "many"}),
                "unknown_tool": await call_error(session, "promote", {"version": "v0"}),
                "champion_commit": await call_error(
                    session, "commit", {"version": "v0", "message": "x"}
                ),
                "sql_attack": await call_error(
                    session, "sql", {"query": "SELECT * FROM read_csv_auto('/etc/passwd')"}
                ),
                "sql_copy": await call_error(
                    session, "sql", {"query": "COPY (SELECT 1) TO 'x.csv'"}
                ),
                "unknown_run": await call_error(session, "runs", {"run_id": "r-nope"}),
            }
            errors["after"] = await call(session, "tree")
            return errors

    got = anyio.run(main)
    assert (
        got["unknown_version"]["code"] == "unknown_version"
        and got["unknown_version"]["exit_code"] == 5
    )
    assert got["unknown_version"]["fix"]
    assert (
        got["missing_argument"]["code"] == "bad_arguments"
        and "version" in got["missing_argument"]["message"]
    )
    assert got["wrong_type"]["code"] == "bad_arguments" and got["wrong_type"]["exit_code"] == 2
    assert got["unknown_tool"]["code"] == "unknown_tool"
    assert (
        got["champion_commit"]["code"] == "invalid_state"
        and got["champion_commit"]["exit_code"] == 10
    )
    for attack in ("sql_attack", "sql_copy"):
        assert got[attack]["code"] == "query_not_allowed" and got[attack]["exit_code"] == 14
    assert not (repo / "x.csv").exists()
    assert got["unknown_run"]["code"] == "unknown_run"
    assert got["after"]["champion"] == "v0"


def test_the_server_survives_a_client_disconnect(repo: Path, tmp_path: Path) -> None:
    path = _socket_path(tmp_path)

    async def main() -> Any:
        # a client that vanishes mid-request, then one that sends garbage and hangs up
        async with socket_session(path) as session:
            with anyio.move_on_after(0.001):
                await session.call_tool("tree", {})
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        raw.connect(str(path))
        raw.sendall(
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "tree"'
        )
        raw.close()
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        raw.connect(str(path))
        raw.sendall(b"not json at all\n")
        raw.close()
        async with socket_session(path) as session:
            return await call(session, "tree")

    with socket_server(repo, path) as proc:
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        tree = anyio.run(main)
        assert proc.poll() is None
    assert tree["champion"] == "v0"
    assert proc.returncode == 0 and not path.exists()  # SIGTERM: clean exit, socket removed


def test_a_second_server_on_a_live_socket_is_refused(repo: Path, tmp_path: Path) -> None:
    path = _socket_path(tmp_path)
    with socket_server(repo, path):
        proc = subprocess.run(
            [str(EVOTREE_BIN), "-C", str(repo), "serve", "--as", "bob", "--socket", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        assert proc.returncode == 7 and "listening" in proc.stderr
    # a stale socket (its server died without removing it) is reused
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    with socket_server(repo, path):

        async def main() -> Any:
            async with socket_session(path) as session:
                return await call(session, "tree")

        assert anyio.run(main)["champion"] == "v0"


def test_cancelling_a_run_marks_it_cancelled(repo: Path, tmp_path: Path) -> None:
    """The agent gives up on a long run (the request is cancelled): the run stops and is recorded
    as cancelled, like Ctrl-C on `evotree run`; the server goes on. (The version is alice's own:
    a principal runs its own versions and the champion.)"""
    from evotree.server.verbs import Verbs

    made = Verbs(repo, Principal.parse("alice")).branch("slow")
    recipe = repo / made["worktree"] / "recipe.toml"
    recipe.write_text("skill = 0.5\nsteps = 200\nsleep = 0.5\n")
    git(repo / made["worktree"], "commit", "-qam", "slow")
    path = _socket_path(tmp_path)

    async def main() -> Any:
        started = anyio.Event()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            if message and "step" in message:
                started.set()

        async with socket_session(path) as session:
            async with anyio.create_task_group() as group:

                async def run() -> None:
                    await session.call_tool(
                        "run", {"versions": [made["id"]]}, progress_callback=on_progress
                    )

                group.start_soon(run)
                with anyio.fail_after(60):
                    await started.wait()
                group.cancel_scope.cancel()
            deadline = time.monotonic() + 60
            while True:
                runs = (await call(session, "runs", {"version": made["id"]}))["runs"]
                if runs and runs[0]["status"] != "running":
                    return runs
                assert time.monotonic() < deadline, runs
                await anyio.sleep(0.2)

    with socket_server(repo, path):
        runs = anyio.run(main)
    assert [r["status"] for r in runs] == ["cancelled"]


def test_serve_needs_a_workspace(tmp_path: Path) -> None:
    plain = make_repo(tmp_path / "plain")
    proc = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(plain), "serve", "--as", "alice"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert proc.returncode == 3 and "evotree init" in proc.stderr


def test_stdio_server_exits_when_the_client_closes_stdin(repo: Path) -> None:
    proc = subprocess.Popen(
        [str(EVOTREE_BIN), "-C", str(repo), "serve", "--as", "alice"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_server_env(),
    )
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    out, err = proc.communicate(json.dumps(hello).encode() + b"\n", timeout=60)
    assert proc.returncode == 0, err.decode()
    reply = json.loads(out.decode().splitlines()[0])
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "evotree"


def test_stdio_server_stops_on_sigterm_while_the_client_is_connected(repo: Path) -> None:
    """SIGTERM stops a stdio server even though the SDK's stdin reader is blocked in a read."""
    proc = subprocess.Popen(
        [str(EVOTREE_BIN), "-C", str(repo), "serve", "--as", "alice"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_server_env(),
    )
    try:
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(hello).encode() + b"\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 1  # serving, stdin still open
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_commit_refuses_a_worktree_whose_git_file_points_elsewhere(
    repo: Path, tmp_path: Path
) -> None:
    """An agent that rewrites its worktree's .git file cannot make the server commit into (or move
    a branch from) another repository; in-process, the same code the tool runs."""
    from evotree.core.errors import InvalidState
    from evotree.server.verbs import Verbs

    made = Verbs(repo, Principal.parse("alice")).branch("redirected")  # alice's own version
    other = make_repo(tmp_path / "other")
    worktree = repo / made["worktree"]
    (worktree / ".git").write_text(f"gitdir: {other / '.git'}\n")
    (worktree / "x.txt").write_text("x\n")
    before = git(repo, "rev-parse", "evotree/v1")
    with pytest.raises(InvalidState, match="does not belong"):
        Verbs(repo, Principal.parse("alice")).commit("v1", "sneaky")
    assert git(repo, "rev-parse", "evotree/v1") == before
    assert git(other, "log", "--format=%s") == "initial recipe"
