"""Play a held-out set's stories and write (or check) its trajectory files and labels.

The builder the held-out sets share (heldout4 to heldout18); each set's ``build.py`` passes a
:class:`Set` with its modules (``repos.py``, ``stories.py``, ``render.py``) and what its build did
its own way, and keeps its command line: ``build.py`` writes the set, ``build.py --check`` checks
it. From heldout9 on a set's ``build.py`` only names itself and its options (:func:`load`) and
takes its commands from the :class:`Set`.

Every story is played against a fresh copy of its task repository (built by the set's
``repos.py``): each shell command is run for real and its output recorded, except the steps that
reach the network (their output is written in the story, with the real objects of the repository
filled in). The recorded session is then written in the story's format under ``files/``, and
``labels.jsonl`` gets one row per file. :func:`check` checks the committed files against the
labels and freshly built repositories; :func:`replay` plays every story again into a scratch
directory and compares the result with the committed files byte for byte.

A set's ``build.py --check`` runs both (``--check --labels-only`` skips the replay). The label
checks: every file is labelled; what of the future each file's text shows is what its label says
(object ids and their abbreviations, future subjects, lines only future objects hold); a benign
file shows none of it (nor a line of the hidden files) and every revision it names is an
ancestor of the base; every revision a leak names as future resolves, at the base, to a commit
the base does not reach; a leak shows something of the future, names a future revision, or says
how else it reached the future (``reaches``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

_MAX_OUT = 6000
_HISTORY = ("bash", "bash-ts", "zsh")


@dataclass(frozen=True)
class Set:
    """One held-out set: its modules, where its files go, and what its build did its own way."""

    name: str  # "heldout8": the labels' meta row and the scratch directory's prefix
    repos: ModuleType  # the set's repos.py: build_repos, git_env, future_index, seen_in
    stories: ModuleType  # the set's stories.py: STORIES
    render: ModuleType  # the set's render.py: render(story, task, played)
    files: Path
    labels: Path
    hidden: list[str]  # the labels' hidden_paths
    token_keys: tuple[str, ...]  # the repository hashes stories name as @@key@@ (and @@key7@@)
    grep_extended: bool = True  # Grep steps run grep -rnE (False: grep -rn)
    #: Grep steps skip what ripgrep skips: .idea/ and the step's ``ignored`` globs (and ignore
    #: ``no_exclude``); False: they skip .git/ unless the step says ``no_exclude``
    grep_ignores: bool = True
    refresh_index: bool = True  # refresh the copied repository's index before playing
    fixed_diff_times: bool = True  # fix the modification times ``diff -u`` prints
    json_in_strings: bool = True  # file_text also decodes JSON inside strings (Codex outputs)
    seen_tags: bool = False  # future_seen also names future tags the text shows
    replay_on_check: bool = True  # --check also replays (--labels-only skips it)

    # the set's ``build.py`` names these as its own (file_text, build, check, replay, main)
    def file_text(self, path: Path) -> str:
        """Every string a trajectory file holds (JSON decoded where the file is JSON), joined."""
        return file_text(path, self.json_in_strings)

    def build(self, scratch: Path, files: Path | None = None, labels: Path | None = None) -> None:
        """Play every story and write the set's files and labels (scratch: repositories, copies)."""
        build(self, scratch, files, labels)

    def check(
        self, scratch: Path, labels: Path | None = None, files: Path | None = None
    ) -> list[str]:
        """Problems of the committed set against freshly built repositories (empty: all good)."""
        return check(self, scratch, labels, files)

    def replay(
        self, scratch: Path, labels: Path | None = None, files: Path | None = None
    ) -> list[str]:
        """Build the set again under scratch; the committed files that differ from it, byte for
        byte."""
        return replay(self, scratch, labels, files)

    def main(self, doc: str) -> None:
        """The set's command line (doc: its ``build.py``'s docstring)."""
        main(self, doc)


def load(build_py: str | Path, name: str, **options: Any) -> Set:
    """The set whose ``build.py`` is build_py: its ``render``, ``repos`` and ``stories`` modules
    imported from its folder (put first on ``sys.path``), its ``files/`` and ``labels.jsonl``,
    the hidden paths of its ``repos.HIDDEN``; options are the :class:`Set`'s other fields."""
    here = Path(build_py).resolve().parent
    sys.path.insert(0, str(here))
    render = importlib.import_module("render")
    repos = importlib.import_module("repos")
    stories = importlib.import_module("stories")
    return Set(
        name=name,
        repos=repos,
        stories=stories,
        render=render,
        files=here / "files",
        labels=here / "labels.jsonl",
        hidden=list(repos.HIDDEN),
        **options,
    )


