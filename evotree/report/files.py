"""Write a report to disk in one format, all or nothing."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotree.report.model import ReportData, ReportError
from evotree.core.workspace import Workspace
from evotree.report.html import render_html
from evotree.report.markdown import png_size
from evotree.report.markdown import render_markdown
from evotree.report.plots import write_plots

__all__ = ["FORMATS", "ReportOutput", "target_path", "write_report"]

FORMATS = ("md", "html", "json")


@dataclass
class ReportOutput:
    """What ``evotree report --json`` prints (schema: ``report-output.schema.json``)."""

    version: str
    against: str | None
    format: str
    path: str
    files: list[str]
    verdict: dict[str, Any]
    posted: dict[str, Any] | None = None
    report: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "version": self.version,
            "against": self.against,
            "format": self.format,
            "path": self.path,
            "files": self.files,
            "verdict": self.verdict,
            "posted": self.posted,
            "report": self.report,
        }


def target_path(ws: Workspace, version: str, fmt: str, out: str | None) -> Path:
    """Where the report goes: ``--out`` (a file, or a folder ending in / or existing) or
    ``.evotree/reports/<V>/report.<fmt>``."""
    if fmt not in FORMATS:
        raise ReportError(
            f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}",
            fix="pass --format md, html or json",
        )
    name = f"report.{fmt}"
    if out is None:
        return ws.state_dir / "reports" / version / name
    path = Path(out).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    if out.endswith(("/", os.sep)) or path.is_dir():
        return path / name
    return path


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_report(
    ws: Workspace,
    data: ReportData,
    *,
    fmt: str = "md",
    out: str | None = None,
    plots_url_base: str | None = None,
) -> ReportOutput:
    """Render ``data`` as ``fmt`` and write it (Markdown: with its PNG plots beside it, linked by
    file name, or as ``plots_url_base/<file>`` when the folder is published at that URL).

    On any failure the files this call wrote are removed and :class:`ReportError` names the path.
    """

    if plots_url_base is not None and fmt != "md":
        raise ReportError(
            "--plots-url-base links the PNGs written beside the Markdown: it needs --format md",
            fix="drop --plots-url-base, or pass --format md",
        )
    if plots_url_base is not None:
        from evotree.report.assets import links_from_base

        links_from_base(plots_url_base, {})  # the URL is checked before anything is written
    path = target_path(ws, data.version, fmt, out)
    written: list[Path] = []
    scratch: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "json":
            text = json.dumps(data.to_dict(), indent=2, default=str) + "\n"
        elif fmt == "md":
            plots = write_plots(data, path.parent, path.stem)
            written += [Path(p) for p in plots.values()]
            data.plots = {name: Path(p).name for name, p in plots.items()}
            sizes = {name: size for name, p in plots.items() if (size := png_size(p))}
            if plots_url_base is not None:
                from evotree.report.assets import links_from_base

                images = links_from_base(plots_url_base, data.plots)
            else:
                images = data.plots
            text = render_markdown(data, images=images, image_sizes=sizes)
        else:
            scratch = tempfile.mkdtemp(prefix="evotree-report-")
            plots = write_plots(data, Path(scratch), "plot")
            data.plots = {name: "embedded" for name in plots}
            text = render_html(data, plots)
        _atomic_write(path, text)
        written.append(path)
    except OSError as exc:
        for item in written:
            item.unlink(missing_ok=True)
        raise ReportError(
            f"cannot write the report to {path}: {exc.strerror or exc}",
            fix="pass --out with a writable file or folder",
            path=str(path),
        ) from None
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    return ReportOutput(
        version=data.version,
        against=data.against,
        format=fmt,
        path=str(path),
        files=[str(p) for p in [path, *[w for w in written if w != path]]],
        verdict=data.verdict,
        report=data.to_dict(),
    )
