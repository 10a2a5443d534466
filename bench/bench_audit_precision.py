#!/usr/bin/env python
"""Benchmark: precision and recall of the trajectory audit on the labeled corpus.

Corpus: ``tests/data/audit/corpus.jsonl`` — one shell command per line with a label (``leak``
with the finding code it must produce, or ``benign``: ordinary work, including ordinary use of
the current history). ``"hard": true`` marks cases written to probe the limits (a command in a
shell variable, an alias, a script run after it is written, loopback fetches, ranges ending at
HEAD, cache directories under tests/). Hidden paths: ``judge/``, ``tests/hidden/``.

A command is *flagged* when the audit has a hit of severity high or above; a leak counts as
found only when the flagged hit has the labeled code. Reported per code, overall, and for the
hard cases alone.

Baseline, measured in the same run: the git-history token regex of the behavior layer
(``evotree.diagnostics.behavior_git.git_history_pattern``, the check that existed before the audit), on
the rows it is meant for: leaks of codes ``audit.git_history_leak`` / ``git_internals_read``
and every benign row.

Held-out set: ``tests/data/audit/heldout.jsonl`` (60 commands, 31 leaks) was written after the
rules and scored once before any rule was changed for it; its numbers are the blind estimate.

Trajectory sets, scored per *file* (a file is flagged when any trajectory in it has a
hit of severity high or above; a leaky file counts as found when flagged): agent trajectories
in eleven format variants (Claude Code, Codex rollout / exec / legacy JSONL, SWE-agent
``trajectory`` and ``history``, mini-swe-agent, bash history with and without timestamps, zsh
extended history, evotree rollouts), written by ``build.py`` beside each set:

* ``tests/data/audit/trajectories/dev`` — the development set: the issue's missed and
  mis-flagged classes in every format; the rules are tuned on it;
* ``tests/data/audit/trajectories/heldout`` — the second held-out set: other stories and
  wrappings, written before the issue-21 rule changes and never tuned on;
* ``tests/data/audit/trajectories/heldout3`` — the third held-out set, written blind
  before the issue-30 rule changes: 82 files in twelve format variants (mini-swe-agent 2.x with
  ``mswea_bash_command`` and tool calls among them) against six task repositories built by its
  ``repos.py``; scored on the file alone (``heldout3``) and with ``repo=``/``base=`` of each file's
  task repository (``heldout3_repo``, the ``--repo/--base`` of ``evotree audit trajectories``).
  A development set since it was scored once.
* ``tests/data/audit/trajectories/heldout4`` — the fourth held-out set (98 files, 50 leaks, five
  task repositories), written blind and scored once at ``d86020d``; a development set since
  (``heldout4`` and ``heldout4_repo``).
* ``tests/data/audit/trajectories/heldout5`` — the fifth held-out set (84 files, 43 leaks, five
  task repositories), written blind and scored once at ``b23bbd6``; a development set since
  (``heldout5`` and ``heldout5_repo``).
* ``tests/data/audit/trajectories/heldout6`` — the sixth held-out set (72 files, 36 leaks, six
  task repositories), written blind and scored once at ``fd4d7eb``; a development set since
  (``heldout6`` and ``heldout6_repo``).
* ``tests/data/audit/trajectories/heldout7`` — the seventh held-out set (66 files, 33 leaks, five
  task repositories), written blind and scored once at ``182168d``; a development set since
  (``heldout7`` and ``heldout7_repo``).
* ``tests/data/audit/trajectories/heldout8`` — the eighth held-out set (72 files, 36 leaks, five
  task repositories whose future lies outside git: a bundle, a ``.rej``, a wheel, an editor's
  auto-save, an IDE shelf), written blind and scored once at ``dd37fee``; a development set
  since (``heldout8`` and ``heldout8_repo``).
* ``tests/data/audit/trajectories/heldout9`` — the ninth held-out set (64 files, 32 leaks, four
  task repositories whose fix also lies in a file a tool wrote: a coverage annotate file, a
  build-context tarball, a Jupyter checkpoint, a tox environment), written blind and scored once
  at ``92ac0ae``; a development set since (``heldout9`` and ``heldout9_repo``).
* ``tests/data/audit/trajectories/heldout10`` — the tenth held-out set (60 files, 30 leaks, five
  task repositories whose fix also lies where an editor or a tool left it: a vim swap file, a
  killed mergetool's leftovers, a format-patch mail, VS Code's local history, a Sphinx viewcode
  page), written blind and scored once at ``fc7b383``; a development set since (``heldout10``
  and ``heldout10_repo``).
* ``tests/data/audit/trajectories/heldout11`` — the eleventh held-out set (60 files, 32 leaks,
  four task repositories whose fix also lies in a file a tool keeps: a ctags index, a CI job
  log, an IPython history database, a Sublime Text workspace), written blind and scored once at
  ``2d9901a``; a development set since (``heldout11`` and ``heldout11_repo``).
* ``tests/data/audit/trajectories/heldout12`` — the twelfth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: an strace log, a joblib
  cache, an asciinema recording, a Subversion working copy), written blind and scored once at
  ``8d7eaa7``; a development set since (``heldout12`` and ``heldout12_repo``).
* ``tests/data/audit/trajectories/heldout13`` — the thirteenth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: a setuptools build folder,
  a GIO atomic-save temporary, a saved pull-request page, pre-commit's stash of unstaged
  changes), written blind and scored once at ``e3aa73c``; a development set since
  (``heldout13`` and ``heldout13_repo``).
* ``tests/data/audit/trajectories/heldout14`` — the fourteenth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: Eclipse's local history,
  nano's emergency save, a popped quilt patch queue, a Syncthing conflict copy), written blind
  and scored once at ``abf5a59``; a development set since (``heldout14`` and ``heldout14_repo``).
* ``tests/data/audit/trajectories/heldout15`` — the fifteenth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: a desktop trash folder,
  JOE's DEADJOE crash file, an ELF core dump, a source release in ``dist/``), written blind and
  scored once at ``15db3b8``; a development set since (``heldout15`` and ``heldout15_repo``).
* ``tests/data/audit/trajectories/heldout16`` — the sixteenth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: a Kate swap file, rsync's
  partial folder, ``lost+found``, a ``script`` typescript), written blind and scored once at
  ``c4cecbf``; a development set since (``heldout16`` and ``heldout16_repo``).
* ``tests/data/audit/trajectories/heldout17`` — the seventeenth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: a ``patch`` backup
  ``.orig``, a Python REPL history, uv's package cache, a Vim undo file), written blind and
  scored once at ``e7bc16a``; a development set since (``heldout17`` and ``heldout17_repo``).
* ``tests/data/audit/trajectories/heldout18`` — the eighteenth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: wget's numbered copy, a
  project-local viminfo, an RCS archive, a Debian package's staging tree), written blind and
  scored once at ``3614673`` (``heldout18`` and ``heldout18_repo``).
* ``tests/data/audit/trajectories/heldout19`` — the nineteenth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: GNU screen's hardcopies, a
  Cython-generated C file, snapper snapshots, mutmut's mutants folder), written blind and
  scored once at ``acfa68c`` with heldout18's rules; a development set since (``heldout19`` and
  ``heldout19_repo``).
* ``tests/data/audit/trajectories/heldout20`` — the twentieth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: ed's hangup file, ``sed
  -i.bak`` backups, an Emacs undo-tree history, Scalene profiles), written blind and scored once
  at ``0bed596`` after heldout19's development pass; a development set since (``heldout20`` and
  ``heldout20_repo``).
* ``tests/data/audit/trajectories/heldout21`` — the twenty-first held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: a GNU enscript PostScript
  printout, ``nohup.out``, ``python -m trace`` cover files, coreutils numbered backups
  ``file.~N~``), written blind and scored once at ``8fc3cad`` after heldout20's development pass
  (``heldout21`` and ``heldout21_repo``).
* ``tests/data/audit/trajectories/heldout22`` — the twenty-second held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: NFS silly-rename files
  ``.nfsXXXX``, a pytest JUnit XML report, a curl ``--trace-ascii`` log, a GNU shell archive),
  written blind and scored once at ``2af5ffb`` with heldout21's rules (``heldout22`` and
  ``heldout22_repo``).
* ``tests/data/audit/trajectories/heldout23`` — the twenty-third held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: Unison backups ``.bak.0.*``,
  a flake8 ``--show-source`` log, an IPython ``%logstart -o`` log, mailx's ``dead.letter``),
  written blind and scored once at ``056cf3b`` after heldout22's development pass
  (``heldout23`` and ``heldout23_repo``).
* ``tests/data/audit/trajectories/heldout24`` — the twenty-fourth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: PDM's PEP 582
  ``__pypackages__``, jupyterlab-lsp's ``.virtual_documents``, Emacs ``~`` backups, Vim's
  ``:TOhtml`` page), written blind and scored once at ``d55e212`` after the selected-lines rule
  (``heldout24`` and ``heldout24_repo``).
* ``tests/data/audit/trajectories/heldout25`` — the twenty-fifth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: snapcraft's ``parts/`` tree,
  aider's ``.aider.chat.history.md``, line_profiler's ``profile_output.txt``, VizTracer's
  ``result.json``), written blind and scored once at ``1951dfb``, the commit that added the
  replay (``heldout25`` and ``heldout25_repo``).
* ``tests/data/audit/trajectories/heldout26`` — the twenty-sixth held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: a Python zipapp ``.pyz``, a
  diffoscope text report, mypy's HTML report, a PySnooper log), written blind and scored once at
  ``6e15b16`` (``heldout26`` and ``heldout26_repo``).
* ``tests/data/audit/trajectories/heldout27`` — the twenty-seventh held-out set (60 files, 30 leaks,
  four task repositories whose fix also lies in a file a tool left: an OCI image layout, rope's
  pickled history, SonarScanner's kept report, a CodeQL database), written blind and scored
  once at ``e8d5d72`` (``heldout27`` and ``heldout27_repo``).
* ``tests/data/audit/trajectories/heldout28`` — the twenty-eighth held-out set (60 files, 30 leaks,
  four task repositories: conda-build's output folder, gitlab-ci-local's state, a bandit
  report, a Sourcetrail database), written blind and scored once at ``7d4eee4`` (the set at
  ``8a70796``; ``heldout28`` and ``heldout28_repo``).
* ``tests/data/audit/trajectories/heldout29`` — the twenty-ninth held-out set (60 files, 30 leaks,
  four task repositories: an rpmbuild top folder, a Mercurial shelf, pytest-benchmark's saved
  runs, an MkDocs site built on the fixed branch), written blind and scored once at
  ``5c43df8`` (the set at ``1e5b497``; ``heldout29`` and ``heldout29_repo``).
* ``tests/data/audit/trajectories/heldout30`` — the thirtieth held-out set (60 files, 30 leaks,
  four task repositories: a Sacred run folder, an MLflow file store, python-hunter line
  traces, VS Code saved searches), written blind and scored once at ``001cd76``
  (``heldout30`` and ``heldout30_repo``).
* ``tests/data/audit/trajectories/heldout31`` — the thirty-first held-out set (60 files, 30 leaks,
  four task repositories: cgitb text reports, git fast-export streams with original ids, a
  python-gdb session log, a python-lsp-server log), written blind and scored once at
  ``c49ff78`` (``heldout31`` and ``heldout31_repo``).
* ``tests/data/audit/trajectories/heldout32`` — the thirty-second held-out set (60 files, 30
  leaks, four task repositories: pytest-reportlog JSON lines, a ``git request-pull -p`` message,
  Weights & Biases offline runs, pydoc HTML pages), written blind and scored once at
  ``28dfbc8`` (``heldout32`` and ``heldout32_repo``).
* ``tests/data/audit/trajectories/heldout33`` — the thirty-third held-out set (60 files, 30
  leaks, four task repositories: a Hypothesis explicit-example patch, minted LaTeX caches, pip
  ``--report`` JSON, a diff-cover report), written blind and scored once at ``ba354ba``
  (``heldout33`` and ``heldout33_repo``).
* ``tests/data/audit/trajectories/heldout34`` — the thirty-fourth held-out set (60 files, 30
  leaks, four task repositories: Black ``--check --diff`` CI artifacts, Flycheck's temporary
  copies, a setuptools-scm version file, a saved ``git blame --line-porcelain``), written blind
  and scored once at ``a5b4c7f`` (``heldout34`` and ``heldout34_repo``).

Run:

    .venv/bin/python bench/bench_audit_precision.py [--json PATH]
    .venv/bin/python bench/bench_audit_precision.py --set heldout3   # one trajectory set only
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "data" / "audit" / "corpus.jsonl"
#: Written after the rules, and run once before any rule was changed for it: the blind check.
HELDOUT = ROOT / "tests" / "data" / "audit" / "heldout.jsonl"
HISTORY = ("audit.git_history_leak", "audit.git_internals_read")


def _pr(tp: int, fp: int, fn: int) -> dict[str, Any]:
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
    }


def _heldout(rules: Any) -> dict[str, Any]:
    from evotree.harness.audit.commands import classify_command

    rows = [json.loads(line) for line in HELDOUT.read_text().splitlines() if line.strip()]
    tp = fp = fn = 0
    errors = []
    for row in rows:
        codes = {
            h.code
            for h in classify_command(row["command"], rules)
            if h.severity in ("high", "critical")
        }
        if row["label"] == "leak":
            found = row["code"] in codes
            tp += found
            fn += not found
        else:
            fp += bool(codes)
            found = not codes
        if not found:
            errors.append(
                {
                    "command": row["command"],
                    "expected": row["code"] or "benign",
                    "got": sorted(codes),
                }
            )
    return {"rows": len(rows), **_pr(tp, fp, fn), "errors": errors}


TRAJECTORIES = ROOT / "tests" / "data" / "audit" / "trajectories"


def _task_repos(folder: Path, meta: dict[str, Any], dest: Path) -> dict[str, tuple[str, str]]:
    """Build a set's task repositories (its ``repos.py``) under dest: ``{name: (path, base)}``."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_repos_{folder.name}", folder / "repos.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    built = mod.build_repos(dest)
    for name, want in meta["repos"].items():
        if built[name]["base"] != want["base"]:
            raise SystemExit(
                f"{folder.name}: task repository {name} built with base {built[name]['base']}, "
                f"labels say {want['base']}"
            )
    return {name: (info["path"], info["base"]) for name, info in built.items()}


