"""The HTML report and the PR comment opened in a real headless browser (Debian's chromium), with the
network disabled: the interactive plots draw offline, the PNG fallback decodes, the comment is short.
Screenshots are left in each test's tmp_path (the path is printed; run with -s to see it)."""

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
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (apt-get install -y chromium; .ci/run does it)",
)


def _browser(url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            # no network: every host name fails to resolve and any proxied request goes nowhere
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=http://127.0.0.1:9",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=5000",
            *extra,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


class _Dom(HTMLParser):
    """Collects elements of the rendered DOM: tag, attributes and text."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[dict[str, Any]] = []
        self.stack: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = {
            "tag": tag,
            "attrs": dict(attrs),
            "text": "",
            "inside": [e["attrs"].get("id") for e in self.stack if e["attrs"].get("id")],
            "under": [e["tag"] for e in self.stack],
        }
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


HYPOTHESIS = 'better <img src="http://evil.invalid/x.png"> <script>document.title="owned"</script>'


@pytest.fixture(scope="module")
def hws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """v0 and v1, three seeds each, v1 diagnosed; v2 abandoned."""
    ws = Workspace.open(make_run_repo(tmp_path_factory.mktemp("html") / "w"))
    v1 = create_version(ws, hypothesis=HYPOTHESIS)
    commit_file(ws.root / v1.worktree, "recipe.toml", "skill = 0.8\nsteps = 4\n", "more skill")
    assert all(r.status == "succeeded" for r in run_versions(ws, ["v0", "v1"], seeds=3))
    cli = Cli(ws.root)
    cli("diagnose", "v1")
    create_version(ws, hypothesis="abandoned idea")
    cli("abandon", "v2", "--reason", "dead end")
    return ws


class _Refs(HTMLParser):
    """Every URL the document itself would load or link (src, href, srcset, CSS url(...))."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for key, value in attrs:
            if key in ("src", "href", "srcset", "action", "poster", "data") and value:
                self.urls.append((tag, value))


def _shot(url: str, tmp_path: Path, name: str, size: str = "1000,1800") -> Path:
    shot = tmp_path / name
    proc = _browser(
        url, tmp_path / f"profile-{name}", f"--screenshot={shot}", f"--window-size={size}"
    )
    assert (
        proc.returncode == 0
        and shot.read_bytes()[:4] == b"\x89PNG"
        and shot.stat().st_size > 20_000
    )
    print(f"screenshot: {shot}")
    return shot


@pytest.mark.heavy
def test_html_report_renders_in_chromium(hws: Workspace, tmp_path: Path) -> None:
    cli = Cli(hws.root)
    out = tmp_path / "report.html"
    result = cli.json("report", "v1", "--format", "html", "--out", str(out))
    assert result["files"] == [str(out)]  # one self-contained file, no PNGs beside it
    text = out.read_text()
    # nothing external: no src/href to any URL but data: and in-page anchors, no <link>, and the
    # CSP forbids every load; plotly.js is inline, once
    refs = _Refs()
    refs.feed(text)
    assert refs.urls and all(v.startswith(("data:", "#")) for _, v in refs.urls), [
        u for u in refs.urls if not u[1].startswith(("data:", "#"))
    ]
    assert "<link" not in text and text.count("<script src") == 0
    # plotly.js's basic partial bundle (the figures use only its trace types), once
    assert text.count("* plotly.js (basic - minified) v") == 1 and "default-src 'none'" in text
    proc = _browser(out.as_uri(), tmp_path / "profile", "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = _Dom()
    dom.feed(proc.stdout)
    body = next(e for e in dom.elements if e["tag"] == "body")
    report = result["report"]
    names = list(report["plots"])
    # no entropy signal here; then one plot per group of recorded train signals (reward, loss, other)
    assert names == [
        "scores",
        "reward",
        "dead_groups",
        "task_delta",
        "signals-reward",
        "signals-loss",
        "signals-other",
    ]
    # every plot drawn by Plotly after the scripts ran: its div became a plot with an SVG inside
    assert (
        body["attrs"]["data-plots"] == str(len(names)) and body["attrs"]["data-plots-failed"] == "0"
    )
    for name in names:
        div = dom.find(id=f"iplot-{name}")[0]
        assert "js-plotly-plot" in div["attrs"]["class"], name
        svgs = [
            e
            for e in dom.elements
            if e["tag"] == "svg"
            and "main-svg" in (e["attrs"].get("class") or "")
            and f"iplot-{name}" in e["inside"]
        ]
        assert svgs, name
    # the scores plot carries the one comparison's Δ and CI (the table's numbers) and three points a side
    s = report["scores"]
    scores_text = " ".join(
        e["text"] for e in dom.elements if "iplot-scores" in e["inside"] and e["tag"] == "text"
    )
    assert (
        f"Δ {s['delta']:+.3f}" in scores_text
        and f"[{s['ci'][0]:+.3f}, {s['ci'][1]:+.3f}]" in scores_text
    )
    assert len(s["run_means"]["a"]) == len(s["run_means"]["b"]) == 3
    points = [
        e
        for e in dom.elements
        if "iplot-scores" in e["inside"]
        and e["tag"] == "path"
        and "point" in (e["attrs"].get("class") or "")
    ]
    assert len(points) >= 6  # the six runs' points (and the Δ marker)
    # the reward curve: the seeds' band is drawn (a filled trace per version)
    assert [
        e
        for e in dom.elements
        if "iplot-reward" in e["inside"] and "js-fill" in (e["attrs"].get("class") or "")
    ]
    # with scripts running, the static PNGs stay in <noscript> (text there): no image in the document
    assert [e for e in dom.elements if e["tag"] == "img" and "noscript" not in e["under"]] == []
    assert body["attrs"]["data-images"] == "0" and body["attrs"]["data-images-ok"] == "true"
    # the candidate's text is shown as text: no injected image, no script of its own, title intact
    scripts = [e for e in dom.elements if e["tag"] == "script"]
    assert (
        len([e for e in scripts if e["attrs"].get("type") != "application/json"]) == 3
    )  # plotly.js, draw, mark
    assert next(e for e in dom.elements if e["tag"] == "title")["text"] == "evotree report: v1"
    assert "<script>" in dom.find(id="hypothesis")[0]["text"]
    # verdict and scores as computed
    verdict = dom.find(id="verdict")[0]
    assert verdict["attrs"]["data-status"] == report["verdict"]["status"]
    assert verdict["text"].strip() == report["verdict"]["line"]
    assert dom.find(id="delta")[0]["text"] == f"{report['scores']['delta']:+.3f}" == "+0.300"
    assert dom.find(id="iqm-row")  # the IQM beside the means
    # findings aggregated: one table row per code (not per seed), each naming its runs and count
    rows = [
        e for e in dom.elements if e["tag"] == "tr" and "finding" in (e["attrs"].get("class") or "")
    ]
    codes = sorted({f["code"] for items in report["findings"]["by_layer"].values() for f in items})
    assert sorted(r["attrs"]["data-code"] for r in rows) == codes
    assert len(rows) < report["findings"]["total"]  # the fixture has findings repeated over seeds
    per_code = {
        c: sum(
            1 for items in report["findings"]["by_layer"].values() for f in items if f["code"] == c
        )
        for c in codes
    }
    for r in rows:
        assert f"({per_code[r['attrs']['data-code']]})" in r["text"]
    # the tree: three versions, the subject marked, the abandoned one struck through
    nodes = {
        e["attrs"]["data-version"]: e
        for e in dom.elements
        if "data-version" in e["attrs"] and e["tag"] == "span"
    }
    assert set(nodes) == {"v0", "v1", "v2"}
    assert "subject" in nodes["v1"]["attrs"]["class"] and "dead" in nodes["v2"]["attrs"]["class"]
    assert "★" in nodes["v0"]["text"]
    gates = [
        e for e in dom.elements if e["tag"] == "li" and "gate" in (e["attrs"].get("class") or "")
    ]
    assert (
        [(g["text"].split(" (")[0], g["attrs"]["data-status"]) for g in gates]
        == [(g["name"], g["status"]) for g in report["gates"]["gates"]]
        != []
    )
    # a screenshot really paints something (the plots included), kept in the test's output
    _shot(out.as_uri(), tmp_path, "report.png")
    # a figure that cannot be drawn shows its PNG (from the <noscript> beside it), which decodes
    import re

    broken = tmp_path / "broken.html"
    broken.write_text(
        re.sub(
            r'(<script type="application/json" data-plot="reward">).*?(</script>)',
            lambda m: m.group(1) + "{not json" + m.group(2),
            text,
            count=1,
            flags=re.S,
        )
    )
    proc = _browser(broken.as_uri(), tmp_path / "profile-broken", "--dump-dom")
    dom = _Dom()
    dom.feed(proc.stdout)
    body = next(e for e in dom.elements if e["tag"] == "body")
    assert (body["attrs"]["data-plots"], body["attrs"]["data-plots-failed"]) == (
        str(len(names) - 1),
        "1",
    )
    assert body["attrs"]["data-images"] == "1" and body["attrs"]["data-images-ok"] == "true"
    assert [
        e["inside"][-1] for e in dom.elements if e["tag"] == "img" and "noscript" not in e["under"]
    ] == ["iplot-reward"]


@pytest.mark.heavy
def test_html_report_without_plotly_shows_the_pngs(
    hws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plotly is optional (the report extra): without it the PNGs are inline, with a note."""
    import evotree.report.interactive as interactive
    from evotree.report.collect import build_report
    from evotree.report.files import write_report

    monkeypatch.setattr(interactive, "plotly_available", lambda: False)
    data = build_report(hws, "v1", run_audit=False)
    out = tmp_path / "static.html"
    write_report(hws, data, fmt="html", out=str(out))
    text = out.read_text()
    assert "plotly.js" not in text and "Plotly is not installed" in text
    proc = _browser(out.as_uri(), tmp_path / "profile", "--dump-dom")
    dom = _Dom()
    dom.feed(proc.stdout)
    body = next(e for e in dom.elements if e["tag"] == "body")
    assert (
        body["attrs"]["data-images"] == str(len(data.plots)) == "7"
        and body["attrs"]["data-images-ok"] == "true"
    )
    assert "pip install" in dom.find(id="plots-note")[0]["text"]


# GitHub's comment body, near enough: its font, table and details styles, a 780 px column
_GITHUB_CSS = """
body{margin:0;background:#fff}.markdown-body{box-sizing:border-box;width:780px;padding:16px;
font:14px/1.5 -apple-system,'Segoe UI','Noto Sans',Helvetica,Arial,sans-serif;color:#1f2328;word-wrap:break-word}
.markdown-body h2{font-size:1.5em;border-bottom:1px solid #d1d9e0;padding-bottom:.3em;margin:24px 0 16px;line-height:1.25}
.markdown-body h3{font-size:1.25em;margin:24px 0 16px;line-height:1.25}.markdown-body p,.markdown-body table,
.markdown-body blockquote,.markdown-body ul,.markdown-body details,.markdown-body pre{margin:0 0 16px}
.markdown-body table{display:block;width:max-content;max-width:100%;overflow:auto;border-collapse:collapse}
.markdown-body td,.markdown-body th{padding:6px 13px;border:1px solid #d1d9e0}.markdown-body blockquote{padding:0 1em;
color:#59636e;border-left:.25em solid #d1d9e0}.markdown-body img{max-width:100%;box-sizing:content-box;
background:#eaeef2;vertical-align:middle}.markdown-body code{font-size:85%;padding:.2em .4em;background:#eff1f3}
.markdown-body details summary{cursor:pointer;display:list-item}.markdown-body sub{font-size:75%}
"""
#: a 1×1 PNG: each image is a placeholder of its declared width and height
_PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
_MEASURE = (
    "window.addEventListener('load',function(){var b=document.querySelector('.markdown-body');"
    "document.body.setAttribute('data-height',String(Math.ceil(b.getBoundingClientRect().height)));"
    "document.body.setAttribute('data-width',String(b.scrollWidth));});"
)


@pytest.mark.heavy
def test_pr_comment_is_short_with_its_plots_inline(hws: Workspace, tmp_path: Path) -> None:
    """The comment at 3 seeds: the verdict first, the plots inline as images (GitHub cannot show data
    URIs: they are linked where CI publishes them), every other section collapsed, under 1,500 px as
    GitHub would render it, and no text cut mid-word."""
    import re

    from markdown_it import MarkdownIt

    from evotree.report.markdown import COMMENT_IMAGE_WIDTH, escape_md

    base = "https://github.com/acme/recipes/raw/evotree-report-assets/v1/123-1"
    result = Cli(hws.root).json(
        "report", "v1", "--out", f"{tmp_path}/pr/", "--plots-url-base", base
    )
    text = Path(result["path"]).read_text()
    report = result["report"]
    assert report["scores"]["n_seeds"] == [3, 3]
    # the verdict first, then the plots inline, before any table or section
    lines = [x for x in text.splitlines() if x.strip()]
    assert lines[1] == "## evotree report: v1" and lines[2].startswith(report["verdict"]["icon"])
    first_plot = text.index("<img ")
    assert text.index(report["verdict"]["line"][:20]) < first_plot < text.index("### Scores")
    assert "data:" not in text
    images = re.findall(r'<img src="([^"]+)" width="(\d+)" height="(\d+)"', text)
    assert [src for src, _, _ in images] == [
        f"{base}/report-{n}.png"
        for n in (
            "scores",
            "reward",
            "task_delta",
            "dead_groups",  # inline; the signal groups under "More plots"
            "signals-reward",
            "signals-loss",
            "signals-other",
        )
    ]
    assert all(int(w) <= COMMENT_IMAGE_WIDTH and int(h) < 300 for _, w, h in images)
    # every section after the scores is collapsed
    assert text.count("<details>") >= 4 and "<details><summary><b>Findings</b>" in text
    assert "<details><summary><b>Lineage</b>" in text and "<details><summary><b>Gates</b>" in text
    # nothing cut mid-word: every shortened text ends on a whole word of the original
    for items in report["findings"]["by_layer"].values():
        for item in items:
            full = escape_md(item.get("suggestion"), 10_000)
            row = next(x for x in text.splitlines() if f"`{escape_md(item['code'])}`" in x)
            if not full or full in row:
                continue
            cell = row.split(" | ")[4].removesuffix(" |").split(" (skills:")[0]
            assert cell.endswith("…"), cell
            prefix = cell.removesuffix("…")
            assert full.startswith(prefix) and full[len(prefix)] in " ,;:.-(", (prefix, full)
    shortened = escape_md("reduce the learning rate " * 20, 60)
    assert shortened.endswith("…") and len(shortened) <= 60  # cut at a word boundary, not mid-word
    assert shortened[:-1].split()[-1] in ("reduce", "the", "learning", "rate")
    # rendered as GitHub would (CommonMark + tables + raw HTML), images as placeholders of their size
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    html = re.sub(r'src="https://[^"]+"', f'src="{_PIXEL}"', html)
    page = tmp_path / "comment.html"
    page.write_text(
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{_GITHUB_CSS}</style></head>"
        f"<body><div class='markdown-body'>{html}</div><script>{_MEASURE}</script></body></html>"
    )
    proc = _browser(page.as_uri(), tmp_path / "profile", "--dump-dom", "--window-size=800,2000")
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = _Dom()
    dom.feed(proc.stdout)
    body = next(e for e in dom.elements if e["tag"] == "body")
    height = int(body["attrs"]["data-height"])
    print(f"comment height: {height} px")
    assert 400 < height < 1500
    assert int(body["attrs"]["data-width"]) <= 780  # nothing runs past the column
    shown = [e for e in dom.elements if e["tag"] == "img" and "details" not in e["under"]]
    assert len(shown) == 4  # the plots are in the page, not behind a click
    _shot(page.as_uri(), tmp_path, "comment.png", size="800,1500")
