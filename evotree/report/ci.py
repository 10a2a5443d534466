"""``evotree ci init``: the GitHub Actions workflow that audits, diagnoses and reports on every
pull request from an ``evotree/*`` branch.

It runs on ``pull_request`` (never ``pull_request_target``): code from a fork never runs with a
write token, and the judge, thresholds and gates come from the champion and analyzers refs
fetched from the base repository, not from the pull request's branch.
"""

from __future__ import annotations

import configparser
import json
import os
import re
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from evotree.report.model import ReportError

__all__ = [
    "DISTRIBUTION",
    "DOMAIN_EXTRAS",
    "WORKFLOW_PATH",
    "CiInitResult",
    "install_requirement",
    "workflow_text",
    "write_workflow",
]

#: evotree's distribution name (the import name and the command are ``evotree``; ``evotree`` on the
#: package index is an unrelated project, so the workflow never installs a name from the index)
DISTRIBUTION = "evotree-rl"
#: the extras a workspace's domain needs in CI, beside ``report``
DOMAIN_EXTRAS = {"custom": (), "math": ("llm",), "gym": ("gym",)}
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")

WORKFLOW_PATH = ".github/workflows/evotree.yml"

_TEMPLATE = """\
# Written by `evotree ci init`: audit, diagnose and report on pull requests from evotree/* branches.
# The report is posted as one pull-request comment that later runs update (found by a hidden
# marker), with its plots inline: the job `plots` pushes the PNGs to the branch
# evotree-report-assets, which the comment links; the Markdown, its plots and the HTML report are
# also uploaded as the artifact `evotree-report`. Runs happen here only when the repository variable EVOTREE_RUN_SEEDS is set
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
      - name: Fetch the version tree (ledger, champion, analyzers, version branches)
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
        run: >-
          evotree report "$EVOTREE_VERSION" --format md --out evotree-report/ --post
          --plots-url-base "${{GITHUB_SERVER_URL:-https://github.com}}/$GITHUB_REPOSITORY/raw/evotree-report-assets/$EVOTREE_VERSION/${{GITHUB_RUN_ID:-local}}-${{GITHUB_RUN_ATTEMPT:-1}}"
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

  # The comment links its plots on the branch evotree-report-assets: this job pushes them there. It
  # alone may write contents, and it runs no code of the pull request (only git, on the artifact).
  plots:
    needs: evotree
    if: always() && startsWith(github.head_ref, 'evotree/') && github.event.pull_request.head.repo.full_name == github.repository
    runs-on: ubuntu-latest
    permissions:
      contents: write
    steps:
      - uses: actions/download-artifact@v4
        with:
          name: evotree-report
          path: evotree-report
      - name: Publish the plots on the branch evotree-report-assets
        env:
          GITHUB_TOKEN: ${{{{ secrets.GITHUB_TOKEN }}}}
        run: |
          dest="${{GITHUB_HEAD_REF#evotree/}}/$GITHUB_RUN_ID-$GITHUB_RUN_ATTEMPT"
          ls evotree-report/*.png >/dev/null 2>&1 || {{ echo "no plots to publish"; exit 0; }}
          auth="AUTHORIZATION: basic $(printf 'x-access-token:%s' "$GITHUB_TOKEN" | base64 -w0)"
          remote="$GITHUB_SERVER_URL/$GITHUB_REPOSITORY"
          for attempt in 1 2 3; do
            rm -rf assets && git init -q assets
            if git -C assets -c http.extraheader="$auth" fetch -q --depth=1 "$remote" evotree-report-assets; then
              git -C assets checkout -q -B evotree-report-assets FETCH_HEAD
            else
              git -C assets checkout -q --orphan evotree-report-assets
            fi
            mkdir -p "assets/$dest" && cp evotree-report/*.png "assets/$dest/"
            git -C assets add -A
            git -C assets -c user.name="evotree CI" -c user.email="evotree-ci@users.noreply.github.com" \
              commit -qm "evotree report plots: $dest" || exit 0
            git -C assets -c http.extraheader="$auth" push -q "$remote" HEAD:refs/heads/evotree-report-assets && exit 0
            sleep $((attempt * 5))
          done
          exit 1
"""


@dataclass
class CiInitResult:
    """What ``evotree ci init --json`` prints (schema: ``report-ci.schema.json``)."""

    path: str
    action: str
    commands: list[str]
    install: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}


def workflow_text(install: str) -> str:
    """The workflow YAML; ``install`` is the pip requirement that installs evotree (a path or a URL)."""
    if not install.strip() or any(c in install for c in '"\n\\$`'):
        raise ReportError(
            f"--install must be a plain pip requirement, actually: {install!r}",
            fix=f'e.g. --install "{DISTRIBUTION}[report] @ git+https://HOST/evotree.git@COMMIT"',
        )
    return _TEMPLATE.format(install=install.strip())