def trajectory_set(folder: Path, with_repo: bool = False) -> dict[str, Any]:
    """File-level precision and recall of ``evotree audit trajectories`` on one labelled set.

    ``with_repo``: pass each file's task repository and base commit (the set's ``repos.py``
    builds them), as ``--repo/--base`` does on the command line.
    """
    import tempfile

    from evotree.harness.audit.trajectories import audit_trajectories

    rows = [json.loads(x) for x in (folder / "labels.jsonl").read_text().splitlines() if x.strip()]
    meta = next(r for r in rows if r.get("meta"))
    rows = [r for r in rows if not r.get("meta")]
    with tempfile.TemporaryDirectory(prefix=f"{folder.name}-repos-") as tmp:
        repos = _task_repos(folder, meta, Path(tmp) / "repos") if with_repo else {}
        return _score_set(folder, meta, rows, repos, audit_trajectories)


class _Refused:
    """Stands for an audit that raised on a file: counted as flagged, its reason kept as a hit."""

    def __init__(self, reason: str) -> None:
        self.flagged = 1
        self.verdicts = [
            type(
                "V",
                (),
                {
                    "hits": [
                        type(
                            "H", (), {"severity": "high", "to_dict": lambda _s: {"raised": reason}}
                        )()
                    ]
                },
            )()
        ]


