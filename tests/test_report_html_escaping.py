"""The HTML report's templates: hostile text in every field is written as text, never as markup,
script or template syntax; control characters are shown visibly; the Content-Security-Policy
hashes exactly the scripts embedded; the templates ship in the wheel."""

from __future__ import annotations

import base64
import configparser
import fnmatch
import hashlib
import json
import re
import zipfile
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import jinja2
import pytest
from conftest import ROOT

from evotree.core.text import escape_control
from evotree.report import interactive as plotly_view
from evotree.report.html import _ENV, TEMPLATES, render_html
from evotree.report.model import ReportData

#: every way text could become markup, script, template code, or hide itself
HOSTILE = (
    "<script>alert(1)</script> </script><img src=x onerror=alert(2)> \" ' & &amp; "
    "{{ 1234 * 1000 }} {% if true %}EVALUATED{% endif %} {# c #} \u202egnp.exe \x1b[31mred\x1b[0m"
)
#: a 1×1 PNG
_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5Er"
    "kJggg=="
)


def _h(tag: str) -> str:
    return f"{tag}:{HOSTILE}"


def _data(tmp_path: Path) -> tuple[ReportData, dict[str, str]]:
    """A report with hostile text in every field it shows, and a PNG for every plot."""
    a, b = _h("va"), _h("vb")
    finding = {
        "layer": _h("layer"),
        "code": _h("code"),
        "severity": "high",
        "title": _h("title"),
        "suggestion": _h("suggestion"),
        "run_id": _h("run"),
    }
    group = {
        "group": _h("group"),
        "plot": f"signals-{_h('plot')}",
        "metrics": [_h("metric"), "loss"],
    }
    points = [[1, 0.5], [2, 0.6]]
    data = ReportData(
        version=b,
        against=a,
        generated_at=_h("when"),
        verdict={
            "status": _h("status"),
            "icon": "x",
            "line": _h("verdict"),
            "notes": [_h("vnote")],
        },
        subject={
            "id": b,
            "status": _h("sstatus"),
            "hypothesis": _h("hypothesis"),
            "branch": _h("branch"),
            "created_by": _h("author"),
        },
        scores={
            "available": True,
            "split": _h("split"),
            "a": a,
            "b": b,
            "mean_a": 0.5,
            "mean_b": 0.8,
            "delta": 0.3,
            "ci": [-0.1, 0.7],
            "p_value": 0.04,
            "test": _h("test"),
            "alpha": 0.025,
            "n_tasks": 10,
            "n_seeds": [2, 2],
            "decision": _h("decision"),
            "threshold": 0.0,
            "caveat": _h("caveat"),
            "ci_method": _h("method"),
            "statement": _h("statement"),
            "notes": [_h("snote")],
            "normalized": {"a": 0.1, "b": 0.2},
            "iqm": {"a": 0.5, "b": 1.0},
            "confidence": 0.95,
            "p_threshold": 0.025,
            "run_means": {"a": [0.5, 0.5], "b": [0.8, 0.8]},
        },
        findings={
            "available": True,
            "total": 3,
            "worst": _h("worst"),
            "by_layer": {
                _h("layer"): [
                    finding,
                    {**finding, "run_id": _h("run2")},
                    {**finding, "code": _h("code2"), "run_id": None},
                ]
            },
        },
        audit={
            "available": True,
            "passed": False,
            "source": _h("source"),
            "raw_score": 0.8,
            "leak_adjusted_score": None,
            "findings": [{"severity": _h("asev"), "code": _h("acode"), "title": _h("atitle")}],
        },
        gates={
            "available": True,
            "passed": False,
            "gates": [{"name": _h("gate"), "status": _h("gstatus"), "summary": _h("gsummary")}],
        },
        lineage={
            "available": True,
            "nodes": [
                {
                    "id": a,
                    "parents": [],
                    "status": "evaluated",
                    "champion": True,
                    "subject": False,
                    "hypothesis": _h("root"),
                    "score": 0.5,
                },
                {
                    "id": _h("side"),
                    "parents": [a],
                    "status": "abandoned",
                    "champion": False,
                    "subject": False,
                    "hypothesis": _h("sidehyp"),
                    "score": None,
                },
                {
                    "id": b,
                    "parents": [a, _h("side")],
                    "status": "evaluated",
                    "champion": False,
                    "subject": True,
                    "hypothesis": _h("hypothesis"),
                    "score": 0.8,
                },
            ],
        },
        curves={
            "available": True,
            "reward": {a: points, b: points},
            "entropy": {},
            "dead_groups": {},
            "reward_runs": {a: [points, points], b: [points, points]},
            "signals": {
                "headline": _h("metric"),
                "headline_source": _h("hsource"),
                "groups": [group],
                "series": {m: {a: points, b: points} for m in group["metrics"]},
                "summary": {_h("metric"): {a: {"last": 0.6, "min": 0.5, "max": 0.6, "steps": 2}}},
                "left_out": 2,
            },
        },
        per_task={
            "available": True,
            "tasks": [{"task": _h("task"), "a": 0.0, "b": 1.0, "delta": 1.0}],
            "counts": {"improved": 1, "worse": 0, "unchanged": 0},
            "groups": [],
        },
        sandbox_warning=_h("sandbox"),
        recipe_diff={
            "available": True,
            "a": a,
            "b": b,
            "params": [
                {"path": _h("path"), "param": _h("param"), "a": _h("old"), "b": {"k": _h("new")}}
            ],
            "files": [
                {"path": _h("file"), "status": _h("fstatus"), "additions": 1, "deletions": 2}
            ],
        },
    )
    plots = {}
    for name in ("scores", "reward", group["plot"]):
        png = tmp_path / f"{len(plots)}.png"
        png.write_bytes(_PNG)
        plots[name] = str(png)
    return data, plots


