"""Commands of memory and suggestions: `evotree memory ...`, `evotree suggest`.

The commands sit on a holder group; :func:`register` moves them onto the ``evotree`` group
(which imports this module only when one of them runs). The text renderers are here too (rich,
imported when text is printed).
"""

from __future__ import annotations

from typing import Any

import click
from evotree.cli.common import console
from evotree.core.text import escape_control
from evotree.memory.model import InvalidMemory
from evotree.cli.common import open_workspace
from evotree.cli.common import outputs
from evotree.memory.record import add_entry
from evotree.memory.read import MIN_DOMAINS
from evotree.memory.read import list_entries
from evotree.memory.read import skill_status
from evotree.memory.read import get_entry
from evotree.memory.read import search
from evotree.memory.transfer import export_memory
from evotree.memory.transfer import import_memory
from evotree.memory.transfer import merge_memory
from evotree.memory.suggestions import suggest as make_suggestions

__all__ = ["register"]

_KINDS = ("skill_verification", "lesson", "negative_evidence", "incident")
_KIND_LABEL = {
    "skill_verification": "verify",
    "lesson": "lesson",
    "negative_evidence": "negative",
    "incident": "incident",
}


def _console() -> Any:

    return console(highlight=False)


def _t(text: Any, *, keep_newlines: bool = False) -> str:
    """Text someone wrote, for rich: control characters shown escaped, markup shown as typed."""
    from rich.markup import escape

    return escape(escape_control(text, keep_newlines=keep_newlines))


def _short(text: str, width: int = 90) -> str:
    text = " ".join(str(text).split())
    text = text if len(text) <= width else text[: width - 1] + "…"
    return _t(text)


def _entry_row(entry: dict[str, Any]) -> list[str]:
    origin = entry.get("origin")
    where = _t(entry["domain"]) + (" (imported)" if origin else "")
    return [
        _t(entry["id"]),
        _t(_KIND_LABEL.get(entry["kind"], entry["kind"])),
        _t(entry.get("version") or ""),
        _t(entry.get("skill") or ""),
        where,
        _short(entry["text"], 160),
    ]


def _render_entries(result: dict[str, Any]) -> None:
    from rich.table import Table

    console = _console()
    if not result["entries"]:
        console.print(
            "memory is empty"
            + (" for this filter" if result.get("filtered") else "")
            + ": it fills on promotion, rejection, abandonment and `evotree memory add`."
        )
    else:
        table = Table(title=f"memory ({len(result['entries'])} entries)", show_lines=False)
        for column in ("id", "kind", "version", "skill", "domain", "text"):
            table.add_column(
                column,
                no_wrap=column in ("id", "skill"),
                overflow="fold" if column == "text" else "ellipsis",
                ratio=3 if column == "text" else None,
            )
        for entry in result["entries"]:
            table.add_row(*_entry_row(entry))
        console.print(table)
    if result.get("skills"):
        _render_skills({"skills": result["skills"], "min_domains": result.get("min_domains", 2)})


def _render_skills(result: dict[str, Any]) -> None:
    from rich.table import Table

    console = _console()
    if not result["skills"]:
        console.print("no skill has been verified yet (verifications are recorded on promotion).")
        return
    table = Table(
        title=f"skills in memory (verified across domains = significant gains in "
        f">= {result['min_domains']} domains)"
    )
    for column in ("skill", "status", "significant domains", "tried", "significant", "negative"):
        table.add_column(column, no_wrap=column in ("skill", "status"))
    for status in result["skills"]:
        label = (
            "[green]verified across domains[/]"
            if status["verified_across_domains"]
            else ("verified in one domain" if status["domains"] else "not verified")
        )
        table.add_row(
            _t(status["skill"]),
            label,
            _t(", ".join(status["domains"]) or "-"),
            str(status["verifications"]),
            str(status["significant"]),
            str(status["negative"]),
        )
    console.print(table)


