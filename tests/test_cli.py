"""The CLI: every command's --json against its schema, exit codes and messages for bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from conftest import Cli, ROOT, commit_file, git, make_repo, validate
from evotree.cli.main import cli
from evotree.core.errors import EXIT_CODES


def _init(run: Cli) -> dict:
    data = run.json("init")
    validate(data, "init")
    return data


def test_init_branch_tree_show_log_json(run: Cli, repo: Path) -> None:
    _init(run)
    v1 = run.json("branch", "-m", "filter dead groups")
    validate(v1, "version")
    assert v1["id"] == "v1" and v1["parents"] == ["v0"]
    v2 = run.json("branch", "--from", "v1", "--name", "v2-lr", "-m", "lr")
    assert v2["id"] == "v2-lr" and v2["parents"] == ["v1"]
    tree = run.json("tree")
    validate(tree, "tree")
    assert [(v["id"], v["parent"], v["champion"]) for v in tree["versions"]] == [
        ("v0", None, True),
        ("v1", "v0", False),
        ("v2-lr", "v1", False),
    ]
    show = run.json("show", "v1")
    validate(show, "show")
    assert show["version"]["children"] == ["v2-lr"]
    log = run.json("log", "-n", "2")
    validate(log, "log")
    assert [e["version"] for e in log["events"]] == ["v2-lr", "v1"]


def test_abandon_prune_restore_merge_json(run: Cli, repo: Path) -> None:
    _init(run)
    run("branch", "-m", "a")
    run("branch", "-m", "b")
    commit_file(repo / ".evotree/worktrees/v1", "a.txt", "a", "a")
    commit_file(repo / ".evotree/worktrees/v2", "b.txt", "b", "b")
    merged = run.json("merge", "v1", "v2", "-m", "both")
    validate(merged, "version")
    assert merged["parents"] == ["v1", "v2"]
    abandoned = run.json("abandon", "v2", "--reason", "worse on held-out")
    validate(abandoned, "version")
    assert abandoned["status"] == "abandoned"
    restored = run.json("worktree", "restore", "v2")
    assert restored["worktree"] == ".evotree/worktrees/v2"
    pruned = run.json("worktree", "prune")
    validate(pruned, "prune")
    assert pruned["removed"] == ["v2"]


def test_text_output_is_readable(run: Cli) -> None:
    run("init")
    run("branch", "-m", "filter dead groups")
    run("branch", "-m", "bad idea")
    run("abandon", "v2", "--reason", "collapsed")
    out = run("tree").output
    assert "v0" in out and "★ champion" in out and "filter dead groups" in out
    assert "v2" in out and "abandoned" in out and "collapsed" in out
    assert "3 versions · 1 kept as negative evidence" in out
    assert "version.abandoned" in run("log").output
    shown = run("show", "v1").output
    assert "hypothesis" in shown and "filter dead groups" in shown


def test_config_show_and_check(run: Cli, repo: Path) -> None:
    run("init", "--domain", "gym")
    cfg = run.json("config", "show")
    validate(cfg, "config")
    assert cfg["workspace"]["domain"] == "gym" and cfg["gates"]["alpha"] == 0.025
    checked = run.json("config", "check")
    validate(checked, "config-check")
    assert checked["valid"] is True
    (repo / "evotree.toml").write_text("[gates]\nalpha = 'x'\n")
    err = run.json("config", "check", code=6)
    validate(err, "error")
    assert err["error"]["details"]["line"] == 2 and err["error"]["details"]["key"] == "gates.alpha"
    # the policy in force is still the champion's, not the edited working copy
    assert run.json("config", "show")["gates"]["alpha"] == 0.025


def test_schema_command_lists_and_prints(run: Cli) -> None:
    names = run.json("schema")["schemas"]
    assert {"tree", "show", "log", "version", "init", "prune", "error", "event"} <= set(names)
    assert run.json("schema", "tree")["title"] == "evotree tree --json"
    assert run.json("schema", "nope", code=2)["error"]["code"] == "usage_error"


@pytest.mark.parametrize(
    "setup,args,code,pattern",
    [
        ("plain", ["tree"], 3, "not a git repository"),
        (
            "empty",
            ["tree"],
            3,
            "not an evotree workspace",
        ),  # `init` there works: tests/test_friction.py
        ("repo", ["tree"], 3, "not an evotree workspace"),
        ("anon", ["init"], 4, "git identity is not set"),
        ("ws", ["show", "v9"], 5, "unknown version 'v9'"),
        ("ws", ["branch", "--from", "v9", "-m", "x"], 5, "unknown version 'v9'"),
        ("ws", ["branch", "--name", "a b", "-m", "x"], 5, "expected a version id"),
        ("ws", ["init"], 7, "already an evotree workspace"),
        ("ws", ["branch", "--name", "v0", "-m", "x"], 7, "version v0 already exists"),
        ("ws", ["abandon", "v0", "--reason", "r"], 10, "is the champion"),
        ("badconfig", ["init"], 6, r"evotree.toml:2: unknown key 'gates.alfa'"),
    ],
)
def test_bad_input_exit_codes_and_messages(
    tmp_path: Path, setup: str, args: list[str], code: int, pattern: str
) -> None:
    target = tmp_path / "t"
    if setup == "plain":
        target.mkdir()
    elif setup == "empty":
        make_repo(target, commit=False)
    elif setup == "anon":
        make_repo(target, identity=False, commit=False)
        git(target, "add", "-A")
        git(target, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", "c")
    else:
        make_repo(target)
        if setup == "ws":
            Cli(target)("init")
        if setup == "badconfig":
            (target / "evotree.toml").write_text("[gates]\nalfa = 0.1\n")
    run = Cli(target)
    text = run(*args, code=code)
    assert re.search(pattern, text.stderr), text.stderr
    assert "fix:" in text.stderr
    data = run.json(*args, code=code)
    validate(data, "error")
    assert data["error"]["exit_code"] == code and re.search(pattern, data["error"]["message"])


def test_dirty_and_conflict_exit_codes(run: Cli, repo: Path) -> None:
    run("init")
    run("branch", "-m", "a")
    run("branch", "-m", "b")
    commit_file(repo / ".evotree/worktrees/v1", "recipe.toml", "x = 1\n", "a")
    commit_file(repo / ".evotree/worktrees/v2", "recipe.toml", "x = 2\n", "b")
    err = run.json("merge", "v1", "v2", "-m", "m", code=9)["error"]
    assert err["details"]["files"] == ["recipe.toml"]
    (repo / ".evotree/worktrees/v1/wip.txt").write_text("w")
    err = run.json("abandon", "v1", "--reason", "r", code=8)["error"]
    assert err["details"]["paths"] == ["wip.txt"] and "--force" in err["fix"]


def test_usage_errors_exit_2(run: Cli) -> None:
    run("init")
    assert "Missing option '-m'" in run("branch", code=2).output
    run("abandon", "v1", code=2)  # --reason is required
    run("log", "-n", "0", code=2)


def _all_commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in group.commands.items():
        full = f"{prefix}{name}"
        found.append((full, command))
        if isinstance(command, click.Group):
            found.extend(_all_commands(command, full + " "))
    return found


def test_every_command_has_help_json_and_is_documented() -> None:
    docs = (ROOT / "docs" / "cli.md").read_text()
    for name, command in _all_commands(cli):
        assert command.help and len(command.help) > 20, f"{name} has no real help"
        result = Cli(Path("."))  # just for the runner
        out = result.runner.invoke(cli, [*name.split(), "--help"])
        assert out.exit_code == 0, name
        if not isinstance(command, click.Group) and name != "demo":
            assert "--json" in out.output, f"{name} lacks --json"
        assert f"evotree {name}" in docs, f"docs/cli.md does not document `evotree {name}`"
    for code in EXIT_CODES:
        assert f"| {code} |" in docs, f"exit code {code} undocumented"


def test_json_output_is_a_single_document(run: Cli) -> None:
    run("init")
    out = run("tree", "--json").stdout
    json.loads(out)  # nothing but JSON on stdout
