"""``evotree demo``: the whole loop on the math domain, as the real CLI commands.

Every step is the exact command a person would type, run with ``python -P -m evotree`` (so a
folder of the demo repository can never shadow evotree's packages) and echoed with its output
as it arrives. The loop: init the math domain, run v0 (the domain's defaults: GRPO on a tiny
local model), diagnose it, ask which skill the findings call for, branch v1 with that skill, run
v1, diagnose and compare it with the champion, audit it, evaluate the gates, print the tree,
write the reports, then stop at the human gate and print the promote command. Every number is
what the runs give. A command this evotree does not have yet is skipped with a note.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotree.core.errors import AlreadyExists, EvotreeError, GitCommandError
from evotree.core.proc import python_command, safe_env

__all__ = ["SEEDS", "DemoResult", "run_demo"]

#: Seeds per version: two make the comparison seed-aware; with --jobs 2 they run side by side.
SEEDS = 2
_HEARTBEAT = 15.0  # seconds without output before the demo says the step is still running


@dataclass
class DemoResult:
    """What the demo did: the workspace, the skill it applied, reports and skipped steps."""

    path: Path
    skill: str | None = None
    reports: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if proc.returncode != 0:
        raise GitCommandError(f"`git {' '.join(args)}` failed in the demo repository: {proc.stderr.strip()}",
                              fix="check that git works here (git --version)")
    return proc.stdout


def _git_ok(repo: Path, *args: str) -> bool:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True).returncode == 0


def _quote(arg: str) -> str:
    return f'"{arg}"' if (" " in arg or not arg) else arg


class _Runner:
    """Runs ``evotree`` subprocesses in the demo repository, streaming their output."""

    def __init__(self, repo: Path, echo: Callable[[str], None]) -> None:
        self.repo, self.echo, self.env = repo, echo, safe_env()
        self._commands: set[str] | None = None

    def has(self, command: str) -> bool:
        """Whether this evotree has ``command`` (from ``evotree --help``)."""
        if self._commands is None:
            proc = subprocess.run(python_command("-m", "evotree", "--help"), cwd=self.repo, env=self.env,
                                  capture_output=True, text=True)
            names: set[str] = set()
            section = False
            for line in proc.stdout.splitlines():
                if line.strip() == "Commands:":
                    section = True
                elif section and line.startswith("  ") and not line.startswith("   "):
                    names.add(line.split()[0])
                elif section and line.strip() and not line.startswith(" "):
                    section = False
            self._commands = names
        return command in self._commands

    def quiet(self, *args: str) -> Any:
        """Run a ``--json`` command without echoing; its parsed output (None on failure)."""
        proc = subprocess.run(python_command("-m", "evotree", "-C", str(self.repo), *args, "--json"),
                              cwd=self.repo, env=self.env, capture_output=True, text=True)
        try:
            return json.loads(proc.stdout) if proc.returncode == 0 else None
        except json.JSONDecodeError:
            return None

    def __call__(self, *args: str, ok: tuple[int, ...] = (0,)) -> int:
        """Echo ``$ evotree ARGS``, stream its output, fail unless its exit code is in ``ok``."""
        self.echo(f"$ evotree {' '.join(_quote(a) for a in args)}")
        started = time.monotonic()
        proc = subprocess.Popen(python_command("-m", "evotree", "-C", str(self.repo), *args), cwd=self.repo,
                                env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                bufsize=1)
        last = [time.monotonic()]

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                last[0] = time.monotonic()
                self.echo(line.rstrip("\n"))

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        while reader.is_alive():
            reader.join(timeout=1.0)
            if reader.is_alive() and time.monotonic() - last[0] >= _HEARTBEAT:
                self.echo(f"  … still running ({time.monotonic() - started:.0f} s)")
                last[0] = time.monotonic()
        code = proc.wait()
        if code not in ok:
            raise EvotreeError(
                f"demo step `evotree {' '.join(args)}` failed with exit code {code}",
                fix=f"see the output above; the demo workspace is left at {self.repo} for inspection",
            )
        return code


def _prepare(path: str | None) -> Path:
    if path is None:
        return Path(tempfile.mkdtemp(prefix="evotree-demo-"))
    repo = Path(path).resolve()
    if repo.exists() and (not repo.is_dir() or any(repo.iterdir())):
        raise AlreadyExists(f"demo path {repo} is not an empty folder", fix="pass a new or empty folder")
    repo.mkdir(parents=True, exist_ok=True)
    return repo


def _pick_skill(suggestions: Any) -> tuple[str | None, list[str]]:
    """The first suggested skill that applies and is not applied yet, and the codes it addresses."""
    for item in (suggestions or {}).get("suggestions") or []:
        if item.get("applies", True) and not item.get("applied", False) and item.get("skill"):
            return str(item["skill"]), [str(a.get("code")) for a in item.get("addresses") or []]
    return None, []


def run_demo(path: str | None, *, keep: bool = True, echo: Callable[[str], None] = print,
             seeds: int = SEEDS) -> DemoResult:
    """Create a math workspace at ``path`` (default: a temp folder) and walk the loop in it."""
    started = time.monotonic()
    repo = _prepare(path)
    evotree = _Runner(repo, echo)
    result = DemoResult(path=repo)

    def skip(command: str) -> None:
        echo(f"skipped: evotree {command} not available in this evotree")
        result.skipped.append(command)

    def setup_repo() -> None:
        echo(f"demo repository: {repo}")
        _git(repo, "init", "--quiet", "-b", "main")
        if not _git_ok(repo, "config", "user.name") or not _git_ok(repo, "config", "user.email"):
            _git(repo, "config", "user.name", "evotree demo")
            _git(repo, "config", "user.email", "demo@evotree.invalid")
        (repo / "README.md").write_text("# A post-training recipe, versioned with evotree\n")
        # folders named like evotree's packages: the demo proves they cannot shadow it
        for name in ("skills", "domains"):
            (repo / name).mkdir()
            (repo / name / "__init__.py").write_text(f"raise ImportError('user {name}/ shadowed evotree')\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "--quiet", "-m", "initial commit")

    def init() -> None:
        evotree("init", "--domain", "math")

    def run_v0() -> None:
        echo(f"(GRPO with TRL on a tiny local model, the domain's defaults; {seeds} seeds side by side)")
        evotree("run", "v0", "--seeds", str(seeds), "--jobs", str(min(seeds, 2)))

    def diagnose_v0() -> None:
        evotree("diagnose", "v0")

    def suggest() -> None:
        if not evotree.has("suggest"):
            skip("suggest")
            return
        evotree("suggest", "v0")
        result.skill, codes = _pick_skill(evotree.quiet("suggest", "v0"))
        if result.skill:
            echo(f"→ the findings call for {result.skill} ({', '.join(codes) or 'no finding named'})")
        else:
            echo("→ no skill applies to these findings")

    def branch_v1() -> None:
        if result.skill and evotree.has("skill"):
            evotree("branch", "--from", "v0", "--skill", result.skill,
                    "-m", f"{result.skill}: the skill the diagnosis of v0 suggests")
            return
        if result.skill is None and "suggest" not in result.skipped:
            echo("(no skill to apply: v1 changes the learning rate instead)")
        else:
            skip("branch --skill")
        evotree("branch", "--from", "v0", "-m", "halve the learning rate: steadier updates")
        import re

        recipe = repo / ".evotree" / "worktrees" / "v1" / "recipe.toml"
        text = recipe.read_text()
        found = re.search(r"(?m)^learning_rate = ([0-9.eE+-]+)$", text)
        if found is None:
            raise EvotreeError("demo: expected a learning_rate line in v1's recipe.toml",
                               fix="re-run the demo in an empty folder")
        old, new = found.group(1), f"{float(found.group(1)) / 2:g}"
        recipe.write_text(text[:found.start()] + f"learning_rate = {new}" + text[found.end():])
        _git(recipe.parent, "commit", "--quiet", "-am", f"learning_rate {old} -> {new}")
        echo(f"(edit) {recipe}: learning_rate = {new}; git commit")

    def run_v1() -> None:
        evotree("run", "v1", "--seeds", str(seeds), "--jobs", str(min(seeds, 2)))

    def diagnose_compare() -> None:
        evotree("diagnose", "v1")
        evotree("compare", "v0", "v1")

    def audit_gates() -> None:
        if evotree.has("audit"):
            evotree("audit", "v1", ok=(0, 28))  # 28: the audit found leaks; the report shows them
        else:
            skip("audit")
        if evotree.has("gates"):
            evotree("gates", "v1")
        else:
            skip("gates")

    def tree_reports() -> None:
        evotree("tree")
        for fmt in ("md", "html"):
            evotree("report", "v1", "--format", fmt)
            result.reports.append(str(repo / ".evotree" / "reports" / "v1" / f"report.{fmt}"))

    steps: list[tuple[str, Callable[[], None]]] = [
        ("create a repository", setup_repo),
        ("make it a workspace of the math domain (v0 = the domain's recipe)", init),
        ("train and judge v0", run_v0),
        ("diagnose v0: score, signal, behavior and version findings", diagnose_v0),
        ("which skill do the findings call for?", suggest),
        ("branch v1 applying that skill", branch_v1),
        ("train and judge v1", run_v1),
        ("diagnose v1 and compare it with the champion v0", diagnose_compare),
        ("audit v1 and evaluate the promotion gates (nothing is promoted)", audit_gates),
        ("the tree and the reports", tree_reports),
    ]
    try:
        for number, (title, step) in enumerate(steps, start=1):
            echo(f"\n[{number}/{len(steps)}] {title}  ({time.monotonic() - started:.0f} s)")
            step()
    finally:
        if not keep:
            shutil.rmtree(repo, ignore_errors=True)
    result.seconds = time.monotonic() - started
    echo(f"\ndone in {result.seconds:.0f} s.")
    if keep:
        echo(f"workspace: {repo}")
        for report in result.reports:
            echo(f"report:    {report}")
        echo("\nThe loop stops here, at the human gate: promotion needs a person at a terminal, a signing "
             "key listed in the champion's allowed signers, and someone other than v1's creator:")
        echo(f"  cd {repo} && evotree promote v1")
    if result.skipped:
        echo("skipped (not in this evotree yet): " + ", ".join(f"evotree {c}" for c in result.skipped))
    return result
