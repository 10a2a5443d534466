"""The HTML report opened in a real headless browser (Debian's chromium): what renders."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, commit_file
from test_runs import make_run_repo

from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium; .ci/run does it)")


def _browser(url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--virtual-time-budget=5000", *extra, url],
        capture_output=True, text=True, timeout=120)


class _Dom(HTMLParser):
    """Collects elements of the rendered DOM: tag, attributes and text."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[dict[str, Any]] = []
        self.stack: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag not in ("img", "meta", "br", "link", "input"):
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data: str) -> None:
        for element in self.stack:
            element["text"] += data

    def find(self, **attrs: str) -> list[dict[str, Any]]:
        return [e for e in self.elements if all(e["attrs"].get(k) == v for k, v in attrs.items())]


def test_html_report_renders_in_chromium(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = create_version(ws, hypothesis='better <img src="http://evil.invalid/x.png"> <script>document.title="owned"</script>')
    commit_file(ws.root / v1.worktree, "recipe.toml", "skill = 0.8\nsteps = 4\n", "more skill")
    assert all(r.status == "succeeded" for r in run_versions(ws, ["v0", "v1"]))
    cli = Cli(ws.root)
    cli("diagnose", "v1")
    create_version(ws, hypothesis="abandoned idea")
    cli("abandon", "v2", "--reason", "dead end")
    out = tmp_path / "report.html"
    result = cli.json("report", "v1", "--format", "html", "--out", str(out))
    assert result["files"] == [str(out)]  # one self-contained file, no PNGs beside it
    text = out.read_text()
    assert "http://" not in text.replace("http://evil.invalid", "") and "<link" not in text
    proc = _browser(out.as_uri(), tmp_path / "profile", "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = _Dom()
    dom.feed(proc.stdout)
    body = next(e for e in dom.elements if e["tag"] == "body")
    report = result["report"]
    # every plot decoded (set by the page's one script after load), and as many as the report has
    assert body["attrs"]["data-images"] == str(len(report["plots"])) == "4"  # scores, reward, dead groups, Δ
    assert body["attrs"]["data-images-ok"] == "true"
    # the candidate's text is shown as text: no injected image, no second script, title intact
    assert len([e for e in dom.elements if e["tag"] == "img"]) == 4
    assert len([e for e in dom.elements if e["tag"] == "script"]) == 1
    assert next(e for e in dom.elements if e["tag"] == "title")["text"] == "evotree report: v1"
    assert "<script>" in dom.find(id="hypothesis")[0]["text"]
    # verdict and scores as computed
    verdict = dom.find(id="verdict")[0]
    assert verdict["attrs"]["data-status"] == report["verdict"]["status"]
    assert verdict["text"].strip() == report["verdict"]["line"]
    assert dom.find(id="delta")[0]["text"] == f"{report['scores']['delta']:+.3f}" == "+0.300"
    # one table row per finding, each with its code
    rows = [e for e in dom.elements if e["tag"] == "tr" and "finding" in (e["attrs"].get("class") or "")]
    assert len(rows) == report["findings"]["total"]
    codes = sorted(f["code"] for items in report["findings"]["by_layer"].values() for f in items)
    assert sorted(r["attrs"]["data-code"] for r in rows) == codes
    # the tree: three versions, the subject marked, the abandoned one struck through
    nodes = {e["attrs"]["data-version"]: e for e in dom.elements if "data-version" in e["attrs"] and e["tag"] == "span"}
    assert set(nodes) == {"v0", "v1", "v2"}
    assert "subject" in nodes["v1"]["attrs"]["class"] and "dead" in nodes["v2"]["attrs"]["class"]
    assert "★" in nodes["v0"]["text"]
    # a screenshot really paints something (not a blank page)
    shot = tmp_path / "shot.png"
    proc = _browser(out.as_uri(), tmp_path / "profile", f"--screenshot={shot}", "--window-size=1000,1400")
    assert proc.returncode == 0 and shot.read_bytes()[:4] == b"\x89PNG" and shot.stat().st_size > 20_000
    gates = [e for e in dom.elements if e["tag"] == "li" and "gate" in (e["attrs"].get("class") or "")]
    assert [(g["text"].split(" (")[0], g["attrs"]["data-status"]) for g in gates] == \
        [(g["name"], g["status"]) for g in report["gates"]["gates"]] != []
