"""Shared set-up of workspaces and signers: SSH keys, scored projects, signed workspaces, remotes.

Keys are made once per test session for each (name, comment) and copied where a test asks for
them (ssh-keygen on a loaded machine is the slow part): the same name is the same key in every
test, different names are different keys, and a test may change its copy (a passphrase) freely.
conftest.py imports this module at its end, so the ``keys`` fixture is known to every test file.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

import pexpect
import pytest
from conftest import EVOTREE_BIN, Cli, commit_file, git, make_repo

from evotree.core.versions import create_version
from evotree.core.workspace import Workspace, init_workspace
from evotree.gates.signoff import CI_VARIABLES

#: what ``evotree push`` carries, as refspecs for a plain ``git push`` / ``git fetch``
EVOTREE_SPECS = ("refs/evotree/*:refs/evotree/*", "refs/heads/evotree/*:refs/heads/evotree/*")

#: the people of the tests: bob approves, ada is the agent's git identity (conftest),
#: mallory attacks
EMAILS = {"bob": "bob@example.com", "ada": "ada@example.com", "mallory": "mallory@example.com"}

_KEY_CACHE = Path(tempfile.mkdtemp(prefix="evotree-test-keys-"))
atexit.register(shutil.rmtree, _KEY_CACHE, ignore_errors=True)


def make_key(directory: Path, name: str, *, comment: str | None = None) -> tuple[Path, str]:
    """An ed25519 key without passphrase at ``directory/name`` (and ``name.pub``), its comment
    ``comment`` (default: the name): (private key path, 'type base64' public part)."""
    comment = name if comment is None else comment
    cached = _KEY_CACHE / hashlib.sha256(f"{name}\0{comment}".encode()).hexdigest()[:16] / name
    if not cached.is_file():
        cached.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(cached)],
            check=True,
        )
    directory.mkdir(parents=True, exist_ok=True)
    key = directory / name
    shutil.copyfile(cached, key)
    key.chmod(0o600)  # ssh-keygen refuses a private key others can read
    shutil.copyfile(f"{cached}.pub", f"{key}.pub")
    kind, blob, *_ = Path(f"{key}.pub").read_text().split()
    return key, f"{kind} {blob}"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """bob, ada, mallory and runner's keys, copied for this test module:
    name -> (private key path, public part)."""
    base = tmp_path_factory.mktemp("keys")
    return {who: make_key(base, who) for who in ("bob", "ada", "mallory", "runner")}


def signers_file(
    keys: Mapping[str, tuple[Path, str]], who: tuple[str, ...] = ("bob", "ada"), *, header: str = ""
) -> str:
    """The text of a ``gates/allowed_signers`` listing ``who`` (by their EMAILS) with their keys."""
    return header + "".join(f"{EMAILS[w]} {keys[w][1]}\n" for w in who)


#: the scored projects' training: the recipe is the model
SCORED_TRAIN = """\
import json, tomllib
json.dump(tomllib.load(open("recipe.toml", "rb")), open("model.json", "w"))
"""


def scored_config(
    *,
    min_tasks: int = 20,
    min_seeds: int = 3,
    champion_seeds: int | None = None,
    bootstrap_samples: int = 1000,
    train_approval_above_seconds: int | None = None,
    max_wall_seconds: int = 60,
    max_runs_per_version: int = 6,
) -> str:
    """An ``evotree.toml`` with [train], [eval] (judge/ is the judge), [gates] and [budget]."""
    gates = [f"min_tasks = {min_tasks}", f"min_seeds = {min_seeds}"]
    if champion_seeds is not None:
        gates.append(f"champion_seeds = {champion_seeds}")
    gates.append(f"bootstrap_samples = {bootstrap_samples}")
    if train_approval_above_seconds is not None:
        gates.append(f"train_approval_above_seconds = {train_approval_above_seconds}")
    return (
        '[train]\ncommand = "python train.py"\n'
        '[eval]\ncommand = "python judge/eval.py"\njudge_paths = ["judge/"]\n'
        "[gates]\nmin_delta = 0.0\nalpha = 0.05\n"
        + "".join(f"{line}\n" for line in gates)
        + f"[budget]\nmax_wall_seconds = {max_wall_seconds}\n"
        f"max_runs_per_version = {max_runs_per_version}\n"
    )


def scored_project(
    path: Path,
    *,
    judge: str,
    config: str | None = None,
    train: str | None = SCORED_TRAIN,
    recipe: str | None = "skill = 0.5\n",
    files: Mapping[str, str] | None = None,
    message: str = "recipe, train script, judge and gate policy",
    init: bool = True,
) -> Path:
    """A repository (``make_repo``) with a recipe, train.py, judge/eval.py, ``evotree.toml``
    (default ``scored_config()``) and ``files`` (path -> text) in one commit, initialised.
    ``train`` or ``recipe`` None keeps make_repo's."""
    repo = make_repo(path)
    if recipe is not None:
        (repo / "recipe.toml").write_text(recipe)
    if train is not None:
        (repo / "train.py").write_text(train)
    written = {
        "judge/eval.py": judge,
        "evotree.toml": scored_config() if config is None else config,
        **(files or {}),
    }
    for name, text in written.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    if init:
        init_workspace(repo)
    return repo