class _Doc(HTMLParser):
    """Elements (tag, attributes, own text), and each <script>'s raw body."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[dict[str, Any]] = []
        self.stack: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag not in ("img", "meta", "br"):
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self.stack and self.stack.pop()["tag"] != tag:
            pass

    def handle_data(self, data: str) -> None:
        for element in self.stack:
            element["text"] += data


def _parse(text: str) -> _Doc:
    doc = _Doc()
    doc.feed(text)
    doc.close()
    return doc


def _outside_scripts(text: str) -> str:
    return re.sub(r"<script\b[^>]*>.*?</script>", "", text, flags=re.S)


@pytest.mark.parametrize("interactive", [False, True])
def test_hostile_text_in_every_field_is_only_text(tmp_path: Path, interactive: bool) -> None:
    if interactive and not plotly_view.plotly_available():
        pytest.skip(
            "Plotly is not installed (the report extra): the figures' JSON blocks are not written"
        )
    data, plots = _data(tmp_path)
    text = render_html(data, plots, interactive=interactive)
    doc = _parse(text)
    # no template syntax of the data was evaluated: it is shown as written
    assert "1234000" not in text
    assert text.count("EVALUATED") == text.count("{% if true %}EVALUATED{% endif %}") > 20
    assert text.count("{{ 1234 * 1000 }}") == text.count("{# c #}") > 20
    # outside the scripts: nothing of the data is markup, and no raw control character is left
    outside = _outside_scripts(text)
    assert "<script" not in outside and "</script" not in outside and "<img src=x" not in outside
    assert "\x1b" not in outside and "\u202e" not in outside
    assert "\\x1b[31mred\\x1b[0m" in outside and "\\u202egnp.exe" in outside
    # the elements are the report's own: the only scripts are its own, the only images the plots
    scripts = [e for e in doc.elements if e["tag"] == "script"]
    blocks = [e for e in scripts if e["attrs"].get("type") == "application/json"]
    assert len(scripts) - len(blocks) == (3 if interactive else 1)
    assert len(blocks) == (4 if interactive else 0)  # task_delta: a figure without a PNG
    assert all(not e["attrs"].get("src") for e in scripts)
    assert all(
        e["attrs"]["src"].startswith("data:image/png;base64,")
        for e in doc.elements
        if e["tag"] == "img"
    )
    assert not [e for e in doc.elements if any(k.startswith("on") for k in e["attrs"])]
    # each field reads back, as text or attribute, exactly as shown to a reader
    by_id = {e["attrs"]["id"]: e for e in doc.elements if e["attrs"].get("id")}
    assert by_id["hypothesis"]["text"] == escape_control(_h("hypothesis"))
    assert by_id["verdict"]["text"] == escape_control(_h("verdict"))
    assert by_id["verdict"]["attrs"]["data-status"] == escape_control(_h("status"))
    assert by_id["sandbox-warning"]["text"] == escape_control(_h("sandbox"))
    assert by_id["statement"]["text"] == escape_control(_h("statement")) + "."
    assert (
        next(e for e in doc.elements if e["tag"] == "title")["text"]
        == f"evotree report: {escape_control(data.version)}"
    )
    assert next(e for e in doc.elements if e["tag"] == "body")["attrs"][
        "data-version"
    ] == escape_control(data.version)
    rows = [e for e in doc.elements if e["tag"] == "tr" and e["attrs"].get("class") == "finding"]
    assert sorted(r["attrs"]["data-code"] for r in rows) == sorted(
        escape_control(_h(c)) for c in ("code", "code2")
    )
    row = next(r for r in rows if r["attrs"]["data-code"] == escape_control(_h("code")))
    assert (
        escape_control(_h("suggestion")) in row["text"]
        and escape_control(_h("run2")) in row["text"]
    )
    tables = [
        e for e in doc.elements if e["tag"] == "table" and e["attrs"].get("class") == "findings"
    ]
    assert [t["attrs"]["data-layer"] for t in tables] == [escape_control(_h("layer"))]
    signal = next(
        e for e in doc.elements if e["tag"] == "tr" and e["attrs"].get("class") == "signal"
    )
    assert signal["attrs"]["data-metric"] == escape_control(_h("metric"))
    assert signal["attrs"]["data-group"] == escape_control(_h("group"))
    nodes = {
        e["attrs"]["data-version"]: e
        for e in doc.elements
        if e["tag"] == "span" and "data-version" in e["attrs"]
    }
    assert set(nodes) == {escape_control(v) for v in (data.version, data.against, _h("side"))}
    assert nodes[escape_control(data.version)]["attrs"]["title"] == escape_control(_h("hypothesis"))
    assert nodes[escape_control(data.version)]["attrs"]["class"] == "node subject"
    assert f"(merges {escape_control(_h('side'))})" in " ".join(
        e["text"] for e in doc.elements if e["tag"] == "li"
    )
    gate = next(e for e in doc.elements if e["tag"] == "li" and e["attrs"].get("class") == "gate")
    assert gate["text"].split(" (")[0] == escape_control(_h("gate"))
    diff = by_id["recipe-diff"]["text"]
    for part in ("path", "param", "old", "file", "fstatus"):
        assert escape_control(_h(part)) in diff, part
    assert escape_control(json.dumps({"k": _h("new")})) in diff
    for field in (
        "vnote",
        "snote",
        "caveat",
        "author",
        "branch",
        "when",
        "worst",
        "source",
        "atitle",
        "gsummary",
        "hsource",
        "method",
        "decision",
        "split",
        "test",
    ):
        assert escape_control(_h(field)) in doc.elements[0]["text"], (
            field
        )  # <html>: the whole page's text
    plot_name = f"signals-{_h('plot')}"
    assert by_id[f"plot-{escape_control(plot_name)}"]["attrs"]["alt"].startswith(
        f"Signals: {escape_control(_h('group'))}"
    )
    if interactive:
        # the figures' JSON keeps no <, > or & (no </script> inside a data block), and parses
        names = {e["attrs"]["data-plot"] for e in blocks}
        assert names == {"scores", "reward", "task_delta", escape_control(plot_name)}
        for body in re.findall(
            r'<script type="application/json" data-plot="[^"]*">(.*?)</script>', text, re.S
        ):
            assert not set("<>&") & set(body)
            assert json.loads(body)["data"]
        assert by_id[f"iplot-{escape_control(plot_name)}"]["tag"] == "div"


@pytest.mark.parametrize("interactive", [False, True])
def test_the_policy_hashes_exactly_the_scripts_embedded(tmp_path: Path, interactive: bool) -> None:
    if interactive and not plotly_view.plotly_available():
        pytest.skip("Plotly is not installed (the report extra)")
    data, plots = _data(tmp_path)
    text = render_html(data, plots, interactive=interactive)
    (csp,) = re.findall(r'<meta http-equiv="Content-Security-Policy"\s+content="([^"]*)">', text)
    assert csp.startswith(
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-"
    )
    listed = re.findall(r"'sha256-([A-Za-z0-9+/=]+)'", csp)
    bodies = re.findall(
        r"<script>(.*?)</script>", text, re.S
    )  # the page's scripts (not the data blocks)
    assert len(bodies) == (3 if interactive else 1)
    assert listed == [
        base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() for b in bodies
    ]
    # one byte changed in a script would no longer match
    assert (
        base64.b64encode(hashlib.sha256((bodies[-1] + " ").encode()).digest()).decode()
        not in listed
    )


def test_a_report_without_optional_sections_renders(tmp_path: Path) -> None:
    """Unavailable sections say why (their reason escaped); no plots, no diff, no warning."""
    data, _ = _data(tmp_path)
    for section in ("scores", "findings", "audit", "gates", "per_task", "curves"):
        setattr(data, section, {"available": False, "reason": _h(section)})
    data.recipe_diff, data.sandbox_warning = {}, None
    text = render_html(data, {}, interactive=False)
    doc = _parse(text)
    ids = {e["attrs"].get("id") for e in doc.elements}
    assert not ids & {"scores", "recipe-diff", "sandbox-warning", "signals", "score-row"}
    for section in ("scores", "findings", "audit", "gates"):
        assert (
            f"Not available: {escape_control(_h(section))}" in doc.elements[0]["text"]
            or escape_control(_h(section)) in doc.elements[0]["text"]
        ), section
    assert "No plots: no curve or comparison data." in text and "No train signals recorded." in text
    assert "\x1b" not in _outside_scripts(text)


def test_every_way_a_template_writes_text_shows_control_characters() -> None:
    """{{ }}, the escape filters, ~ and join write control characters visibly and escape markup;
    only |safe writes a value as it is; an unknown name is an error, not an empty string."""
    nasty = "\x1b[8m<b>\u202e"
    shown = "\\x1b[8m&lt;b&gt;\\u202e"
    for source in (
        "{{ x }}",
        "{{ x|e }}",
        "{{ x|escape }}",
        "{{ x|forceescape }}",
        "{{ '' ~ x }}",
        "{{ [x]|join(', ') }}",
        "{{ x|string }}",
        "{{ x|default('') }}",
        "{{ x|trim }}",
    ):
        assert _ENV.from_string(source).render(x=nasty) == shown, source
    assert _ENV.from_string("{{ x|safe }}").render(x=nasty) == nasty
    assert _ENV.from_string("{{ x }}|{{ y }}").render(x=None, y=0.5) == "|0.5"
    with pytest.raises(jinja2.UndefinedError):
        _ENV.from_string("{{ missing }}").render()


def test_setup_cfg_ships_every_template() -> None:
    """Each file of the templates folder matches a package_data pattern of evotree.report."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    patterns = [p.strip() for p in cfg["options.package_data"]["evotree.report"].split(",")]
    files = [
        p.relative_to(TEMPLATES.parent).as_posix() for p in TEMPLATES.rglob("*") if p.is_file()
    ]
    assert {"templates/report.html", "templates/sections.html", "templates/report.css"} <= set(
        files
    )
    assert [f for f in files if not any(fnmatch.fnmatch(f, p) for p in patterns)] == []


@pytest.mark.heavy
def test_the_wheel_carries_the_templates(tmp_path: Path) -> None:
    """A wheel built from the checkout holds every template beside evotree/report/html.py."""
    import subprocess
    import sys

    from test_install import _copy_sources

    src = _copy_sources(tmp_path / "src")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-w",
            str(tmp_path / "dist"),
            str(src),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    shipped = {
        f"evotree/report/{p.relative_to(TEMPLATES.parent).as_posix()}"
        for p in TEMPLATES.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert shipped and shipped <= names, shipped - names
