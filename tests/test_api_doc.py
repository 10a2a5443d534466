"""docs/api.md's session runs as written: every ```python block, in order, in a fresh folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT

import evotree

DOC = ROOT / "docs" / "api.md"


def _blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.heavy
def test_the_api_page_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pandas")
    blocks = _blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    # the reader's git identity (the tests' isolated HOME has none)
    for var, value in (
        ("GIT_AUTHOR_NAME", "Ada"),
        ("GIT_COMMITTER_NAME", "Ada"),
        ("GIT_AUTHOR_EMAIL", "ada@example.com"),
        ("GIT_COMMITTER_EMAIL", "ada@example.com"),
    ):
        monkeypatch.setenv(var, value)
    namespace: dict[str, object] = {"__name__": "__api_doc__"}
    for number, block in enumerate(blocks, 1):
        code = compile(block, f"{DOC.name}, block {number}", "exec")
        exec(code, namespace)  # noqa: S102 - the documentation's own code
    assert namespace["comparison"].b == namespace["v1"].id  # type: ignore[attr-defined]


def test_the_api_names_are_the_documented_ones() -> None:
    documented = set(re.findall(r"`evotree\.(\w+)\(", DOC.read_text(encoding="utf-8")))
    assert documented <= set(evotree.__all__), documented - set(evotree.__all__)
    from evotree import api

    # evotree/__init__.py repeats the API's names (it may not import the API eagerly): one list
    assert set(evotree.__all__) - {"__version__"} == set(api.__all__)
    for name in evotree.__all__:
        assert getattr(evotree, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'promote'"):
        evotree.promote  # noqa: B018 - promotion needs a person at a terminal: not in the API
