"""`report --post` edits only a comment the token's own user wrote.

A tiny local HTTP server stands in for the GitHub REST API (the external service); the code under
test is evotree's own :func:`evotree.report.github.post_comment`, unchanged.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import pytest
from json_stub import JsonStub, Request

from evotree.report.github import post_comment
from evotree.report.model import ReportError, marker

TOKEN = "ghp_owner_test_token"


class _GitHub(JsonStub):
    """Pull request 5's comments; ``/user`` answers ``login`` (or ``user_status`` when set)."""

    def __init__(self, login: str, *, user_status: int = 200) -> None:
        super().__init__()
        self.login, self.user_status = login, user_status
        self.comments: list[dict[str, Any]] = []
        self.next_id = 100

    def route(self, request: Request) -> tuple[int, Any]:
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return 401, {"message": "Bad credentials"}
        method, parts, body = request.method, request.parts, request.body()
        if parts == ["user"] and method == "GET":
            if self.user_status != 200:
                return self.user_status, {"message": "Resource not accessible by integration"}
            return 200, {"login": self.login, "id": 1}
        if parts[:5] == ["repos", "acme", "recipes", "issues", "5"] and parts[5:] == ["comments"]:
            if method == "GET":
                query = parse_qs(request.url.query)
                page, per = int(query["page"][0]), int(query["per_page"][0])
                return 200, self.comments[(page - 1) * per : page * per]
            self.next_id += 1
            comment = {"id": self.next_id, "body": body["body"], "user": {"login": self.login}}
            self.comments.append(comment)
            return 201, comment
        if method == "PATCH" and parts[:5] == ["repos", "acme", "recipes", "issues", "comments"]:
            for comment in self.comments:
                if comment["id"] == int(parts[5]):
                    if comment["user"]["login"].lower() != self.login.lower():  # GitHub refuses too
                        return 403, {"message": "Must have admin rights"}
                    comment["body"] = body["body"]
                    return 200, comment
        return 404, {"message": "Not Found"}


def _env(api: _GitHub, **extra: str) -> dict[str, str]:
    return {
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "acme/recipes",
        "GITHUB_API_URL": api.url,
        **extra,
    }


def _body(text: str) -> str:
    return f"{marker('v1')}\n{text}"


def test_a_planted_marker_comment_by_someone_else_is_left_alone() -> None:
    with _GitHub("evotree-ci") as api:
        planted = {
            "id": 7,
            "body": _body("click here: http://evil.example"),
            "user": {"login": "mallory"},
        }
        api.comments.append(planted)
        first = post_comment(
            _body("report one"), version="v1", branch="evotree/v1", env=_env(api), pull_request=5
        )
        assert first.action == "created" and first.comment_id != 7
        assert planted["body"] == _body("click here: http://evil.example")  # untouched
        assert not [m for m, p in api.requests if m == "PATCH"]
        # the second post finds the token user's own comment (after the planted one) and edits it
        second = post_comment(
            _body("report two"), version="v1", branch="evotree/v1", env=_env(api), pull_request=5
        )
        assert second.action == "updated" and second.comment_id == first.comment_id
        ours = [c for c in api.comments if c["id"] == first.comment_id][0]
        assert ours["body"] == _body("report two") and planted["body"].endswith("evil.example")
        assert len(api.comments) == 2
        assert ("GET", "/user") in api.requests


def test_login_comparison_is_case_insensitive_and_explicit_login_wins() -> None:
    with _GitHub("Evotree-CI") as api:
        api.comments.append({"id": 3, "body": _body("old"), "user": {"login": "evotree-ci"}})
        result = post_comment(_body("new"), version="v1", branch="b", env=_env(api), pull_request=5)
        assert result.action == "updated" and api.comments[0]["body"] == _body("new")
        # EVOTREE_GITHUB_LOGIN names the author outright: a comment of another login is not edited
        api.requests.clear()
        result = post_comment(
            _body("newer"),
            version="v1",
            branch="b",
            env=_env(api, EVOTREE_GITHUB_LOGIN="someone"),
            pull_request=5,
        )
        assert result.action == "created" and api.comments[0]["body"] == _body("new")
        assert ("GET", "/user") not in api.requests


def test_actions_token_without_user_access() -> None:
    with _GitHub("github-actions[bot]", user_status=403) as api:
        api.comments.append({"id": 9, "body": _body("planted"), "user": {"login": "mallory"}})
        api.comments.append(
            {"id": 10, "body": _body("ours"), "user": {"login": "github-actions[bot]"}}
        )
        result = post_comment(
            _body("fresh"),
            version="v1",
            branch="b",
            env=_env(api, GITHUB_ACTIONS="true"),
            pull_request=5,
        )
        assert result.action == "updated" and result.comment_id == 10
        assert api.comments[0]["body"] == _body("planted")
        # outside Actions a refused /user is an error, never a guess
        with pytest.raises(ReportError) as err:
            post_comment(_body("x"), version="v1", branch="b", env=_env(api), pull_request=5)
        assert "HTTP 403" in err.value.message and TOKEN not in err.value.message