def signed_workspace(path: Path, key: Path) -> Path:
    """A ``make_repo`` repository initialised by ``evotree init --signer KEY.pub`` (v0's
    gates/allowed_signers names the key's comment)."""
    repo = make_repo(path)
    Cli(repo).json("init", "--signer", f"{key}.pub")
    return repo


def empty_repo(path: Path) -> Path:
    """An empty git repository at ``path`` (made) on main, with Ada's identity and no commit:
    for the ``evotree init`` that writes a protocol's files."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Ada")
    git(path, "config", "user.email", EMAILS["ada"])
    return path


def protocol_workspace(path: Path, protocol: str) -> Cli:
    """``evotree init --protocol PROTOCOL`` in a new ``empty_repo(path)``: its Cli."""
    cli = Cli(empty_repo(path))
    cli("init", "--protocol", protocol)
    return cli


def commit_version(cli: Cli, files: Mapping[str, str], message: str) -> str:
    """A version branched from the champion (``evotree branch -m MESSAGE``) with ``files``
    (path -> text) written in its worktree and committed: its id."""
    version = cli.json("branch", "-m", message)["id"]
    worktree = cli.repo / ".evotree" / "worktrees" / version
    for rel, text in files.items():
        (worktree / rel).write_text(text)
    git(worktree, "add", "-A")
    git(worktree, "commit", "-qm", message)
    return version


def branch_version(ws: Workspace, parent: str = "champion") -> tuple[str, Path]:
    """A new version from ``parent`` (hypothesis "h"): (its id, its worktree)."""
    rec = create_version(ws, hypothesis="h", parent=parent)
    return rec.id, ws.root / rec.worktree


def commit_files(
    worktree: Path, files: Mapping[str, str | bytes | None], message: str = "change"
) -> None:
    """Write ``files`` (path -> text or bytes; None deletes the file) and commit them all."""
    for name, content in files.items():
        path = worktree / name
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    git(worktree, "add", "-A")
    git(worktree, "commit", "-qm", message)


#: a judge of the model train.py wrote (model.json): of 10 validation tasks, the first ``skill``
#: share pass
SKILL_JUDGE = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
hidden = json.load(open("judge/hidden.json"))
for i, task in enumerate(hidden["validation"]):
    rec.eval_result("validation", task, 1.0 if (i + 1) / len(hidden["validation"]) <= model["skill"] else 0.0)
"""


def skill_repo(path: Path, *, train: str, config: str) -> Path:
    """An initialised ``make_repo`` workspace judged by SKILL_JUDGE (judge/hidden.json: 10
    validation tasks), with ``train`` as train.py, ``config`` as evotree.toml and the recipe
    ``skill = 0.5``, ``steps = 3``, all in one commit."""
    repo = make_repo(path)
    (repo / "recipe.toml").write_text("skill = 0.5\nsteps = 3\n")
    (repo / "train.py").write_text(train)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text(SKILL_JUDGE)
    hidden = {"validation": [f"val-{i}" for i in range(10)]}
    (repo / "judge" / "hidden.json").write_text(json.dumps(hidden))
    (repo / "evotree.toml").write_text(config)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recipe, train script and judge")
    init_workspace(repo)
    return repo


def recipe_version(ws: Workspace, recipe: str) -> str:
    """A version from the champion whose recipe.toml is ``recipe`` (one commit): its id."""
    rec = create_version(ws, hypothesis="h", parent="champion")
    commit_file(ws.root / rec.worktree, "recipe.toml", recipe, "recipe")
    return rec.id


