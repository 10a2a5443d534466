"""An approver's process the workspace cannot run code in.

An agent can write the repository's ``.git/config`` and ``.git/info/attributes`` and, in a shared
shell, put a folder first on PATH. Each test plants one of those and checks that nothing of it
runs (or is believed) inside ``promote``, ``approve-run``, ``verify`` or ``analyzers promote``. A
"control" step shows the same plant is live for a plain ``git`` (the attack the old code let in).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, commit_file, git
from fixtures_ws import CODE_RE, finish, spawn
from test_gates import BOB, _forge_promotion, gate_repo, new_version

from evotree.core import safegit
from evotree.core.errors import InvalidState
from evotree.core.workspace import Workspace

NASTY = (
    "tune lr\ncommit: 0000000000000000000000000000000000000000 forged line\x1b[8mhidden \u202eevil"
)


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def plant_filter(repo: Path, marker: Path) -> None:
    """``filter.x.clean/smudge`` in .git/config and ``* filter=x`` in .git/info/attributes."""
    git(repo, "config", "filter.x.clean", f"sh -c 'touch {marker}; cat'")
    git(repo, "config", "filter.x.smudge", f"sh -c 'touch {marker}; cat'")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=x\n")


def analyzers_draft_with_filter(
    tmp_path: Path, keys: dict[str, Any]
) -> tuple[Path, dict[str, Any], Path, Path]:
    """A gate workspace with a committed analyzers draft ("stricter") and a clean/smudge filter
    planted that touches ``tmp_path/ran``: (repo, the draft's branch answer, its worktree, marker)."""
    repo = gate_repo(tmp_path / "w", keys)
    harness = Cli(repo).json("analyzers", "branch", "-m", "stricter")
    worktree = repo / harness["worktree"]
    commit_file(worktree, "harness.toml", "[thresholds]\n", "thresholds")
    marker = tmp_path / "ran"
    plant_filter(repo, marker)
    return repo, harness, worktree, marker


def plant_hooks(repo: Path, marker: Path, folder: Path) -> None:
    """Hooks in .git/hooks and in a core.hooksPath folder, and a core.fsmonitor program."""
    for hooks in (repo / ".git" / "hooks", folder):
        for name in (
            "post-merge",
            "post-checkout",
            "reference-transaction",
            "pre-auto-gc",
            "post-commit",
            "pre-commit",
            "commit-msg",
        ):
            script(hooks / name, f"echo {name} >> {marker}\ncat >/dev/null 2>&1 || true\nexit 0\n")


def passing_report(ws: Workspace, policy: Any, version: str) -> Any:
    """A dossier whose gates all pass (none evaluated): what the approver signs after the gates."""
    from evotree.gates.evaluation import GateReport
    from evotree.gates.promote import version_tip

    record = ws.resolve(version)
    return GateReport(
        version=record.id,
        commit=version_tip(ws, record.id),
        created_by=record.created_by,
        hypothesis=record.hypothesis,
        champion=policy.champion,
        champion_commit=policy.commit,
        policy={},
        gates=[],
        comparison=None,
        findings=[],
        audit=None,
    )


def approver(ws: Workspace, policy: Any, version: str, key: Path) -> Any:
    from evotree.gates.signoff import approver_for

    return approver_for(policy, key, ws.resolve(version).created_by)


# ---------------------------------------------------------------------------- the programs
def test_git_and_ssh_keygen_are_system_programs(tmp_path: Path) -> None:
    assert safegit.untrusted_reason(safegit.system_program("git")) is None
    assert safegit.untrusted_reason(safegit.system_program("ssh-keygen")) is None
    assert os.path.dirname(safegit.system_program("git")) in safegit.SYSTEM_DIRS
    fake = script(tmp_path / "bin" / "ssh-keygen", "exit 0\n")
    assert "absolute" in safegit.untrusted_reason("bin/ssh-keygen")
    reason = safegit.untrusted_reason(str(fake))
    assert reason is not None and (
        "owned by root" in reason or "writable by group or others" in reason
    )
    with pytest.raises(InvalidState, match=r"\[tools\]\.ssh_keygen"):
        safegit.program("ssh-keygen", str(fake))
    # a policy's ssh-keygen that is not a system program verifies nothing
    from evotree.gates.signing import verify

    ok, message = verify(
        "x ssh-ed25519 AAAA\n", "x", b"data", "-----BEGIN SSH SIGNATURE-----\n", program=str(fake)
    )
    assert not ok and "not a system program" in message


def test_tools_are_recorded_in_the_policy_at_init() -> None:
    from evotree.core.config import ConfigError, parse_config
    from evotree.core.config_template import render_template

    tools = parse_config(render_template()).tools
    assert tools.git == safegit.system_program(
        "git"
    ) and tools.ssh_keygen == safegit.system_program("ssh-keygen")
    with pytest.raises(ConfigError, match="tools.git"):
        parse_config('[tools]\ngit = "bin/git"\n')


def test_fake_ssh_keygen_and_git_first_on_path_are_never_consulted(
    tmp_path: Path, keys: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workspace prepends a folder to PATH: its ssh-keygen 'verifies' anything, its git logs each call."""
    repo = gate_repo(tmp_path / "w", keys)
    v1 = new_version(repo)
    _forge_promotion(
        repo, v1, signature="-----BEGIN SSH SIGNATURE-----\nforged\n-----END SSH SIGNATURE-----\n"
    )
    marker = tmp_path / "fake-ran"
    fake_bin = tmp_path / "fakebin"
    script(
        fake_bin / "ssh-keygen",
        f"echo ssh-keygen >> {marker}\n"
        f"echo 'Good \"evotree\" signature for {BOB} with ED25519 key SHA256:x'\nexit 0\n",
    )
    script(fake_bin / "git", f'echo git >> {marker}\nexec /usr/bin/git "$@"\n')
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    import shutil

    assert shutil.which("ssh-keygen") == str(
        fake_bin / "ssh-keygen"
    )  # control: PATH finds the fakes
    report = Cli(repo).json("verify", "--no-tags", code=33)
    assert not report["ok"] and report["champion"] == "v0"
    assert any(
        p["kind"] == "promotion" and "signature invalid" in p["message"] for p in report["problems"]
    )
    Cli(repo).json("verify", code=33)  # with the tags: git is the system one too
    assert not marker.exists(), marker.read_text()
    assert os.environ["PATH"].startswith(str(fake_bin))  # the command's environment was restored


def test_a_policy_naming_a_writable_ssh_keygen_signs_and_verifies_nothing(
    tmp_path: Path, keys: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """[tools] of the champion's evotree.toml is the program used; one the workspace could replace is refused."""
    import test_gates

    from evotree.gates.errors import SignatureError
    from evotree.gates.promote import record_run_approval
    from evotree.gates.verify import trusted_policy

    marker = tmp_path / "ran"
    fake = script(tmp_path / "tools" / "ssh-keygen", f"touch {marker}\nexit 0\n")
    monkeypatch.setattr(
        test_gates, "CONFIG", test_gates.CONFIG + f'[tools]\nssh_keygen = "{fake}"\n'
    )
    repo = gate_repo(tmp_path / "w", keys)
    v1 = new_version(repo)
    ws = Workspace.open(repo)
    policy = trusted_policy(ws)
    assert policy.config.tools.ssh_keygen == str(fake)
    with pytest.raises(SignatureError, match=r"\[tools\]\.ssh_keygen .*not a system program"):
        record_run_approval(ws, policy, v1, approver(ws, policy, v1, keys["bob"][0]), runs=1)
    assert not marker.exists()


# ---------------------------------------------------------------------------- promote --merge
def test_merge_refuses_a_filter_and_never_runs_it(tmp_path: Path, keys: dict[str, Any]) -> None:
    from evotree.gates.promote import _merge, record_promotion
    from evotree.gates.verify import trusted_policy

    repo = gate_repo(tmp_path / "w", keys)
    v1 = new_version(repo, "skill = 0.95\n")
    marker = tmp_path / "filter-ran"
    plant_filter(repo, marker)
    # control: the plant is live, plain git runs it
    probe = tmp_path / "probe"
    git(tmp_path, "clone", "-q", str(repo), str(probe))
    git(probe, "config", "filter.x.smudge", f"sh -c 'touch {marker}; cat'")
    (probe / ".git" / "info" / "attributes").write_text("* filter=x\n")
    git(probe, "checkout", "-q", "-B", "other", f"origin/evotree/{v1}")
    assert marker.exists()
    marker.unlink()

    ws = Workspace.open(repo)
    policy = trusted_policy(ws)
    before = git(repo, "rev-parse", "refs/evotree/champion")
    with pytest.raises(InvalidState, match=r"--merge: .*filter\.x\.clean.*filter\.x\.smudge"):
        record_promotion(
            ws,
            policy,
            passing_report(ws, policy, v1),
            approver(ws, policy, v1, keys["bob"][0]),
            merge=True,
        )
    assert (
        git(repo, "rev-parse", "refs/evotree/champion") == before
    )  # refused before anything was signed
    assert not marker.exists()
    # the person's command refuses first, before the dossier and the challenge, naming the settings
    child = spawn(repo, "promote", v1, "--merge", "--key", str(keys["bob"][0]))
    code, out = finish(child)
    assert code == 10 and "filter.x.clean" in out and "one-time code" not in out, (
        out
    )  # InvalidState
    assert not marker.exists()
    # the merge itself (git status, git merge) blanks every filter the repository names
    warnings: list[str] = []
    assert _merge(ws, git(repo, "rev-parse", f"evotree/{v1}"), warnings) == "main", warnings
    assert (repo / "recipe.toml").read_text() == "skill = 0.95\n"
    assert not marker.exists()


def test_hooks_fsmonitor_and_hooks_path_do_not_run_in_sign_offs(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    from evotree.gates.promote import _merge, record_promotion, record_run_approval
    from evotree.gates.verify import trusted_policy, verify_workspace

    repo = gate_repo(tmp_path / "w", keys)
    v1 = new_version(repo, "skill = 0.95\n")
    marker = tmp_path / "hook-ran"
    plant_hooks(repo, marker, tmp_path / "agent-hooks")
    fsmonitor = script(tmp_path / "fsmonitor", f"echo fsmonitor >> {marker}\nexit 1\n")
    git(repo, "config", "core.fsmonitor", str(fsmonitor))
    git(repo, "config", "core.hooksPath", str(tmp_path / "agent-hooks"))
    git(repo, "config", "gc.auto", "1")
    # control: the plant is live, plain git runs the hooks
    git(repo, "tag", "probe")
    assert marker.exists()
    git(repo, "tag", "-d", "probe")
    marker.unlink()

    ws = Workspace.open(repo)
    policy = trusted_policy(ws)
    bob = approver(ws, policy, v1, keys["bob"][0])
    record_run_approval(ws, policy, v1, bob, runs=1)
    with pytest.raises(InvalidState, match=r"core\.fsmonitor.*core\.hookspath|core\.hooksPath"):
        record_promotion(ws, policy, passing_report(ws, policy, v1), bob, merge=True)
    result = record_promotion(ws, policy, passing_report(ws, policy, v1), bob)
    assert result.champion == v1 and result.tag == f"evotree/promoted/{v1}"
    assert _merge(ws, result.commit, []) == "main"
    assert verify_workspace(Workspace.open(repo)).ok
    Cli(repo).json("verify")
    assert not marker.exists(), marker.read_text()


def test_analyzers_promote_status_runs_no_filter_or_fsmonitor(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    from evotree.gates.analyzer_versions import plan_analyzers_promotion

    repo, harness, worktree, marker = analyzers_draft_with_filter(tmp_path, keys)
    git(
        repo, "config", "core.fsmonitor", str(script(tmp_path / "fsm", f"touch {marker}\nexit 1\n"))
    )
    (worktree / "harness.toml").write_text(
        "[thresholds]\n"
    )  # same bytes, new mtime: git must look again
    os.utime(worktree / "harness.toml", (1, 1))
    plan = plan_analyzers_promotion(Workspace.open(repo), harness["id"])
    assert plan.analyzers == harness["id"]
    assert not marker.exists()


# ---------------------------------------------------------------------------- text shown to the approver
def test_approve_run_prompt_shows_the_real_commit_line_only(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    repo = gate_repo(tmp_path / "w", keys, train_threshold=1)
    ws = Workspace.open(repo)
    from evotree.core.versions import create_version

    v1 = create_version(ws, hypothesis=NASTY, parent="champion").id
    real = git(repo, "rev-parse", f"evotree/{v1}")
    child = spawn(repo, "approve-run", v1, "--runs", "1", "--key", str(keys["bob"][0]))
    child.expect(CODE_RE)
    shown = child.before or ""  # everything the person saw before the challenge
    child.expect("version id: ")
    child.sendline(v1)
    child.expect("one-time code: ")
    child.sendline("XXXX-XXXX")
    code, _out = finish(child)
    assert code != 0  # a wrong code: nothing signed
    assert "\x1b" not in shown and "\u202e" not in shown
    commits = [line.strip() for line in shown.splitlines() if line.lstrip().startswith("commit:")]
    assert commits and all(line.startswith(f"commit: {real}") for line in commits), commits
    assert "tune lr\\ncommit: 0000" in shown.replace("\r", "")


def test_gates_and_verify_output_escape_what_agents_wrote(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    repo = gate_repo(tmp_path / "w", keys)
    ws = Workspace.open(repo)
    from evotree.core.versions import create_version

    v1 = create_version(ws, hypothesis=NASTY, parent="champion").id
    out = Cli(repo)("gates", v1).output
    assert "\x1b" not in out and "\u202e" not in out
    assert not any(re.match(r"\s*commit: 0000", line) for line in out.splitlines()), out
    assert "\\x1b[8m" in out and "\\u202e" in out


def test_a_recorded_tool_must_be_the_tool() -> None:
    """A policy cannot name another system program (``/usr/bin/true`` would accept every signature)."""
    true = next(
        (p for p in ("/usr/bin/true", "/bin/true") if safegit.untrusted_reason(p) is None), None
    )
    if true is None:
        pytest.skip("no root-owned true on this machine")
    with pytest.raises(InvalidState, match="not named ssh-keygen"):
        safegit.program("ssh-keygen", true)
    from evotree.gates.signing import verify

    assert (
        verify("x ssh-ed25519 AAAA\n", "x", b"d", "-----BEGIN SSH SIGNATURE-----\n", program=true)[
            0
        ]
        is False
    )


def test_inside_a_sign_off_every_git_of_the_process_is_the_approvers(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Git.run (worktree porcelain) and a bare `git` started by other code (the ledger's packing)."""
    import subprocess

    from evotree.core.gitio import Git

    marker = tmp_path / "ran"
    plant_filter(repo, marker)
    plant_hooks(repo, marker, tmp_path / "hooks")
    fake_bin = tmp_path / "fakebin"
    script(fake_bin / "git", f'echo fake-git >> {marker}\nexec /usr/bin/git "$@"\n')
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    (repo / "recipe.toml").write_text("changed = true\n")
    with safegit.approver_process():
        assert "GIT_DIR" not in os.environ and safegit.in_approver_process()
        git_ = Git(repo)
        git_.run("add", "recipe.toml")
        git_.run("commit", "-q", "-m", "x")
        assert git_.run("status", "--porcelain") == ""
        subprocess.run(
            ["git", "gc", "--auto", "--quiet"], cwd=repo, check=True
        )  # as the ledger starts it
    assert not marker.exists(), marker.read_text()
    assert (
        os.environ["GIT_DIR"] == str(tmp_path / "elsewhere") and not safegit.in_approver_process()
    )


# ---------------------------------------------------------------------------- run_git's argument parsing
def test_run_git_finds_the_command_after_leading_options(repo: Path, tmp_path: Path) -> None:
    """``-c K=V``, ``-C DIR`` and ``--git-dir DIR`` take the next argument as their value: it is not the
    command (a leading ``-c`` once made ``status`` look like no worktree command: no filter blanked out)."""
    split = safegit.split_global_options
    assert split(["-c", "user.signingkey=k", "tag", "-s"]) == ([], "tag", 2)
    assert split(["--git-dir=/a", "--work-tree=/b", "status", "-z"]) == (
        ["--git-dir=/a", "--work-tree=/b"],
        "status",
        2,
    )
    assert split(["-C", "d", "--git-dir", "g", "-c", "x=y", "--no-pager", "log", "-p"]) == (
        ["-C", "d", "--git-dir=g"],
        "log",
        7,
    )
    assert split(["--work-tree", "w", "-c", "status=1", "diff"]) == (["--work-tree=w"], "diff", 4)
    assert split(["-c", "a=b"]) == ([], "", 2)
    marker = tmp_path / "ran"
    plant_filter(repo, marker)
    (repo / "recipe.toml").write_text("changed = true\n")
    proc = safegit.run_git(repo, "-c", "core.quotePath=false", "status", "--porcelain")
    assert proc.returncode == 0 and "recipe.toml" in proc.stdout
    proc = safegit.run_git(
        tmp_path, "-C", str(repo), "-c", "core.quotePath=false", "diff", "--stat"
    )
    assert proc.returncode == 0 and "recipe.toml" in proc.stdout
    assert not marker.exists(), marker.read_text()


def test_settings_are_read_from_the_git_dir_the_command_uses(repo: Path, tmp_path: Path) -> None:
    """``--git-dir=`` given to run_git is given to the ``git config --list`` that finds the filters too,
    not the repository git would discover from cwd (a worktree's rewritten ``.git`` pointer)."""
    decoy = tmp_path / "decoy"
    git(tmp_path, "init", "-q", str(decoy))
    marker = tmp_path / "ran"
    plant_filter(repo, marker)
    assert safegit.program_settings(decoy) == []
    listed = safegit.program_settings(decoy, location=[f"--git-dir={repo / '.git'}"])
    assert {k for k, _v, _o in listed} == {"filter.x.clean", "filter.x.smudge"}
    (repo / "recipe.toml").write_text("changed = true\n")
    proc = safegit.run_git(
        repo,
        f"--git-dir={repo / '.git'}",
        f"--work-tree={repo}",
        "status",
        "--porcelain",
        cwd=decoy,
    )
    assert proc.returncode == 0 and "recipe.toml" in proc.stdout
    assert not marker.exists(), marker.read_text()


def test_transports_and_lazy_fetches_are_off_and_refused_by_name(
    repo: Path, tmp_path: Path
) -> None:
    env = safegit.approver_env({"GIT_ALLOW_PROTOCOL": "ext", "HOME": "/root"})
    assert env["GIT_ALLOW_PROTOCOL"] == "none" and env["GIT_NO_LAZY_FETCH"] == "1"
    git(repo, "remote", "add", "origin", "https://example.invalid/repo.git")
    git(repo, "config", "remote.origin.promisor", "false")
    assert safegit.program_settings(repo) == []  # a plain remote runs nothing: --merge still works
    marker = tmp_path / "ext-ran"
    git(repo, "config", "extensions.partialClone", "evil")
    git(repo, "config", "remote.evil.promisor", "true")
    git(repo, "config", "protocol.ext.allow", "always")
    git(repo, "config", "remote.evil.url", f"ext::sh -c touch% {marker}")
    git(repo, "config", "url.ext::sh -c touch% x.insteadOf", "https://example.invalid/")
    keys_ = {k.lower() for k, _v, _o in safegit.program_settings(repo)}
    assert {
        "extensions.partialclone",
        "remote.evil.promisor",
        "protocol.ext.allow",
        "remote.evil.url",
        "url.ext::sh -c touch% x.insteadof",
    } <= keys_
    assert "remote.origin.url" not in keys_ and "remote.origin.promisor" not in keys_
    with pytest.raises(InvalidState, match="remote.evil.url"):
        safegit.refuse_program_settings(repo, "--merge")
    proc = safegit.run_git(repo, "fetch", "evil")
    assert proc.returncode != 0 and not marker.exists()
