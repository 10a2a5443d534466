"""``evotree.toml``: the workspace configuration, as validated dataclasses.

Every field carries its help text; every error names the key, the line and the fix. The
configuration that judges a version is always read from the champion's tree (see
:func:`evotree.core.workspace.Workspace.config`), never from the candidate's branch. The sections
are in :mod:`evotree.core.config_phases` (what runs, what is protected),
:mod:`evotree.core.config_limits` (budget, gates, autopilot) and
:mod:`evotree.core.config_execution` (executor, sandbox, tools, share, sql); this module reads and
checks the file into :class:`Config`. A new file's commented text is
:mod:`evotree.core.config_template`.
"""

from __future__ import annotations

import difflib
import functools
import re
import tomllib
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from evotree.core.config_execution import (
    ExecutorSection,
    SandboxSection,
    ShareSection,
    SqlSection,
    ToolsSection,
)
from evotree.core.config_fields import FieldError
from evotree.core.config_limits import AutopilotSection, BudgetSection, GatesSection
from evotree.core.config_phases import EvalSection, ProtectSection, TrainSection, WorkspaceSection
from evotree.core.errors import ConfigError

__all__ = ["CONFIG_FILE", "Config", "locate_key", "parse_config", "read_config_text"]

CONFIG_FILE = "evotree.toml"


@dataclass
class Config:
    """The whole ``evotree.toml``; every section optional, defaults as documented."""

    workspace: WorkspaceSection = field(default_factory=WorkspaceSection)
    train: TrainSection = field(default_factory=lambda: TrainSection(command="python train.py"))
    eval: EvalSection = field(default_factory=lambda: EvalSection(command="python eval.py"))
    protect: ProtectSection = field(default_factory=ProtectSection)
    budget: BudgetSection = field(default_factory=BudgetSection)
    gates: GatesSection = field(default_factory=GatesSection)
    executor: ExecutorSection = field(default_factory=ExecutorSection)
    sandbox: SandboxSection = field(default_factory=SandboxSection)
    tools: ToolsSection = field(default_factory=ToolsSection)
    share: ShareSection = field(default_factory=ShareSection)
    sql: SqlSection = field(default_factory=SqlSection)
    autopilot: AutopilotSection = field(default_factory=AutopilotSection)
    #: ``[interventions]``: class = [path or "file:region" globs] (evotree.core.interventions); a
    #: plain table, because the order of its classes decides ties
    interventions: dict = field(default_factory=dict)  # type: ignore[type-arg]


