"""Version ids and ref names."""

from __future__ import annotations

import pytest

from evotree.core.errors import InvalidVersionId
from evotree.core.refs import VersionId, branch_name, branch_ref


@pytest.mark.parametrize(
    "text,number", [("v0", 0), ("v12", 12), ("v7-std-filter", None), ("exp.3_b", None)]
)
def test_valid_ids(text: str, number: int | None) -> None:
    vid = VersionId.parse(text)
    assert str(vid) == text
    assert vid.number == number


@pytest.mark.parametrize(
    "text", ["", "-v1", "v1..2", "a/b", "v1.lock", "v1.", "has space", "x" * 65, "v1~1"]
)
def test_invalid_ids(text: str) -> None:
    with pytest.raises(InvalidVersionId, match="expected a version id like 'v7'"):
        VersionId.parse(text)


def test_champion_is_reserved() -> None:
    with pytest.raises(InvalidVersionId, match="'champion' is reserved"):
        VersionId.parse("champion")


def test_leading_zero_is_not_an_automatic_number() -> None:
    assert VersionId.parse("v01").number is None


def test_branch_names() -> None:
    assert branch_name("v3") == "evotree/v3"
    assert branch_ref("v3") == "refs/heads/evotree/v3"
