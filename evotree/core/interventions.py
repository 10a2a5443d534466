"""Intervention classes: did a version change the algorithm, a hyperparameter,
the data, or something else?

AI4AI-Bench's central analysis splits submissions by the level they intervene at (algorithm-level
changes scored 0.226 on average against 0.126 for the rest). Here the policy names the classes by
path and region rules, in ``evotree.toml``::

    [interventions]
    algorithm = ["train.py:def loss*", "objective/**"]
    hyperparameter = ["recipe.toml", "*.yaml:lr"]
    data = ["data/**", "build_data.py"]

A rule is ``PATH`` or ``PATH:REGION``. ``PATH`` is a glob anchored at the repository root (``**``
crosses folders, ``*`` ``?`` ``[...]`` stay within one; ``dir/`` is everything under ``dir``), as
in ``[protect]``. ``REGION`` narrows it to part of a file:

* ``def GLOB`` / ``class GLOB``: lines inside a Python function / class whose name matches
  (nested definitions count: a line in ``Trainer.loss_fn`` is in ``class Trainer`` and ``def loss*``);
* any other text: a glob over the dotted keys of a structured file (``.toml``, ``.json``,
  ``.yaml``/``.yml``) that changed; it matches the whole key (``optim.lr``) or its last part (``lr``).

:func:`classify_version` diffs a version's branch tip against the commit it was branched from
(``base_commit``: its parent's tip then) and gives each changed line (Python and other text), each
changed key (structured files) and each otherwise changed file (binary, renamed, unparsable) the
first class, in the policy's order, whose rule matches; what no rule matches is ``other``. A
changed Python line that is only a crash, an exit or file I/O (``raise SystemExit``, ``sys.exit``,
``os._exit``, ``open(``, ``.write_text(`` …: :func:`incidental_line`), or blank, or a comment, is
never ``algorithm`` (AI4AI-Bench counts an intervention on the learning itself, not a way to stop
or to read and write files): it takes the next class whose rule matches, else ``other``. The
version's ``primary`` class is the first class of the policy's order that it touched (``other``
last); ``none`` when nothing changed. Nothing is written.
"""

from __future__ import annotations

import fnmatch
import re
import tomllib
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import pygit2

from evotree.core.globs import glob_regex
from evotree.core.errors import ConfigError  # noqa: F401 - raised by the rules' parser, re-exported
from evotree.core.intervention_rules import CLASSES, InterventionRules, Rule, parse_rules
from evotree.core.config import CONFIG_FILE
from evotree.core.refs import CHAMPION_REF
from evotree.core.diff import _parse
from evotree.core.refs import branch_ref
from evotree.core.errors import EvotreeError

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = [
    "CLASSES",
    "Rule",
    "InterventionRules",
    "VersionIntervention",
    "parse_rules",
    "policy_rules",
    "classify_changes",
    "classify_version",
    "intervention_record",
    "python_regions",
    "path_matches",
    "incidental_line",
]

OTHER = "other"
NONE = "none"
_STRUCTURED = (".toml", ".json", ".yaml", ".yml")
_MAX_TEXT_BYTES = 4 << 20
_DEF = re.compile(r"^(\s*)(?:async\s+def|def|class)\s+([A-Za-z_]\w*)")
#: statements that stop the process or touch files: never an algorithm-level change
_INCIDENTAL = re.compile(
    r"\b(raise\s+(SystemExit|KeyboardInterrupt)|sys\.exit|os\._exit|os\.abort|exit\s*\(|quit\s*\(|"
    r"open\s*\(|\.(write|read)_(text|bytes)\s*\(|os\.(remove|unlink|rename|replace|makedirs|mkdir|system)\b|"
    r"shutil\.|subprocess\.|os\.environ\b)"
)


@dataclass
class VersionIntervention:
    """The intervention class of one version's change."""

    version: str
    base: str | None
    tip: str | None
    #: the first class of the policy's order touched; ``other``; ``none`` (no change); None (the root)
    primary: str | None
    classes: list[str] = field(default_factory=list)
    #: changed lines or keys per class
    units: dict[str, int] = field(default_factory=dict)
    #: changed files per class (a file may be in several)
    files: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------- rules


def policy_rules(ws: Workspace) -> InterventionRules | None:
    """The ``[interventions]`` rules of the champion's ``evotree.toml`` (the policy in force), read
    from its raw TOML; None when it has none."""

    target = ws.git.ref_target(CHAMPION_REF)
    if target is None:
        return None
    tree = ws.git.repo[target].peel(pygit2.Commit).tree
    if CONFIG_FILE not in tree:
        return None
    text = ws.git.repo[tree[CONFIG_FILE].id].data.decode("utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{CONFIG_FILE} of the champion is not valid TOML: {exc}") from None
    return parse_rules(data.get("interventions"), source=f"{CONFIG_FILE} [interventions]")