def _source_name(folder: Path) -> str | None:
    """The distribution name declared by the project in ``folder`` (setup.cfg), or None."""
    cfg = configparser.ConfigParser()
    try:
        cfg.read(folder / "setup.cfg", encoding="utf-8")
        return cfg.get("metadata", "name", fallback=None)
    except (OSError, configparser.Error, UnicodeDecodeError):
        return None


def _installed_source() -> tuple[Path | None, str | None]:
    """Where this evotree was installed from: a local source folder, or a ``git+URL@commit``."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
        text = dist.read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None, None
    if not text:
        return None, None
    try:
        data = json.loads(text)
    except ValueError:
        return None, None
    url = str(data.get("url") or "")
    vcs = data.get("vcs_info") or {}
    if vcs.get("vcs") == "git" and vcs.get("commit_id") and not url.startswith("file:"):
        return None, f"git+{url}@{vcs['commit_id']}"
    if url.startswith("file://"):
        return Path(url[len("file://") :]), None
    return None, None


def install_requirement(
    root: Path, *, domain: str = "custom", source: str | None = None, install: str | None = None
) -> str:
    """The pip requirement the workflow installs evotree with, with the extras ``domain`` needs.

    In order: ``install`` as given (a path or ``name @ URL``; a bare name would be resolved on the
    package index, where ``evotree`` is another project, so it is refused); ``source``, a folder
    inside the repository holding evotree's source (``./vendor/evotree[gym,report]``); the
    repository itself when it is evotree's source; the folder this evotree was installed from
    when it lies inside the repository; the git URL and commit pip recorded when it was installed
    from git. Anything else is refused: CI could not reach it.
    """
    extras = ",".join(["report", *DOMAIN_EXTRAS.get(domain, ())])
    root = root.resolve()
    if install is not None:
        workflow_text(install)  # the character checks first: nothing the shell would read
        match = _NAME.match(install)
        rest = match.group(3).strip() if match else ""
        local = install.strip().startswith((".", "/")) or "://" in install
        if match and not local and not rest.startswith("@"):
            raise ReportError(
                f"--install {install!r} names a package on the index"
                + (
                    ": `evotree` there is an unrelated project"
                    if match.group(1).lower() == "evotree"
                    else ""
                ),
                fix=f"install from a source CI can check out: --from PATH (evotree's source inside this repository) "
                f'or --install "{DISTRIBUTION}[{extras}] @ git+https://HOST/evotree.git@COMMIT"',
            )
        return install.strip()
    if source is not None:
        folder = (root / source).resolve()
        if folder != root and root not in folder.parents:
            raise ReportError(
                f"--from {source} is outside the repository", fix=f"pass a folder inside {root}"
            )
        if _source_name(folder) != DISTRIBUTION:
            raise ReportError(
                f"--from {source}: no evotree source there (no setup.cfg naming {DISTRIBUTION})",
                fix="pass the folder that holds evotree's setup.cfg, e.g. a git submodule",
            )
        rel = folder.relative_to(root).as_posix()
        return f"./{rel}[{extras}]" if rel != "." else f".[{extras}]"
    if _source_name(root) == DISTRIBUTION:
        return f".[{extras}]"
    folder, url = _installed_source()
    if folder is not None:
        folder = folder.resolve()
        if root in folder.parents:
            return f"./{folder.relative_to(root).as_posix()}[{extras}]"
    if url is not None:
        return f"{DISTRIBUTION}[{extras}] @ {url}"
    where = f" (installed from {folder}, outside this repository)" if folder is not None else ""
    raise ReportError(
        f"cannot tell where CI can install evotree from{where}",
        fix=f"add evotree's source to this repository (e.g. git submodule add URL vendor/evotree) and pass "
        f'--from vendor/evotree, or pass --install "{DISTRIBUTION}[{extras}] @ git+https://HOST/evotree.git@COMMIT"',
    )


def write_workflow(
    root: Path,
    *,
    path: str = WORKFLOW_PATH,
    force: bool = False,
    domain: str = "custom",
    source: str | None = None,
    install: str | None = None,
) -> CiInitResult:
    """Write the workflow under ``root``; an existing file is kept unless ``force``.

    ``domain``, ``source`` and ``install`` choose the install step (:func:`install_requirement`).
    """
    requirement = install_requirement(root, domain=domain, source=source, install=install)
    text = workflow_text(requirement)
    target = (root / path).resolve()
    if root.resolve() not in target.parents:
        raise ReportError(f"{path} is outside the repository", fix=f"pass a path inside {root}")
    exists = target.exists()
    if exists and not force:
        raise ReportError(
            f"{target} already exists", fix="pass --force to overwrite it", path=str(target)
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise ReportError(
            f"cannot write {target}: {exc.strerror or exc}", fix="check the folder's permissions"
        ) from None
    commands = [
        "evotree run",
        "evotree audit",
        "evotree diagnose",
        "evotree report --post",
        "evotree report --format html",
    ]
    return CiInitResult(
        path=str(target),
        action="overwritten" if exists else "created",
        commands=commands,
        install=requirement,
    )