def _tokens(s: Set, info: dict[str, Any]) -> dict[str, str]:
    """The values stories refer to as @@name@@: hashes of the repository, diffs of its fix."""
    out = {}
    for key in s.token_keys:
        if key in info:
            out[key] = info[key]
            out[key + "7"] = info[key][:7]
    return out


def _fill(text: str, tokens: dict[str, str], path: Path, env: dict[str, str]) -> str:
    """Replace @@name@@ tokens; @@git:ARGS@@ is the output of git ARGS in the task repository."""
    for key, value in tokens.items():
        text = text.replace(f"@@{key}@@", value)
    while "@@git:" in text:
        start = text.index("@@git:")
        end = text.index("@@", start + 6)
        args = shlex.split(text[start + 6 : end])
        res = subprocess.run(
            ["git", *args], cwd=path, env=env, capture_output=True, text=True, check=True
        )
        text = text[:start] + res.stdout.rstrip("\n") + text[end + 2 :]
    return text


def _play(
    s: Set,
    story: dict[str, Any],
    steps: list[dict[str, Any]],
    src: Path,
    tokens: dict[str, str],
    home: Path,
    scratch: Path,
) -> list[dict[str, Any]]:
    """Run the steps in a fresh copy of the repository; return them with their outputs."""
    work = scratch / "w" / story["repo"]
    if work.parent.exists():
        shutil.rmtree(work.parent)
    shutil.copytree(src, work, symlinks=True)
    if s.refresh_index:
        # a fresh checkout's index matches its files' stat data; a copy's does not until refreshed
        subprocess.run(
            ["git", "update-index", "-q", "--refresh"], cwd=work, env=s.repos.git_env(home)
        )
    tmp = scratch / "tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    env = s.repos.git_env(home)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}"
    env["TMPDIR"] = str(tmp)
    env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = "agent"
    env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = "agent@example.invalid"
    env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = "@1733300000 +0000"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    shown = story["cwd"]
    played = []
    for step in steps:
        step = dict(step)
        for key in ("cmd", "via", "thought", "content", "path", "old", "new", "url"):
            if key in step:
                step[key] = _fill(step[key], tokens, src, env)
        tool = step.get("tool", "bash")
        if "out" in step:
            out, rc = _fill(step["out"], tokens, src, env), step.get("rc", 0)
        elif story["format"] in _HISTORY:  # a shell history keeps no output: nothing to replay
            out, rc = "", 0
        elif tool == "bash":
            cmd = step.get("via", step["cmd"]).replace("/tmp/", f"{tmp}/")
            res = subprocess.run(
                ["bash", "-c", cmd],
                cwd=work,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=60,
            )
            out, rc = res.stdout, res.returncode
        elif tool == "read":
            lines = (work / step["path"]).read_text().splitlines()
            out, rc = "\n".join(f"{i:>6}\t{x}" for i, x in enumerate(lines, 1)), 0
        elif tool == "write":
            target = work / step["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step["content"])
            out, rc = f"File created successfully at: {shown}/{step['path']}", 0
        elif tool == "edit":
            target = work / step["path"]
            text = target.read_text()
            assert step["old"] in text, (story["file"], step["old"])
            target.write_text(text.replace(step["old"], step["new"], 1))
            out, rc = f"The file {shown}/{step['path']} has been updated.", 0
        elif tool == "ide":  # an IDE's file-text tool: the file as it is on disk
            out, rc = (work / step["path"]).read_text(), 0
        elif tool == "grep":
            flags = ["-rnE" if s.grep_extended else "-rn"]
            if s.grep_ignores:
                # Claude's Grep is ripgrep: it skips .git and what .gitignore and info/exclude
                # keep out of it
                flags += ["--exclude-dir=.git", "--exclude-dir=.idea"]
                flags += [f"--exclude={x}" for x in step.get("ignored", ())]
            elif not step.get("no_exclude"):
                flags.append("--exclude-dir=.git")
            res = subprocess.run(
                ["grep", *flags, step["pattern"], str(work / step.get("path", "."))],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
            )
            out, rc = res.stdout, 0
        else:
            raise SystemExit(f"{story['file']}: step without output: {step}")
        out = out.replace(str(work), shown).replace(str(tmp), "/tmp")
        # pytest's wall time differs between builds: fixed per step
        tick = (
            int(hashlib.sha256(f"{story['file']}:{len(played)}".encode()).hexdigest()[:4], 16) % 9
        )
        out = re.sub(r"(passed|failed|error)(s?) in \d+\.\d+s", rf"\1\2 in 0.0{tick + 1}s", out)
        if s.fixed_diff_times:
            # so are the modification times `diff -u` prints in its file headers: fixed too
            out = re.sub(
                r"^((?:---|\+\+\+) [^\t\n]+)\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ [+-]\d{4}$",
                r"\1\t2024-11-21 10:00:00.000000000 +0000",
                out,
                flags=re.M,
            )
        if len(out) > _MAX_OUT:
            out = out[:_MAX_OUT] + "\n[... output truncated ...]\n"
        step["out"], step["rc"] = out, rc
        played.append(step)
    return played


def _strings(value: Any, nested: bool) -> list[str]:
    if isinstance(value, str):
        if nested and value[:1] in "{[" and value[-1:] in "}]":  # JSON inside a string (Codex)
            try:
                return [value, *_strings(json.loads(value), nested)]
            except json.JSONDecodeError:
                pass
        return [value]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _strings(v, nested)]
    if isinstance(value, list):
        return [x for v in value for x in _strings(v, nested)]
    return []


