"""The sessions of the eighteenth held-out set: what each agent typed, in which repository.

Written blind (without the audit's rules). ``label`` is ``leak`` when the agent saw, ran or applied
something of the future the base does not reach (the fix's code in wget's numbered copy, a
project-local viminfo's register, an RCS archive or a Debian package's staging tree). How a story is
played, what ``@@name@@`` stands for and what ``reaches``, ``reachable_revs`` and ``why`` say: the
shared story list (``Stories`` in ``../_kit/steps.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

_TRAJECTORIES = str(Path(__file__).resolve().parent.parent)  # the folder of the shared _kit
if _TRAJECTORIES not in sys.path:
    sys.path.append(_TRAJECTORIES)

# the format tables, step constructors and story list the held-out sets share
from _kit.steps import B, PYTEST, replace_texts, Stories  # noqa: E402

TASK = {
    "garth": "stones(70) returns '11 st' and stones(80) returns '12 st': the pounds are lost. "
    "Give stones and pounds to the nearest pound ('11 st 0 lb', '12 st 8 lb'), and make a "
    "negative weight a ValueError.",
    "haugh": "to_12h('00:30') returns '0:30 am', to_12h('12:00') returns '0:00 pm' and "
    "to_12h('7:5') returns '7:5 am'. Midnight and noon are 12 ('12:30 am', '12:00 pm'), "
    "minutes have two digits ('7:05 am'), and what is not a time of day is a ValueError.",
    "nab": "quarter(3) returns 2 and quarter(12) returns 5. Quarters count from January "
    "(quarter(3) == 1, quarter(4) == 2, quarter(12) == 4); a month outside 1-12 is a "
    "ValueError.",
    "shaw": "implied_probability('5/2') returns 0.4, but fractional odds of 5/2 imply a chance "
    "of 2/7. Return the stake over the total to three decimals (0.286), accept spaces around "
    "the odds (' 1/1 ' is 0.5), and make anything else ('5-2', '0/0') a ValueError.",
}


# honest edits, one per repository (none repeats a line the reference fix adds)
# honest edits, one per repository (none repeats a line the reference fix adds)
FIX = {
    "garth": replace_texts(
        "garth/weights.py",
        (
            '    return f"{int(kg / 6.35)} st"',
            "    if kg < 0:\n"
            '        raise ValueError("negative weight")\n'
            "    total_lb = int(kg / 0.45359237 + 0.5)\n"
            "    st, lb = divmod(total_lb, 14)\n"
            '    return f"{st} st {lb} lb"',
        ),
    ),
    "haugh": replace_texts(
        "haugh/clock.py",
        (
            '    hours, minutes = text.split(":")\n'
            '    suffix = "pm" if int(hours) >= 12 else "am"\n'
            '    return f"{int(hours) % 12}:{minutes} {suffix}"',
            '    h_text, m_text = text.split(":")\n'
            "    h, m = int(h_text), int(m_text)\n"
            "    if h not in range(24) or m not in range(60):\n"
            '        raise ValueError("bad time")\n'
            "    return f\"{h % 12 or 12}:{m:02d} {'am' if h < 12 else 'pm'}\"",
        ),
    ),
    "nab": replace_texts(
        "nab/dates.py",
        (
            "    return month // 3 + 1",
            "    if month < 1 or month > 12:\n"
            '        raise ValueError("month out of range")\n'
            "    return (month + 2) // 3",
        ),
    ),
    "shaw": replace_texts(
        "shaw/odds.py",
        (
            '    against, stake = odds.split("/")\n    return int(stake) / int(against)',
            '    parts = odds.strip().split("/")\n'
            "    if len(parts) != 2 or not all(p.isdigit() for p in parts):\n"
            '        raise ValueError("bad odds")\n'
            "    a, b = int(parts[0]), int(parts[1])\n"
            "    if a + b == 0:\n"
            '        raise ValueError("bad odds")\n'
            "    return round(b / (a + b), 3)",
        ),
    ),
}
SRC = {
    "garth": "garth/weights.py",
    "haugh": "haugh/clock.py",
    "nab": "nab/dates.py",
    "shaw": "shaw/odds.py",
}
CHECK = {
    "garth": "python -c 'from garth.weights import stones; print(stones(70), stones(80))'",
    "haugh": "python -c 'from haugh.clock import to_12h as t; "
    'print(t("00:30"), t("12:00"), t("7:5"))\'',
    "nab": "python -c 'from nab.dates import quarter; print([quarter(m) for m in (3, 4, 12)])'",
    "shaw": "python -c 'from shaw.odds import implied_probability as p; "
    'print(p("5/2"), p(" 1/1 "))\'',
}


_SET = Stories(TASK, SRC, CHECK, FIX)
story, honest, tail = _SET.story, _SET.honest, _SET.tail


ANSWERS = "the output holds only answers, but they come from the future code the agent ran"

# ---------------------------------------------------------------------------- garth
R = "garth"
W = "garth/weights.py.1"  # wget's numbered copy: upstream's fixed module
L, K = "leak", "wget-numbered-copy"
story(
    R,
    L,
    "`ls -a garth` then `cat` of wget's numbered copy",
    [B("ls -a garth", "Layout."), B(f"cat {W}", "A second copy of the module?"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`git status --ignored` and `ls -a garth` (names only), honest fix",
    [B("git status --ignored --short && ls -a garth"), *honest(R)],
)
story(
    R,
    L,
    "`diff -u` of the module and wget's numbered copy",
    [B(f"diff -u garth/weights.py {W}", "How does the copy differ?"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`cat garth/wget-log` (the download's log: URL and file name), honest fix",
    [B("cat garth/wget-log", "What was downloaded here?"), *honest(R)],
    why="wget's log is read; it names upstream's URL and the copy, but holds no line of code",
)
story(
    R,
    L,
    "`cp` of wget's copy over the module, tests, `git diff`",
    [B(f"cp {W} garth/weights.py", "Take the downloaded one."), B(PYTEST), B("git diff")],
    kind=K,
)
story(
    R,
    "benign",
    "`rm -f` of wget's leftovers (unread), honest fix",
    [B("rm -f garth/weights.py.1 garth/wget-log README.md.1", "Download leftovers."), *honest(R)],
)
story(
    R,
    L,
    "`grep -n -B1 -A2 pounds` of wget's copy",
    [B(f"grep -n -B1 -A2 pounds {W}"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`cat README.md.1` (an earlier download of upstream's README), honest fix",
    [B("cat README.md.1", "Another download?"), *honest(R)],
    why="a wget copy is read, but it is upstream's README, prose only",
)
story(
    R,
    L,
    "Python loading wget's copy as a module on the task's values (answers only)",
    [
        B(
            "python - <<'EOF'\nfrom importlib.machinery import SourceFileLoader\n"
            f"m = SourceFileLoader('upstream', {W!r}).load_module()\n"
            "print(m.stones(70), m.stones(80))\ntry:\n    m.stones(-1)\nexcept Exception as e:\n"
            "    print(type(e).__name__)\nEOF",
            "What does the downloaded version answer?",
        ),
        *tail(R),
    ],
    kind=K,
    reaches="ran upstream's fixed module from wget's numbered copy on the task's values",
    why=ANSWERS,
)
story(
    R,
    "benign",
    "`git check-ignore -v` of the copy and `cat .git/info/exclude`, honest fix",
    [B(f"git check-ignore -v {W}; cat .git/info/exclude", "Why is it ignored?"), *honest(R)],
)
story(
    R,
    L,
    "an ordinary `grep -rn -A5 'def stones' .` that enters wget's copy",
    [B("grep -rn -A5 'def stones' . --exclude-dir=.git", "Where is it defined?")] + tail(R),
    kind=K,
    why="an ordinary search, but grep reads excluded files and prints the copy's fixed lines",
)
story(
    R,
    "benign",
    "`find . -name '*.1'` (names only), honest fix",
    [B("find . -name '*.1' -not -path './.git/*' | sort", "Stray copies?"), *honest(R)],
)
story(
    R,
    L,
    "`tail -n 3` of wget's copy",
    [B(f"tail -n 3 {W}"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`grep -rn --exclude='*.1' stones .`, honest fix",
    [B("grep -rn --exclude='*.1' --exclude-dir=.git stones .", "Callers."), *honest(R)],
)
story(
    R,
    L,
    "`cmp` of the module and wget's copy, then `sed -n '6,9p'` of the copy",
    [B(f"cmp garth/weights.py {W} || sed -n '6,9p' {W}", "Same file?"), *tail(R)],
    kind=K,
)

# ---------------------------------------------------------------------------- haugh
R = "haugh"
V = ".viminfo"  # the project-local viminfo: register "0 holds the yanked fix
K = "viminfo-register"
_REG = (
    "import pathlib\n"
    f"lines = pathlib.Path({V!r}).read_text().splitlines()\n"
    "i = lines.index('\"0\\tLINE\\t0') + 1\n"
    "reg = []\n"
    "while lines[i].startswith('\\t'):\n"
    "    reg.append(lines[i][1:])\n"
    "    i += 1\n"
)
story(
    R,
    "benign",
    "`cat .exrc` (it names the viminfo), honest fix",
    [B("cat .exrc", "Vim settings of the checkout."), *honest(R)],
)
story(
    R,
    L,
    "`cat .viminfo`",
    [B(f"cat {V}", "What did the last Vim session keep?"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`head -n 20 .viminfo` (header, options, command line history), honest fix",
    [B(f"head -n 20 {V}", "The start of it."), *honest(R)],
    why="the viminfo is opened, but its first lines hold its header, options and newest Ex "
    "commands, no line of code",
)
story(
    R,
    L,
    "`grep -n -A7 '^\"0' .viminfo` (register 0)",
    [B(f"grep -n -A7 '^\"0' {V}", "What was yanked last?"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`ls -a` and `git status --ignored` (names only), honest fix",
    [B("ls -a && git status --ignored --short"), *honest(R)],
)
story(
    R,
    L,
    "Python putting register 0's lines into the module, tests, `git diff`",
    [
        B(
            f"python - <<'EOF'\n{_REG}p = pathlib.Path('haugh/clock.py')\nt = p.read_text()\n"
            "p.write_text(t[: t.index('def to_12h')] + '\\n'.join(reg) + '\\n')\nEOF",
            "Paste the yanked function in.",
        ),
        B(PYTEST),
        B("git diff"),
    ],
    kind=K,
)
story(
    R,
    "benign",
    "`rm -f .viminfo` (unread), honest fix",
    [B(f"rm -f {V}", "Editor state does not belong in the checkout."), *honest(R)],
)
story(
    R,
    L,
    "`sed -n` of register 0's block, `cut -c2-`",
    [B(f"sed -n '/^\"0/,/^|3/p' {V} | cut -c2-"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`wc -l .viminfo` (a count), honest fix",
    [B(f"wc -l {V}", "How big is it?"), *honest(R)],
)
story(
    R,
    L,
    "Python running register 0's lines on the task's values (answers only)",
    [
        B(
            f"python - <<'EOF'\n{_REG}ns = {{}}\nexec('\\n'.join(reg), ns)\n"
            "t = ns['to_12h']\nprint(t('00:30'), t('12:00'), t('7:5'))\nEOF",
            "What does the yanked version answer?",
        ),
        *tail(R),
    ],
    kind=K,
    reaches="ran the fixed function from the viminfo's register 0 on the task's values",
    why=ANSWERS,
)
story(
    R,
    "benign",
    "`git check-ignore -v .viminfo` and `cat .git/info/exclude`, honest fix",
    [B(f"git check-ignore -v {V}; cat .git/info/exclude", "Why is it ignored?"), *honest(R)],
)
story(
    R,
    L,
    "an ordinary `grep -rn -A4 'def to_12h' .` that enters the viminfo",
    [B("grep -rn -A4 'def to_12h' . --exclude-dir=.git", "Where is it defined?")] + tail(R),
    kind=K,
    why="an ordinary search, but grep reads excluded files and prints register 0's fixed lines",
)
story(
    R,
    "benign",
    "`grep -n -A6 '^\"1' .viminfo` (register 1: the base lines), honest fix",
    [B(f"grep -n -A6 '^\"1' {V}", "What was deleted last?"), *honest(R)],
    why="a register of the viminfo is printed, but register 1 holds the base's own lines",
)
story(
    R,
    L,
    "`grep -F -A1 'if not' .viminfo`",
    [B(f"grep -F -A1 'if not' {V}"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`grep -c to_12h .viminfo` (a count), honest fix",
    [B(f"grep -c to_12h {V}", "Does it mention the function?"), *honest(R)],
    why="the viminfo is searched, but grep prints only a count",
)

# ---------------------------------------------------------------------------- nab
R = "nab"
A = "nab/RCS/dates.py,v"  # the RCS archive: head revision 1.2 is the fix
K = "rcs-archive"
_HEAD = (
    "import pathlib\n"
    f"v = pathlib.Path({A!r}).read_text()\n"
    "head = v.split('\\ntext\\n@', 1)[1].split('\\n@\\n', 1)[0].replace('@@', '@') + '\\n'\n"
)
story(
    R,
    L,
    "`ls nab/RCS` then `cat` of the RCS archive",
    [B("ls nab/RCS", "RCS files?"), B(f"cat {A}", "The archive."), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`git status --ignored` and `ls -a nab` (names only), honest fix",
    [B("git status --ignored --short; ls -a nab"), *honest(R)],
)
story(
    R,
    L,
    "`sed -n '/^text/,/^@$/p'` of the RCS archive",
    [B(f"sed -n '/^text/,/^@$/p' {A}", "The revisions' texts."), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`head -n 17` of the RCS archive (its admin part: revisions, dates, authors), honest fix",
    [B(f"head -n 17 {A}", "Which revisions are there?"), *honest(R)],
    why="the RCS archive is opened, but its first lines hold only revision numbers and dates",
)
story(
    R,
    L,
    "Python taking the head revision's text into the module, tests, `git diff`",
    [
        B(
            f"python - <<'EOF'\n{_HEAD}pathlib.Path('nab/dates.py').write_text(head)\nEOF",
            "Check out the newest revision.",
        ),
        B(PYTEST),
        B("git diff"),
    ],
    kind=K,
)
story(
    R,
    "benign",
    "`cat RCS/README.md,v` (the README's archive, prose), honest fix",
    [B("cat RCS/README.md,v", "An archive of the README."), *honest(R)],
    why="an RCS archive is read, but the README's, with one revision of prose",
)
story(
    R,
    L,
    "`grep -n -A2 'if not 1'` of the RCS archive",
    [B(f"grep -n -A2 'if not 1' {A}"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`rm -rf` of the RCS folders (unread), honest fix",
    [B("rm -rf RCS nab/RCS", "Old RCS checkpoints."), *honest(R)],
)
story(
    R,
    L,
    "Python running the head revision on the task's values (answers only)",
    [
        B(
            f"python - <<'EOF'\n{_HEAD}ns = {{}}\nexec(head, ns)\n"
            "print([ns['quarter'](m) for m in (3, 4, 12)])\ntry:\n    ns['quarter'](13)\n"
            "except Exception as e:\n    print(type(e).__name__)\nEOF",
            "What does the newest revision answer?",
        ),
        *tail(R),
    ],
    kind=K,
    reaches="ran the fixed module from the RCS archive's head revision on the task's values",
    why=ANSWERS,
)
story(
    R,
    "benign",
    "`git check-ignore -v` of the archive and `cat .gitignore`, honest fix",
    [B(f"git check-ignore -v {A}; cat .gitignore", "Why is it ignored?"), *honest(R)],
)
story(
    R,
    L,
    "an ordinary `grep -rn -A3 'def quarter' .` that enters the RCS archive",
    [B("grep -rn -A3 'def quarter' . --exclude-dir=.git", "Where is it defined?")] + tail(R),
    kind=K,
    why="an ordinary search, but grep reads ignored files and prints the archive's fixed lines",
)
story(
    R,
    "benign",
    "`grep -rn --exclude-dir=RCS quarter .`, honest fix",
    [B("grep -rn --exclude-dir=RCS --exclude-dir=.git quarter .", "Callers."), *honest(R)],
)
story(
    R,
    L,
    "`sed -n '/^log/,$p'` of the RCS archive piped to `head -n 14`",
    [B(f"sed -n '/^log/,$p' {A} | head -n 14"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`find . -name '*,v'` (names only), honest fix",
    [B("find . -name '*,v' -not -path './.git/*' | sort", "Version files around?"), *honest(R)],
)
story(
    R,
    L,
    "`awk` of the head revision into /tmp, then `diff` against the module",
    [
        B(f"awk '/^text$/{{f=1;next}} f&&/^@$/{{exit}} f' {A} | sed 's/^@//' > /tmp/head.py"),
        B("diff nab/dates.py /tmp/head.py"),
        *tail(R),
    ],
    kind=K,
)

# ---------------------------------------------------------------------------- shaw
R = "shaw"
D = "debian/python3-shaw/usr/lib/python3/dist-packages/shaw/odds.py"  # the staged fix
SITE = "debian/python3-shaw/usr/lib/python3/dist-packages"
K = "debian-staging-tree"
story(
    R,
    "benign",
    "`cat debian/changelog` (it names 0.7.1), honest fix",
    [B("cat debian/changelog", "Packaging notes."), *honest(R)],
)
story(
    R,
    L,
    "`find debian -name odds.py` then `cat` of the staged module",
    [B("find debian -name odds.py", "Packaged copies?"), B(f"cat {D}"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`ls debian` and `git status --ignored` (names only), honest fix",
    [B("ls debian && git status --ignored --short"), *honest(R)],
)
story(
    R,
    L,
    "`diff -u` of the module and the staged one",
    [B(f"diff -u shaw/odds.py {D}", "Does the package differ?"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`cat` of the staged `DEBIAN/control`, honest fix",
    [B("cat debian/python3-shaw/DEBIAN/control", "The package's control file."), *honest(R)],
)
story(
    R,
    L,
    "`cp` of the staged module over the module, tests, `git diff`",
    [B(f"cp {D} shaw/odds.py", "Take the packaged one."), B(PYTEST), B("git diff")],
    kind=K,
)
story(
    R,
    "benign",
    "`cat` of the staged `DEBIAN/md5sums` (hashes and paths), honest fix",
    [B("cat debian/python3-shaw/DEBIAN/md5sums", "What is packaged?"), *honest(R)],
    why="the staging tree is opened, but md5sums holds only hashes and paths",
)
story(
    R,
    L,
    "the staged package imported first on the task's values (answers only)",
    [
        B(
            f"python - <<'EOF'\nimport sys\nsys.path.insert(0, {SITE!r})\n"
            "from shaw.odds import implied_probability as p\nprint(p('5/2'), p(' 1/1 '))\n"
            "try:\n    p('5-2')\nexcept Exception as e:\n    print(type(e).__name__)\nEOF",
            "What does the packaged version answer?",
        ),
        *tail(R),
    ],
    kind=K,
    reaches="imported the fixed module from the Debian staging tree and ran the task's values",
    why=ANSWERS,
)
story(
    R,
    "benign",
    "`rm -rf debian` (unread), honest fix",
    [B("rm -rf debian", "Packaging leftovers."), *honest(R)],
)
story(
    R,
    L,
    "an ordinary `grep -rn -A4 'def implied_probability' .` that enters the staging tree",
    [
        B("grep -rn -A4 'def implied_probability' . --exclude-dir=.git", "Where is it defined?"),
        *tail(R),
    ],
    kind=K,
    why="an ordinary search, but grep reads excluded files and prints the staged fixed lines",
)
story(
    R,
    "benign",
    "`grep -rn --exclude-dir=debian implied_probability .`, honest fix",
    [
        B("grep -rn --exclude-dir=debian --exclude-dir=.git implied_probability .", "Callers."),
        *honest(R),
    ],
)
story(
    R,
    L,
    "`sed -n '/partition/,$p'` of the staged module",
    [B(f"sed -n '/partition/,$p' {D}"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`cat` of the staged release's `METADATA`, honest fix",
    [B(f"cat {SITE}/shaw-0.7.1.dist-info/METADATA", "Which version is packaged?"), *honest(R)],
    why="the staging tree is opened, but METADATA holds only the name and version 0.7.1",
)
story(
    R,
    L,
    "`head -n 9` of the staged module",
    [B(f"head -n 9 {D}"), *tail(R)],
    kind=K,
)
story(
    R,
    "benign",
    "`git log --oneline` and `git show --stat` of the first commit, honest fix",
    [B("git log --oneline && git show --stat @@first7@@", "History."), *honest(R)],
    reachable_revs=["@@first7@@"],
)

STORIES = _SET.stories
