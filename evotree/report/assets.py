"""Where the PR comment's plots live: a GitHub comment cannot hold data URIs nor local files, so its
images must be URLs. Two ways, as CML does it:

* :func:`links_from_base`: the user (or the workflow) publishes the PNGs written beside the Markdown
  at a URL, and the comment links ``URL/<file>`` (``evotree report --plots-url-base URL``);
* :func:`publish_to_branch`: evotree commits the PNGs to a dedicated orphan branch of the repository
  itself (``evotree-report-assets``, content-addressed paths, each commit on top of the last so old
  comments keep working) and pushes it; the comment links them by commit,
  ``https://github.com/OWNER/REPO/raw/<sha>/<path>`` (``evotree report --post --publish-plots``).

The branch is written with git plumbing and a private index: the work tree, the index and HEAD
of the repository are not touched.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from evotree.report.model import ReportError

__all__ = [
    "ASSETS_BRANCH",
    "asset_path",
    "github_repository",
    "links_from_base",
    "publish_to_branch",
]

#: the orphan branch that holds the comment's plots
ASSETS_BRANCH = "evotree-report-assets"
_URL = re.compile(r"^https?://[^\s\"'<>]+$")
_GITHUB_REMOTE = re.compile(
    r"^(?:https://(?:[^@/]+@)?github\.com/|git@github\.com:|ssh://git@github\.com/)"
    r"([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$"
)


def links_from_base(base: str, files: Mapping[str, str]) -> dict[str, str]:
    """name -> ``base/<file name>`` for plots the user publishes at ``base`` (an http(s) URL)."""
    base = base.strip()
    if not _URL.match(base):
        raise ReportError(
            f"--plots-url-base must be an http(s) URL, actually: {base!r}",
            fix="pass the URL where the PNGs beside the Markdown are published, "
            "e.g. https://example.org/reports/v3",
        )
    return {name: f"{base.rstrip('/')}/{Path(file).name}" for name, file in files.items()}


def asset_path(version: str, name: str, content: bytes) -> str:
    """Where a plot goes on the assets branch: by version and content, so a path never changes meaning."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", version) or "version"
    return f"{safe}/{hashlib.sha256(content).hexdigest()[:16]}/{name}.png"


def github_repository(root: Path, remote: str, env: Mapping[str, str]) -> str:
    """``owner/name``: ``GITHUB_REPOSITORY`` (as in Actions), else parsed from the remote's GitHub URL."""
    repository = env.get("GITHUB_REPOSITORY", "")
    if repository.count("/") == 1 and all(repository.split("/")):
        return repository
    url = _git(root, "remote", "get-url", remote, check=False).strip()
    match = _GITHUB_REMOTE.match(url)
    if not match:
        raise ReportError(
            f"cannot tell the GitHub repository of remote {remote!r} ({url or 'no URL'})",
            fix="export GITHUB_REPOSITORY=owner/name, or use --plots-url-base URL",
        )
    return match.group(1)


def _git(
    root: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    data: bytes | None = None,
) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), "-c", "core.hooksPath=/dev/null", *args],
        input=data,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    if check and proc.returncode != 0:
        raise ReportError(
            f"git {args[0]} failed while publishing the plots: "
            f"{proc.stderr.decode(errors='replace').strip()[-300:]}",
            fix="check the remote and the token's contents: write permission, or use --plots-url-base",
        )
    return proc.stdout.decode(errors="replace")