# ---------------------------------------------------------------------------- matching
def path_matches(path: str, pattern: str) -> bool:
    """Whether the anchored glob ``pattern`` covers the repository path ``path`` (a folder covers its files)."""
    bare = pattern.rstrip("/")
    if not bare:
        return False
    regex = glob_regex(bare)
    if regex.fullmatch(path):
        return True
    parts = path.split("/")
    return any(regex.fullmatch("/".join(parts[:k])) for k in range(1, len(parts)))


def python_regions(text: str) -> list[list[tuple[str, str]]]:
    """For each line (index 0 = line 1): the enclosing Python definitions, outermost first, as
    ``(kind, name)`` with kind ``def`` or ``class``; found by indentation, so a file that does not
    parse is still read."""
    stack: list[tuple[int, str, str]] = []
    out: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if stripped and not stripped.startswith("#"):
            while stack and indent <= stack[-1][0]:
                stack.pop()
        match = _DEF.match(line)
        if match:
            kind = "class" if line.lstrip().startswith("class") else "def"
            stack.append((indent, kind, match.group(2)))
        out.append([(kind, name) for _, kind, name in stack])
    return out


def _region_hits(region: str, regions: list[tuple[str, str]]) -> bool:
    kind, _, glob = region.partition(" ")
    return any(k == kind and fnmatch.fnmatchcase(name, glob.strip()) for k, name in regions)


def _key_hits(region: str, key: str) -> bool:
    return fnmatch.fnmatchcase(key, region) or fnmatch.fnmatchcase(key.rsplit(".", 1)[-1], region)


def incidental_line(text: str) -> bool:
    """Whether a changed Python line is blank, a comment, or only a crash / exit / file or process I/O."""
    stripped = text.strip()
    return not stripped or stripped.startswith("#") or bool(_INCIDENTAL.search(stripped))


def _is_code_region(region: str | None) -> bool:
    return region is not None and region.split(None, 1)[0] in ("def", "class")


# ---------------------------------------------------------------------------- classifying
@dataclass(frozen=True)
class _Unit:
    """One changed thing: a line (``regions`` set), a key (``key`` set) or a whole file."""

    path: str
    regions: tuple[tuple[str, str], ...] | None = None
    key: str | None = None
    #: a Python line that is blank, a comment, or only a crash / exit / I/O (:func:`incidental_line`)
    incidental: bool = False


def _class_of(unit: _Unit, rules: InterventionRules) -> str:
    for rule in rules.rules:  # the policy's order
        if not path_matches(unit.path, rule.path):
            continue
        if unit.incidental and rule.klass == "algorithm":
            continue
        if rule.region is None:
            return rule.klass
        if _is_code_region(rule.region):
            if unit.regions is not None and _region_hits(rule.region, list(unit.regions)):
                return rule.klass
        elif unit.key is not None and _key_hits(rule.region, unit.key):
            return rule.klass
    return OTHER


def classify_changes(
    units: Iterable[_Unit],
    rules: InterventionRules,
    *,
    version: str = "",
    base: str | None = None,
    tip: str | None = None,
) -> VersionIntervention:
    """Count changed units per class and pick the primary class."""
    counts: dict[str, int] = {}
    files: dict[str, set[str]] = {}
    for unit in units:
        klass = _class_of(unit, rules)
        counts[klass] = counts.get(klass, 0) + 1
        files.setdefault(klass, set()).add(unit.path)
    order = [*rules.order, OTHER]
    classes = [k for k in order if counts.get(k)]
    return VersionIntervention(
        version=version,
        base=base,
        tip=tip,
        primary=classes[0] if classes else NONE,
        classes=classes,
        units={k: counts[k] for k in classes},
        files={k: sorted(files[k]) for k in classes},
    )


