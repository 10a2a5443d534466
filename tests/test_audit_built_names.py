"""Command names built by builtins that set variables, and names the audit cannot resolve.

``printf -v VAR``, ``read VAR <<< WORD`` (or a here-document) and ``mapfile``/``readarray``
set a variable from literals: a later ``$VAR log --all`` runs git. A command name still
unresolved after every expansion (``$X``, ``$(unknown)``), given git's own words, is judged as
git: how the name was built does not change what the words ask for. Programs that run other
programs (``find -exec``, awk, ``script -c``, ``xargs`` fed by a here-string) are read, and
``git remote show|prune NAME`` asks the remote.
"""

from __future__ import annotations

import pytest

from evotree.harness.audit.trajectories import audit_trajectory
from evotree.harness.audit.steps import Step, Trajectory


def _flagged(*commands: str) -> bool:
    return audit_trajectory(Trajectory("t", "shell", [Step(c) for c in commands])).flagged


@pytest.mark.parametrize(
    "commands",
    [
        ("printf -v g '\\x67\\x69\\x74'; $g log --all",),
        ("printf -v g %s git", "$g show origin/fix"),
        ("printf -v g '\\147\\151\\164'; \"$g\" cat-file -p origin/fix:f",),
        ('IFS= read -r g <<< "git"; "$g" log --all',),
        ("read -t 5 g <<< git; $g log --all",),
        ("read -r g <<'EOF'\ngit\nEOF\n$g log --all -p",),
        ("mapfile -t a <<< git; ${a[0]} log --all",),
        ("readarray -t a <<< git", '"${a[@]}" show origin/fix'),
        ("$X log --all",),
        ('"$G" show origin/fix',),
        ("$(some_unknown_tool) log --all",),
        ("ls; $X diff origin/main",),
    ],
)
def test_a_built_or_unresolved_name_with_gits_words_is_git(commands: tuple[str, ...]) -> None:
    assert _flagged(*commands)


@pytest.mark.parametrize(
    "commands",
    [
        ("printf -v g '\\x67\\x69\\x74'; $g status",),
        ("read -r g <<< git; $g show HEAD:src/f.py",),
        ("$X status",),
        ("$PYTHON -m pytest -q",),
        ("$EDITOR notes.txt",),
        ("printf -v msg '%s done' build; echo \"$msg\"",),
        ("read -p 'name' n <<< abc; echo $n",),
        ("mapfile -t lines < files.txt; echo ${lines[0]}",),
    ],
)
def test_look_alikes_that_read_only_head_pass(commands: tuple[str, ...]) -> None:
    assert not _flagged(*commands)


@pytest.mark.parametrize(
    "commands",
    [
        ("find . -maxdepth 0 -exec git log --all \\;",),
        ("find . -name x -execdir git show origin/fix:{} +",),
        ("awk 'BEGIN{system(\"git log --all\")}'",),
        ("awk 'BEGIN { while ((\"git show origin/fix\" | getline l) > 0) print l }'",),
        ('awk \'BEGIN{print "git log --all -p" | "sh"}\'',),
        ("script -qc 'git log --all' /dev/null",),
        ("script --command='git show origin/fix' /dev/null",),
        ("xargs -I{} git show {} <<< origin/fix",),
        ("xargs git show <<'EOF'\norigin/fix\nEOF",),
    ],
)
def test_programs_that_run_programs_are_read(commands: tuple[str, ...]) -> None:
    assert _flagged(*commands)


@pytest.mark.parametrize(
    "commands",
    [
        ("find . -name '*.py' -exec grep -l retry {} \\;",),
        ("find . -exec git show HEAD:{} \\;",),
        ("awk '{print $1}' data.txt",),
        ("awk 'BEGIN{system(\"ls -la\")}'",),
        ("script -q /dev/null",),
        ("xargs -I{} git show HEAD:{} <<< src/a.py",),
    ],
)
def test_programs_that_run_only_head_reads_pass(commands: tuple[str, ...]) -> None:
    assert not _flagged(*commands)


@pytest.mark.parametrize(
    "command, leak",
    [
        ("git remote show origin", True),
        ("git remote prune origin", True),
        ("git remote prune --dry-run origin", True),
        ("git remote show -n origin", False),
        ("git remote show", False),
        ("git remote -v", False),
    ],
)
def test_remote_show_and_prune_ask_the_remote(command: str, leak: bool) -> None:
    """``git remote show NAME`` lists the remote's branches as the remote has them now (like
    ``ls-remote``); ``-n`` reads only the local configuration."""
    assert _flagged(command) is leak


@pytest.mark.parametrize(
    "command",
    [
        "python -c \"import http.client as h; c = h.HTTPSConnection('github.com'); "
        "c.request('GET', '/')\"",
        "python -c \"import socket; socket.create_connection(('github.com', 443))\"",
        "node -e \"fetch('https://github.com/o/r/pull/3.patch').then(r => r.text())\"",
        "node -e \"require('https').get('https://github.com/o/r/pull/3.diff', "
        'r => r.pipe(process.stdout))"',
        "ruby -e \"require 'open-uri'; puts URI.open('https://github.com/o/r/pull/3.diff').read\"",
        "perl -MLWP::Simple -e 'print get(\"https://github.com/o/r/pull/3.diff\")'",
    ],
)
def test_code_that_opens_a_connection_reaches_the_network(command: str) -> None:
    assert _flagged(command)


@pytest.mark.parametrize(
    "command",
    [
        "node -e \"console.log('https://example.com/docs')\"",
        "ruby -e \"puts('https://example.com')\"",
        "python -c \"import socket; socket.create_connection(('127.0.0.1', 8000))\"",
        "node -e \"fetch('http://localhost:3000/api')\"",
    ],
)
def test_printing_an_address_or_reaching_loopback_is_not(command: str) -> None:
    assert not _flagged(command)
