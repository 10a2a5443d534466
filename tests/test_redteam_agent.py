"""Red-team attacks on `evotree agent` and the approver's process hardening.

Each attack that succeeds today is an ``xfail(strict=True)`` test asserting the safe behaviour;
each attack that is blocked is a normal test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EVOTREE_BIN, Cli, commit_file, git
from test_approver_process import analyzers_draft_with_filter, script
from test_gates import gate_repo, new_version

from evotree.core.workspace import Workspace

# tens of seconds of real runs and sandboxes: run apart (make test-heavy; CI runs it after make test)
pytestmark = pytest.mark.heavy


# ---------------------------------------------------------------------------- the approver's process
def test_analyzers_promote_status_with_a_rewritten_pointer_runs_no_filter(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    from evotree.gates.analyzer_versions import plan_analyzers_promotion

    repo, harness, worktree, marker = analyzers_draft_with_filter(tmp_path, keys)
    # the worktree's pointer names a clean decoy repository: `git config --list` run in the
    # worktree lists the decoy's settings (none), so no filter is blanked out
    decoy = tmp_path / "decoy"
    git(tmp_path, "init", "-q", str(decoy))
    (worktree / ".git").write_text(f"gitdir: {decoy / '.git'}\n")
    (worktree / "harness.toml").write_text("[thresholds]\n")
    os.utime(worktree / "harness.toml", (1, 1))
    try:
        plan_analyzers_promotion(Workspace.open(repo), harness["id"])
    except Exception:  # noqa: BLE001 - refusing is a safe outcome too
        pass
    assert not marker.exists(), "the repository's clean filter ran in the approver's process"


def _plant_promisor(repo: Path, marker: Path, missing: str) -> None:
    """A partial clone whose promisor remote is an ``ext::`` command, allowed per protocol (the
    pinned ``protocol.allow=never`` is only the default for protocols without their own setting),
    and one object of the candidate gone: the first git that needs it fetches it lazily."""
    git(repo, "config", "extensions.partialClone", "evil")
    git(repo, "config", "remote.evil.promisor", "true")
    git(repo, "config", "protocol.ext.allow", "always")
    git(repo, "config", "remote.evil.url", f"ext::sh -c touch% {marker}")
    loose = repo / ".git" / "objects" / missing[:2] / missing[2:]
    assert loose.exists()
    loose.unlink()


def test_promote_merge_runs_no_lazy_fetch_transport(tmp_path: Path, keys: dict[str, Any]) -> None:
    from evotree.core.errors import EvotreeError
    from evotree.gates.promote import record_promotion
    from evotree.gates.verify import trusted_policy
    from test_approver_process import approver, passing_report

    repo = gate_repo(tmp_path / "w", keys)
    v1 = new_version(repo, "skill = 0.95\nnew = 'a blob only this version has'\n")
    marker = tmp_path / "ext-ran"
    ws = Workspace.open(repo)
    policy = trusted_policy(ws)
    report = passing_report(ws, policy, v1)
    bob = approver(ws, policy, v1, keys["bob"][0])
    _plant_promisor(repo, marker, git(repo, "rev-parse", f"evotree/{v1}:recipe.toml").strip())
    try:
        record_promotion(Workspace.open(repo), policy, report, bob, merge=True)
    except EvotreeError:
        pass  # refusing is a safe outcome
    assert not marker.exists(), "an ext:: transport ran in the approver's process"


def test_verify_runs_no_gpg_program_of_the_repository(tmp_path: Path, keys: dict[str, Any]) -> None:
    from evotree.gates.promote import record_promotion
    from evotree.gates.verify import trusted_policy
    from test_approver_process import approver, passing_report

    repo = gate_repo(tmp_path / "w", keys)
    v1 = new_version(repo, "skill = 0.95\n")
    ws = Workspace.open(repo)
    policy = trusted_policy(ws)
    record_promotion(
        ws, policy, passing_report(ws, policy, v1), approver(ws, policy, v1, keys["bob"][0])
    )
    marker = tmp_path / "gpg-ran"
    gpg = script(tmp_path / "gpg", f"touch {marker}\nexit 1\n")
    body = git(repo, "cat-file", "tag", f"refs/tags/evotree/promoted/{v1}")
    body = (
        body.rstrip("\n") + "\n-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n"
    )
    forged = subprocess.run(
        ["git", "hash-object", "-t", "tag", "-w", "--stdin"],
        cwd=repo,
        input=body,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(repo, "update-ref", f"refs/tags/evotree/promoted/{v1}", forged)
    git(repo, "config", "gpg.program", str(gpg))
    git(repo, "config", "gpg.openpgp.program", str(gpg))
    subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), "verify"], capture_output=True, timeout=120
    )  # whatever verify says of the tag, it must run no program of the workspace's
    assert not marker.exists(), "the repository's gpg.program ran in `evotree verify`"


# ---------------------------------------------------------------------------- `evotree agent`
def _agent(*args: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``evotree agent ARGS`` (test_agent's helper; the MCP SDK is needed by the agent scripts)."""
    pytest.importorskip("mcp")
    from test_agent import _agent as run_agent

    return run_agent(*args, **kwargs)


