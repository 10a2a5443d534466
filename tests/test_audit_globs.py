"""Globs in the leak audit (issue 30, the s20 red team's A6 and A8): the lexer keeps an
extglob group (``@(a|b)``) in its word, the glob matcher reads it as bash does (checked
against bash's own expansion in a real folder), and a glob in a file-like name's own name
reaching below it takes the name for a folder."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from evotree.harness.audit.commands import classify_command
from evotree.harness.audit.hits import RuleSet, glob_words, part_match
from evotree.harness.audit.lexer import _Lexer, _split

NAMES = [
    "embeddings.zarr",
    "_minted-regatta",
    "talk",
    "sub",
    "v1.2",
    "row.pygtex",
    "x1",
]
PATTERNS = [
    "*",
    "?*",
    ".e*",
    "[.]env",
    "?env",
    "@(.env|talk)",
    "@(*)",
    "!(talk)",
    "!(*.zarr)",
    "*(_minted-regatta)",
    "+(t|a|l|k)",
    "?(_)minted-regatta",
    "emb*.zarr",
    "[!t]*",
    "[^t]*",
    "v1.[[:digit:]]",
    "@(x|_m*)",
    "*@(.zarr|.pygtex)",
    "[[:alpha:]]*",
    "x[[:digit:]]",
    "@(sub|@(ta|x)lk)",
    "[]x]*",
    # the s21 red team's B1-B4 (session 22): what a class or a group holds stays in it
    "v1[.,]2",
    "v1[.\\|]2",
    "x[[=1=]]",
    "v1[[.period.]]2",
    "[:-1]*",
    "@(v1.2|\\))",
    "@(sub|x\\|y)",
]


def _bash_expands(folder: Path, pattern: str) -> set[str]:
    """The names bash (extglob and nullglob on, dotglob off) expands ``pattern`` to in
    ``folder``."""
    script = f'shopt -s extglob nullglob\ncd {folder}\nfor n in {pattern}; do echo "$n"; done'
    got = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    return set(got.stdout.splitlines())


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_part_match_is_bash_filename_expansion(tmp_path: Path) -> None:
    """Each pattern matches what bash expands it to."""
    for name in NAMES:
        (tmp_path / name).mkdir()
    for pattern in PATTERNS:
        bash = _bash_expands(tmp_path, pattern)
        ours = {n for n in NAMES if part_match(n, pattern)}
        assert bash <= ours, pattern
        extra = ours - bash
        assert not extra or (
            pattern[0] in "@!*?+" and pattern[1] == "(" and all(n.startswith(".") for n in extra)
        ), (pattern, extra)


@pytest.mark.parametrize(
    ("line", "word"),
    [
        (
            "shopt -s extglob; cat slides/@(_minted-regatta)/row.pygtex",
            "slides/@(_minted-regatta)/row.pygtex",
        ),
        ("cat slides/?(_)minted-regatta/row.pygtex", "slides/?(_)minted-regatta/row.pygtex"),
        ("cat s*(l)ides/x | wc -l", "s*(l)ides/x"),
        ("ls +(a|b)/x && true", "+(a|b)/x"),
        ("ls !(talk|sub)", "!(talk|sub)"),
        ("cat @(a b)/x; ls", "@(a b)/x"),
    ],
)
def test_the_lexer_keeps_an_extglob_group_in_its_word(line: str, word: str) -> None:
    commands = _split(_Lexer(line).run())
    assert any(word in c.argv for c in commands), [c.argv for c in commands]
    assert not any(
        c.argv and c.argv[0] in ("_minted-regatta", "_)minted-regatta") for c in commands
    )


@pytest.mark.parametrize(
    "line",
    ["!(git log --all -p)", "if !(git log --all -p); then :; fi", "true && !(git log --all)"],
)
def test_a_bang_where_a_command_starts_is_a_negated_subshell(line: str) -> None:
    """``!(cmd)`` where a command starts is read as before (extglob or not, the safe side:
    its commands are read)."""
    codes = {h.code for h in classify_command(line)}
    assert "audit.git_history_leak" in codes


HIDDEN = RuleSet(hidden_paths=("slides/_minted-regatta",))


@pytest.mark.parametrize(
    ("word", "reads"),
    [
        ("slides/@(_minted-regatta)/row.pygtex", True),
        ("slides/@(talk|_minted-*)/row.pygtex", True),
        ("slides/+(_minted-regatta)/row.pygtex", True),
        ("slides/*(_minted-regatta)/row.pygtex", True),
        ("slides/?(_)minted-regatta/row.pygtex", True),
        ("slides/!(talk)/row.pygtex", True),
        ("slides/**/@(row).pygtex", True),
        ("slides/@(talk|docs)/row.pygtex", False),
        ("slides/!(_minted-*)/row.pygtex", False),
        ("slides/?(_)talk/row.pygtex", False),
    ],
)
def test_an_extglob_word_names_a_hidden_folder_as_bash_expands_it(word: str, reads: bool) -> None:
    assert HIDDEN.hidden_match(word) is reads


def test_glob_words_keep_groups_and_split_command_punctuation() -> None:
    assert glob_words("(cat slides/@(a|b)/x)|wc") == ["slides/@(a|b)/x"]
    assert glob_words("cat {a,b}/@(c|d)") == ["b/@(c|d)", "a/@(c|d)"]


@pytest.mark.parametrize(
    ("word", "reads"),
    [
        ("cache/emb*.zarr/0/0.0", True),  # A8: the glob spells the name's extension
        ("cache/*.zarr/0/0.0", True),
        ("cache/embeddings.za?r/.zarray", True),
        ("cache/*/0/0.0", False),  # a bare * at a file-like name: the name stays a file's
        ("cache/e*/0/0.0", False),
        ("cache/*.zarr", True),
    ],
)
def test_a_glob_in_a_file_like_names_own_name_reaching_below_takes_it_for_a_folder(
    word: str, reads: bool
) -> None:
    assert RuleSet(hidden_paths=("cache/embeddings.zarr",)).hidden_match(word) is reads


def test_a_file_like_hidden_file_is_still_no_folder_to_a_bare_star() -> None:
    """heldout12's look-alike holds: ``…/roman/*/metadata.json`` does not read below the
    hidden ``func_code.py``; a glob spelling a dot in that place would."""
    rules = RuleSet(hidden_paths=(".joblib/fjord/roman/func_code.py", "cache/v1.2"))
    assert not rules.hidden_match(".joblib/fjord/roman/*/metadata.json")
    assert rules.hidden_match("cache/v1.?/x.json")
    assert not rules.hidden_match("cache/v*/x.json")


def test_a_reversed_range_is_no_error_and_matches_what_bash_does() -> None:
    """``x[:-1]`` in code is a glob word to the prefilter: its reversed range (``:`` after
    ``1``) must not raise (an audit that raises fails the file) and matches nothing."""
    rules = RuleSet(hidden_paths=("gansey/flycheck_yarn.py",))
    assert not rules.hidden_match("print(sys.argv[:-1]); gansey/x[:-1]")
    assert not part_match("flycheck_yarn.py", "[:-1]*")


def test_case_is_ignored_the_nocaseglob_cost() -> None:
    """Globs match regardless of case (``shopt -s nocaseglob`` is not followed: fail closed),
    so a glob differing from a hidden path in case alone names it."""
    rules = RuleSet(hidden_paths=("gansey/flycheck_yarn.py",))
    assert rules.hidden_match("cat gansey/FLYCHECK_yarn.p?")
    assert part_match("embeddings.zarr", "EMB*.zarr")
