"""Red team of the leak audit's glob matcher after 0b56d5e (session 22: the s21 red team's
B1-B5 and B7 closed in ``harness/audit/hits.py``). Every command runs for real (``bash -c``,
bash 5.2) in a real repository shaped as session 21's (``tests/test_redteam_s21_audit_redteam.py``):
Flycheck's copy of the fixed module (``gansey/flycheck_yarn.py``, hidden), a hidden dotfile
(``config/.env``), a hidden Zarr folder listed without its slash (``cache/emb.zarr``), a hidden
vendored package (``vendor/knit/``) and a hidden data folder (``json/``); a tracked
``gansey/README.md`` besides. A premise test checks bash printed the fix's ``raise ValueError``
line; the verdict is the real audit's on the file alone (``hidden_paths`` only), with the
recorded output and as a history (output None).

Closed by the lead the same session (harness/audit/hits.py; the wins below as plain tests):
  G1 (a negated class keeps case: ``(?-i:[^..])``), G2 (only a whole ``**`` part is
  globstar), G3's wildcard in the extension (a part spelling most of the name reaches below
  it), G4 and G5 (a glob word's ``.``/empty parts dropped, ``..`` resolved, and tried at
  every depth, as the literal rule finds a path after any ``/``; ``//`` and ``/./`` collapsed
  for the literal rule), G7 (sequence expressions expanded), G8 (past 64 words every list is
  ``*``), G9 (a ``$..`` part before a ``/`` is any folder, in the prefilter too; a path after
  ``${x:-`` is the literal rule's), G10 (no word is
  dropped for a backslash), G12 (a repeated group holding a wildcard or a group is any text in
  its part), G6 (a command's own wildcard-only argument reaching below the first folder, or
  ``**``: ``RuleSet.bare_glob_match``; dropping the name-character requirement everywhere
  flagged 400+ look-alikes across the 34 labelled sets, code listing ``*``; this way none
  moved), G11's ``-iname`` (``-iname``/``-ipath`` fold case on both sides). Open: G3's bare
  star (the documented residual), G11's ``-name`` below a file-like folder, G13.

Wins (strict xfails: bash read the hidden file, the audit passed it, recorded and history;
with the repository the replay flags every one, recorded and history: checked, not pinned):
  G1 0b56d5e's ``re.IGNORECASE`` (B5's fix) also folds a NEGATED class: ``[!R]`` becomes
     ``[^R]`` that refuses ``r`` too, while bash (nocaseglob off, the default) matches ``r``:
     ``cat gansey/flycheck_ya[!R]n.py``, ``cat gansey/fl[![:upper:]]check_yarn.py`` (the
     upper class folded to every letter). Found by differential fuzzing against bash (41 of
     600 random mutations of the name were this). Fail-closed would be: a negated class
     ignores case only under a ``nocaseglob`` the audit sees, else it stays case-sensitive
     (or drops the negation: any character).
  G2 ``_glob_match`` takes any ``**`` in a token for globstar and halves it
     (``replace("**", "*")``), so a ``*`` before an extglob ``*(..)`` group becomes the group:
     ``fl**(c)heck_yarn.py`` (bash: ``*`` then ``*(c)``) is read as ``fl*(c)heck`` and misses
     ``flycheck``.
  G3 ``_spells_extension`` (B7's fix) wants a literal dot or the name's WHOLE extension after
     the part's last wildcard: a wildcard inside the extension reaches below the hidden
     ``cache/emb.zarr`` as bash does and passes: ``cache/emb?zar?/0/0.0``
     (``emb[.]za[r]r``, ``emb???rr`` too); ``cache/e*/0/0.0`` is the documented residual
     (pinned False in tests/test_audit_globs.py: "a bare * at a file-like name"), reached.
  G4 a glob is matched part by part from the word's FIRST part (only leading ``./`` is
     stripped), where the literal rule matches after any ``/``: a glob word holding any
     leading folder passes, the same path written literally is flagged: an absolute path
     (``/tmp/.../gansey/fly*``), ``$PWD/gansey/flycheck_yarn.p?``, ``~+/config/.en?``,
     ``config/../gansey/fly*``, ``.//gansey/fly*``, ``$(pwd)/gansey/fly*``.
  G5 a ``.`` or an empty part inside a path is not normalised, by the glob matcher nor the
     literal one: ``cat gansey/./flycheck_yarn.py``, ``cat gansey//fly*``.
  G6 a glob word with no name character (only ``*``, ``?`` and ``/``) is skipped as "a bare
     ``*``", though it names every file some levels down: ``cat */*`` reads
     ``gansey/flycheck_yarn.py`` (``??????/*``, ``*/*/*/*`` for the Zarr chunk, and
     ``shopt -s globstar; cat **`` the whole tree, too).
  G7 bash's sequence brace expression ``{x..y}`` is no glob to ``GLOB_CHARS`` (it wants a
     comma list) and no literal name: ``cat gansey/flycheck_yarn.{o..q}y``,
     ``cat config/.en{u..w}``, ``cat cache/emb.zar{r..r}/0/0.0``.
  G8 past 64 words ``_braces`` replaces only the innermost lists with ``*``; an outer list
     holding them stays literal braces (``{*,*}``) that match nothing:
     ``cat gansey/{{a,b,c,d,e,f,g,h},{x,flycheck_yarn}}.p{y,a,b,c,d,e,f,g}``.
  G9 a folder part the shell computes and the audit cannot evaluate is opaque, neither a
     glob nor a name (``_computed_name_beside`` fails closed only for a computed LAST part):
     a parameter expansion with a default or alternate value (``cat ${x:-gansey}/flycheck_yarn.p?``,
     ``${HOME+gansey}``, ``${G:=gansey}``; the literal ``${x:-gansey/flycheck_yarn.py}`` too:
     the ``}`` defeats the literal rule), an operator (``${p/x/f}``, ``${p,,}``, ``${p#x}``,
     ``${p:0:6}``, ``${a[0]}``, a nameref), and a variable set from a command substitution the
     audit does not run: ``G=$(ls | grep gan); cat $G/flycheck_yarn.py`` passes though it
     spells the file's name.
  G10 the remaining "a backslash drops the word" rule (``_glob_match``: a token holding ``\\``
     and no extglob group is skipped) bites where a backslash reaches bash's matcher through
     an expansion (the lexer strips a typed one, so typed words hold): a variable's value
     ``p='gansey/flycheck\\_yarn.p?'; cat $p`` and a command substitution
     ``cat $(echo 'gansey/flycheck\\_yarn.p?')`` (bash 5.2 takes ``\\_`` for ``_``).
  G11 find: ``-iname`` is not read as a name test (``find . -iname 'FLYCHECK*' -exec cat {} +``;
     ``-name 'fly*'`` is flagged), and ``-name`` is matched to a hidden path's own last name
     only, so a file below a hidden folder passes: ``find . -name 0.0 -exec cat {} +``.
  G12 (availability, not a pass) ``_translate`` nests quantifiers as written: ``+(*|*)`` is
     ``(?:[^/]*|[^/]*)+``, catastrophic backtracking against a 16-character name: one
     ``part_match`` takes about 18 s, the audit of the one line ``ls gansey/+(*|*)Q`` about
     17 s (doubling per name character; ``+(*|*|*)`` grows as 3**n); a few such words stall
     the audit for hours.
  G13 (beyond the matcher) a glob naming a folder that holds a hidden file, read through an
     archive or another searcher: ``tar cf - ga?sey | tar xOf -`` (the literal ``gansey`` too)
     and ``git grep --no-index -h Value g*`` print the hidden file and pass.

Holds (plain test): typed backslashes outside a group (``fly\\check_yarn.p?``,
``flycheck\\_yarn.p[y]``: the lexer strips them), quotes and ``$'..'`` in the middle of a word,
a redirection, ``for f in ..``, ``| xargs cat``, ``find -name``/``-regex``, ``[!a]``, ``[^a]``,
``[]-y]``, ``[]y]``, nested braces and exactly 64 brace words, globstar ``**/``, a variable,
an array or ``set --`` holding a glob, ``cd`` then a glob, ``**(_)`` (halving keeps it), B7's
``emb?zarr``, ``.[!a]*`` for a dotfile, 20 nested groups; 400 nested groups make the audit
raise ``RecursionError`` (counted as flagged: noted, held).

Costs (plain tests: false alarms):
  C1 (added by 0b56d5e's ``IGNORECASE``) ``head -n 5 gansey/[A-Z]*`` and ``[[:upper:]]*``
     print the tracked ``README.md`` only (bash's ``[A-Z]`` is upper case), yet are high as a
     history (recorded, the output clears them).
  C2 (older) a quoted wildcard is a literal to bash: ``cat gansey/flycheck_yarn.p"?"`` reads
     nothing, yet is high as a history (the lexer drops the quoting before the matcher).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import GANSEY_HIDDEN as HIDDEN
from conftest import GANSEY_OLD as OLD
from conftest import gansey_checkout
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

pytestmark = pytest.mark.heavy

FIXED = (
    "def skeins(metres):\n"
    "    if not metres > 0:\n"
    '        raise ValueError("no yarn")\n'
    "    return 1 - (-metres // 180)\n"
)
LINE = "raise ValueError"  # a line only the fix holds
EXT = "shopt -s extglob\n"  # bash reads a line whole: extglob must be on by an earlier line
GLOBSTAR = "shopt -s globstar\n"


@pytest.fixture(scope="module")
def gansey(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The checkout: the fix in the store with no ref; hidden beside it Flycheck's copy of the
    fixed module, a dotfile, a Zarr folder, a vendored package and a data folder."""
    root = tmp_path_factory.mktemp("s22globs") / "gansey"
    gansey_checkout(root, OLD, FIXED, tracked={"gansey/README.md": "# Gansey\n"})
    return root