def _render_entry(entry: dict[str, Any]) -> None:
    import json

    console = _console()
    console.print(
        f"[bold]{_t(entry['id'])}[/]  {_t(entry['kind'])}"
        + (f"  skill {_t(entry['skill'])}" if entry.get("skill") else "")
    )
    console.print(
        f"version {_t(entry.get('version') or '-')}  domain {_t(entry['domain'])}  "
        f"workspace {_t(entry['workspace'])}"
    )
    console.print(f"by {_t(entry['created_by'])} at {_t(entry['created_at'])}")
    if entry.get("origin"):
        origin = entry["origin"]
        console.print(
            f"[yellow]imported[/] from workspace {_t(origin.get('imported_from'))} "
            f"({_t(origin.get('imported_domain'))}) at {_t(origin.get('imported_at'))} by "
            f"{_t(origin.get('imported_by'))}"
        )
    if entry.get("tags"):
        console.print("tags: " + _t(", ".join(entry["tags"])))
    console.print()
    console.print(
        _t(entry["text"])
    )  # newlines too are shown escaped: no line of it can pass for evotree's
    for name in ("data", "evidence"):
        if entry.get(name):
            console.print(f"\n[bold]{name}[/]")
            console.print(
                _t(json.dumps(entry[name], indent=2, ensure_ascii=False), keep_newlines=True)
            )


def _render_added(entry: dict[str, Any]) -> None:
    _console().print(f"added {_t(entry['kind'])} {_t(entry['id'])} to memory (refs/evotree/memory)")


def _render_hits(result: dict[str, Any]) -> None:
    from rich.table import Table

    console = _console()
    if not result["hits"]:
        console.print(
            f"no memory entry matches {_t(repr(result['query']))} (every word must match; word* matches "
            "a prefix)"
        )
        return
    table = Table(title=f"memory search: {_t(result['query'])}")
    for column in ("score", "id", "kind", "version", "skill", "text"):
        table.add_column(
            column,
            no_wrap=column in ("id", "skill"),
            overflow="fold" if column == "text" else "ellipsis",
            ratio=3 if column == "text" else None,
        )
    for hit in result["hits"]:
        entry = hit["entry"]
        table.add_row(
            f"{hit['score']:.3g}",
            _t(entry["id"]),
            _t(_KIND_LABEL.get(entry["kind"], entry["kind"])),
            _t(entry.get("version") or ""),
            _t(entry.get("skill") or ""),
            _short(entry["text"], 110),
        )
    console.print(table)


def _render_export(result: dict[str, Any]) -> None:
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(result["kinds"].items())) or "nothing"
    _console().print(f"exported {result['entries']} entries ({_t(kinds)}) to {_t(result['path'])}")


def _render_import(result: dict[str, Any]) -> None:
    verb = "would add" if result["dry_run"] else "added"
    _console().print(
        f"{verb} {len(result['added'])} entries from workspace {_t(result['source_workspace'])} "
        f"({_t(result['source_domain'])} domain); {len(result['skipped'])} already present"
        + (f"; memory commit {result['commit'][:10]}" if result.get("commit") else "")
    )


def _render_merge(result: dict[str, Any]) -> None:
    if result["commit"] is None:
        _console().print(
            f"nothing to merge: memory already holds {_t(result['source'])} "
            f"({len(result['skipped'])} entries)"
        )
        return
    how = "fast-forwarded to" if result["fast_forward"] else "merged"
    _console().print(
        f"{how} {_t(result['source'])}: {len(result['added'])} entries added, "
        f"{len(result['skipped'])} already present; memory commit {result['commit'][:10]}"
    )


