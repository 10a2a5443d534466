"""The phase environment is an allowlist.

The attack that worked: only ``EVOTREE_*`` was dropped, so the credentials of the person running
evotree (HF_TOKEN, AWS, OpenAI and GitHub tokens, SSH_AUTH_SOCK) reached the candidate's train
code, which printed them to its log (``evotree logs``). Now a phase gets a fixed minimal set plus
the names the champion's ``[sandbox] pass_env`` lists."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from evotree.core.config_execution import SandboxSection
from evotree.harness.sandbox import check_sandbox, wrap
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxPolicy, SandboxSpec

SECRETS = {
    "HF_TOKEN": "hf_SECRETaaaa",
    "AWS_SECRET_ACCESS_KEY": "awsSECRETbbbb",
    "AWS_ACCESS_KEY_ID": "AKIASECRET",
    "OPENAI_API_KEY": "sk-SECRETcccc",
    "GITHUB_TOKEN": "ghp_SECRETdddd",
    "SSH_AUTH_SOCK": "/tmp/ssh-SECRET/agent",
    "ANTHROPIC_API_KEY": "sk-ant-SECRET",
    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/SECRET",
    "XDG_RUNTIME_DIR": "/run/user/SECRET",
    "LD_PRELOAD": "/tmp/SECRET.so",
}


def test_only_the_allowlist_reaches_a_phase() -> None:
    host = {
        **SECRETS,
        "PATH": "/usr/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C",
        "TZ": "UTC",
        "HOME": "/root",
        "EVOTREE_RUN_ID": "r1",
        "CUDA_VISIBLE_DEVICES": "0",
        "GIT_CEILING_DIRECTORIES": "/runs/r1",
    }
    env = sandbox_env(host)
    assert not set(SECRETS) & set(env), env
    assert env["HOME"] == "/tmp/home" and env["TMPDIR"] == "/tmp" and env["PATH"] == "/usr/bin"
    assert {
        "LANG",
        "LC_ALL",
        "TZ",
        "EVOTREE_RUN_ID",
        "CUDA_VISIBLE_DEVICES",
        "GIT_CEILING_DIRECTORIES",
    } <= set(env)
    listed = sandbox_env(host, ("HF_TOKEN", "SSH_AUTH_SOCK"))
    assert (
        listed["HF_TOKEN"] == SECRETS["HF_TOKEN"]
        and listed["SSH_AUTH_SOCK"] == SECRETS["SSH_AUTH_SOCK"]
    )
    assert not {"OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY"} & set(listed)


def test_pass_env_is_read_from_the_policy_and_checked() -> None:
    policy = SandboxPolicy.from_config(SandboxSection(pass_env=["HF_TOKEN"]))
    assert policy.pass_env == ("HF_TOKEN",)
    assert SandboxPolicy.from_dict(policy.to_dict()).pass_env == (
        "HF_TOKEN",
    )  # through a Ray task's spec
    for bad in ("EVOTREE_RUN_DIR", "A=B", "1X", "two words", ""):
        with pytest.raises(Exception, match="names of environment variables"):
            SandboxSection(pass_env=[bad])


@pytest.mark.skipif(not check_sandbox().ok, reason="needs bubblewrap")
def test_a_sandboxed_phase_sees_none_of_the_hosts_credentials(tmp_path: Path) -> None:
    spec = SandboxSpec(cwd=tmp_path, read_write=(tmp_path,), pass_env=("HF_TOKEN",))
    dump = ["python3", "-c", "import json, os; print(json.dumps(dict(os.environ)))"]
    proc = subprocess.run(
        accounted(wrap(spec, dump)),
        env=sandbox_env({**os.environ, **SECRETS}, spec.pass_env),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    inside = json.loads(proc.stdout)
    assert inside.get("HF_TOKEN") == SECRETS["HF_TOKEN"]  # listed: passed
    assert not (set(SECRETS) - {"HF_TOKEN"}) & set(inside), inside
    assert not any(v in proc.stdout for k, v in SECRETS.items() if k != "HF_TOKEN")


@pytest.mark.heavy
@pytest.mark.skipif(not check_sandbox().ok, reason="needs bubblewrap")
@pytest.mark.parametrize("listed", [False, True])
def test_a_runs_train_log_holds_no_credential_unless_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listed: bool
) -> None:
    """End to end: evotree's own environment holds the tokens; the candidate's train code prints its
    whole environment to its log; only a pass_env-listed HF_TOKEN is there."""
    from conftest import commit_file
    from test_runs import make_run_repo

    from evotree.core.versions import create_version
    from evotree.core.workspace import Workspace
    from evotree.gates.runs import run_versions

    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    extra = '[sandbox]\npass_env = ["HF_TOKEN"]\n' if listed else ""
    repo = make_run_repo(tmp_path / "w", budget="max_runs_per_version = 20\n" + extra)
    ws = Workspace.open(repo)
    v1 = create_version(ws, hypothesis="env", parent="v0")
    train = ws.root / v1.worktree / "train.py"
    commit_file(
        ws.root / v1.worktree,
        "train.py",
        "import os, sys\nprint('ENV', dict(os.environ), file=sys.stderr)\n" + train.read_text(),
        "env",
    )
    (record,) = run_versions(ws, [v1.id])
    assert record.status == "succeeded", record.error
    logs = "".join(
        p.read_text(errors="replace")
        for p in (repo / ".evotree" / "runs" / record.run_id).rglob("*.log")
    )
    logs += "".join(
        p.read_text(errors="replace")
        for p in (repo / ".evotree" / "runs" / record.run_id / "logs").rglob("*")
        if p.is_file()
    )
    assert "'PATH'" in logs  # the dump is there
    for name, value in SECRETS.items():
        if listed and name == "HF_TOKEN":
            assert value in logs
        else:
            assert value not in logs, name
