"""``evotree ci init``: the GitHub Actions workflow that audits, diagnoses and reports on every
pull request from an ``evotree/*`` branch.

It runs on ``pull_request`` (never ``pull_request_target``): code from a fork never runs with a
write token, and the judge, thresholds and gates come from the champion and harness refs
fetched from the base repository, not from the pull request's branch.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evotree.report.model import ReportError

__all__ = ["WORKFLOW_PATH", "CiInitResult", "workflow_text", "write_workflow"]

WORKFLOW_PATH = ".github/workflows/evotree.yml"

_TEMPLATE = """\
# Written by `evotree ci init`: audit, diagnose and report on pull requests from evotree/* branches.
# The report is posted as one pull-request comment that later runs update (found by a hidden
# marker); the Markdown, its plots and the HTML report are uploaded as the artifact
# `evotree-report`. Runs happen here only when the repository variable EVOTREE_RUN_SEEDS is set
# (e.g. 1); otherwise the report uses the evidence that CI can see and says what is missing.
name: evotree

on:
  pull_request:
    types: [opened, synchronize, reopened]

permissions:
  contents: read
  pull-requests: write
  issues: write

concurrency:
  group: evotree-${{{{ github.head_ref }}}}
  cancel-in-progress: true

jobs:
  evotree:
    if: startsWith(github.head_ref, 'evotree/')
    runs-on: ubuntu-latest
    timeout-minutes: 60
    env:
      EVOTREE_INSTALL: "{install}"
      EVOTREE_RUN_SEEDS: ${{{{ vars.EVOTREE_RUN_SEEDS || '0' }}}}
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - name: Fetch the version tree (ledger, champion, harness, version branches)
        run: |
          git fetch --no-tags --update-head-ok origin '+refs/evotree/*:refs/evotree/*' '+refs/heads/evotree/*:refs/heads/evotree/*'
          git config user.name "evotree CI"
          git config user.email "evotree-ci@users.noreply.github.com"
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
      - name: Install evotree
        run: python -m pip install "$EVOTREE_INSTALL"
      - name: Version of this pull request
        run: echo "EVOTREE_VERSION=${{GITHUB_HEAD_REF#evotree/}}" >> "$GITHUB_ENV"
      - name: Run the version and the champion
        if: env.EVOTREE_RUN_SEEDS != '0'
        run: evotree run "$EVOTREE_VERSION" champion --seeds "$EVOTREE_RUN_SEEDS"
      - name: Audit
        id: audit
        continue-on-error: true
        run: evotree audit "$EVOTREE_VERSION"
      - name: Diagnose
        continue-on-error: true
        run: evotree diagnose "$EVOTREE_VERSION"
      - name: Report (Markdown, posted on the pull request)
        if: always()
        env:
          GITHUB_TOKEN: ${{{{ secrets.GITHUB_TOKEN }}}}
        run: evotree report "$EVOTREE_VERSION" --format md --out evotree-report/ --post
      - name: Report (HTML)
        if: always()
        run: evotree report "$EVOTREE_VERSION" --format html --out evotree-report/
      - uses: actions/upload-artifact@v4
        if: always()
        with:
          name: evotree-report
          path: evotree-report/
      - name: Fail when the audit failed
        if: steps.audit.outcome == 'failure'
        run: |
          echo "the audit of $EVOTREE_VERSION failed: see the report"
          exit 1
"""


@dataclass
class CiInitResult:
    """What ``evotree ci init --json`` prints (schema: ``report-ci.schema.json``)."""

    path: str
    action: str
    commands: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}


def workflow_text(install: str = "evotree[report]") -> str:
    """The workflow YAML; ``install`` is the pip requirement that installs evotree."""
    if not install.strip() or any(c in install for c in "\"\n\\$`"):
        raise ReportError(f"--install must be a plain pip requirement, actually: {install!r}",
                          fix='e.g. --install "evotree[report]==0.3" or a git+https URL')
    return _TEMPLATE.format(install=install.strip())


def write_workflow(root: Path, *, path: str = WORKFLOW_PATH, force: bool = False,
                   install: str = "evotree[report]") -> CiInitResult:
    """Write the workflow under ``root``; an existing file is kept unless ``force``."""
    text = workflow_text(install)
    target = (root / path).resolve()
    if root.resolve() not in target.parents:
        raise ReportError(f"{path} is outside the repository", fix=f"pass a path inside {root}")
    exists = target.exists()
    if exists and not force:
        raise ReportError(f"{target} already exists", fix="pass --force to overwrite it", path=str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise ReportError(f"cannot write {target}: {exc.strerror or exc}", fix="check the folder's permissions") from None
    commands = ["evotree run", "evotree audit", "evotree diagnose", "evotree report --post", "evotree report --format html"]
    return CiInitResult(path=str(target), action="overwritten" if exists else "created", commands=commands)