def parse_config(text: str, *, source: str = CONFIG_FILE) -> Config:
    """Parse and validate the text of an ``evotree.toml``.

    Raises :class:`ConfigError` whose message names the file, line and key and how to fix it.
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = _line_from_decode_error(str(exc))
        raise ConfigError(
            f"{source}:{line or '?'}: not valid TOML: {exc}",
            fix=f"fix the syntax of {source} at line {line or '?'}",
            path=source,
            line=line,
            key=None,
        ) from None
    except ValueError as exc:  # an integer of more digits than Python converts (sys.int_info)
        raise ConfigError(
            f"{source}: a value is out of range: {str(exc)[:200]}",
            fix=f"use numbers of at most 18 digits in {source}",
            path=source,
            line=None,
            key=None,
        ) from None
    except RecursionError:  # arrays or inline tables nested thousands deep
        raise ConfigError(
            f"{source}: values are nested too deeply to read",
            fix=f"no key of {source} needs nested arrays; use a flat list",
            path=source,
            line=None,
            key=None,
        ) from None
    sections: dict[str, Any] = {}
    config_fields = {f.name: f for f in fields(Config)}
    for name, value in data.items():
        if name not in config_fields:
            raise _config_error(
                text, source, name, f"unknown section [{name}]", list(config_fields)
            )
        if name == "interventions":  # a plain table, checked by its own parser
            from evotree.core.intervention_rules import parse_rules

            if not isinstance(value, dict):
                raise _config_error(
                    text, source, name, f"[{name}] must be a table, actually: {value!r}", []
                )
            parse_rules(value, source=f"{source} [interventions]")
            sections[name] = dict(value)
            continue
        section_type = _section_type(config_fields[name])
        if not isinstance(value, dict):
            raise _config_error(
                text, source, name, f"[{name}] must be a table, actually: {value!r}", []
            )
        sections[name] = _build_section(text, source, name, section_type, value)
    return Config(**sections)


#: The resolved annotations of a configuration dataclass, once per class: resolving them compiles
#: every annotation's text, which cost more than the rest of a parse (read only, never mutated).
_type_hints = functools.cache(typing.get_type_hints)


def _section_type(f: Any) -> type:
    return _type_hints(Config)[f.name]


def _build_section(
    text: str, source: str, name: str, section_type: type, values: dict[str, Any]
) -> Any:
    hints = _type_hints(section_type)
    known = {f.name: f for f in fields(section_type)}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        full = f"{name}.{key}"
        if key not in known:
            raise _config_error(
                text, source, full, f"unknown key {full!r}", [f"{name}.{k}" for k in known]
            )
        expected = hints[key]
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and not _INT_MIN <= value <= _INT_MAX
        ):
            raise _config_error(
                text,
                source,
                full,
                f"{full}: {str(value)[:24]}… is out of range (at most {_INT_MAX})",
                [],
            )
        if not _type_ok(value, expected):
            raise _config_error(
                text,
                source,
                full,
                f"{full}: expected {_type_name(expected)}, actually: {value!r}",
                [],
            )
        kwargs[key] = float(value) if expected is float else value
    if name in ("train", "eval") and "command" not in kwargs:
        kwargs["command"] = getattr(Config(), name).command
    try:
        return section_type(**kwargs)
    except FieldError as exc:
        key = exc.key if "." in exc.key else f"{name}.{exc.key}"
        raise _config_error(text, source, key, f"{key}: {exc}", []) from None


#: every integer of evotree.toml fits a signed 64-bit integer (JSON, SQLite, Parquet store it)
_INT_MIN, _INT_MAX = -(2**63), 2**63 - 1


def read_config_text(path: Path | str, *, source: str | None = None) -> str:
    """The text of an ``evotree.toml`` on disk; :class:`ConfigError` when it is not UTF-8 or unreadable."""
    shown = source or str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(
            f"{shown}: cannot be read ({exc.strerror or exc})",
            fix=f"check {shown} exists and is a readable file",
            path=shown,
            line=None,
            key=None,
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{shown}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            fix=f"save {shown} as UTF-8 (TOML files are UTF-8)",
            path=shown,
            line=line,
            key=None,
        ) from None


def _type_ok(value: Any, expected: Any) -> bool:
    origin = typing.get_origin(expected)
    if origin in (list,):
        (item,) = typing.get_args(expected)
        return isinstance(value, list) and all(_type_ok(v, item) for v in value)
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, a) for a in typing.get_args(expected))
    if expected is bool:
        return isinstance(value, bool)
    if expected is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if expected is type(None):
        return value is None
    return isinstance(value, expected)


def _type_name(expected: Any) -> str:
    origin = typing.get_origin(expected)
    if origin is list:
        return f"a list of {_type_name(typing.get_args(expected)[0])}"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(
        expected, str(expected)
    )


def _config_error(
    text: str, source: str, key: str, message: str, choices: list[str]
) -> ConfigError:
    line = locate_key(text, key)
    hint = ""
    close = difflib.get_close_matches(key, choices, n=1)
    if close:
        hint = f" (did you mean {close[0]!r}?)"
    return ConfigError(
        f"{source}:{line or '?'}: {message}{hint}",
        fix=f"edit {source} line {line or '?'} (key {key!r}); `evotree config --help` lists every key",
        path=source,
        key=key,
        line=line,
    )


_TABLE_RE = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\s*(#.*)?$")
_KEY_RE = re.compile(r"^\s*([A-Za-z0-9_\-\"']+)\s*=")


def locate_key(text: str, dotted: str) -> int | None:
    """1-based line where ``section.key`` (or ``[section]`` for a bare section) is defined."""
    section, _, key = dotted.partition(".")
    current = ""
    for number, line in enumerate(text.splitlines(), start=1):
        table = _TABLE_RE.match(line)
        if table:
            current = table.group(1).strip().strip("\"'")
            if not key and current == section:
                return number
            continue
        m = _KEY_RE.match(line)
        if not m:
            continue
        name = m.group(1).strip("\"'")
        if key and current == section and name == key:
            return number
        if not key and current == "" and name == section:
            return number
    return None


def _line_from_decode_error(message: str) -> int | None:
    m = re.search(r"line (\d+)", message)
    return int(m.group(1)) if m else None
