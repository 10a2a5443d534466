"""Nothing passes unread: a file no reader knows, or a known format whose steps cannot
be parsed, is an ``audit.unreadable`` finding that fails the audit; mini-swe-agent 2's trajectory
format (```` ```mswea_bash_command ```` blocks, ``extra.actions``, ``extra.raw_output``) is read."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Cli, validate
from evotree.harness.audit.trajectories import audit_trajectories
from evotree.harness.audit.transcripts import read_trajectories


def _codes(path: Path) -> set[str]:
    audit = audit_trajectories([path])
    return {h.code for v in audit.verdicts for h in v.hits if h.severity in ("high", "critical")}


def _mswea(
    *turns: tuple[str, str], actions: bool = True, prompt: str = "Fix the date parser."
) -> dict:
    """A mini-swe-agent 2 trajectory (as its ``save_traj`` writes it) of (command, output) turns."""
    messages: list[dict] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": prompt},
    ]
    for command, output in turns:
        msg: dict = {
            "role": "assistant",
            "content": f"THOUGHT: look.\n\n```mswea_bash_command\n{command}\n```",
        }
        if actions:
            msg["extra"] = {"actions": [{"command": command}]}
        messages.append(msg)
        messages.append(
            {
                "role": "user",
                "content": f"<returncode>0</returncode>\n<output>\n{output}</output>",
                "extra": {"raw_output": output, "returncode": 0},
            }
        )
    return {
        "info": {"mini_version": "2.0.0", "exit_status": "Submitted"},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1.1",
    }


def test_mini_swe_agent_2_blocks_are_read_with_their_raw_output(tmp_path: Path) -> None:
    path = tmp_path / "leak.traj.json"
    path.write_text(
        json.dumps(_mswea(("ls", "src\n"), ("git log --all --oneline", "abc1234 fix\n")))
    )
    (traj,) = read_trajectories(path)
    assert traj.format == "mini-swe-agent" and [s.command for s in traj.steps] == [
        "ls",
        "git log --all --oneline",
    ]
    assert traj.steps[1].output == "abc1234 fix\n" and traj.prompt and "date parser" in traj.prompt
    assert _codes(path) == {"audit.git_history_leak"}
    # the same turns without extra.actions: read from the fenced blocks
    bare = tmp_path / "bare.traj.json"
    bare.write_text(
        json.dumps(
            _mswea(("ls", "src\n"), ("git log --all --oneline", "abc1234 fix\n"), actions=False)
        )
    )
    assert _codes(bare) == {"audit.git_history_leak"}
    # the look-alike: the same format, ordinary work only
    honest = tmp_path / "honest.traj.json"
    honest.write_text(
        json.dumps(_mswea(("git log -3 --oneline", "abc1234 x\n"), ("pytest -q", "1 passed\n")))
    )
    assert _codes(honest) == set()


def test_extra_actions_are_what_ran_not_the_text(tmp_path: Path) -> None:
    """mini-swe-agent records the parsed action in extra.actions: that is the command that ran."""
    data = _mswea(("ls", ""))
    data["messages"][2]["extra"]["actions"] = [{"command": "git reflog"}]  # the text says ls
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    assert _codes(path) == {"audit.git_history_leak"}


def test_python_command_blocks_are_python(tmp_path: Path) -> None:
    data = _mswea(("ls", ""), actions=False)
    data["messages"][2]["content"] = (
        "```mswea_python_command\nimport subprocess\nsubprocess.run(['git', 'log', '--all'])\n```"
    )
    path = tmp_path / "py.json"
    path.write_text(json.dumps(data))
    assert _codes(path) == {"audit.git_history_leak"}
    data["messages"][2]["content"] = "```mswea_python_command\nprint(open('setup.py').read())\n```"
    path.write_text(json.dumps(data))
    assert _codes(path) == set()


def test_known_format_with_no_readable_step_fails(tmp_path: Path) -> None:
    data = _mswea(("git log --all", "x"), actions=False)
    data["messages"][2]["content"] = (
        "Let me look.\n```zz_cmd\ngit log --all\n```"  # a block of unknown kind
    )
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(data))
    audit = audit_trajectories([path])
    (verdict,) = audit.verdicts
    rules = [h.rule for h in verdict.hits]
    assert (
        not audit.passed
        and any("zz_cmd" in r for r in rules)
        and any("no command" in r for r in rules)
    )
    assert {f.code for f in audit.findings} == {"audit.unreadable"}
    # look-alike: code shown as ```python next to the command that ran is no unread block
    data["messages"][2]["content"] = "Compare:\n```python\nx = 1\n```\n```bash\nls\n```"
    path.write_text(json.dumps(data))
    assert _codes(path) == set()


def test_swe_agent_entries_without_actions_fail(tmp_path: Path) -> None:
    path = tmp_path / "t.traj"
    path.write_text(json.dumps({"trajectory": [{"response": "git log --all", "observation": "x"}]}))
    assert _codes(path) == {"audit.unreadable"}
    path.write_text(json.dumps({"trajectory": [{"action": "ls", "observation": "x"}]}))
    assert _codes(path) == set()


def test_unknown_tools_that_run_things_are_unread(tmp_path: Path) -> None:
    lines = [
        {"type": "user", "uuid": "1", "message": {"role": "user", "content": "fix it"}},
        {
            "type": "assistant",
            "uuid": "2",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "mcp__box__run_command",
                        "input": {"c": "git log --all"},
                    }
                ],
            },
        },
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert _codes(path) == {"audit.unreadable"}
    # look-alike: a bookkeeping tool that runs nothing
    lines[1]["message"]["content"][0]["name"] = "TodoWrite"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert _codes(path) == set()


def test_unknown_format_binary_and_malformed_lines_fail_the_audit(tmp_path: Path) -> None:
    unknown = tmp_path / "x.json"
    unknown.write_text(json.dumps({"foo": 1}))
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\x00\x01git log --all")
    mixed = tmp_path / "m.jsonl"
    mixed.write_text(
        json.dumps({"type": "user", "uuid": "1", "message": {"content": "hi"}}) + "\n{broken\n"
    )
    for path in (unknown, binary, mixed):
        assert _codes(path) == {"audit.unreadable"}, path
    cli = Cli(tmp_path)
    out = cli.json("audit", "trajectories", str(unknown), code=28)
    validate(out, "audit")
    assert out["passed"] is False and out["findings"][0]["code"] == "audit.unreadable"
    assert "not a known trajectory format" in out["verdicts"][0]["hits"][0]["rule"]
    # a file that is not there is still an input error (exit 29), not a finding
    assert (
        cli.json("audit", "trajectories", str(tmp_path / "nope"), code=29)["error"]["code"]
        == "audit_input_error"
    )


def test_codex_write_stdin_is_read_as_commands(tmp_path: Path) -> None:
    """Codex's unified exec types into a running shell with write_stdin: what it types runs."""
    rows = [
        {"type": "session_meta", "payload": {"id": "s"}},
        {
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "exec_command",
                "call_id": "c1",
                "arguments": json.dumps({"cmd": "bash"}),
            },
        },
        {
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "write_stdin",
                "call_id": "c2",
                "arguments": json.dumps({"session_id": 1, "chars": "git reflog\n"}),
            },
        },
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert _codes(path) == {"audit.git_history_leak"}
    rows[2]["payload"]["arguments"] = json.dumps({"session_id": 1, "chars": "pytest -q\n"})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert _codes(path) == set()