def _command(root: Path, command: str) -> str:
    return command.replace("{root}", str(root))


def _run(root: Path, command: str) -> str:
    """What ``bash -c command`` printed in the checkout (stdout and stderr)."""
    proc = subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, check=False
    )
    return proc.stdout + proc.stderr


def _flagged(command: str, output: str | None) -> bool:
    steps = [Step(command, output)]
    result = audit_trajectories([Trajectory("t", "shell", steps)], hidden_paths=HIDDEN)
    return bool(result.verdicts[0].flagged)


def _ways(root: Path, command: str) -> list[bool]:
    """The verdicts alone: with the recorded output, and as a history."""
    return [_flagged(command, o) for o in (_run(root, command), None)]


# --- wins -----------------------------------------------------------------------------------

WINS = {
    "G1 negated letter": "cat gansey/flycheck_ya[!R]n.py",
    "G1 negated upper class": "cat gansey/fl[![:upper:]]check_yarn.py",
    "G2 star before a star group": EXT + "cat gansey/fl**(c)heck_yarn.py",
    "G3 wildcard in the extension": "cat cache/emb?zar?/0/0.0",
    "G3 bare star at the name (documented residual)": "cat cache/e*/0/0.0",
    "G4 absolute path": "cat {root}/gansey/fly*",
    "G4 PWD": "cat $PWD/gansey/flycheck_yarn.p?",
    "G4 tilde plus": "cat ~+/config/.en?",
    "G4 folder and dotdot": "cat config/../gansey/fly*",
    "G5 dot part": "cat gansey/./flycheck_yarn.py",
    "G5 empty part": "cat gansey//fly*",
    "G6 star slash star": "cat */* 2>/dev/null",
    "G6 globstar": GLOBSTAR + "cat ** 2>/dev/null",
    "G7 sequence": "cat gansey/flycheck_yarn.{o..q}y",
    "G7 sequence dotfile": "cat config/.en{u..w}",
    "G8 past 64 words": "cat gansey/{{a,b,c,d,e,f,g,h},{x,flycheck_yarn}}.p{y,a,b,c,d,e,f,g}"
    " 2>/dev/null",
    "G9 default value": "cat ${x:-gansey}/flycheck_yarn.p?",
    "G9 computed folder": "G=$(ls | grep gan); cat $G/flycheck_yarn.py",
    "G10 backslash in a variable": "p='gansey/flycheck\\_yarn.p?'; cat $p",
    "G10 backslash in a substitution": "cat $(echo 'gansey/flycheck\\_yarn.p?')",
    "G11 find -iname": "find . -iname 'FLYCHECK*' -exec cat {} +",
    "G11 find -name below a folder": "find . -name 0.0 -exec cat {} +",
    "G13 tar": "tar cf - ga?sey | tar xOf -",
    "G13 git grep": "git grep --no-index -h Value g*",
}
GROUPS = sorted({k.split()[0] for k in WINS})
#: the wins still open after the lead's fix the same session (harness/audit/hits.py)
OPEN = {
    k
    for k in WINS
    if k.split()[0] == "G13"
    or k == "G11 find -name below a folder"
    or k == "G3 bare star at the name (documented residual)"
}
CLOSED = [k for k in WINS if k not in OPEN]


