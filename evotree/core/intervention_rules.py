"""The rules of ``[interventions]`` and their parser: a leaf of the core layer, so the config
parser can check the table when ``evotree.toml`` is read (evotree.core.interventions classifies)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evotree.core.errors import ConfigError

__all__ = ["CLASSES", "InterventionRules", "Rule", "parse_rules"]

#: the classes a policy may name, in their default order; ``other`` is what no rule matches
CLASSES = ("algorithm", "hyperparameter", "data")
OTHER = "other"


@dataclass(frozen=True)
class Rule:
    """One rule: a path glob and an optional region (``def GLOB``, ``class GLOB`` or a key glob)."""

    klass: str
    path: str
    region: str | None = None

    @property
    def text(self) -> str:
        return self.path + (f":{self.region}" if self.region else "")


@dataclass(frozen=True)
class InterventionRules:
    """The ``[interventions]`` rules of a policy, in its order."""

    rules: tuple[Rule, ...]
    order: tuple[str, ...]


def parse_rules(
    section: Mapping[str, Any] | None, *, source: str = "[interventions]"
) -> InterventionRules | None:
    """The rules of an ``[interventions]`` table (None when there is none); :class:`ConfigError` when malformed."""
    if section is None:
        return None
    if not isinstance(section, Mapping):
        raise ConfigError(
            f"{source}: expected a table, actually: {type(section).__name__}", key="interventions"
        )
    rules: list[Rule] = []
    order: list[str] = []
    for klass, patterns in section.items():
        if klass not in CLASSES:
            raise ConfigError(
                f"{source}: unknown class {klass!r}",
                fix=f"classes: {', '.join(CLASSES)} (what no rule matches is {OTHER!r})",
                key=f"interventions.{klass}",
            )
        if (
            isinstance(patterns, str)
            or not isinstance(patterns, list)
            or not all(isinstance(p, str) and p.strip() for p in patterns)
        ):
            raise ConfigError(
                f"{source}: {klass} must be a list of non-empty strings, actually: {patterns!r}",
                fix=f'e.g. {klass} = ["train.py:def loss*", "objective/**"]',
                key=f"interventions.{klass}",
            )
        order.append(klass)
        for pattern in patterns:
            path, sep, region = pattern.partition(":")
            path, region = path.strip(), region.strip()
            if not path or (sep and not region):
                raise ConfigError(
                    f"{source}: rule {pattern!r} of {klass} has an empty path or region",
                    fix="write PATH or PATH:REGION (e.g. train.py:def loss*)",
                    key=f"interventions.{klass}",
                )
            if region and region.split(None, 1)[0] in ("def", "class") and len(region.split()) != 2:
                raise ConfigError(
                    f"{source}: rule {pattern!r} of {klass}: expected 'def NAME-GLOB' or "
                    "'class NAME-GLOB' after ':'",
                    key=f"interventions.{klass}",
                )
            rules.append(Rule(klass, path, region or None))
    return InterventionRules(tuple(rules), tuple(order))