def test_fish_history_is_read(tmp_path: Path) -> None:
    path = tmp_path / "fish_history"
    path.write_text(
        "- cmd: cat > p.sh <<EOF\\ngit log --all -p\\nEOF\n  when: 1700000000\n"
        "- cmd: bash p.sh\n  when: 1700000002\n  paths:\n    - p.sh\n"
    )
    steps = [s.command for t in read_trajectories(path) for s in t.steps]
    assert steps == ["cat > p.sh <<EOF\ngit log --all -p\nEOF", "bash p.sh"]
    assert "audit.git_history_leak" in _codes(path)
    clean = tmp_path / "fish_clean"
    clean.write_text(
        "- cmd: python -m pytest -q\n  when: 1700000000\n- cmd: git diff\n  when: 1700000001\n"
    )
    assert not _codes(clean)


def test_prose_or_markdown_is_no_shell_history(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("This is a summary of the session.\nThe agent read the parser and fixed it.\n")
    assert "audit.unreadable" in _codes(notes)
    chat = tmp_path / "chat.md"
    chat.write_text(
        "# aider chat started at 2024-05-01\n\n#### Fix the retry loop\n\n"
        "> Running the tests now\n\nI fixed the loop in the retry module today.\n"
    )
    assert "audit.unreadable" in _codes(chat)
    history = tmp_path / ".bash_history"  # a comment or two among commands is still a history
    history.write_text("# try the parser\ngit status\npython -m pytest -q\nvim src/parse.py\n")
    assert not _codes(history)


def test_a_fence_closes_only_at_the_start_of_a_line(tmp_path: Path) -> None:
    """Three backticks mid-line do not close a block (CommonMark, and mini-swe-agent's own
    parser, whose closing fence follows a newline): a command holding them is read whole, so
    a read behind them is seen (heldout33's t49: a sed range from a python fence to its end;
    before, the step was cut after ``/^`` and read nothing)."""
    commands = [
        "sed -n '/^```python/,/^```$/p' reports/notes.md",
        "echo '```' && git log --all -p",
    ]
    path = tmp_path / "t.traj.json"
    path.write_text(json.dumps(_mswea(*((c, "x\n") for c in commands), actions=False)))
    (traj,) = read_trajectories(path)
    assert [s.command for s in traj.steps] == commands
    assert "audit.git_history_leak" in _codes(path)
    empty = tmp_path / "e.traj.json"  # an empty block is still a block
    empty.write_text(json.dumps(_mswea(("", ""), ("git log --all -p", "x\n"), actions=False)))
    assert [s.command for s in read_trajectories(empty)[0].steps][-1] == "git log --all -p"