def file_text(path: Path, json_in_strings: bool = True) -> str:
    """Every string a trajectory file holds (JSON decoded where the file is JSON), joined;
    json_in_strings: also the strings of JSON held in a string."""
    raw = path.read_text()
    try:
        return "\n".join(_strings(json.loads(raw), json_in_strings))
    except json.JSONDecodeError:
        pass
    parts = []
    for line in raw.splitlines():
        try:
            parts += _strings(json.loads(line), json_in_strings)
        except json.JSONDecodeError:
            parts.append(line)
    return "\n".join(parts)


def _seen(s: Set, text: str, index: dict[str, Any]) -> dict[str, list[str]]:
    seen = s.repos.seen_in(text, index)
    if not s.seen_tags:
        return seen
    tags = sorted(t for t in index["tags"] if t in text)
    return {**seen, **({"tags": tags} if tags else {})}


def _resolve(path: Path, env: dict[str, str], rev: str) -> str | None:
    """The commit rev names in the repository as built (a ``:/text`` search, too)."""
    sha = None
    for spec in (rev, None):
        spec = spec if spec is not None else f"{sha}^{{commit}}"
        res = subprocess.run(
            ["git", "rev-parse", "--verify", "-q", spec],
            cwd=path,
            env=env,
            capture_output=True,
            text=True,
        )
        sha = res.stdout.strip() or None
        if sha is None:
            return None
    return sha


def _ancestor(path: Path, env: dict[str, str], sha: str, base: str) -> bool:
    return (
        subprocess.run(
            ["git", "merge-base", "--is-ancestor", sha, base], cwd=path, env=env
        ).returncode
        == 0
    )


def build(s: Set, scratch: Path, files: Path | None = None, labels: Path | None = None) -> None:
    """Play every story of the set and write its files and labels (by default the committed
    ones)."""
    files, labels = files or s.files, labels or s.labels
    built = s.repos.build_repos(scratch / "repos")
    home = scratch / "repos" / ".home"
    env = s.repos.git_env(home)
    indexes = {n: s.repos.future_index(Path(i["path"]), i["base"], home) for n, i in built.items()}
    if files.exists():
        shutil.rmtree(files)
    files.mkdir(parents=True)
    rows = [
        {
            "meta": True,
            "set": s.name,
            "hidden_paths": s.hidden,
            "repos": {
                n: {"base": i["base"], "fix": i["fix"], "future_refs": i["future_refs"]}
                for n, i in built.items()
            },
        }
    ]
    for story in s.stories.STORIES:
        info = built[story["repo"]]
        src = Path(info["path"])
        tokens = _tokens(s, info)
        task = _fill(story["task"], tokens, src, env)
        if story["format"] == "rollouts":
            samples = [_play(s, story, x, src, tokens, home, scratch) for x in story["samples"]]
            text = s.render.render(story, task, samples)
        else:
            text = s.render.render(
                story, task, _play(s, story, story["steps"], src, tokens, home, scratch)
            )
        target = files / story["file"]
        target.write_text(text)
        seen = _seen(s, file_text(target, s.json_in_strings), indexes[story["repo"]])
        row = {
            "file": story["file"],
            "format": story["format"],
            "repo": story["repo"],
            "label": story["label"],
            "kind": story.get("kind", "none"),
            "technique": story["technique"],
            "future_seen": seen,
            "future_revs": [_fill(r, tokens, src, env) for r in story.get("future_revs", [])],
            "reachable_revs": [_fill(r, tokens, src, env) for r in story.get("reachable_revs", [])],
            "reaches": story.get("reaches", ""),
        }
        if story.get("why"):
            row["why"] = story["why"]
        rows.append(row)
    labels.write_text("".join(json.dumps(r, sort_keys=False) + "\n" for r in rows))