def _render_suggest(result: dict[str, Any]) -> None:
    console = _console()
    source = "findings file" if result["source"] == "file" else "ledger (no local findings file)"
    console.print(
        f"[bold]suggestions for {_t(result['version'])}[/] ({_t(result['domain'])} domain; "
        f"{result['findings']} findings from the {source}; {result['memory_entries']} memory entries)"
    )
    changes = result.get("changes") or []
    for item in changes:
        codes = ", ".join(sorted({f"{f['code']} ({f['severity']})" for f in item["addresses"]}))
        console.print(
            f" →  [bold]recipe change: {_t(item['param'])} {_t(str(item['from']))} → "
            f"{_t(str(item['to']))}[/]  score {item['score']:.2f}  ({_t(item.get('where') or '')})"
        )
        console.print(f"    addresses {_t(codes)}")
        console.print(f"    why: {_t(item.get('why') or '')}")
    if not result["suggestions"]:
        console.print("no skill addresses these findings.")
    for rank, item in enumerate(result["suggestions"], 1):
        mem = item["memory"]
        label = (
            "[green]verified across domains[/]"
            if mem["verified_across_domains"]
            else "[green]verified in this domain[/]"
            if mem["verified_in_domain"]
            else f"verified in {_t(', '.join(mem['domains']))}"
            if mem["domains"]
            else "untested"
            if not mem["verifications"]
            else "no significant gain yet"
        )
        dim = item["applied"] or item["applies"] is False
        head = f"{rank:>2}. [bold]{_t(item['skill'])}[/]  score {item['score']:.2f}  {label}"
        console.print(f"[dim]{head}[/]" if dim else head)
        codes = ", ".join(sorted({f"{f['code']} ({f['severity']})" for f in item["addresses"]}))
        console.print(f"    addresses {_t(codes)}")
        console.print(f"    why: {_t('; '.join(item['reasons']))}")
    if result["unaddressed"]:
        codes = ", ".join(sorted({f["code"] for f in result["unaddressed"]}))
        console.print(f"findings no skill addresses yet: {_t(codes)}")


def _parse_evidence(pairs: tuple[str, ...]) -> dict[str, str]:

    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidMemory(
                f"--evidence: expected KEY=VALUE, actually: {pair!r}",
                fix="e.g. --evidence run=r-20260101-abc --evidence finding=signal.dead_groups_high",
            )
        out[key.strip()] = value.strip()
    return out


# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.group()
def memory() -> None:
    """What the tree learned, kept on refs/evotree/memory (advice, never gate evidence).

    \b
    Entries: skill verifications (recorded on promotion: skill, domain, version, Δ with
    CI and p), lessons, negative evidence (rejected and abandoned versions with their
    findings and reasons) and audit incidents. Memory travels with
      git push origin 'refs/evotree/*'
    and between workspaces with `evotree memory export` / `evotree memory import`.
    A skill is "verified across domains" after significant gains in >= 2 domains.
    """


@memory.command("add")
@click.argument("text")
@click.option(
    "--kind",
    type=click.Choice(["lesson", "negative_evidence"]),
    default="lesson",
    show_default=True,
    help="What it is (verifications and incidents are recorded automatically).",
)
@click.option(
    "--version",
    "version",
    default=None,
    metavar="V",
    help="The version it is about (linked as evidence).",
)
@click.option("--skill", default=None, metavar="NAME", help="The skill it is about.")
@click.option(
    "--evidence",
    "evidence",
    multiple=True,
    metavar="KEY=VALUE",
    help="Link evidence (a run id, a finding code, a commit...); repeatable.",
)
@click.option(
    "--tag", "tags", multiple=True, metavar="TAG", help="A tag to find it by; repeatable."
)
@outputs(_render_added)
def memory_add(
    text: str,
    kind: str,
    version: str | None,
    skill: str | None,
    evidence: tuple[str, ...],
    tags: tuple[str, ...],
) -> Any:
    """Add a lesson (TEXT) to memory, linked to a version and evidence."""

    return add_entry(
        open_workspace(),
        text,
        kind=kind,
        version=version,
        skill=skill,
        evidence=_parse_evidence(evidence),
        tags=list(tags),
    ).to_dict()


@memory.command("list")
@click.option("--kind", type=click.Choice(_KINDS), default=None, help="Only entries of this kind.")
@click.option("--skill", default=None, metavar="NAME", help="Only entries about this skill.")
@click.option(
    "--version", "version", default=None, metavar="V", help="Only entries about this version."
)
@click.option(
    "--domain", default=None, metavar="DOMAIN", help="Only entries learned in this domain."
)
@click.option(
    "-n", "--limit", type=click.IntRange(min=1), default=None, help="Only the newest N entries."
)
@outputs(_render_entries)
def memory_list(
    kind: str | None,
    skill: str | None,
    version: str | None,
    domain: str | None,
    limit: int | None,
) -> Any:
    """List memory entries, oldest first, and the skills' verification status."""

    ws = open_workspace()
    entries = list_entries(ws, kind, skill=skill, version=version, domain=domain)
    if limit is not None:
        entries = entries[-limit:]
    statuses = [s.to_dict() for s in skill_status(ws) if skill is None or s.skill == skill]
    return {
        "v": 1,
        "entries": [e.to_dict() for e in entries],
        "skills": statuses,
        "min_domains": MIN_DOMAINS,
        "filtered": any((kind, skill, version, domain, limit)),
    }


