"""Shells in the leak audit: which programs are shells, and when a simple command is a shell
running a body (``bash -lc 'BODY'``) — decided here for every module (issue 30).

:func:`~evotree.harness.audit.unwrap.parse_shell` follows a shell into the body it runs
(:func:`c_option`, over the wide set :data:`FOLLOWED`) and yields the body's commands beside
the shell's own. A judge that reads those commands one by one then sets the shell's command
aside (:func:`runs_body`): the body was judged. Each judge has its own :class:`Form` — which
names, which option word, where it stands — kept as it was when the judges each had a copy
(no verdict changed when they moved here); the table below is where they differ:

======================  ===========  ======================  =====================
form (callers)          names        option word             where
======================  ===========  ======================  =====================
:data:`WRAPPER`         SHELLS       ``-`` ... ``c``         exactly SHELL OPT BODY
(head_listing)                       (anything between)
:data:`WRAPPER_SHORT`   SHELLS       ``-[a-z]*c``            exactly SHELL OPT BODY
(alone_output)
:data:`LOGIN`           SHELLS       ``-c -lc -ic -lic``     the first two words
(step_outputs, shown)                                        after the name
:data:`SCRIPT`          SHELLS, ksh  ``-[a-z]*c[a-z]*``      any word but the last
(hidden_rules)
======================  ===========  ======================  =====================

A program is named by its bare name or by any path ending in it (``/bin/bash``); ``env bash``
reaches the judges as ``bash`` (parse_shell unwraps env). Setting a command aside lowers what a
judge finds, so the narrower sets and forms fail closed and were kept. hidden_rules, which sets
aside a hidden name that is the body itself, also asks :func:`body_is_last` (the body parsed,
nothing after it); LOGIN still takes ``bash run.sh -c`` (an option after an operand) though
parse_shell parses no body there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "FOLLOWED",
    "LOGIN",
    "SCRIPT",
    "SHELLS",
    "WRAPPER",
    "WRAPPER_SHORT",
    "Form",
    "body_is_last",
    "c_option",
    "is_shell",
    "runs_body",
]

#: the shells the judges know: a command of one of these running a body is set aside by them
SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
#: what parse_shell follows into (``ksh -c``, ``busybox sh -c``, ``fish -c``): wider on purpose,
#: since following more judges more; the judges never listed ash, fish or busybox (a judge
#: setting a command aside lowers its verdict, so narrower fails closed there)
FOLLOWED = SHELLS | frozenset({"ksh", "ash", "fish", "busybox"})


def _name(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def is_shell(word: str, names: frozenset[str] = SHELLS) -> bool:
    """Is ``word`` (a bare name or a path: ``/bin/bash``) one of the shells ``names``?"""
    return _name(word) in names


@dataclass(frozen=True)
class Form:
    """How a judge recognises a shell running a body: the shells' names, the option word
    (fullmatched) that says a body follows, and where it may stand — among the words
    ``argv[start:stop]``, or (``three``) as ``argv[1]`` of exactly ``SHELL OPTION BODY``."""

    names: frozenset[str]
    option: re.Pattern[str]
    start: int = 1
    stop: int | None = None
    three: bool = False


#: ``bash -lc 'BODY'`` and nothing after it; the option starts with ``-`` and ends in ``c``
#: (head_listing: a listing's commands are the body's)
WRAPPER = Form(SHELLS, re.compile(r"-.*c", re.S), three=True)
#: the same with letters only between (alone_output: a display's programs are the body's)
WRAPPER_SHORT = Form(SHELLS, re.compile(r"-[a-z]*c"), three=True)
#: ``-c``, ``-lc``, ``-ic`` or ``-lic`` among the first two words after the name, as agents'
#: harnesses write them (step_outputs and shown: a step of git displays or plain reads)
LOGIN = Form(SHELLS, re.compile(r"-(?:l|i|li)?c"), 1, 3)
#: an option holding ``c`` (``-ec``, ``-cx``) anywhere before the last word, ksh too
#: (hidden_rules: a hidden name that is the script is judged by the script's commands)
SCRIPT = Form(SHELLS | frozenset({"ksh"}), re.compile(r"-[a-z]*c[a-z]*"), 1, -1)


def runs_body(argv: Sequence[str], form: Form) -> bool:
    """Is ``argv`` a shell of ``form.names`` running a body, in the judge's ``form``?"""
    if not argv or not is_shell(argv[0], form.names):
        return False
    if form.three:
        return len(argv) == 3 and form.option.fullmatch(argv[1]) is not None
    return any(form.option.fullmatch(a) for a in argv[form.start : form.stop])


#: a shell's options that take the next word as their argument (``--rcfile FILE``); a short
#: cluster ending in ``o`` or ``O`` does too (``-o pipefail``, ``-eo pipefail``, ``+O extglob``)
_SHELL_ARG_OPTIONS = frozenset({"--rcfile", "--init-file"})
_SHELL_ARG_CLUSTER = re.compile(r"[-+][a-zA-Z]*[oO]")


def c_option(argv: Sequence[str]) -> int | None:
    """Where the option that makes ``argv[0]`` run its next word stands (``bash -lc BODY``:
    1; ``bash -e -o pipefail -c BODY``: 4): the first short-option cluster holding ``c``
    before any operand, over options (``-x``, ``+e``, ``--norc``) and the arguments of those
    that take one; None when there is none (``bash script.sh -c``, ``bash --norc``).
    parse_shell's rule (for python's ``-c`` too): the body it parses is ``argv[at + 1]``."""
    k = 1
    while k < len(argv):
        word = argv[k]
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return k
        if not word.startswith(("-", "+")):
            return None
        arg = word in _SHELL_ARG_OPTIONS or _SHELL_ARG_CLUSTER.fullmatch(word) is not None
        k += 2 if arg else 1
    return None


def body_is_last(argv: Sequence[str]) -> bool:
    """Is the last word of ``argv`` the body parse_shell parsed (``bash -lc BODY``, nothing
    after it)? Words after a body are its ``$0``, ``$1``, ... which the body's parsed
    commands do not show."""
    at = c_option(argv)
    return at is not None and at == len(argv) - 2
