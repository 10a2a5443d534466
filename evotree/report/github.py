"""Create or update the report comment on a version's pull request through the GitHub REST API.

Configuration comes from the environment, as in GitHub Actions: ``GITHUB_TOKEN`` (or
``GH_TOKEN``), ``GITHUB_REPOSITORY`` (``owner/name``) and ``GITHUB_API_URL`` (default
``https://api.github.com``). The comment is found again by the hidden marker of the version
(:func:`evotree.report.model.marker`), so re-running CI edits it instead of adding another.
Only a comment the token's own user wrote is edited (``GET /user``'s ``login`` against the
comment's ``user.login``): anyone may paste the marker into a comment of their own, and that
comment is left alone (a new one is created). GitHub Actions' ``GITHUB_TOKEN`` cannot read
``/user`` (HTTP 403): with ``GITHUB_ACTIONS=true`` its comments' author, ``github-actions[bot]``,
is used; ``EVOTREE_GITHUB_LOGIN`` names the login outright (for another app's bot).
The token is sent only in the ``Authorization`` header and never appears in messages.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from evotree.report.model import ReportError, marker

__all__ = [
    "ACTIONS_LOGIN",
    "GitHubConfig",
    "PostResult",
    "github_config",
    "post_comment",
    "token_login",
]

_PAGE = 100
_MAX_PAGES = 30
#: the author of comments made with GitHub Actions' own GITHUB_TOKEN (which cannot read /user)
ACTIONS_LOGIN = "github-actions[bot]"


@dataclass(frozen=True)
class GitHubConfig:
    api_url: str
    repository: str
    token: str

    def __repr__(self) -> str:  # never print the token
        return f"GitHubConfig(api_url={self.api_url!r}, repository={self.repository!r}, token=***)"


@dataclass
class PostResult:
    """What posting did: ``action`` is ``created`` or ``updated``."""

    action: str
    pull_request: int
    comment_id: int
    url: str | None
    repository: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def github_config(env: Mapping[str, str]) -> GitHubConfig:
    """Read the token, repository and API URL from ``env``; say plainly what is missing."""
    token = env.get("GITHUB_TOKEN") or env.get("GH_TOKEN")
    if not token:
        raise ReportError(
            "no GitHub token: GITHUB_TOKEN (or GH_TOKEN) is not set, so the report cannot be posted",
            fix="in GitHub Actions pass `GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}` in env; "
            "locally export a token with pull-request write access, or drop --post",
        )
    repository = env.get("GITHUB_REPOSITORY", "")
    if repository.count("/") != 1 or not all(repository.split("/")):
        raise ReportError(
            f"GITHUB_REPOSITORY must be 'owner/name', actually: {repository!r}",
            fix="export GITHUB_REPOSITORY=owner/name (GitHub Actions sets it)",
        )
    api = (env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    if not api.startswith(("https://", "http://")):
        raise ReportError(
            f"GITHUB_API_URL must be an http(s) URL, actually: {api!r}",
            fix="unset it to use https://api.github.com",
        )
    return GitHubConfig(api_url=api, repository=repository, token=token)


def _request(
    cfg: GitHubConfig,
    method: str,
    path: str,
    body: dict[str, Any] | None = None,
    timeout: float = 30.0,
) -> tuple[Any, Mapping[str, str]]:
    url = cfg.api_url + path
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        url,
        data=data,
        method=method,
        headers={
            "Authorization": f"Bearer {cfg.token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "evotree-report",
            **({"Content-Type": "application/json"} if data is not None else {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
            return (json.loads(raw) if raw else None), response.headers
    except urllib.error.HTTPError as exc:
        detail = ""
        try:
            detail = json.loads(exc.read() or b"{}").get("message", "")
        except (ValueError, AttributeError):
            pass
        hint = {
            401: "the token is invalid or expired",
            403: "the token lacks pull-requests: write permission "
            "(or the comment belongs to someone else)",
            404: "the repository or pull request is not visible to this token",
        }.get(exc.code, "see GitHub's message")
        raise ReportError(
            f"GitHub API {method} {path} failed: HTTP {exc.code} {detail}".rstrip(),
            fix=hint,
            status=exc.code,
        ) from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ReportError(
            f"cannot reach the GitHub API at {cfg.api_url}: {reason}",
            fix="check the network and GITHUB_API_URL",
        ) from None


def find_pull_request(cfg: GitHubConfig, branch: str) -> int:
    """The number of the open pull request whose head is ``branch`` in this repository."""
    owner = cfg.repository.split("/")[0]
    query = urllib.parse.urlencode(
        {"head": f"{owner}:{branch}", "state": "open", "per_page": _PAGE}
    )
    pulls, _ = _request(cfg, "GET", f"/repos/{cfg.repository}/pulls?{query}")
    if not isinstance(pulls, list) or not pulls:
        raise ReportError(
            f"no open pull request from branch {branch} in {cfg.repository}",
            fix=f"open one (e.g. gh pr create --head {branch}) or pass --pr NUMBER",
            branch=branch,
        )
    return int(pulls[0]["number"])


def token_login(cfg: GitHubConfig, env: Mapping[str, str]) -> str:
    """The login of the token's own user: ``EVOTREE_GITHUB_LOGIN`` when set, else ``GET /user``
    (in GitHub Actions, where that is refused for the workflow token: ``github-actions[bot]``)."""
    explicit = (env.get("EVOTREE_GITHUB_LOGIN") or "").strip()
    if explicit:
        return explicit
    try:
        user, _ = _request(cfg, "GET", "/user")
    except ReportError as exc:
        if exc.details.get("status") == 403 and env.get("GITHUB_ACTIONS") == "true":
            return ACTIONS_LOGIN
        raise
    login = user.get("login") if isinstance(user, dict) else None
    if not isinstance(login, str) or not login:
        raise ReportError(
            "GitHub's GET /user answered without a login: the comment to update cannot be told "
            "from one someone else wrote",
            fix="set EVOTREE_GITHUB_LOGIN to the token's login",
        )
    return login


def _find_comment(cfg: GitHubConfig, number: int, tag: str, login: str) -> dict[str, Any] | None:
    """The first comment carrying ``tag`` that ``login`` wrote (others' comments with it are ignored)."""
    for page in range(1, _MAX_PAGES + 1):
        comments, _ = _request(
            cfg,
            "GET",
            f"/repos/{cfg.repository}/issues/{number}/comments?per_page={_PAGE}&page={page}",
        )
        if not isinstance(comments, list):
            return None
        for comment in comments:
            if not isinstance(comment, dict) or tag not in str(comment.get("body") or ""):
                continue
            user = comment.get("user")
            author = user.get("login") if isinstance(user, dict) else None
            if isinstance(author, str) and author.lower() == login.lower():
                return comment
        if len(comments) < _PAGE:
            return None
    return None


def post_comment(
    body: str, *, version: str, branch: str, env: Mapping[str, str], pull_request: int | None = None
) -> PostResult:
    """Update the pull request's comment carrying ``version``'s marker that the token's own user
    wrote (:func:`token_login`), or create one; a marker comment by anyone else is left alone."""
    tag = marker(version)
    if tag not in body:
        raise ReportError(
            "the report body has no evotree marker", fix="render it with render_markdown"
        )
    cfg = github_config(env)
    number = pull_request if pull_request is not None else find_pull_request(cfg, branch)
    existing = _find_comment(cfg, number, tag, token_login(cfg, env))
    if existing is not None:
        comment, _ = _request(
            cfg,
            "PATCH",
            f"/repos/{cfg.repository}/issues/comments/{int(existing['id'])}",
            {"body": body},
        )
        action = "updated"
    else:
        comment, _ = _request(
            cfg, "POST", f"/repos/{cfg.repository}/issues/{number}/comments", {"body": body}
        )
        action = "created"
    comment = comment if isinstance(comment, dict) else {}
    return PostResult(
        action=action,
        pull_request=number,
        comment_id=int(comment.get("id") or 0),
        url=comment.get("html_url"),
        repository=cfg.repository,
    )