@memory.command("show")
@click.argument("entry_id", metavar="ID")
@outputs(_render_entry)
def memory_show(entry_id: str) -> Any:
    """Show one entry in full (ID or a unique prefix of at least 4 characters)."""

    return get_entry(open_workspace(), entry_id).to_dict()


@memory.command("search")
@click.argument("words", nargs=-1, required=True)
@click.option("--kind", type=click.Choice(_KINDS), default=None, help="Only entries of this kind.")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="At most this many hits.",
)
@outputs(_render_hits)
def memory_search(words: tuple[str, ...], kind: str | None, limit: int) -> Any:
    """Full-text search (BM25): every word must match; word* matches a prefix.

    \b
    Searches the text, version, skill, domain, tags and the data of every entry
    (feedback, reasons, hypotheses, finding codes and titles), e.g.
      evotree memory search dead groups
      evotree memory search "StdGroup*" --kind skill_verification
    """

    query = " ".join(words)
    hits = search(open_workspace(), query, limit=limit, kind=kind)
    return {"v": 1, "query": query, "hits": [h.to_dict() for h in hits]}


@memory.command("skills")
@outputs(_render_skills)
def memory_skills() -> Any:
    """Each skill's status: domains with significant gains, verified across domains or not."""

    return {
        "v": 1,
        "skills": [s.to_dict() for s in skill_status(open_workspace())],
        "min_domains": MIN_DOMAINS,
    }


@memory.command("export")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--kind", type=click.Choice(_KINDS), default=None, help="Only entries of this kind.")
@click.option("--force", is_flag=True, help="Overwrite PATH if it exists.")
@outputs(_render_export)
def memory_export(path: str, kind: str | None, force: bool) -> Any:
    """Write memory to PATH (one JSON document with a digest) for another workspace."""

    return export_memory(open_workspace(), path, kind=kind, force=force).to_dict()


@memory.command("import")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option(
    "--dry-run", is_flag=True, help="Validate and say what would be added; write nothing."
)
@outputs(_render_import)
def memory_import(path: str, dry_run: bool) -> Any:
    """Add the entries of an export at PATH (validated first; all or nothing; no duplicates).

    \b
    Imported entries are marked with where they came from. They are advice: they can
    make a skill "verified across domains" in suggestions, never pass a gate.
    """

    return import_memory(open_workspace(), path, dry_run=dry_run).to_dict()


@memory.command("merge")
@click.argument("rev", metavar="REF")
@outputs(_render_merge)
def memory_merge(rev: str) -> Any:
    """Join a diverged copy of memory (fetched to REF) into refs/evotree/memory.

    \b
    When a clone and this workspace both added entries, a plain fetch of
    refs/evotree/memory is refused (not a fast-forward). Fetch theirs aside, merge, push:
      git fetch origin refs/evotree/memory:refs/remotes/origin/evotree-memory
      evotree memory merge refs/remotes/origin/evotree-memory
      git push origin refs/evotree/memory
    Every entry of REF is validated first; nothing is written if one is bad.
    """

    return merge_memory(open_workspace(), rev).to_dict()


@cli.command()
@click.argument("version")
@outputs(_render_suggest)
def suggest(version: str) -> Any:
    """Suggest skills for VERSION: its findings mapped to skills, ranked by memory.

    \b
    Reads the findings of `evotree diagnose VERSION`; each finding names the skills that
    address it (e.g. a high dead-group ratio -> StdGroupFilter). Skills verified in this
    domain or across domains rank first; negative evidence and failed verifications rank
    a skill down; skills already applied to VERSION come last. See docs/memory.md.
    """

    return make_suggestions(open_workspace(), version).to_dict()


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