def bare_remote(
    repo: Path, bare: Path, *, how: str = "refspecs", git_config: Mapping[str, str] | None = None
) -> Path:
    """A bare repository at ``bare``, ``repo``'s remote ``origin``, holding its work: with
    ``how="refspecs"`` a plain ``git push`` of EVOTREE_SPECS; ``how="all"`` main and
    EVOTREE_SPECS; ``how="main"`` only main (the test pushes the rest); ``how="evotree"`` main,
    then ``evotree push`` (which must reject nothing). ``git_config`` is set in the bare first."""
    git(bare.parent, "init", "-q", "--bare", str(bare))
    for name, value in (git_config or {}).items():
        git(bare, "config", name, value)
    git(repo, "remote", "add", "origin", str(bare))
    if how in ("refspecs", "all"):
        git(repo, "push", "-q", "origin", *(("main",) if how == "all" else ()), *EVOTREE_SPECS)
    elif how in ("main", "evotree"):
        git(repo, "push", "-q", "origin", "main")
        if how == "evotree":
            assert Cli(repo).json("push")["rejected"] == []
    else:
        raise ValueError(f"how={how!r}: 'refspecs', 'all', 'main' or 'evotree'")
    return bare


def clone_as(bare: Path, path: Path, name: str, email: str, *, fetch_evotree: bool = False) -> Path:
    """Another person's clone of ``bare`` at ``path`` (their git identity); with ``fetch_evotree``
    it also fetches EVOTREE_SPECS (what ``evotree pull`` would, without evotree)."""
    git(path.parent, "clone", "-q", str(bare), str(path))
    git(path, "config", "user.name", name)
    git(path, "config", "user.email", email)
    if fetch_evotree:
        git(path, "fetch", "-q", "origin", *EVOTREE_SPECS)
    return path


def with_stranger(repo: Path, base: Path) -> dict[str, Path]:
    """``repo`` pushed (EVOTREE_SPECS) to the bare ``base/origin.git``, and Mallory's clone of it at
    ``base/stranger`` with the evotree refs fetched: {"repo", "bare", "stranger"}."""
    bare = bare_remote(repo, base / "origin.git")
    stranger = clone_as(
        bare, base / "stranger", "Mallory", "mallory@example.com", fetch_evotree=True
    )
    return {"repo": repo, "bare": bare, "stranger": stranger}


# ----------------------------------------------------------------- a person at a terminal
#: the one-time code a sign-off shows on the terminal
CODE_RE = re.compile(r"one-time code \S*?([A-Z2-9]{4}-[A-Z2-9]{4})")


def child_env(**extra: str) -> dict[str, str]:
    """This environment without the CI variables (a sign-off refuses under CI), plain output."""
    env = {k: v for k, v in os.environ.items() if k not in CI_VARIABLES}
    env.update({"TERM": "dumb", "NO_COLOR": "1", "COLUMNS": "160", **extra})
    return env


def spawn(repo: Path, *args: str, **env: str) -> pexpect.spawn:
    """``evotree -C REPO ARGS`` under a pseudo-terminal, ``env`` added to child_env()."""
    return pexpect.spawn(
        str(EVOTREE_BIN),
        ["-C", str(repo), *args],
        cwd=str(repo),
        env=child_env(**env),
        encoding="utf-8",
        timeout=120,
        dimensions=(50, 160),
    )


def answer_challenge(child: pexpect.spawn, version: str, *, code: str | None = None) -> str:
    """Type the version id and the one-time code shown (or ``code``); the code shown."""
    child.expect(CODE_RE)
    shown = child.match.group(1)
    child.expect("version id: ")
    child.sendline(version)
    child.expect("one-time code: ")
    child.sendline(code or shown)
    return shown


def finish(child: pexpect.spawn) -> tuple[int, str]:
    """Wait for the command to end: (exit status, everything it wrote since the last expect)."""
    child.expect(pexpect.EOF)
    out = child.before or ""
    child.close()
    return child.exitstatus, out


def promote_at_terminal(
    repo: Path,
    version: str,
    key: Path,
    *flags: str,
    before_gates: Callable[[pexpect.spawn], object] | None = None,
    under_review: Callable[[], object] | None = None,
) -> tuple[int, str]:
    """A person approves ``version`` at a terminal: ``evotree promote VERSION --key KEY FLAGS``,
    all gates shown passing, the challenge answered, ``approve`` typed: (exit status, output).
    ``before_gates(child)`` answers what the command asks before the gates (a policy change's
    acceptance); ``under_review()`` runs while the dossier is on screen (a racing change)."""
    child = spawn(repo, "promote", version, "--key", str(key), *flags)
    if before_gates is not None:
        before_gates(child)
    child.expect("all gates pass")
    if under_review is not None:
        under_review()
    answer_challenge(child, version)
    child.expect(r"decision \[approve/revise/abort\]: ")
    child.sendline("approve")
    return finish(child)