def _result(proc: subprocess.CompletedProcess[str]) -> dict:
    from test_agent import _result as result

    return result(proc)


def make_workspace(path: Path) -> Path:
    pytest.importorskip("mcp")
    from test_server import make_workspace as make

    return make(path)


#: Waits (in the sandbox) for a worktree that appears in the worktrees folder during the session,
#: then reads a file from it and writes one into it.
WATCHER = r"""
import json, os, sys, time
base = os.environ["EVOTREE_AGENT_WORKTREES"]
before = set(os.listdir(base))
open(os.path.join(base, ".agent-ready"), "w").close()
out = {"seen": None, "read": None, "wrote": False}
deadline = time.time() + 15
while time.time() < deadline:
    new = [n for n in set(os.listdir(base)) - before if not n.startswith(".")]
    if new:
        path = os.path.join(base, new[0])
        out["seen"] = new[0]
        secret = os.path.join(path, "secret.txt")
        while time.time() < deadline and not os.path.exists(secret):
            time.sleep(0.1)
        try:
            out["read"] = open(secret).read()
        except OSError as exc:
            out["read"] = "refused: " + type(exc).__name__
        try:
            open(os.path.join(path, "injected.txt"), "w").write("from the agent\n")
            out["wrote"] = True
        except OSError:
            pass
        break
    time.sleep(0.1)
print("AGENT-RESULT " + json.dumps(out))
"""


