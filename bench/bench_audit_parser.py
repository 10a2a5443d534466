#!/usr/bin/env python
"""Benchmark: the audit's hand-written shell lexer against tree-sitter-bash.

Both read every command of the labelled corpora (``tests/data/audit/corpus.jsonl``,
``heldout.jsonl`` and the commands of the development trajectory set
``tests/data/audit/trajectories/dev``; the held-out trajectory set is left alone).
Measured per parser:

* ``errors``: commands the parser could not read without an error (tree-sitter: a tree with an
  ``ERROR`` or ``MISSING`` node; the lexer never raises, so: commands for which it found no
  simple command at all although tree-sitter found one);
* ``commands``: simple commands found (tree-sitter: ``command`` nodes, the ones inside ``$(...)``,
  backticks and process substitutions included; the lexer: before unwrapping, i.e. without
  following ``bash -c``, ``eval``, Python, ...);
* ``only_ts`` / ``only_lexer``: commands whose program name one parser found and the other did
  not (examples printed);
* ``us_per_command``: uncached parse time, median of --repeats.

tree-sitter is not a dependency of the project: install it beside (``pip install tree-sitter
tree-sitter-bash``) to run this. Run:

    .venv/bin/python bench/bench_audit_parser.py [--repeats 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "tests" / "data" / "audit"


def commands() -> list[str]:
    out = []
    for name in ("corpus.jsonl", "heldout.jsonl"):
        out += [
            json.loads(x)["command"] for x in (DATA / name).read_text().splitlines() if x.strip()
        ]
    from evotree.harness.audit.transcripts import read_trajectories

    for labels in [
        DATA / "trajectories" / "dev" / "labels.jsonl"
    ]:  # never the held-out trajectories
        for row in map(json.loads, labels.read_text().splitlines()):
            if row.get("meta"):
                continue
            for traj in read_trajectories(labels.parent / "files" / row["file"]):
                out += [s.command for s in traj.steps if s.command]
    return list(dict.fromkeys(out))


def lexer_names(text: str) -> list[str]:
    from evotree.harness.audit.lexer import _Lexer, _split

    names: list[str] = []
    stack = [text]
    while stack:
        lexer = _Lexer(stack.pop()).run()
        stack += lexer.subs
        names += [c.argv[0].rsplit("/", 1)[-1] for c in _split(lexer) if c.argv]
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    try:
        import tree_sitter
        import tree_sitter_bash
    except ImportError:
        print(
            "tree-sitter / tree-sitter-bash not installed: pip install tree-sitter tree-sitter-bash",
            file=sys.stderr,
        )
        sys.exit(2)
    ts = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))

    def ts_names(text: str) -> tuple[list[str], bool]:
        tree = ts.parse(text.encode())
        names, stack = [], [tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "command":
                name = node.child_by_field_name("name")
                if name is not None:
                    names.append(name.text.decode(errors="replace").strip("'\"").rsplit("/", 1)[-1])
            stack.extend(node.children)
        return names, tree.root_node.has_error

    cmds = commands()
    timing: dict[str, list[float]] = {"lexer": [], "tree_sitter": []}
    for _ in range(args.repeats):
        for variant in ("lexer", "tree_sitter"):
            start = time.perf_counter()
            for text in cmds:
                if variant == "lexer":
                    lexer_names(text)
                else:
                    ts_names(text)
            timing[variant].append((time.perf_counter() - start) / len(cmds) * 1e6)
    ts_errors, lexer_empty, n_ts, n_lex = [], [], 0, 0
    only_ts: list[tuple[str, list[str]]] = []
    only_lex: list[tuple[str, list[str]]] = []
    for text in cmds:
        tnames, err = ts_names(text)
        lnames = lexer_names(text)
        n_ts += len(tnames)
        n_lex += len(lnames)
        if err:
            ts_errors.append(text)
        if tnames and not lnames:
            lexer_empty.append(text)
        extra_ts = sorted(set(tnames) - set(lnames))
        extra_lex = sorted(set(lnames) - set(tnames))
        if extra_ts:
            only_ts.append((text, extra_ts))
        if extra_lex:
            only_lex.append((text, extra_lex))
    result: dict[str, Any] = {
        "bench": "audit_parser",
        "commands": len(cmds),
        "us_per_command": {k: statistics.median(v) for k, v in timing.items()},
        "tree_sitter": {
            "errors": len(ts_errors),
            "commands": n_ts,
            "only_ts": len(only_ts),
            "error_examples": [t[:120] for t in ts_errors[:8]],
            "only_examples": [(t[:120], e) for t, e in only_ts[:12]],
        },
        "lexer": {
            "empty": len(lexer_empty),
            "commands": n_lex,
            "only_lexer": len(only_lex),
            "only_examples": [(t[:120], e) for t, e in only_lex[:12]],
        },
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
