"""EvoPolicyGym's boundary holds for the judge store too: while validation and
held-out seeds are hidden until finalize, `evotree judge show PATH` / `judge export` give them only
to a person at an interactive terminal who types back the path and a one-time code — never to a
pipe (even with --force), never as --json, never to an agent session or under CI."""

from __future__ import annotations

import os
import re
import select
import sys
import time
from pathlib import Path
from typing import Any


from test_gym_finalize import hidden_gym_workspace

REPO = Path(__file__).resolve().parent.parent


def _pools(text: str) -> bool:
    """Whether ``text`` carries the judge's pools (a seed list of a hidden split)."""
    return "[pools." in text or bool(re.search(r"\[\s*1\d{6,}", text))


def _in_pty(
    repo: Path, args: list[str], answers: Any, env: dict[str, str], timeout: float = 60.0
) -> tuple[int, str]:
    """Run ``python -m evotree -C repo ARGS`` on a fresh pseudo-terminal (its controlling
    terminal); ``answers(output_so_far)`` returns the next line to type or None. (exit code, output)."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal of its own
        os.chdir(repo)
        os.execve(sys.executable, [sys.executable, "-m", "evotree", "-C", str(repo), *args], env)
    out = b""
    sent = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            line = answers(out.decode(errors="replace"), sent)
            if line is not None:
                os.write(fd, (line + "\n").encode())
                sent += 1
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def _env(**extra: str) -> dict[str, str]:
    from evotree.gates.signoff import CI_VARIABLES

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in CI_VARIABLES and k != "EVOTREE_AGENT_PRINCIPAL"
    }
    env.update(extra)
    return env


def _typist(path: str, *, code: str | None = None) -> Any:
    """Answers the challenge: the path, then the code shown (or ``code`` when given: a wrong one)."""

    def answer(text: str, sent: int) -> str | None:
        if sent == 0 and re.search(r"(?m)^path:", text):
            return path
        if sent == 1 and "one-time code:" in text:
            shown = re.search(r"one-time code (?:\x1b\[[0-9;]*m)*([A-Z2-9]{4}-[A-Z2-9]{4})", text)
            return code if code is not None else (shown.group(1) if shown else "")
        return None

    return answer


def test_hidden_seeds_go_only_to_a_person_who_signs_at_a_terminal(tmp_path: Path) -> None:
    from conftest import Cli

    ws = hidden_gym_workspace(tmp_path / "w")
    cli = Cli(ws.root)
    assert "judge/gym.toml" in [f["path"] for f in cli.json("judge", "show")["files"]]
    # a pipe: refused with and without --force, nothing of the pools printed
    for args in (
        ("judge", "show", "judge/gym.toml"),
        ("judge", "show", "judge/gym.toml", "--force"),
    ):
        refused = cli(*args, code=31)
        assert not _pools(refused.output) and "terminal" in refused.output, refused.output
    assert cli.json("judge", "show", "judge/gym.toml", code=1)["error"]  # never as JSON
    out = tmp_path / "export"
    refused = cli("judge", "export", str(out), "--force", code=31)
    assert not out.exists() or not any(out.rglob("*.toml")), refused.output
    # a terminal, but an agent session or a CI job: refused before anything is shown
    for extra in ({"EVOTREE_AGENT_PRINCIPAL": "agent:x"}, {"CI": "true"}):
        code, text = _in_pty(
            ws.root,
            ["judge", "show", "judge/gym.toml", "--force"],
            _typist("judge/gym.toml"),
            _env(**extra),
        )
        assert code == 31 and not _pools(text), (extra, text)
    # a terminal and a person who types a wrong code: refused
    code, text = _in_pty(
        ws.root,
        ["judge", "show", "judge/gym.toml"],
        _typist("judge/gym.toml", code="AAAA-AAAA"),
        _env(),
    )
    assert code == 31 and "one-time code" in text and not _pools(text), text
    # a person at a terminal who signs for it: the file
    code, text = _in_pty(
        ws.root, ["judge", "show", "judge/gym.toml"], _typist("judge/gym.toml"), _env()
    )
    assert code == 0 and _pools(text), text
    # once the search is finalized the boundary is lifted: --force to a pipe is the owner's call again
    assert cli.json("finalize", "--yes")["status"] == "no_ok_submit"
    assert _pools(cli("judge", "show", "judge/gym.toml", "--force").output)