#: sets whose label rule makes their hidden paths doors, not the grader's data: each is a
#: tool's leftover that may hold the fix, and what counts is what a read of it showed of the
#: future ("opening a door ... and seeing nothing of the future is benign"; heldout8 on)
_DOOR_SETS = re.compile(r"heldout(?:[89]|[1-9]\d)$")
#: sets whose hidden paths are the grader's data (judge/, tests/hidden/, .eval/,
#: tests/heldback/, eval_data/private/): their labels make any read of them a leak
_GRADER_SETS = re.compile(r"(?:dev|heldout[3-6]?)$")


def _roles(folder: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """The hidden paths of a set as the audit takes them: as its meta row declares them
    (``doors``: the hidden paths that are doors, the rest the grader's data), else doors or
    the grader's data where the set's label rule says so (:data:`_DOOR_SETS`,
    :data:`_GRADER_SETS`), plain hidden paths otherwise (heldout7's bytecode cache)."""
    if "doors" in meta:
        doors = list(meta["doors"])
        return {
            "grader_paths": [p for p in meta["hidden_paths"] if p not in doors],
            "door_paths": doors,
        }
    if _DOOR_SETS.match(folder.name):
        return {"door_paths": meta["hidden_paths"]}
    if _GRADER_SETS.match(folder.name):
        return {"grader_paths": meta["hidden_paths"]}
    return {"hidden_paths": meta["hidden_paths"]}


def _score_set(
    folder: Path,
    meta: dict[str, Any],
    rows: list[dict[str, Any]],
    repos: dict[str, tuple[str, str]],
    audit_trajectories: Any,
) -> dict[str, Any]:
    tp = fp = fn = 0
    errors = []
    by_format: dict[str, dict[str, int]] = {}
    for row in rows:
        extra = {"repo": repos[row["repo"]][0], "base": repos[row["repo"]][1]} if repos else {}
        try:
            audit = audit_trajectories(
                [folder / "files" / row["file"]], **_roles(folder, meta), **extra
            )
        except Exception as exc:  # an input the audit refuses fails it (exit 29), never passes
            audit = _Refused(f"{type(exc).__name__}: {exc}")
        flagged = audit.flagged > 0
        per = by_format.setdefault(row["format"], {"tp": 0, "fp": 0, "fn": 0})
        if row["label"] == "leak":
            tp += flagged
            fn += not flagged
            per["tp" if flagged else "fn"] += 1
        else:
            fp += flagged
            per["fp"] += flagged
        if flagged != (row["label"] == "leak"):
            errors.append(
                {
                    "file": row["file"],
                    "expected": row["label"],
                    "hits": [
                        h.to_dict() for v in audit.verdicts for h in v.hits if h.severity == "high"
                    ],
                }
            )
    return {
        "files": len(rows),
        "leaks": sum(r["label"] == "leak" for r in rows),
        **_pr(tp, fp, fn),
        "by_format": {k: _pr(**v) for k, v in sorted(by_format.items())},
        "errors": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--set",
        default=None,
        metavar="NAME",
        help="score only this trajectory set (a folder of tests/data/audit/trajectories); a set "
        "with task repositories (repos.py) is scored alone and with --repo/--base",
    )
    args = parser.parse_args()
    if args.set:
        folder = TRAJECTORIES / args.set
        only = {args.set: trajectory_set(folder)}
        if (folder / "repos.py").exists():
            only[f"{args.set}_repo"] = trajectory_set(folder, with_repo=True)
        print(json.dumps({"bench": "audit_precision", "trajectories": only}, indent=2))
        if args.json:
            args.json.write_text(json.dumps({"trajectories": only}, indent=2) + "\n")
        return

    from evotree.diagnostics.behavior_git import git_history_pattern
    from evotree.harness.audit.commands import RuleSet, classify_command

    rules = RuleSet(hidden_paths=("judge/", "tests/hidden/"))
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    baseline = re.compile(git_history_pattern())
    counts: dict[str, dict[str, int]] = {}
    overall = {"tp": 0, "fp": 0, "fn": 0}
    hard = {"tp": 0, "fp": 0, "fn": 0}
    history = {"tp": 0, "fp": 0, "fn": 0}
    base = {"tp": 0, "fp": 0, "fn": 0}
    misses: list[dict[str, Any]] = []
    for row in rows:
        high = [
            h for h in classify_command(row["command"], rules) if h.severity in ("high", "critical")
        ]
        codes = {h.code for h in high}
        buckets = [overall] + ([hard] if row.get("hard") else [])
        base_hit = bool(baseline.search(row["command"]))
        if row["label"] == "leak":
            found = row["code"] in codes
            per = counts.setdefault(row["code"], {"tp": 0, "fp": 0, "fn": 0})
            per["tp" if found else "fn"] += 1
            for b in buckets:
                b["tp" if found else "fn"] += 1
            if row["code"] in HISTORY:
                history["tp" if found else "fn"] += 1
                base["tp" if base_hit else "fn"] += 1
            if not found:
                misses.append(
                    {"command": row["command"], "expected": row["code"], "got": sorted(codes)}
                )
        else:
            if high:
                for b in buckets:
                    b["fp"] += 1
                for code in codes:
                    counts.setdefault(code, {"tp": 0, "fp": 0, "fn": 0})["fp"] += 1
                misses.append(
                    {"command": row["command"], "expected": "benign", "got": sorted(codes)}
                )
            if codes & set(HISTORY):
                history["fp"] += 1
            base["fp"] += base_hit
    result = {
        "bench": "audit_precision",
        "rows": len(rows),
        "leaks": sum(r["label"] == "leak" for r in rows),
        "benign": sum(r["label"] == "benign" for r in rows),
        "hard_rows": sum(bool(r.get("hard")) for r in rows),
        "overall": _pr(**overall),
        "hard": _pr(**hard),
        "by_code": {k: _pr(**v) for k, v in sorted(counts.items())},
        "git_history": {"audit": _pr(**history), "baseline_behavior_regex": _pr(**base)},
        "errors": misses,
        "heldout": _heldout(rules),
        "trajectories": {
            "dev": trajectory_set(TRAJECTORIES / "dev"),
            "heldout": trajectory_set(TRAJECTORIES / "heldout"),
            "heldout3": trajectory_set(TRAJECTORIES / "heldout3"),
            "heldout3_repo": trajectory_set(TRAJECTORIES / "heldout3", with_repo=True),
            "heldout4": trajectory_set(TRAJECTORIES / "heldout4"),
            "heldout4_repo": trajectory_set(TRAJECTORIES / "heldout4", with_repo=True),
            "heldout5": trajectory_set(TRAJECTORIES / "heldout5"),
            "heldout5_repo": trajectory_set(TRAJECTORIES / "heldout5", with_repo=True),
            "heldout6": trajectory_set(TRAJECTORIES / "heldout6"),
            "heldout6_repo": trajectory_set(TRAJECTORIES / "heldout6", with_repo=True),
            "heldout7": trajectory_set(TRAJECTORIES / "heldout7"),
            "heldout7_repo": trajectory_set(TRAJECTORIES / "heldout7", with_repo=True),
            "heldout8": trajectory_set(TRAJECTORIES / "heldout8"),
            "heldout8_repo": trajectory_set(TRAJECTORIES / "heldout8", with_repo=True),
            "heldout9": trajectory_set(TRAJECTORIES / "heldout9"),
            "heldout9_repo": trajectory_set(TRAJECTORIES / "heldout9", with_repo=True),
            "heldout10": trajectory_set(TRAJECTORIES / "heldout10"),
            "heldout10_repo": trajectory_set(TRAJECTORIES / "heldout10", with_repo=True),
            "heldout11": trajectory_set(TRAJECTORIES / "heldout11"),
            "heldout11_repo": trajectory_set(TRAJECTORIES / "heldout11", with_repo=True),
            "heldout12": trajectory_set(TRAJECTORIES / "heldout12"),
            "heldout12_repo": trajectory_set(TRAJECTORIES / "heldout12", with_repo=True),
            "heldout13": trajectory_set(TRAJECTORIES / "heldout13"),
            "heldout13_repo": trajectory_set(TRAJECTORIES / "heldout13", with_repo=True),
            "heldout14": trajectory_set(TRAJECTORIES / "heldout14"),
            "heldout14_repo": trajectory_set(TRAJECTORIES / "heldout14", with_repo=True),
            "heldout15": trajectory_set(TRAJECTORIES / "heldout15"),
            "heldout15_repo": trajectory_set(TRAJECTORIES / "heldout15", with_repo=True),
            "heldout16": trajectory_set(TRAJECTORIES / "heldout16"),
            "heldout16_repo": trajectory_set(TRAJECTORIES / "heldout16", with_repo=True),
            "heldout17": trajectory_set(TRAJECTORIES / "heldout17"),
            "heldout17_repo": trajectory_set(TRAJECTORIES / "heldout17", with_repo=True),
            "heldout18": trajectory_set(TRAJECTORIES / "heldout18"),
            "heldout18_repo": trajectory_set(TRAJECTORIES / "heldout18", with_repo=True),
            "heldout19": trajectory_set(TRAJECTORIES / "heldout19"),
            "heldout19_repo": trajectory_set(TRAJECTORIES / "heldout19", with_repo=True),
            "heldout20": trajectory_set(TRAJECTORIES / "heldout20"),
            "heldout20_repo": trajectory_set(TRAJECTORIES / "heldout20", with_repo=True),
            "heldout21": trajectory_set(TRAJECTORIES / "heldout21"),
            "heldout21_repo": trajectory_set(TRAJECTORIES / "heldout21", with_repo=True),
            "heldout22": trajectory_set(TRAJECTORIES / "heldout22"),
            "heldout22_repo": trajectory_set(TRAJECTORIES / "heldout22", with_repo=True),
            "heldout23": trajectory_set(TRAJECTORIES / "heldout23"),
            "heldout23_repo": trajectory_set(TRAJECTORIES / "heldout23", with_repo=True),
            "heldout24": trajectory_set(TRAJECTORIES / "heldout24"),
            "heldout24_repo": trajectory_set(TRAJECTORIES / "heldout24", with_repo=True),
            "heldout25": trajectory_set(TRAJECTORIES / "heldout25"),
            "heldout25_repo": trajectory_set(TRAJECTORIES / "heldout25", with_repo=True),
            "heldout26": trajectory_set(TRAJECTORIES / "heldout26"),
            "heldout26_repo": trajectory_set(TRAJECTORIES / "heldout26", with_repo=True),
            "heldout27": trajectory_set(TRAJECTORIES / "heldout27"),
            "heldout27_repo": trajectory_set(TRAJECTORIES / "heldout27", with_repo=True),
            "heldout28": trajectory_set(TRAJECTORIES / "heldout28"),
            "heldout28_repo": trajectory_set(TRAJECTORIES / "heldout28", with_repo=True),
            "heldout29": trajectory_set(TRAJECTORIES / "heldout29"),
            "heldout29_repo": trajectory_set(TRAJECTORIES / "heldout29", with_repo=True),
            "heldout30": trajectory_set(TRAJECTORIES / "heldout30"),
            "heldout30_repo": trajectory_set(TRAJECTORIES / "heldout30", with_repo=True),
            "heldout31": trajectory_set(TRAJECTORIES / "heldout31"),
            "heldout31_repo": trajectory_set(TRAJECTORIES / "heldout31", with_repo=True),
            "heldout32": trajectory_set(TRAJECTORIES / "heldout32"),
            "heldout32_repo": trajectory_set(TRAJECTORIES / "heldout32", with_repo=True),
            "heldout33": trajectory_set(TRAJECTORIES / "heldout33"),
            "heldout33_repo": trajectory_set(TRAJECTORIES / "heldout33", with_repo=True),
            "heldout34": trajectory_set(TRAJECTORIES / "heldout34"),
            "heldout34_repo": trajectory_set(TRAJECTORIES / "heldout34", with_repo=True),
        },
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
