"""The one place that decides what a shell running a body is (``harness/audit/shells.py``).

The forms pin each judge's behaviour as it was when every module had its own copy; where
hidden_rules' form was wider than what the parser follows, the read is judged now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evotree.harness.audit import shells
from evotree.harness.audit.hits import RuleSet
from evotree.harness.audit.rules import classify
from evotree.harness.audit.shells import (
    FOLLOWED,
    LOGIN,
    SCRIPT,
    SHELLS,
    WRAPPER,
    WRAPPER_SHORT,
    c_option,
    is_shell,
    runs_body,
)
from evotree.harness.audit.unwrap import parse_shell

AUDIT = Path(shells.__file__).parent

# argv, then WRAPPER, WRAPPER_SHORT, LOGIN, SCRIPT
CASES = [
    (["bash", "-lc", "git log"], True, True, True, True),
    (["/bin/bash", "-c", "git log"], True, True, True, True),
    (["/usr/bin/zsh", "-ic", "ls"], True, True, True, True),
    (["sh", "-ec", "ls"], True, True, False, True),
    (["sh", "-ce", "ls"], False, False, False, True),
    (["bash", "-Ec", "ls"], True, False, False, False),
    (["bash", "--c", "ls"], True, False, False, False),
    (["bash", "-l", "-c", "ls"], False, False, True, True),
    (["bash", "-c", "ls", "x"], False, False, True, True),
    (["bash", "-x", "-e", "-c", "ls"], False, False, False, True),
    (["ksh", "-c", "ls"], False, False, False, True),
    (["fish", "-c", "ls"], False, False, False, False),
    (["bash", "run.sh"], False, False, False, False),
    (["bash", "-c"], False, False, True, False),
    (["cat", "-c", "x"], False, False, False, False),
    ([], False, False, False, False),
]


@pytest.mark.parametrize(("argv", "wrapper", "short", "login", "script"), CASES)
def test_each_judges_form(argv: list[str], wrapper: bool, short: bool, login: bool, script: bool):
    assert runs_body(argv, WRAPPER) is wrapper
    assert runs_body(argv, WRAPPER_SHORT) is short
    assert runs_body(argv, LOGIN) is login
    assert runs_body(argv, SCRIPT) is script


def test_names_by_path_and_the_followed_set_is_widest():
    assert is_shell("/bin/bash") and is_shell("dash") and not is_shell("ksh")
    assert is_shell("ksh", SCRIPT.names) and not is_shell("bashful")
    for form in (WRAPPER, WRAPPER_SHORT, LOGIN, SCRIPT):
        assert SHELLS <= form.names <= FOLLOWED  # a judge sets aside only what the parser follows


@pytest.mark.parametrize(
    ("argv", "at"),
    [
        (["bash", "-lc", "x"], 1),
        (["bash", "-e", "-c", "x"], 2),
        (["bash", "-euxc", "x"], 1),
        (["bash", "--norc", "-c", "x"], 2),
        (["bash", "--norc"], None),  # a long option is no c cluster
        (["bash", "run.sh", "-c", "x"], None),  # an option after an operand is the script's
        (["bash", "-o", "pipefail", "-c", "x"], 3),  # -o, -O, +o, --rcfile take a word
        (["bash", "-eo", "pipefail", "+x", "-c", "x"], 4),
        (["bash", "-O", "extglob", "-lc", "x"], 3),
        (["bash", "--rcfile", "/dev/null", "-c", "x"], 3),
        (["python3", "-c", "print(1)"], 1),
        (["bash"], None),
    ],
)
def test_c_option_is_the_parsers_rule(argv: list[str], at: int | None):
    assert c_option(argv) == at


def test_the_parser_follows_every_shell_by_path_and_through_env():
    for line in ("bash -lc 'cat a'", "/bin/sh -c 'cat a'", "/usr/bin/env bash -c 'cat a'"):
        assert ("cat", "a") in [c.argv for c in parse_shell(line)], line
    assert ("cat", "a") in [c.argv for c in parse_shell("ksh -ec 'cat a'")]


def test_no_judge_keeps_a_copy_of_the_names():
    copies = [
        p.name
        for p in AUDIT.glob("*.py")
        if p.name != "shells.py" and re.search(r'_SHELLS\s*=|frozenset\(\{"bash"', p.read_text())
    ]
    assert copies == []


RULES = RuleSet(hidden_paths=("tests/hidden/",))


def _hidden_high(line: str) -> bool:
    return any(
        h.code == "audit.hidden_data_read" and h.severity == "high"
        for c in parse_shell(line)
        for h in classify(c, RULES)
    )


@pytest.mark.parametrize(
    "line",
    [
        "bash -c 'cat tests/hidden/t.py'",
        "ksh -c 'cat tests/hidden/t.py'",
        "sh -eu -c 'cat tests/hidden/t.py'",
    ],
)
def test_a_body_reading_hidden_data_is_high(line: str):
    assert _hidden_high(line)


@pytest.mark.parametrize(
    "line",
    [
        "bash -o pipefail -c 'cat tests/hidden/t.py'",
        "bash run.sh -c tests/hidden/t.py",
        "bash -c 'cat \"$1\"' _ tests/hidden/t.py",
        "bash -c 'cat $0' tests/hidden/t.py",
    ],
)
def test_a_hidden_name_beside_a_body_is_high(line: str):
    """Once strict xfails: hidden_rules set the shell's command aside as a script whose commands
    parse_shell judged, but parse_shell had parsed no body (an option with an argument before
    ``-c``; ``-c`` after an operand is the script's) or the hidden name was a positional
    parameter after the body (``$0``, ``$1``)."""
    assert _hidden_high(line)


@pytest.mark.parametrize(
    "line",
    [
        "bash -o pipefail -c 'git log --all'",
        "bash -eo pipefail -c 'git log --all'",
        "bash +x -c 'git log --all'",
        "bash -O extglob -c 'git log --all'",
        "bash --rcfile /dev/null -c 'git log --all'",
    ],
)
def test_a_body_after_options_with_arguments_is_judged(line: str):
    """parse_shell stopped at the first word not starting with ``-`` (``pipefail``), so the
    body was never parsed and no rule saw ``git log --all``."""
    assert ("git", "log", "--all") in [c.argv for c in parse_shell(line)]
    hits = [h.code for c in parse_shell(line) for h in classify(c)]
    assert "audit.git_history_leak" in hits


def test_words_after_a_script_are_its_arguments_not_a_body():
    assert [c.argv for c in parse_shell("bash run.sh -c 'git log --all'")] == [
        ("bash", "run.sh", "-c", "git log --all")
    ]