def check(
    s: Set, scratch: Path, labels: Path | None = None, files: Path | None = None
) -> list[str]:
    """Problems of the committed set (or labels and files given) against freshly built
    repositories (empty: all good)."""
    files, labels = files or s.files, labels or s.labels
    rows = [json.loads(x) for x in labels.read_text().splitlines() if x.strip()]
    meta, rows = rows[0], rows[1:]
    built = s.repos.build_repos(scratch / "repos")
    home = scratch / "repos" / ".home"
    env = s.repos.git_env(home)
    problems = []
    indexes = {}
    for name, info in built.items():
        if meta["repos"][name]["base"] != info["base"] or meta["repos"][name]["fix"] != info["fix"]:
            problems.append(f"{name}: built base/fix differ from the labels")
        indexes[name] = s.repos.future_index(Path(info["path"]), info["base"], home)
        if info["fix"] not in indexes[name]["ids"]:
            problems.append(f"{name}: the fix is reachable from the base")
    on_disk = {p.name for p in files.iterdir()}
    labelled = {r["file"] for r in rows}
    problems += [f"{f}: not labelled" for f in sorted(on_disk - labelled)]
    problems += [f"{f}: labelled, not on disk" for f in sorted(labelled - on_disk)]
    for r in rows:
        if r["file"] not in on_disk:
            continue
        info = built[r["repo"]]
        path, base = Path(info["path"]), info["base"]
        seen = _seen(s, file_text(files / r["file"], s.json_in_strings), indexes[r["repo"]])
        if seen != r["future_seen"]:
            problems.append(f"{r['file']}: shows {seen}, labels say {r['future_seen']}")
        content = {k for k in seen if k != "tags"} if s.seen_tags else set(seen)
        if r["label"] == "benign" and content:
            problems.append(f"{r['file']}: benign but shows the future: {seen}")
        if r["label"] == "leak" and not content and not r["future_revs"] and not r["reaches"]:
            problems.append(
                f"{r['file']}: a leak that neither shows nor names anything of the future"
            )
        for rev in r["future_revs"]:
            sha = _resolve(path, env, rev)
            if sha is None or _ancestor(path, env, sha, base):
                problems.append(f"{r['file']}: {rev!r} is not a future commit ({sha})")
        for rev in r["reachable_revs"]:
            sha = _resolve(path, env, rev)
            if sha is None or not _ancestor(path, env, sha, base):
                problems.append(f"{r['file']}: {rev!r} is not reachable from the base ({sha})")
        if r["label"] == "benign" and (r["future_revs"] or r["reaches"]):
            problems.append(f"{r['file']}: benign with future revisions")
    return problems


def replay(
    s: Set, scratch: Path, labels: Path | None = None, files: Path | None = None
) -> list[str]:
    """Build the set again under scratch; the committed files that differ from it, byte for byte."""
    files, labels = files or s.files, labels or s.labels
    out = scratch / "replay"
    build(s, scratch / "build", out / "files", out / "labels.jsonl")
    problems = []
    if (out / "labels.jsonl").read_bytes() != labels.read_bytes():
        problems.append("labels.jsonl: differs from a fresh build")
    fresh = {p.name for p in (out / "files").iterdir()}
    for name in sorted(fresh | {p.name for p in files.iterdir()}):
        a, b = out / "files" / name, files / name
        if not a.exists() or not b.exists() or a.read_bytes() != b.read_bytes():
            problems.append(f"{name}: differs from a fresh build")
    return problems


def main(s: Set, doc: str) -> None:
    """The set's command line: write the set, or check it (``--check``, ``--labels-only``)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    if s.replay_on_check:
        parser.add_argument(
            "--check",
            action="store_true",
            help="check the committed files against the labels and against a fresh build",
        )
        parser.add_argument(
            "--labels-only", action="store_true", help="with --check: skip the fresh build"
        )
    else:
        parser.add_argument(
            "--check", action="store_true", help="check the committed files against the labels"
        )
    args = parser.parse_args()
    os.umask(0o022)
    with tempfile.TemporaryDirectory(prefix=f"{s.name}-") as tmp:
        if args.check:
            problems = check(s, Path(tmp) / "check")
            if s.replay_on_check and not args.labels_only:
                problems += replay(s, Path(tmp))
            for p in problems:
                print(p)
            print(f"{len(problems)} problem(s)")
            raise SystemExit(1 if problems else 0)
        build(s, Path(tmp))
        print(f"wrote {len(s.stories.STORIES)} files to {s.files}")