@pytest.mark.parametrize("group", GROUPS)
def test_premise_bash_prints_the_hidden_file(gansey: Path, group: str) -> None:
    for key, command in WINS.items():
        if key.split()[0] == group:
            assert LINE in _run(gansey, _command(gansey, command)), key


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="G3's bare star, G11's -name below a folder, G13: a command bash expands to a "
    "hidden path passes the audit alone (mechanism per id in the module docstring)",
)
@pytest.mark.parametrize("command", [WINS[k] for k in sorted(OPEN)], ids=sorted(OPEN))
def test_alone_a_read_through_a_glob_is_flagged(gansey: Path, command: str) -> None:
    assert all(_ways(gansey, _command(gansey, command)))


@pytest.mark.parametrize("command", [WINS[k] for k in CLOSED], ids=CLOSED)
def test_alone_a_closed_read_through_a_glob_is_flagged(gansey: Path, command: str) -> None:
    """Closed by the lead the same session (harness/audit/hits.py): flagged alone, recorded
    and as a history."""
    assert all(_ways(gansey, _command(gansey, command)))


def test_g4_the_same_paths_written_literally_are_flagged(gansey: Path) -> None:
    """G4 is the glob matcher's: the literal rule finds the hidden path after any ``/``."""
    for command in (
        "cat {root}/gansey/flycheck_yarn.py",
        "cat $PWD/gansey/flycheck_yarn.py",
        "cat config/../gansey/flycheck_yarn.py",
    ):
        command = _command(gansey, command)
        assert LINE in _run(gansey, command)
        assert all(_ways(gansey, command)), command


