"""`evotree report`: content checked against the evidence it summarizes, degraded sections,
the marker-based PR comment against a local stub of the GitHub API, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
from conftest import Cli, commit_file, validate
from json_stub import JsonStub, Request
from test_runs import make_run_repo

from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions

HYPOTHESIS = "more skill <script>alert(1)</script> | <!-- evotree-report version=v0 -->"


@pytest.fixture(scope="module")
def rws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """v0 (skill 0.5) and v1 (skill 0.8), two seeds each, v1 diagnosed; v2 branched, never run."""
    ws = Workspace.open(make_run_repo(tmp_path_factory.mktemp("report") / "w"))
    v1 = create_version(ws, hypothesis=HYPOTHESIS, parent="champion")
    commit_file(ws.root / v1.worktree, "recipe.toml", "skill = 0.8\nsteps = 3\n", "more skill")
    records = run_versions(ws, ["v0", "v1"], seeds=2)
    assert all(r.status == "succeeded" for r in records), [r.error for r in records]
    Cli(ws.root)("diagnose", "v1")
    create_version(ws, hypothesis="not run yet", parent="v1")
    return ws


def _sql(ws: Workspace, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    from evotree.harness.query import connect
    from evotree.harness.records import runs_dir

    con = connect(runs_dir(ws))
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def test_report_data_matches_the_evidence(rws: Workspace) -> None:
    from evotree.diagnostics.compare import compare
    from evotree.report.collect import build_report

    data = build_report(rws, "v1")
    events = [
        e for e in rws.ledger.entries(version="v1") if e.event.kind == "audit"
    ]  # newest first
    validate(data.to_dict(), "report")
    assert data.version == "v1" and data.against == "v0"
    s = data.scores
    # the means are the judge's scores of the evals view, independently of compare()
    ((mean_v0,),) = _sql(
        rws, "SELECT avg(score) FROM evals WHERE version = 'v0' AND split = 'validation'"
    )
    ((mean_v1,),) = _sql(
        rws, "SELECT avg(score) FROM evals WHERE version = 'v1' AND split = 'validation'"
    )
    assert (s["mean_a"], s["mean_b"]) == (pytest.approx(mean_v0), pytest.approx(mean_v1))
    assert (mean_v0, mean_v1) == (pytest.approx(0.5), pytest.approx(0.8))
    expected = compare(rws, "v0", "v1")
    assert s["delta"] == pytest.approx(expected.delta) and s["ci"] == pytest.approx(expected.ci)
    assert s["p_value"] == pytest.approx(expected.p_value) and s["decision"] == expected.decision
    assert s["n_seeds"] == [2, 2] and s["n_tasks"] == 10
    # per-task deltas: 3 tasks flip from 0 to 1 (tasks 6..8 of 10 are solved at skill 0.8, not at 0.5)
    deltas = {t["task"]: t["delta"] for t in data.per_task["tasks"]}
    assert sum(deltas.values()) / len(deltas) == pytest.approx(s["delta"])
    assert data.per_task["counts"] == {"improved": 3, "worse": 0, "unchanged": 7}
    assert sorted(t for t, d in deltas.items() if d > 0) == ["val-5", "val-6", "val-7"]
    # curves: rewards per group are [skill, 0, skill, 1] at steps 1..3
    assert data.curves["reward"]["v1"] == [
        [1, pytest.approx(0.65)],
        [2, pytest.approx(0.65)],
        [3, pytest.approx(0.65)],
    ]
    assert data.curves["reward"]["v0"] == [[step, pytest.approx(0.5)] for step in (1, 2, 3)]
    assert data.curves["dead_groups"]["v1"] == [[1, 0.0], [2, 0.0], [3, 0.0]]
    # findings: exactly the lines of the diagnose file, grouped by layer
    lines = [
        json.loads(x) for x in (rws.state_dir / "findings" / "v1.jsonl").read_text().splitlines()
    ]
    assert data.findings["total"] == len(lines) > 0
    assert sorted(
        f["code"] for items in data.findings["by_layer"].values() for f in items
    ) == sorted(x["code"] for x in lines)
    assert all(
        f["layer"] == layer for layer, items in data.findings["by_layer"].items() for f in items
    )
    # lineage: the tree, with v1 marked as the subject and v0 as champion
    nodes = {n["id"]: n for n in data.lineage["nodes"]}
    assert set(nodes) == {"v0", "v1", "v2"} and nodes["v1"]["subject"] and nodes["v0"]["champion"]
    assert nodes["v2"]["parents"] == ["v1"] and nodes["v1"]["score"] == pytest.approx(0.8)
    assert (
        data.verdict["status"] == expected.decision and f"{s['delta']:+.3f}" in data.verdict["line"]
    )
    # gates: as the gates package evaluates them, without promoting
    from evotree.gates.evaluation import evaluate_gates

    gates = evaluate_gates(rws, "v1").to_dict()
    assert data.gates["available"] and data.gates["passed"] == gates["passed"]
    assert [(g["name"], g["status"]) for g in data.gates["gates"]] == [
        (g["name"], g["status"]) for g in gates["gates"]
    ]
    assert rws.ledger.snapshot().meta["champion"] == "v0"  # evaluating gates promoted nothing
    # audit: the one the gate evaluation ran and recorded, as evotree.harness.audit computes it
    from evotree.harness.audit import audit_version

    audit = audit_version(rws, "v1", record=False).to_dict()
    assert (
        events == []
    )  # a report is a read: the gate evaluation's clean audit is shown, not recorded
    assert data.audit["available"] and data.audit["source"] == "computed by the gate evaluation"
    assert data.audit["passed"] == audit["passed"] and data.audit["raw_score"] == pytest.approx(
        audit["raw_score"]
    )
    assert [g["status"] for g in data.gates["gates"] if g["name"] == "audit"] == [
        "pass" if audit["passed"] else "fail"
    ]
    # without the audit nothing is written, the gates say the audit was not run, and the report
    # shows the last recorded audit (`evotree audit v1` records one)
    Cli(rws.root)("audit", "v1")
    after = [e for e in rws.ledger.entries(version="v1") if e.event.kind == "audit"]
    quick = build_report(rws, "v1", run_audit=False)
    assert [g["status"] for g in quick.gates["gates"] if g["name"] == "audit"] == ["unavailable"]
    assert quick.audit["source"].startswith(f"ledger event {after[0].commit[:10]}")
    assert (
        next(iter(rws.ledger.entries(version="v1"))).commit == after[0].commit
    )  # nothing written since


def test_markdown_report_with_plots(rws: Workspace, tmp_path: Path) -> None:
    out = tmp_path / "pr" / "comment.md"
    result = Cli(rws.root).json("report", "v1", "--out", str(out))
    validate(result, "report-output")
    text = out.read_text()
    assert text.splitlines()[0] == "<!-- evotree-report version=v1 -->"
    assert text.count("<!-- evotree-report") == 1  # the hypothesis cannot forge a second marker
    assert "<script>" not in text and "&lt;script&gt;" in text
    s = result["report"]["scores"]
    assert f"| mean score | {s['mean_a']:.3f} | {s['mean_b']:.3f} | {s['delta']:+.3f} |" in text
    assert result["verdict"]["line"].split(":")[0] in text
    for items in result["report"]["findings"]["by_layer"].values():
        for finding in items:
            assert f"`{finding['code']}`" in text
    assert "```mermaid\ngraph TD" in text and "n0 --> n1" in text and "n1 --> n2" in text
    for gate in result["report"]["gates"]["gates"]:
        assert f" {gate['name']} ({gate['status']}): " in text
    # plots: real PNGs beside the Markdown, linked by relative name
    # no entropy signal; one plot per group of the recorded train signals (loss, reward, sees_*)
    assert set(result["report"]["plots"]) == {
        "scores",
        "reward",
        "dead_groups",
        "task_delta",
        "signals-reward",
        "signals-loss",
        "signals-other",
    }
    # the scores plot's points are the runs' (seeds') means, which average to the table's means
    runs = result["report"]["scores"]["run_means"]
    assert len(runs["a"]) == len(runs["b"]) == 2
    assert sum(runs["b"]) / 2 == pytest.approx(s["mean_b"]) and sum(runs["a"]) / 2 == pytest.approx(
        s["mean_a"]
    )
    assert len(result["report"]["curves"]["reward_runs"]["v1"]) == 2  # the reward curve's seed band
    for _name, file in result["report"]["plots"].items():
        png = out.parent / file
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2000
        assert f'<img src="{file}" width="360" height="206"' in text  # inline, at a comment's size
    assert "No data for: Policy entropy per step" in text
    assert result["files"][0] == str(out) and len(result["files"]) == 1 + len(
        result["report"]["plots"]
    )


def test_the_report_shows_what_changed_against_the_compared_version(rws: Workspace) -> None:
    """The recipe diff (evotree diff) is in the data, the Markdown and the HTML, collapsed."""
    from evotree.report.collect import build_report
    from evotree.report.html import render_html
    from evotree.report.markdown import render_markdown

    data = build_report(rws, "v1", run_audit=False)
    diff = data.recipe_diff
    assert diff["available"] and (diff["a"], diff["b"]) == ("v0", "v1")
    assert {"path": "recipe.toml", "param": "skill", "a": 0.5, "b": 0.8} in diff["params"]
    md = render_markdown(data)
    assert (
        "<details><summary><b>What changed</b> (v0 → v1): 1 parameter(s), 1 file(s)</summary>" in md
    )
    assert "| recipe.toml | `skill` | 0.5 | 0.8 |" in md
    html = render_html(data, {})
    assert (
        '<details id="recipe-diff">' in html
        and "<code>skill</code></td><td>0.5</td><td>0.8</td>" in html
    )


def test_report_without_evidence_says_what_is_missing(rws: Workspace) -> None:
    cli = Cli(rws.root)
    # with --no-audit nothing is written, and no audit was ever recorded for v2: said so
    quick = cli.json("report", "v2", "--format", "json", "--no-audit")["report"]
    assert (
        not quick["audit"]["available"]
        and "no audit recorded for v2 (run: evotree audit v2)" in quick["audit"]["reason"]
    )
    result = cli.json("report", "v2", "--format", "json")
    report = json.loads(Path(result["path"]).read_text())
    assert report == {**report, "version": "v2"}
    validate(report, "report")
    assert result["path"].endswith(".evotree/reports/v2/report.json")
    assert report["verdict"]["status"] == "not_compared"
    assert not report["scores"]["available"] and "no scored run" in report["scores"]["reason"]
    assert (
        not report["findings"]["available"]
        and "evotree diagnose v2" in report["findings"]["reason"]
    )
    assert report["curves"]["reward"] == {"v0": [[s, pytest.approx(0.5)] for s in (1, 2, 3)]}
    # the champion against itself: compared with nothing, and says how to fix it
    own = cli.json("report", "v0", "--format", "json")
    assert "--against" in own["report"]["scores"]["reason"]
    against = cli.json("report", "v1", "--against", "v2", "--format", "json")
    assert against["against"] == "v2" and against["verdict"]["status"] == "not_compared"


def test_report_bad_input_writes_nothing(rws: Workspace, tmp_path: Path) -> None:
    cli = Cli(rws.root)
    err = cli.json("report", "v1", "--against", "v99", "--out", str(tmp_path / "x.md"), code=5)
    assert err["error"]["code"] == "unknown_version" and not (tmp_path / "x.md").exists()
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    err = cli.json("report", "v1", "--out", str(blocker / "r.md"), code=34)
    assert err["error"]["code"] == "report_error" and "--out" in err["error"]["fix"]
    assert blocker.read_text() == "not a folder"
    cli("report", "v1", "--format", "pdf", code=2)


# ----------------------------------------------------------------------------- GitHub stub
class _Stub(JsonStub):
    """A tiny GitHub REST API: pulls by head, issue comments (list, create, update)."""

    def __init__(self, token: str, pulls: dict[str, int]) -> None:
        super().__init__()
        self.token, self.pulls = token, pulls
        self.comments: dict[int, list[dict[str, Any]]] = {n: [] for n in pulls.values()}
        self.next_id = 1000

    def route(self, request: Request) -> tuple[int, Any]:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return 401, {"message": "Bad credentials"}
        method, parts, body = request.method, request.parts, request.body()
        if method == "GET" and parts == [
            "user"
        ]:  # the token's own user (only its comments are edited)
            return 200, {"login": "evotree-ci"}
        if parts[:3] != ["repos", "acme", "recipes"]:
            return 404, {"message": "Not Found"}
        rest = parts[3:]
        if method == "GET" and rest == ["pulls"]:
            head = parse_qs(request.url.query)["head"][0]
            owner, branch = head.split(":", 1)
            found = (
                [{"number": self.pulls[branch]}] if owner == "acme" and branch in self.pulls else []
            )
            return 200, found
        if rest[:1] == ["issues"] and rest[2:] == ["comments"]:
            number = int(rest[1])
            if method == "GET":
                query = parse_qs(request.url.query)
                page, per = int(query["page"][0]), int(query["per_page"][0])
                return 200, self.comments[number][(page - 1) * per : page * per]
            self.next_id += 1
            comment = {
                "id": self.next_id,
                "body": body["body"],
                "html_url": f"http://pr/{number}#{self.next_id}",
                "user": {"login": "evotree-ci"},
            }
            self.comments[number].append(comment)
            return 201, comment
        if method == "PATCH" and rest[:2] == ["issues", "comments"]:
            for comments in self.comments.values():
                for comment in comments:
                    if comment["id"] == int(rest[2]):
                        comment["body"] = body["body"]
                        return 200, comment
        return 404, {"message": "Not Found"}


def test_post_creates_then_updates_its_own_comment(
    rws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "ghs_secret_token_value"
    with _Stub(token, {"evotree/v1": 7}) as stub:
        # someone else's comment, and 120 others before ours: the marker is found across pages
        stub.comments[7].append({"id": 1, "body": "LGTM"})
        stub.comments[7] += [{"id": 2 + i, "body": f"note {i}"} for i in range(120)]
        for key, value in {
            "GITHUB_TOKEN": token,
            "GITHUB_REPOSITORY": "acme/recipes",
            "GITHUB_API_URL": stub.url,
        }.items():
            monkeypatch.setenv(key, value)
        cli = Cli(rws.root)
        first = cli.json("report", "v1", "--post", "--no-audit")
        assert first["posted"]["action"] == "created" and first["posted"]["pull_request"] == 7
        ours = [c for c in stub.comments[7] if "<!-- evotree-report version=v1 -->" in c["body"]]
        assert len(ours) == 1 and ours[0]["id"] == first["posted"]["comment_id"]
        assert "### Scores" in ours[0]["body"] and "evotree-report` artifact" in ours[0]["body"]
        assert (
            "![" not in ours[0]["body"] and "<img" not in ours[0]["body"]
        )  # local PNGs cannot be in a comment
        ours[0]["body"] = (
            "<!-- evotree-report version=v1 -->\nold report"  # found again by its marker
        )
        second = cli.json("report", "v1", "--post", "--no-audit")
        assert second["posted"] == {**first["posted"], "action": "updated"}
        assert len(stub.comments[7]) == 122 and "old report" not in ours[0]["body"]
        assert stub.comments[7][0]["body"] == "LGTM"
        assert [m for m, _ in stub.requests].count("POST") == 1 and [
            m for m, _ in stub.requests
        ].count("PATCH") == 1
        # no pull request from the branch: said plainly, exit 34
        no_pr = cli("report", "v2", "--post", "--no-audit", code=34)
        assert "no open pull request from branch evotree/v2 in acme/recipes" in no_pr.output
        # an explicit --pr skips the lookup; a bad token is HTTP 401, and the token is never printed
        monkeypatch.setenv("GITHUB_TOKEN", "wrong-token")
        bad = cli("report", "v1", "--post", "--pr", "7", "--no-audit", code=34)
        assert (
            "HTTP 401" in bad.output and "wrong-token" not in bad.output and token not in bad.output
        )
        # no token at all
        monkeypatch.delenv("GITHUB_TOKEN")
        monkeypatch.delenv("GH_TOKEN", raising=False)
        out = rws.root / "no-token.md"
        err = cli.json("report", "v1", "--post", "--out", str(out), code=34)
        assert (
            "no GitHub token" in err["error"]["message"] and "GITHUB_TOKEN" in err["error"]["fix"]
        )
        assert not out.exists()  # refused before any work: nothing written


def test_post_unreachable_api_is_a_clear_error(
    rws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as sock:  # a port with nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/recipes")
    monkeypatch.setenv("GITHUB_API_URL", f"http://127.0.0.1:{port}")
    err = Cli(rws.root).json("report", "v1", "--post", "--no-audit", code=34)
    assert "cannot reach the GitHub API" in err["error"]["message"]
    monkeypatch.setenv("GITHUB_REPOSITORY", "no-slash")
    err = Cli(rws.root).json("report", "v1", "--post", code=34)
    assert "owner/name" in err["error"]["message"]
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/recipes")
    monkeypatch.setenv("GITHUB_API_URL", "file:///etc/passwd")
    err = Cli(rws.root).json("report", "v1", "--post", code=34)
    assert "http(s) URL" in err["error"]["message"]


def test_the_comment_links_its_plots_where_they_are_published(
    rws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--plots-url-base: the PNGs beside the Markdown, linked at that URL; --publish-plots: committed
    to the branch evotree-report-assets of origin (content-addressed, on top of the last commit) and
    linked by commit; a push that fails still posts, saying where the plots are."""
    import subprocess

    from evotree.report.assets import ASSETS_BRANCH

    cli = Cli(rws.root)
    token = "ghs_plots_token"
    remote = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "-C", str(rws.root), "remote", "add", "origin", str(remote)], check=True)
    try:
        with _Stub(token, {"evotree/v1": 7}) as stub:
            for key, value in {
                "GITHUB_TOKEN": token,
                "GITHUB_REPOSITORY": "acme/recipes",
                "GITHUB_API_URL": stub.url,
                "GITHUB_SERVER_URL": "https://github.example",
            }.items():
                monkeypatch.setenv(key, value)
            base = "https://example.org/reports/v1"
            out = f"{tmp_path}/md/"
            first = cli.json(
                "report", "v1", "--no-audit", "--post", "--out", out, "--plots-url-base", base
            )
            body = stub.comments[7][0]["body"]
            assert f'<img src="{base}/report-scores.png" width="360"' in body
            assert body.index("<img") < body.index("### Scores")  # right under the verdict
            assert first["posted"]["action"] == "created"
            cli(
                "report",
                "v1",
                "--no-audit",
                "--post",
                "--out",
                out,
                "--plots-url-base",
                "file:///etc",
                code=34,
            )
            cli("report", "v1", "--format", "html", "--plots-url-base", base, code=34)
            cli("report", "v1", "--publish-plots", code=2)  # only with --post
            # published on the assets branch of origin, linked by commit
            second = cli.json(
                "report", "v1", "--no-audit", "--post", "--out", out, "--publish-plots"
            )
            assert second["posted"]["action"] == "updated"
            body = stub.comments[7][0]["body"]
            import re

            links = re.findall(
                r'<img src="(https://github\.example/acme/recipes/raw/([0-9a-f]{40})/([^"]+))"',
                body,
            )
            assert len(links) == len(second["report"]["plots"]) == 7  # 4 plots, 3 groups of signals
            commit = links[0][1]
            tip = subprocess.run(
                ["git", "-C", str(remote), "rev-parse", f"refs/heads/{ASSETS_BRANCH}"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            assert tip == commit
            for _, _, path in links:
                shown = subprocess.run(
                    ["git", "-C", str(remote), "cat-file", "blob", f"{commit}:{path}"],
                    capture_output=True,
                    check=True,
                ).stdout
                assert shown[:8] == b"\x89PNG\r\n\x1a\n" and path.startswith("v1/")
                name = path.rsplit("/", 1)[1]
                assert shown == (tmp_path / "md" / f"report-{name}").read_bytes()
            # the next publication builds on the last (old links stay reachable); the checkout is untouched
            status = subprocess.run(
                ["git", "-C", str(rws.root), "status", "--porcelain"],
                capture_output=True,
                text=True,
            ).stdout
            cli.json("report", "v1", "--no-audit", "--post", "--out", out, "--publish-plots")
            parents = subprocess.run(
                ["git", "-C", str(remote), "rev-list", "--count", ASSETS_BRANCH],
                capture_output=True,
                text=True,
            ).stdout.strip()
            assert parents == "2"
            assert (
                subprocess.run(
                    ["git", "-C", str(rws.root), "status", "--porcelain"],
                    capture_output=True,
                    text=True,
                ).stdout
                == status
            )
            # a push that fails: the comment is still posted, and says where the plots are
            subprocess.run(
                [
                    "git",
                    "-C",
                    str(rws.root),
                    "remote",
                    "set-url",
                    "origin",
                    str(tmp_path / "nowhere"),
                ],
                check=True,
            )
            third = cli.json(
                "report", "v1", "--no-audit", "--post", "--out", out, "--publish-plots"
            )
            body = stub.comments[7][0]["body"]
            assert third["posted"]["action"] == "updated" and "could not be published" in body
            assert "<img" not in body and token not in body
    finally:
        subprocess.run(["git", "-C", str(rws.root), "remote", "remove", "origin"], check=False)


def test_per_environment_delta_when_the_tasks_name_one(tmp_path: Path) -> None:
    """Tasks ``ENV#i`` (the gym domain's episodes) give a Δ per environment: data, PNG, Plotly figure."""
    from evotree.report.collect import _task_groups
    from evotree.report.interactive import figures, plotly_available
    from evotree.report.model import ReportData
    from evotree.report.plots import write_plots

    tasks = [
        {"task": f"{env}#{i}", "a": 0.5, "b": 0.5 + step * i, "delta": step * i}
        for env, step in (("CartPole-v1", 0.1), ("Hopper-v5", -0.2))
        for i in range(3)
    ]
    groups = _task_groups(tasks)
    assert [(g["group"], g["n_tasks"]) for g in groups] == [("CartPole-v1", 3), ("Hopper-v5", 3)]
    assert [g["delta"] for g in groups] == [pytest.approx(0.1), pytest.approx(-0.2)]
    assert _task_groups([{"task": "val-1", "a": 0, "b": 0, "delta": 0}]) == []  # no ENV in the ids
    data = ReportData(
        version="v1",
        against="v0",
        generated_at="t",
        verdict={},
        subject={},
        scores={"available": False},
        findings={},
        audit={},
        gates={},
        lineage={},
        curves={"available": False},
        per_task={"available": True, "tasks": tasks, "counts": {}, "groups": groups},
    )
    png = write_plots(data, tmp_path, "p")["task_delta"]
    assert Path(png).read_bytes()[:4] == b"\x89PNG"
    if plotly_available():
        figure = json.loads(figures(data)["task_delta"])
        assert "Per-environment" in figure["layout"]["title"]["text"]
        assert figure["data"][0]["y"] == ["CartPole-v1", "Hopper-v5"]
