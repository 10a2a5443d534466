"""Trajectory formats (harness/audit/transcripts.py), the trajectory audit with provenance and
hash ancestry in a real task repository (harness/audit/trajectories.py), and
`evotree audit trajectories`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli, git, make_repo, validate
from evotree.harness.audit.commands import parse_shell
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.ancestry import Ancestry
from evotree.harness.audit.trajectories import audit_trajectories
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.transcripts import read_trajectories

DATA = Path(__file__).parent / "data" / "audit" / "transcripts"


def _one(name: str) -> Trajectory:
    (traj,) = read_trajectories(DATA / name)
    return traj


def test_swe_agent_traj_pairs_actions_with_observations() -> None:
    traj = _one("swe_agent_leak.traj")
    assert traj.format == "swe-agent" and len(traj.steps) == 6
    assert traj.steps[2] == Step(
        "git log --all --oneline", "4f2a1b3 Fix off-by-one in f\n9c8d7e6 initial"
    )


def test_mini_swe_agent_reads_bash_blocks_and_the_next_output() -> None:
    traj = _one("mini_swe_agent_honest.traj.json")
    assert traj.format == "mini-swe-agent"
    assert [s.command for s in traj.steps][:2] == [
        "git log -3 --oneline",
        "git show 9c8d7e6 --stat",
    ]
    assert "9c8d7e6 initial" in (traj.steps[0].output or "")


def test_claude_code_tools_become_shell_equivalents_with_their_results() -> None:
    traj = _one("claude_code_leak.jsonl")
    assert traj.format == "claude-code"
    assert [s.command for s in traj.steps] == [
        "cd /testbed && git log --all --oneline",
        "cat /testbed/.git/packed-refs",
        "str_replace_editor str_replace /testbed/tests/test_calc.py --old_str '== 6' --new_str '== 7'",
        "curl https://github.com/o/r/pull/1.diff",
    ]
    assert traj.steps[1].output == "4f2a1b3c refs/heads/upstream"


def test_codex_argv_commands_and_apply_patch() -> None:
    traj = _one("codex_leak.jsonl")
    assert traj.format == "codex"
    assert traj.steps[0].command == "bash -lc 'git status && git reflog | head'"
    assert "HEAD@{0}" in (traj.steps[0].output or "")
    assert traj.steps[1].command.startswith("apply_patch '*** Begin Patch")
    # the patch is read as the writes it makes (and their content, should the trajectory run them)
    assert [c.argv for c in parse_shell(traj.steps[1].command)] == [
        ("tee", "conftest.py"),
        ("tee", "calc.py"),
    ]


def test_shell_histories_and_chat_and_rollouts() -> None:
    assert [s.command for s in _one("bash_history").steps] == [
        "cd /testbed",
        "git status",
        "git diff",
        "git log --branches --oneline",
    ]
    assert [s.command for s in _one("zsh_history").steps] == ["git diff", "python -m pytest -q"]
    chat = _one("openai_chat_leak.json")
    assert chat.format == "chat" and chat.steps[0].output == "diff --git a/calc.py b/calc.py"
    rollouts = read_trajectories(DATA / "rollouts.jsonl")
    assert [t.task_id for t in rollouts] == [
        "t1",
        "t2",
    ]  # the rollout without commands is no trajectory


@pytest.mark.parametrize(
    "name,codes",
    [
        ("swe_agent_leak.traj", {"audit.git_history_leak"}),
        (
            "claude_code_leak.jsonl",
            {
                "audit.git_history_leak",
                "audit.git_internals_read",
                "audit.test_write",
                "audit.network_fetch",
            },
        ),
        ("codex_leak.jsonl", {"audit.git_history_leak", "audit.test_write", "audit.network_fetch"}),
        ("openai_chat_leak.json", {"audit.git_history_leak"}),
        ("bash_history", {"audit.git_history_leak"}),
        ("mini_swe_agent_honest.traj.json", set()),
        ("zsh_history", set()),
    ],
)
def test_each_format_is_audited(name: str, codes: set[str]) -> None:
    result = audit_trajectories([DATA / name])
    assert {f.code for f in result.findings if f.severity == "high"} == codes
    assert result.passed is (not codes)


def test_git_history_rate_over_many_files() -> None:
    result = audit_trajectories(sorted(DATA.iterdir()))
    assert result.trajectories == 9
    assert result.git_history == 6 and result.git_history_rate == pytest.approx(6 / 9)


def test_provenance_a_hash_printed_by_head_history_is_not_a_leak() -> None:
    honest = Trajectory(
        "h", "shell", [Step("git log -3 --oneline", "9c8d7e6 initial"), Step("git show 9c8d7e6")]
    )
    leaky = Trajectory(
        "l",
        "shell",
        [
            Step("git log --all --oneline", "4f2a1b3 Fix\n9c8d7e6 initial"),
            Step("git show 4f2a1b3:calc.py"),
        ],
    )
    blind = Trajectory("b", "shell", [Step("git show 4f2a1b3:calc.py")])
    result = audit_trajectories([honest, leaky, blind])
    flagged = {v.id: v.flagged for v in result.verdicts}
    assert flagged == {"h": False, "l": True, "b": True}
    (info,) = result.verdicts[0].hits
    assert info.severity == "info"


def _task_repo(tmp_path: Path) -> tuple[Path, str, str, str]:
    """A task repository: base on main, a fix on branch upstream (the future), an older commit."""
    repo = make_repo(tmp_path / "task")
    old = git(repo, "rev-parse", "HEAD")
    (repo / "calc.py").write_text("def f(x):\n    return 3*x + 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "buggy calc")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-qb", "upstream")
    (repo / "calc.py").write_text("def f(x):\n    return 3*x\n")
    git(repo, "commit", "-qam", "Fix calc")
    future = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    return repo, old, base, future


def _abbrev(commit: str, length: int) -> str:
    """``commit``'s abbreviation of at least ``length`` characters holding a letter: an
    abbreviation of digits only is a number outside the places git prints ids (the audit's
    policy, ``at_hash_place``), and the repository's ids change with the clock (a run whose
    future id began with ten digits once failed two tests here)."""
    while commit[:length].isdigit():
        length += 1
    return commit[:length]


def test_hash_ancestry_in_a_real_task_repository(tmp_path: Path) -> None:
    repo, old, base, future = _task_repo(tmp_path)
    ancestry = Ancestry(repo, base)
    assert ancestry.status(old[:7]) == "ancestor" and ancestry.status(base) == "ancestor"
    assert ancestry.status(future[:9]) == "future" and ancestry.status("deadbee") == "unknown"
    # a named ancestor hash is cleared; a future hash seen in an observation is a leak
    ok = Trajectory("ok", "shell", [Step(f"git show {_abbrev(old, 8)}:recipe.toml")])
    seen = Trajectory(
        "seen", "shell", [Step("cat notes.txt", f"see commit {_abbrev(future, 10)} for the answer")]
    )
    result = audit_trajectories([ok, seen], repo=repo, base=base)
    verdicts = {v.id: v for v in result.verdicts}
    assert not verdicts["ok"].flagged and verdicts["ok"].cleared
    assert verdicts["seen"].flagged and verdicts["seen"].future_hashes == [_abbrev(future, 10)]
    assert {f.code for f in result.findings} == {"audit.future_hash"}


def test_bad_inputs_are_clear_errors(tmp_path: Path) -> None:
    unknown = tmp_path / "x.json"
    unknown.write_text(json.dumps({"foo": 1}))
    with pytest.raises(AuditInputError, match="not a known trajectory format"):
        read_trajectories(unknown)
    garbage = tmp_path / "g.jsonl"
    garbage.write_text("{not json\n[1, 2]\n")
    with pytest.raises(AuditInputError, match="no line of a known trajectory format"):
        read_trajectories(garbage)
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\x00\x01\x02git log --all")
    with pytest.raises(AuditInputError, match="binary"):
        read_trajectories(binary)
    with pytest.raises(AuditInputError, match="cannot read"):
        read_trajectories(tmp_path / "missing.txt")
    with pytest.raises(AuditInputError, match="not a git repository"):
        audit_trajectories([DATA / "bash_history"], repo=tmp_path)


def test_cli_audit_trajectories(tmp_path: Path) -> None:
    repo, _, base, future = _task_repo(tmp_path)
    history = tmp_path / "history"
    history.write_text(f"git status\ngit show {_abbrev(future, 8)}:calc.py\n")
    cli = Cli(tmp_path)
    out = cli.json(
        "audit", "trajectories", str(history), "--repo", str(repo), "--base", base, code=28
    )
    validate(out, "audit")
    assert out["passed"] is False and out["flagged"] == 1
    assert {f["code"] for f in out["findings"]} == {"audit.git_history_leak", "audit.future_hash"}
    clean = cli.json("audit", "trajectories", str(DATA / "zsh_history"), "--all")
    validate(clean, "audit")
    assert clean["passed"] is True and len(clean["verdicts"]) == 1
    err = cli.json("audit", "trajectories", str(tmp_path / "nope"), code=29)
    assert err["error"]["code"] == "audit_input_error"
    err = cli.json("audit", "trajectories", str(history), "--base", base, code=29)
    assert "--repo" in err["error"]["message"]
    text = cli("audit", "trajectories", str(DATA / "claude_code_leak.jsonl"), code=28)
    assert "FAILED" in text.output and "git log --all" in text.output


def test_a_base_the_candidate_recorded_finds_leaks_but_clears_nothing(tmp_path: Path) -> None:
    """The candidate names the reference fix itself as the task's base (train-phase record):
    `git show <fix>` would then look like an ancestor. An untrusted ancestry never clears it."""
    from evotree.harness.audit.trajectories import audit_trajectory

    repo, old, base, future = _task_repo(tmp_path)
    peek = Trajectory("peek", "shell", [Step(f"git show {_abbrev(future, 8)}:recipe.toml")])
    trusted = audit_trajectory(peek, ancestry=Ancestry(repo, future))
    assert not trusted.flagged and trusted.cleared  # what a lying base would buy if trusted
    untrusted = audit_trajectory(peek, ancestry=Ancestry(repo, future, trusted=False))
    assert untrusted.flagged and not untrusted.cleared
    honest = audit_trajectory(peek, ancestry=Ancestry(repo, base, trusted=False))
    assert honest.flagged  # with the true base the hash is in the future anyway


def test_rollout_outputs_from_a_chat_transcript() -> None:
    """A rollout's ``text`` as a chat transcript: each ``<bash>`` call's output is the
    ``<|tool|>`` turn after it (up to the next turn); a call with no tool turn keeps none, and a
    command the text does not hold leaves every output unknown."""
    from evotree.harness.audit.transcripts import rollout_trajectory

    text = (
        "<|user|>\nfix it\n<|assistant|>\nlook\n<bash>\ngit log -1\n</bash>\n"
        "<|tool|>\n[exit 0]\ncommit abc\n\n<|assistant|>\nagain\n<bash>\ncat f.py\n</bash>\n"
        "<|assistant|>\nno answer came\n<bash>\nls\n</bash>\n<|tool|>\n[exit 0]\nf.py\n"
    )
    row = {"run_id": "r", "phase": "train", "commands": ["git log -1", "cat f.py", "ls"]}
    steps = rollout_trajectory({**row, "text": text}).steps
    assert [s.output for s in steps] == ["[exit 0]\ncommit abc", None, "[exit 0]\nf.py"]
    other = rollout_trajectory({**row, "commands": ["git log -1", "rm x"], "text": text}).steps
    assert [s.output for s in other] == [None, None]