def test_a_worktree_someone_else_branches_during_the_session_is_hidden(tmp_path: Path) -> None:
    import time

    repo = make_workspace(tmp_path / "ws")
    base = repo / ".evotree" / "worktrees"
    agent = subprocess.Popen(
        [
            str(EVOTREE_BIN),
            "-C",
            str(repo),
            "agent",
            "--as",
            "bot",
            "--",
            sys.executable,
            "-c",
            WATCHER,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST")},
    )
    try:
        deadline = time.monotonic() + 120
        while not list(base.glob("*/.agent-ready")):  # the agent's session folder
            assert agent.poll() is None and time.monotonic() < deadline, agent.communicate()
            time.sleep(0.1)
        human = Cli(repo).json("branch", "-m", "the human's own idea")["id"]
        (base / human / "secret.txt").write_text("the human's unfinished work\n")
        out, err = agent.communicate(timeout=120)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    got = _result(subprocess.CompletedProcess(agent.args, agent.returncode, out, err))
    assert got["read"] != "the human's unfinished work\n", got
    assert not (base / human / "injected.txt").exists(), got


#: Branches a version through the tools, plants a git folder of its own in the new worktree (a
#: core.fsmonitor program) and points the worktree's writable .git pointer at it.
PLANTER = r"""
import asyncio, json, os, sys
from pathlib import Path
from mcp import ClientSession, StdioServerParameters, stdio_client

MARKER = sys.argv[1]

async def main():
    server = json.load(open(".mcp.json"))["mcpServers"]["evotree"]
    params = StdioServerParameters(command=server["command"], args=server["args"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        made = json.loads((await session.call_tool("branch", {"hypothesis": "x"})).content[0].text)
    worktree = Path(os.environ["EVOTREE_AGENT_WORKTREES"]) / made["id"]
    evil = worktree / ".cache-dir"
    for sub in ("objects", "refs/heads"):
        (evil / sub).mkdir(parents=True, exist_ok=True)
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    (evil / "config").write_text(f"[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
                                 f"\tfsmonitor = \"touch {MARKER}; false\"\n\tpager = \"touch {MARKER}; cat\"\n")
    (worktree / ".git").write_text(f"gitdir: {evil}\n")
    print("AGENT-RESULT " + json.dumps({"id": made["id"]}))

asyncio.run(main())
"""


def test_a_pointer_rewritten_in_the_session_is_not_left_for_the_user(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "ws")
    marker = tmp_path / "ran-outside"
    proc = _agent(repo, "--as", "bot", "--", sys.executable, "-c", PLANTER, str(marker))
    assert proc.returncode == 0, proc.stderr
    vid = _result(proc)["id"]
    worktree = repo / Cli(repo).json("show", vid)["version"]["worktree"]  # in the session's folder
    # after the session, the user looks at the agent's work the ordinary way
    subprocess.run(["git", "status", "--short"], cwd=worktree, capture_output=True, timeout=60)
    assert not marker.exists(), "the agent's program ran as the user, outside the sandbox"


#: Probes from inside the sandbox; each entry says what the agent reached.
PROBES = r"""
import json, os, socket, sys
ws, port, abstract = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = {}
def probe(name, func):
    try:
        out[name] = ["reached", str(func())[:200]]
    except Exception as exc:
        out[name] = ["refused", type(exc).__name__]
probe("proc_root_git", lambda: open(f"/proc/self/root{ws}/.git/config").read())
probe("proc1_root_git", lambda: open(f"/proc/1/root{ws}/.git/config").read())
probe("dotdot_git", lambda: open(os.environ["EVOTREE_AGENT_WORKTREES"] + "/../../.git/config").read())
probe("tcp_loopback", lambda: socket.create_connection(("127.0.0.1", port), timeout=3))
def abstract_connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0" + abstract)
    return s
probe("abstract_socket", abstract_connect)
probe("socket_dir_write", lambda: open("/run/evotree/other.sock", "w"))
probe("hardlink_git", lambda: os.link(f"{ws}/.git/config", os.environ["EVOTREE_AGENT_WORKTREES"] + "/cfg"))
probe("unshare_userns", lambda: os.unshare(os.CLONE_NEWUSER))
probe("home_ssh", lambda: os.listdir(os.path.expanduser("~/.ssh")))
probe("kill_outside", lambda: os.kill(int(sys.argv[4]), 0))
out["canary_env"] = [k for k, v in os.environ.items() if "CANARY" in k or "canary" in v]
out["fds"] = sorted(os.listdir("/proc/self/fd"))
print("AGENT-RESULT " + json.dumps(out))
"""


def test_sandbox_paths_network_sockets_env_and_signals_are_blocked(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "ws")
    tcp = __import__("socket").socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(1)
    abstract = f"evotree-redteam-{os.getpid()}"
    unix = __import__("socket").socket(__import__("socket").AF_UNIX)
    unix.bind("\0" + abstract)
    unix.listen(1)
    try:
        proc = _agent(
            repo,
            "--as",
            "bot",
            "--",
            sys.executable,
            "-c",
            PROBES,
            str(repo),
            str(tcp.getsockname()[1]),
            abstract,
            str(os.getpid()),
            env={"SECRET_CANARY": "canary-value", "ANTHROPIC_API_KEY": "canary-key"},
        )
    finally:
        tcp.close()
        unix.close()
    assert proc.returncode == 0, proc.stderr
    got = _result(proc)
    reached = {k: v for k, v in got.items() if isinstance(v, list) and v and v[0] == "reached"}
    assert reached == {}, reached
    assert got["canary_env"] == []


#: Branches from the champion through the tools and reads the judge paths of its new worktree.
JUDGE_READER = r"""
import asyncio, json, os
from pathlib import Path
from mcp import ClientSession, StdioServerParameters, stdio_client

async def main():
    server = json.load(open(".mcp.json"))["mcpServers"]["evotree"]
    params = StdioServerParameters(command=server["command"], args=server["args"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        made = json.loads((await session.call_tool("branch", {"hypothesis": "x"})).content[0].text)
    judge = Path(os.environ["EVOTREE_AGENT_WORKTREES"]) / made["id"] / "judge" / "eval.py"
    print("AGENT-RESULT " + json.dumps({"judge": judge.read_text() if judge.exists() else None}))

asyncio.run(main())
"""


def test_the_agent_cannot_read_the_judge_through_a_worktree_it_branches(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "ws")
    proc = _agent(repo, "--as", "bot", "--", sys.executable, "-c", JUDGE_READER)
    assert proc.returncode == 0, proc.stderr
    assert _result(proc)["judge"] is None


def test_a_link_planted_where_the_next_analyzers_worktree_goes_is_refused(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "ws")
    target = tmp_path / "elsewhere"
    target.mkdir()
    plant = (
        "import os; base = os.environ['EVOTREE_AGENT_WORKTREES']; "
        f"os.symlink({str(target)!r}, os.path.join(base, 'analyzers-h1')); print('planted')"
    )
    proc = _agent(repo, "--", sys.executable, "-c", plant)
    assert proc.returncode == 0 and "planted" in proc.stdout, proc.stderr
    try:
        Cli(repo).json("analyzers", "branch", "-m", "stricter")
    except AssertionError:
        pass  # refused: the safe outcome
    assert list(target.iterdir()) == [], "the version was checked out through the agent's link"


#: Races the server's branch(skills=...): as soon as the new worktree appears, its writable .git
#: pointer is aimed at a git folder of the agent's, whose info/attributes and config name a clean
#: filter; apply_skill then runs `git add` in the worktree (cwd=worktree: git follows the pointer).
RACER = r"""
import asyncio, json, os, sys, threading, time
from pathlib import Path
from mcp import ClientSession, StdioServerParameters, stdio_client

MARKER = sys.argv[1]
base = Path(os.environ["EVOTREE_AGENT_WORKTREES"])
fake = base / ".fake"
for sub in ("objects", "refs/heads/evotree", "info"):
    (fake / sub).mkdir(parents=True, exist_ok=True)
(fake / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
                             f"[filter \"x\"]\n\tclean = \"sh -c 'touch {MARKER}; cat'\"\n")
(fake / "info" / "attributes").write_text("* filter=x\n")
out = {"planted": [], "results": []}
stop = False
DELAYS = tuple(0.005 * i for i in range(1, 60))  # after the checkout, before apply_skill's git calls

def watch(tip):
    seen = set(os.listdir(base))
    while not stop:
        for name in set(os.listdir(base)) - seen:
            pointer = base / name / ".git"
            if name.startswith(".") or not pointer.is_file() or not (base / name / "recipe.toml").exists():
                continue
            time.sleep(DELAYS[len(out["planted"]) % len(DELAYS)])
            (fake / "refs" / "heads" / "evotree" / name).write_text(tip + "\n")
            (fake / "HEAD").write_text(f"ref: refs/heads/evotree/{name}\n")
            pointer.write_text(f"gitdir: {fake}\n")
            seen.add(name)
            out["planted"].append(name)

async def main():
    global stop
    server = json.load(open(".mcp.json"))["mcpServers"]["evotree"]
    params = StdioServerParameters(command=server["command"], args=server["args"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        shown = json.loads((await session.call_tool("show", {"version": "champion"})).content[0].text)
        watcher = threading.Thread(target=watch, args=(shown["tip"],), daemon=True)
        watcher.start()
        for attempt in range(len(DELAYS)):
            result = await session.call_tool("branch", {"hypothesis": "x",
                                                        "skills": {"StdGroupFilter": {"min_std": 0.1}}})
            text = result.content[0].text
            out["results"].append(text[:300])
            if "git commit" in text:  # the commit in the agent's git folder failed: its filter ran before
                break
        stop = True
    print("AGENT-RESULT " + json.dumps(out))

asyncio.run(main())
"""


def test_branch_with_skills_does_not_follow_a_pointer_rewritten_mid_call(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "ws")
    marker = tmp_path / "ran-in-the-server"
    proc = _agent(repo, "--as", "bot", "--", sys.executable, "-c", RACER, str(marker))
    assert proc.returncode == 0, proc.stderr
    got = _result(proc)
    assert got["planted"], got
    assert not marker.exists(), (
        f"the agent's clean filter ran in the server, outside the sandbox: {got}"
    )


#: Branches (no skills), then aims the new worktree's pointer at a git folder of its own that
#: matches the branch and tip evotree checks, with a clean filter; leaves it for the user.
SKILL_TRAP = r"""
import asyncio, json, os, sys
from pathlib import Path
from mcp import ClientSession, StdioServerParameters, stdio_client

MARKER = sys.argv[1]

async def main():
    server = json.load(open(".mcp.json"))["mcpServers"]["evotree"]
    params = StdioServerParameters(command=server["command"], args=server["args"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        made = json.loads((await session.call_tool("branch", {"hypothesis": "x"})).content[0].text)
        shown = json.loads((await session.call_tool("show", {"version": made["id"]})).content[0].text)
    base = Path(os.environ["EVOTREE_AGENT_WORKTREES"])
    fake = base / f".cache-{made['id']}"
    for sub in ("objects", "refs/heads/evotree", "info"):
        (fake / sub).mkdir(parents=True, exist_ok=True)
    (fake / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
                                 f"[filter \"x\"]\n\tclean = \"sh -c 'touch {MARKER}; cat'\"\n")
    (fake / "info" / "attributes").write_text("* filter=x\n")
    (fake / "refs" / "heads" / "evotree" / made["id"]).write_text(shown["tip"] + "\n")
    (fake / "HEAD").write_text(f"ref: refs/heads/evotree/{made['id']}\n")
    (base / made["id"] / ".git").write_text(f"gitdir: {fake}\n")
    print("AGENT-RESULT " + json.dumps({"id": made["id"]}))

asyncio.run(main())
"""


def test_a_later_skill_apply_does_not_follow_the_pointer_the_agent_left(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "ws")
    marker = tmp_path / "ran-in-the-users-command"
    proc = _agent(repo, "--as", "bot", "--", sys.executable, "-c", SKILL_TRAP, str(marker))
    assert proc.returncode == 0, proc.stderr
    vid = _result(proc)["id"]
    applied = subprocess.run(
        [
            str(EVOTREE_BIN),
            "-C",
            str(repo),
            "skill",
            "apply",
            "StdGroupFilter",
            "--to",
            vid,
            "--param",
            "min_std=0.1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert not marker.exists(), (
        f"the agent's filter ran in the user's `evotree skill apply`: {applied.stdout}"
    )


# ---------------------------------------------------------------------------- the server's verbs (blocked)
def _verbs(repo: Path) -> Any:
    from evotree.server.verbs import Principal, Verbs

    return Verbs(repo, Principal.parse("bot"))


def test_sql_cannot_read_a_host_file(tmp_path: Path) -> None:
    from evotree.core.errors import EvotreeError

    repo = make_workspace(tmp_path / "ws")
    verbs = _verbs(repo)
    for query in (
        "SELECT content FROM read_text('/etc/hostname')",
        f"SELECT * FROM read_csv('{repo}/.git/config')",
        "SELECT * FROM glob('/root/*')",
    ):
        with pytest.raises(EvotreeError):
            verbs.sql(query)


def test_commit_stores_links_as_links_and_runs_refuse_them(tmp_path: Path) -> None:
    from evotree.core.errors import EvotreeError
    from evotree.harness.export import export_tree

    repo = make_workspace(tmp_path / "ws")
    verbs = _verbs(repo)
    vid = verbs.branch("links")["id"]
    worktree = repo / ".evotree" / "worktrees" / vid
    secret = tmp_path / "secret"
    secret.write_text("host secret\n")
    (worktree / "leak").symlink_to(secret)
    commit = verbs.commit(vid, "a link")["commit"]
    assert git(repo, "cat-file", "-p", f"{commit}:leak") == str(secret)  # the link, never the file
    ws = Workspace.open(repo)
    with pytest.raises(EvotreeError):
        export_tree(ws.git.repo, commit, tmp_path / "out")


def test_commit_refuses_a_nested_repository_and_a_pointer_to_another_admin(tmp_path: Path) -> None:
    from evotree.core.errors import EvotreeError

    repo = make_workspace(tmp_path / "ws")
    verbs = _verbs(repo)
    mine = verbs.branch("mine")["id"]
    other = Cli(repo).json("branch", "-m", "someone else's")["id"]
    worktree = repo / ".evotree" / "worktrees" / mine
    nested = worktree / "sub"
    git(tmp_path, "init", "-q", str(nested))
    git(nested, "config", "user.name", "n")
    git(nested, "config", "user.email", "n@example.org")
    commit_file(nested, "f", "x\n", "nested")
    with pytest.raises(Exception):  # noqa: B017 - libgit2 refuses the nested repository
        verbs.commit(mine, "a nested repository")
    import shutil

    shutil.rmtree(nested)
    (worktree / ".git").write_text(f"gitdir: {repo / '.git' / 'worktrees' / other}\n")
    (worktree / "recipe.toml").write_text("skill = 1.0\n")
    with pytest.raises(EvotreeError):
        verbs.commit(mine, "on someone else's branch")
    assert "skill = 1.0" not in git(repo, "show", f"evotree/{other}:recipe.toml")


def test_show_does_not_list_another_principals_uncommitted_files(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "ws")
    other = Cli(repo).json("branch", "-m", "someone else's")["id"]
    (repo / ".evotree" / "worktrees" / other / "plan-to-fix-the-reward-hack.md").write_text(
        "private\n"
    )
    shown = _verbs(repo).show(other)
    assert "plan-to-fix-the-reward-hack.md" not in json.dumps(shown)


def test_a_fifo_left_in_a_worktree_does_not_hang_the_users_commands(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "ws")
    vid = Cli(repo).json("branch", "-m", "the agent's")["id"]
    plant = (
        "import os, sys; base = 'versions'; "  # the desk's link to the version's worktree
        "os.mkfifo(os.path.join(base, sys.argv[1], '.gitignore')); print('planted')"
    )
    proc = _agent(repo, "--as", "bot", "--versions", vid, "--", sys.executable, "-c", plant, vid)
    assert proc.returncode == 0 and "planted" in proc.stdout, proc.stderr
    import signal

    show = subprocess.Popen(
        [str(EVOTREE_BIN), "-C", str(repo), "show", vid, "--json"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        show.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(show.pid, signal.SIGKILL)  # evotree and the git status blocked in open()
        show.wait()
        pytest.fail("`evotree show` hung on the agent's FIFO")


#: Commits a skills.toml that is a link whose target is a TOML comment ("#/../../..<victim>"), then
#: branches from that version with a skill: the server writes skills.toml through the link.
LINK_WRITER = r"""
import asyncio, json, os, sys
from pathlib import Path
from mcp import ClientSession, StdioServerParameters, stdio_client

VICTIM = sys.argv[1]

async def call(session, tool, args):
    return (await session.call_tool(tool, args)).content[0].text

async def main():
    server = json.load(open(".mcp.json"))["mcpServers"]["evotree"]
    params = StdioServerParameters(command=server["command"], args=server["args"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        made = json.loads(await call(session, "branch", {"hypothesis": "x"}))
        worktree = Path(os.environ["EVOTREE_AGENT_WORKTREES"]) / made["id"]
        (worktree / "#").mkdir()
        (worktree / "#" / "keep").write_text("x\n")
        (worktree / "skills.toml").symlink_to("#/" + "../" * 60 + VICTIM.lstrip("/"))
        committed = await call(session, "commit", {"version": made["id"], "message": "a link"})
        branched = await call(session, "branch", {"hypothesis": "y", "parent": made["id"],
                                                  "skills": {"StdGroupFilter": {"min_std": 0.1}}})
    print("AGENT-RESULT " + json.dumps({"commit": committed[:200], "branch": branched[:200]}))

asyncio.run(main())
"""


def test_branch_with_skills_writes_no_file_outside_the_worktree(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "ws")
    victim = tmp_path / "home" / ".ssh" / "id_ed25519"
    victim.parent.mkdir(parents=True)
    victim.write_text("-----BEGIN OPENSSH PRIVATE KEY----- the user's key\n")
    proc = _agent(repo, "--as", "bot", "--", sys.executable, "-c", LINK_WRITER, str(victim))
    assert proc.returncode == 0, proc.stderr
    assert victim.read_text() == "-----BEGIN OPENSSH PRIVATE KEY----- the user's key\n", _result(
        proc
    )


#: Races `git worktree add` itself: git writes the new worktree's .git pointer, then runs its
#: checkout (`reset --hard`) in a child with GIT_DIR=<worktree>/.git, i.e. through the pointer. The
#: agent swaps the pointer for a git folder of its own (objects borrowed from the repository through
#: objects/info/alternates, a smudge filter in its config) in those few milliseconds.
CHECKOUT_RACER = r"""
import asyncio, json, os, sys, threading, time
from pathlib import Path
from mcp import ClientSession, StdioServerParameters, stdio_client

MARKER = sys.argv[1]
base = Path(os.environ["EVOTREE_AGENT_WORKTREES"])
out = {"planted": [], "results": []}
stop = False

TIP = None
def fake_for(name, common):
    fake = base / f".f-{name}"
    for sub in ("objects/info", "refs/heads/evotree", "info"):
        (fake / sub).mkdir(parents=True, exist_ok=True)
    (fake / "objects" / "info" / "alternates").write_text(f"{common}/objects\n")
    (fake / "config").write_text("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
                                 f"[filter \"x\"]\n\tsmudge = \"sh -c 'touch {MARKER}; cat'\"\n"
                                 f"\tclean = \"sh -c 'touch {MARKER}; cat'\"\n")
    (fake / "info" / "attributes").write_text("* filter=x\n")
    (fake / "refs" / "heads" / "evotree" / name).write_text(TIP + "\n")
    (fake / "HEAD").write_text(f"ref: refs/heads/evotree/{name}\n")
    return fake

def watch():
    seen = set(os.listdir(base))
    while not stop:
        for name in set(os.listdir(base)) - seen:
            if name.startswith("."):
                seen.add(name); continue
            pointer = base / name / ".git"
            t0 = time.time()
            while time.time() - t0 < 2:
                try:
                    text = pointer.read_text()
                except OSError:
                    continue
                if text.startswith("gitdir:"):
                    break
            admin = Path(text.split(":", 1)[1].strip())
            common = admin.parent.parent
            fake = fake_for(name, common)
            pointer.write_text(f"gitdir: {fake}\n")
            seen.add(name)
            out["planted"].append([name, round(time.time() - t0, 5)])

async def main():
    global stop
    server = json.load(open(".mcp.json"))["mcpServers"]["evotree"]
    params = StdioServerParameters(command=server["command"], args=server["args"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        global TIP
        TIP = json.loads((await session.call_tool("show", {"version": "champion"})).content[0].text)["tip"]
        threading.Thread(target=watch, daemon=True).start()
        for attempt in range(12):
            r = await session.call_tool("branch", {"hypothesis": "x"})
            out["results"].append(r.content[0].text[:250])
            await asyncio.sleep(0.1)
        stop = True
    print("AGENT-RESULT " + json.dumps(out))

asyncio.run(main())
"""


def test_branch_runs_no_filter_of_a_pointer_swapped_during_git_worktree_add(tmp_path: Path) -> None:
    repo = make_workspace(tmp_path / "ws")
    marker = tmp_path / "ran-in-the-server"
    proc = _agent(repo, "--as", "bot", "--", sys.executable, "-c", CHECKOUT_RACER, str(marker))
    assert proc.returncode == 0, proc.stderr
    got = _result(proc)
    assert got["planted"], got
    assert not marker.exists(), (
        f"the agent's smudge filter ran in the server, outside the sandbox: {got}"
    )