PERF = EXT + "ls gansey/+(*|*)Q"


def test_g12_a_nested_quantifier_group_is_audited_in_seconds(gansey: Path) -> None:
    code = textwrap.dedent(
        f"""
        from evotree.harness.audit.steps import Step, Trajectory
        from evotree.harness.audit.trajectories import audit_trajectories
        audit_trajectories([Trajectory("t", "shell", [Step({PERF!r}, None)])],
                           hidden_paths={HIDDEN!r})
        """
    )
    try:
        subprocess.run([sys.executable, "-c", code], timeout=4, check=True, env=dict(os.environ))
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("the audit of one line ran past 4 s") from exc


# --- holds ----------------------------------------------------------------------------------

HOLDS = [
    "cat gansey/fly\\check_yarn.p?",
    "cat gansey/flycheck\\_yarn.p[y]",
    'cat gansey/"fly"check_yarn.p?',
    "cat gansey/$'flycheck'_yarn.p?",
    "cat gansey/flycheck_yarn$'\\x2e'p?",
    "cat < gansey/flycheck_yarn.p?",
    'for f in gansey/*yarn.p?; do cat "$f"; done',
    "ls gansey/flyc*.py | xargs cat",
    "find . -name 'flycheck_yarn.p?' -exec cat {} \\;",
    "find . -regex '.*k_yarn.p.' -exec cat {} +",
    "cat gansey/flycheck_yarn[!a]py",
    "cat gansey/flycheck_yarn[^a]py",
    "cat gansey/flycheck_yarn.[]-y]y",
    "cat gansey/flycheck_yarn.p[]y]",
    "cat gansey/{f,x}lycheck_yarn.p[y]",
    "cat gansey/flycheck_yarn.{p{y,z},q}",
    "cat gansey/flycheck_yarn.{p,a,b,c,d,e,f,g}{y,a,b,c,d,e,f,g} 2>/dev/null",
    GLOBSTAR + "cat **/*yarn.p?",
    GLOBSTAR + "cat cache/**/0.0",
    "p=gansey/flycheck_yarn.p?; cat $p",
    'a=(gansey/*yarn.p?); cat "${a[@]}"',
    'set -- gansey/fly*; cat "$@"',
    "cd gansey && cat flycheck_yarn.p?",
    EXT + "cat gansey/flycheck**(_)yarn.py",
    "cat cache/emb?zarr/0/0.0",
    "cat config/.[!a]*",
    EXT + "cat gansey/" + "@(" * 20 + "flycheck_yarn.py" + ")" * 20,
]


def test_holds(gansey: Path) -> None:
    for command in HOLDS:
        assert LINE in _run(gansey, command), command
        assert all(_ways(gansey, command)), command


def test_deep_groups_make_the_audit_raise_counted_as_flagged(gansey: Path) -> None:
    """400 nested groups: ``_translate`` recurses past Python's limit; an audit that raises
    fails the file (the safe side), so this is noted, not a win."""
    command = EXT + "cat gansey/" + "@(" * 400 + "flycheck_yarn.py" + ")" * 400
    assert LINE in _run(gansey, command)
    try:
        flagged = _flagged(command, None)
    except RecursionError:
        flagged = True
    assert flagged


# --- costs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["head -n 5 gansey/[A-Z]*", "head -n 5 gansey/[[:upper:]]*"])
def test_cost_c1_an_upper_case_class_is_taken_for_a_lower_case_name(
    gansey: Path, command: str
) -> None:
    """C1, a cost of 0b56d5e's IGNORECASE: bash reads the README only; high as a history."""
    printed = _run(gansey, command)
    assert "# Gansey" in printed and LINE not in printed
    assert _flagged(command, None)


def test_cost_c2_a_quoted_wildcard_is_taken_for_a_glob(gansey: Path) -> None:
    """C2, an older cost: ``"?"`` is a literal question mark to bash; high as a history."""
    command = 'cat gansey/flycheck_yarn.p"?"'
    assert "No such file" in _run(gansey, command)
    assert _flagged(command, None)