def _blob(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> bytes | None:
    try:
        obj = repo[tree[path].id]
    except KeyError:
        return None
    return obj.data if isinstance(obj, pygit2.Blob) else None


def _text(data: bytes | None) -> str | None:
    if data is None or len(data) > _MAX_TEXT_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _key_units(path: str, old: bytes | None, new: bytes | None) -> list[_Unit] | None:
    """The changed dotted keys of a structured file (None when a side does not parse)."""

    sides = []
    for data in (old, new):
        if data is None:
            sides.append({})
            continue
        try:
            sides.append(_parse(path, data))
        except (ValueError, RecursionError):
            return None
    before, after = sides
    keys = [
        k
        for k in sorted(set(before) | set(after))
        if k not in before
        or k not in after
        or before[k] != after[k]
        or type(before[k]) is not type(after[k])
    ]
    return [_Unit(path, key=k) for k in keys]


def _at(regions: list[list[tuple[str, str]]] | None, lineno: int) -> tuple[tuple[str, str], ...]:
    """The enclosing definitions of line ``lineno`` (1-based); none outside Python files."""
    return tuple(regions[lineno - 1]) if regions and 0 < lineno <= len(regions) else ()


def diff_units(
    repo: pygit2.Repository, old_tree: pygit2.Tree, new_tree: pygit2.Tree
) -> list[_Unit]:
    """Every changed line, key or file between two trees."""
    diff = repo.diff(old_tree, new_tree, context_lines=0)
    diff.find_similar()
    units: list[_Unit] = []
    for patch in diff:
        delta = patch.delta
        old_path, new_path = delta.old_file.path, delta.new_file.path
        old_data = (
            _blob(repo, old_tree, old_path) if delta.status != pygit2.GIT_DELTA_ADDED else None
        )
        new_data = (
            _blob(repo, new_tree, new_path) if delta.status != pygit2.GIT_DELTA_DELETED else None
        )
        if new_path.endswith(_STRUCTURED) and old_path == new_path:
            keys = _key_units(new_path, old_data, new_data)
            if keys is not None:
                units += keys or [_Unit(new_path)]  # formatting only: still a change of the file
                continue
        old_text, new_text = _text(old_data), _text(new_data)
        unreadable = (old_data is not None and old_text is None) or (
            new_data is not None and new_text is None
        )
        if delta.is_binary or unreadable:
            units.append(_Unit(new_path))
            if old_path != new_path:
                units.append(_Unit(old_path))
            continue
        python = new_path.endswith(".py") or old_path.endswith(".py")
        old_regions = python_regions(old_text or "") if python else None
        new_regions = python_regions(new_text or "") if python else None
        lines = 0
        for hunk in patch.hunks:
            for line in hunk.lines:
                if line.origin == "+" and line.new_lineno > 0:
                    units.append(
                        _Unit(
                            new_path,
                            regions=_at(new_regions, line.new_lineno),
                            incidental=python and incidental_line(line.content),
                        )
                    )
                    lines += 1
                elif line.origin == "-" and line.old_lineno > 0:
                    units.append(
                        _Unit(
                            old_path,
                            regions=_at(old_regions, line.old_lineno),
                            incidental=python and incidental_line(line.content),
                        )
                    )
                    lines += 1
        if not lines:  # a rename or a mode change without a changed line
            units.append(_Unit(new_path))
    return units


def classify_version(
    ws: Workspace, version: str, rules: InterventionRules, *, commit: str | None = None
) -> VersionIntervention:
    """The intervention class of ``version``: its branch tip (or ``commit``, e.g. the commit a run
    trained) against the commit it was branched from."""

    record = ws.resolve(version)
    if not record.parents:
        return VersionIntervention(
            version=record.id, base=None, tip=record.base_commit, primary=None
        )
    repo = ws.git.repo
    target = (
        pygit2.Oid(hex=commit) if commit is not None else ws.git.ref_target(branch_ref(record.id))
    )
    tip = repo[target if target is not None else pygit2.Oid(hex=record.base_commit)].peel(
        pygit2.Commit
    )
    base = repo[pygit2.Oid(hex=record.base_commit)].peel(pygit2.Commit)
    units = diff_units(repo, base.tree, tip.tree)
    return classify_changes(units, rules, version=record.id, base=str(base.id), tip=str(tip.id))


def intervention_record(
    ws: Workspace, version: str, *, commit: str | None = None
) -> dict[str, Any] | None:
    """What a ledger event may carry about ``version``'s intervention class (e.g. ``run.started``'s
    ``data["intervention"]``): None when the policy has no ``[interventions]``; ``{"error": ...}``
    instead of raising, so that a record never stops the command that writes it."""

    try:
        rules = policy_rules(ws)
        if rules is None:
            return None
        return classify_version(ws, version, rules, commit=commit).to_dict()
    except EvotreeError as exc:
        return {"error": exc.code, "message": exc.message}
    except (KeyError, ValueError, pygit2.GitError) as exc:
        return {"error": type(exc).__name__, "message": str(exc)[:300]}