def publish_to_branch(
    root: Path,
    version: str,
    files: Mapping[str, str],
    *,
    remote: str = "origin",
    branch: str = ASSETS_BRANCH,
    env: Mapping[str, str] | None = None,
    push: bool = True,
) -> dict[str, str]:
    """Commit the PNGs ``files`` (name -> path) to ``branch`` of ``remote`` and return name -> URL.

    The new commit's parent is the branch's tip on the remote (fetched; none for the first), its
    tree that tip's plus the new files, so every link an older comment holds stays reachable.
    ``GITHUB_TOKEN`` (or ``GH_TOKEN``) in ``env``, when set, authenticates the fetch and the push
    (an HTTP header for this command only; never written to the repository's config). URLs:
    ``GITHUB_SERVER_URL`` (default ``https://github.com``) ``/OWNER/REPO/raw/<commit>/<path>``.
    """
    env = dict(env if env is not None else os.environ)
    repository = github_repository(root, remote, env)
    server = (env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    token = env.get("GITHUB_TOKEN") or env.get("GH_TOKEN")
    auth: list[str] = []
    if token:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        auth = ["-c", f"http.extraheader=AUTHORIZATION: basic {basic}"]
    ref = f"refs/heads/{branch}"
    tracking = f"refs/evotree-tmp/report-assets-{os.getpid()}"
    if push:
        parent = _fetched_tip(root, auth, remote, ref, tracking)
    else:
        parent = _git(root, "rev-parse", "--verify", "-q", ref, check=False).strip() or None
    tree, links = _assets_tree(root, version, files, parent)
    commit = _git(
        root,
        "commit-tree",
        tree,
        *(["-p", parent] if parent else []),
        "-m",
        f"evotree report plots of {version}",
        env=_IDENTITY,
    ).strip()
    try:
        if push:
            _push_assets(root, auth, remote, branch, commit, token)
        else:
            _git(root, "update-ref", ref, commit)
    finally:
        _git(root, "update-ref", "-d", tracking, check=False)
    return {name: f"{server}/{repository}/raw/{commit}/{path}" for name, path in links.items()}


#: git asks for no password: a missing credential fails at once
_QUIET = {"GIT_TERMINAL_PROMPT": "0"}
#: who the assets branch's commits are by
_IDENTITY = {
    "GIT_AUTHOR_NAME": "evotree report",
    "GIT_AUTHOR_EMAIL": "evotree-report@users.noreply.github.com",
    "GIT_COMMITTER_NAME": "evotree report",
    "GIT_COMMITTER_EMAIL": "evotree-report@users.noreply.github.com",
}


def _fetched_tip(root: Path, auth: list[str], remote: str, ref: str, tracking: str) -> str | None:
    """The branch's tip on ``remote``, fetched into the temporary ref ``tracking`` (None: the
    remote has no such branch yet, or the fetch failed)."""
    fetched = subprocess.run(
        ["git", "-C", str(root), *auth, "fetch", "-q", "--no-tags", remote, f"+{ref}:{tracking}"],
        capture_output=True,
        env={**os.environ, **_QUIET},
        timeout=120,
    )
    if fetched.returncode != 0:
        return None
    return _git(root, "rev-parse", "--verify", "-q", tracking, check=False).strip() or None


def _assets_tree(
    root: Path, version: str, files: Mapping[str, str], parent: str | None
) -> tuple[str, dict[str, str]]:
    """The tree of ``parent`` plus the new PNGs at their content-addressed paths, written with a
    private index (the repository's index untouched); and name -> path."""
    links: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="evotree-assets-") as scratch:
        index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        if parent:
            _git(root, "read-tree", parent, env=index)
        for name, path in files.items():
            content = Path(path).read_bytes()
            target = asset_path(version, name, content)
            blob = _git(root, "hash-object", "-w", "--stdin", data=content).strip()
            _git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{target}", env=index)
            links[name] = target
        tree = _git(root, "write-tree", env=index).strip()
    return tree, links


def _push_assets(
    root: Path, auth: list[str], remote: str, branch: str, commit: str, token: str | None
) -> None:
    """Push ``commit`` to ``branch`` of ``remote`` (no hook runs); a refusal is a
    :class:`ReportError` with the token masked."""
    pushed = subprocess.run(
        [
            "git",
            "-C",
            str(root),
            "-c",
            "core.hooksPath=/dev/null",
            *auth,
            "push",
            "-q",
            remote,
            f"{commit}:refs/heads/{branch}",
        ],
        capture_output=True,
        env={**os.environ, **_QUIET},
        timeout=120,
    )
    if pushed.returncode != 0:
        message = pushed.stderr.decode(errors="replace").strip()[-300:]
        if token:
            message = message.replace(token, "***")
        raise ReportError(
            f"cannot push the plots to {branch} of {remote}: {message}",
            fix="the token needs contents: write on the repository; or publish the PNGs "
            "yourself and pass --plots-url-base URL",
        )
