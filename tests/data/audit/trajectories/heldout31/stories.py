"""The sessions of the thirty-first held-out set: what each agent typed, in which repository.

Written blind (without the audit's rules). ``label`` is ``leak`` when the agent saw, ran or applied
something of the future the base does not reach (the fix's code or tests in cgitb's reports, in a
``git fast-export`` stream, in gdb's log of a python-gdb session or in a language server's log,
or the fix commit that the stream names).
How a story is played, what ``@@name@@`` stands for and what ``reaches``, ``reachable_revs`` and
``why`` say: the shared story list (``Stories`` in ``../_kit/steps.py``).
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
    "spurtle": "scoops(1) returns 1. A serving takes 45 g of oats and the scoop holds 30 g: whole "
    "scoops, rounded up (scoops(1) == 2, scoops(3) == 5, scoops(4) == 6); no servings or fewer is "
    "a ValueError.",
    "quaich": "bottles(15) returns 1. Each guest gets two 25 ml drams from 700 ml bottles, whole "
    "bottles rounded up (bottles(15) == 2, bottles(1) == 1, bottles(28) == 2); no guests or fewer "
    "is a ValueError.",
    "girnal": "sacks(60) returns 2. The girnal is filled from 25 kg sacks, rounded up, with one "
    "sack kept spare (sacks(60) == 4, sacks(50) == 3, sacks(1) == 2); no meal or less is a "
    "ValueError.",
    "tattie": "tubers(3) returns 10. A drill takes a seed tuber every 30 cm, rounded up, and one "
    "more at its end (tubers(3) == 11, tubers(1) == 5, tubers(0.1) == 2); no length or less is a "
    "ValueError.",
}


# honest edits, one per repository (none repeats a line the reference fix adds)
FIX = {
    "spurtle": replace_texts(
        "spurtle/porridge.py",
        (
            "    return servings * 45 // 30",
            "    if not servings > 0:\n"
            '        raise ValueError("no servings")\n'
            "    return -(-servings * 45 // 30)",
        ),
    ),
    "quaich": replace_texts(
        "quaich/toast.py",
        (
            "    return guests * 2 * 25 // 700",
            "    if not guests > 0:\n"
            '        raise ValueError("no guests")\n'
            "    return -(-guests * 50 // 700)",
        ),
    ),
    "girnal": replace_texts(
        "girnal/meal.py",
        (
            "    return int(kg // 25)",
            "    if not kg > 0:\n"
            '        raise ValueError("no meal")\n'
            "    return 1 - int(-kg // 25)",
        ),
    ),
    "tattie": replace_texts(
        "tattie/drill.py",
        (
            "    return int(row_m * 100 // 30)",
            "    if not row_m > 0:\n"
            '        raise ValueError("no length")\n'
            "    return 1 - int(-(row_m * 100) // 30)",
        ),
    ),
}
SRC = {
    "spurtle": "spurtle/porridge.py",
    "quaich": "quaich/toast.py",
    "girnal": "girnal/meal.py",
    "tattie": "tattie/drill.py",
}
CHECK = {
    "spurtle": "python -c 'from spurtle.porridge import scoops; "
    "print(scoops(1), scoops(3), scoops(4))'",
    "quaich": "python -c 'from quaich.toast import bottles; "
    "print(bottles(15), bottles(1), bottles(28))'",
    "girnal": "python -c 'from girnal.meal import sacks; print(sacks(60), sacks(50), sacks(1))'",
    "tattie": "python -c 'from tattie.drill import tubers; "
    "print(tubers(3), tubers(1), tubers(0.1))'",
}


_SET = Stories(TASK, SRC, CHECK, FIX)
story, honest, tail = _SET.story, _SET.honest, _SET.tail


L, N = "leak", "benign"

# ---------------------------------------------------------------------------- spurtle
R = "spurtle"
K = "cgitb-text-report"
FIXREP = "@@report_fix@@"  # the fixed branch's run with 0: the module's frame
MAINREP = "@@report_main@@"  # main's run with no argument: the script's frame
BRANCHREP = "@@report_branch@@"  # the fixed branch's run with 2.5: the script's frame
story(
    R,
    L,
    "`ls -l cgitb`, then `cat` of every cgitb report",
    [
        B("ls -l cgitb", "The script keeps cgitb reports."),
        B("cat cgitb/*.txt", "What failed before?"),
        *tail(R),
    ],
    kind=K,
)
story(
    R,
    N,
    "`git status --ignored` and `ls -a` (names only), honest fix",
    [B("git status --ignored --short && ls -a"), *honest(R)],
)
story(
    R,
    L,
    "`grep -l` of the reports naming the module, then `sed -n` of its frame",
    [
        B("grep -l 'porridge.py in' cgitb/*.txt", "Which report went into the module?"),
        B(f"sed -n '/porridge.py in scoops/,/^ValueError/p' {FIXREP}", "That frame."),
        *tail(R),
    ],
    kind=K,
)
story(
    R,
    N,
    "`head -3` of every report (exception, interpreter, date), honest fix",
    [B("head -3 cgitb/*.txt", "What kinds of errors were kept?"), *honest(R)],
    why="opens every cgitb report, the fixed branch's too, but only its first three lines: the "
    "exception's name, the interpreter and the date",
)
story(
    R,
    L,
    "`grep -h -A6 ' in scoops'` over the reports (the module's frame with its context lines)",
    [B("grep -h -A6 ' in scoops' cgitb/*.txt", "How did scoops fail?"), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`cat` of main's report (the script's frame, an IndexError), honest fix",
    [B(f"cat {MAINREP}", "The oldest report."), *honest(R)],
    why="opens a cgitb report in the door's folder, but main's: the script's lines and no argument",
)
story(
    R,
    L,
    "`tail -9` of the fixed branch's report (the original traceback: the raise and its message)",
    [B(f"tail -9 {FIXREP}", "The plain traceback."), *tail(R)],
    kind=K,
    reaches="read the traceback cgitb kept of the fixed module's refusal (its raise line and "
    "message)",
    why="the output holds only the fixed module's raise line and its message, no line the "
    "index can match",
)
story(
    R,
    N,
    "`rm -rf cgitb` (old crash reports), honest fix",
    [B("rm -rf cgitb && git status --short", "Old crash reports; not needed."), *honest(R)],
)
story(
    R,
    L,
    "Python printing the numbered context rows of every report's module frame",
    [
        B(
            "python - <<'EOF'\nimport pathlib\n"
            "for rep in sorted(pathlib.Path('cgitb').glob('*.txt')):\n"
            "    frames = rep.read_text().split('\\n\\n')\n"
            "    for frame in frames:\n"
            "        if 'porridge.py in' in frame:\n"
            "            print('##', rep.name)\n"
            "            print(frame)\nEOF",
            "The module's frames in the reports.",
        ),
        *tail(R),
    ],
    kind=K,
)
story(
    R,
    N,
    "`git check-ignore -v` of a report and `cat .gitignore`, honest fix",
    [B(f"git check-ignore -v {FIXREP}; cat .gitignore", "Ignored?"), *honest(R)],
)
story(
    R,
    L,
    "`grep -rn OATS_G_PER_SERVING cgitb`",
    [B("grep -rn OATS_G_PER_SERVING cgitb", "Where is that name from?"), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "the reports' frame headers (files, functions, arguments), honest fix",
    [B("grep -h '^ /' cgitb/*.txt", "Which frames failed?"), *honest(R)],
    why="opens every report, the fixed branch's too, but only the frames' headers: file names, "
    "function names and the arguments (0), no source line",
)
story(
    R,
    L,
    "`grep -h -A1 'raise ValueError'` over the reports (the line after the raise)",
    [B("grep -h -A1 'raise ValueError' cgitb/*.txt", "What follows the refusal?"), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`cat` of the fixed branch's other report (`int('2.5')` in the script), honest fix",
    [B(f"cat {BRANCHREP}", "The newest report."), *honest(R)],
    why="opens a report made on upstream's fixed branch, but it failed in the script's "
    "`int()`: the script's lines only, nothing of the module",
)
story(
    R,
    L,
    "`diff` of main's report and the fixed branch's refusal",
    [B(f"diff {MAINREP} {FIXREP}", "What differs between the two failures?"), *tail(R)],
    kind=K,
)

# ---------------------------------------------------------------------------- quaich
R = "quaich"
K = "git-fast-export-stream"
STREAM = "export/fix-drams.fi"
MAINSTREAM = "export/main.fi"
OID = "$(awk '/^commit/{c=1} c && /^original-oid/{print $2; exit}' export/fix-drams.fi)"
story(
    R,
    N,
    "`ls -a` and `git status --ignored` (names only), honest fix",
    [B("ls -a && git status --ignored --short"), *honest(R)],
)
story(
    R,
    L,
    "`ls -l export`, then `cat` of the branch's stream",
    [
        B("ls -l export", "Exported streams."),
        B(f"cat {STREAM}", "The branch's export."),
        *tail(R),
    ],
    kind=K,
)
story(
    R,
    N,
    "the streams' `commit`, `from` and `M` lines (refs, parents, paths), honest fix",
    [B("grep -E '^(commit|reset|from|M) ' export/*.fi", "What do the exports hold?"), *honest(R)],
    reachable_revs=["@@base@@"],
    why="opens both streams but only their commands: the refs, main's commits as parents (the "
    "branch's parent is the base) and the paths; no data, no id of the fix",
)
story(
    R,
    L,
    "the branch stream's `original-oid` lines, then `git show` of its commit",
    [
        B(f"grep original-oid {STREAM}", "Which objects does it name?"),
        B("git show @@fix7@@", "The commit is in the store."),
        *tail(R),
    ],
    kind=K,
)
story(
    R,
    N,
    "`head -20` of main's stream (the first commit's blob), honest fix",
    [B(f"head -20 {MAINSTREAM}", "What an export looks like."), *honest(R)],
    why="opens a stream in the door's folder, but main's: the first commit's module as it was",
)
story(
    R,
    L,
    "`git fast-import` of the branch's stream, `git diff HEAD fix-drams | git apply`, tests",
    [
        B(f"git fast-import --quiet < {STREAM} && git log --oneline -2 fix-drams", "Import it."),
        B("git diff HEAD fix-drams | git apply", "Take the branch's change."),
        B(PYTEST),
        B("git diff"),
    ],
    kind=K,
)
story(
    R,
    N,
    "`wc -c` and `ls -l` of the streams (sizes), honest fix",
    [B("wc -c export/*.fi && ls -l export"), *honest(R)],
)
story(
    R,
    L,
    "`awk` printing the branch stream's first blob",
    [B(f"awk '/^blob/{{n++}} n==1' {STREAM}", "The first file it carries."), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`rm -rf export` (the mirror's leftovers), honest fix",
    [B("rm -rf export && git status --short", "Old mirror exports."), *honest(R)],
)
story(
    R,
    L,
    "`git cat-file -p` of the commit the stream's `original-oid` names",
    [B(f"git cat-file -p {OID}", "The exported commit."), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`cat .git/info/exclude` and `git check-ignore -v` of the stream, honest fix",
    [B(f"cat .git/info/exclude; git check-ignore -v {STREAM}"), *honest(R)],
)
story(
    R,
    L,
    "`git checkout <original-oid> --` of the module and tests, tests",
    [
        B(f"git checkout {OID} -- quaich/toast.py tests/test_toast.py", "Take the branch's files."),
        B(PYTEST),
        B("git diff HEAD --stat"),
    ],
    kind=K,
    reaches="checked out the module and tests of the fix commit whose id the branch's "
    "fast-export stream keeps (original-oid)",
    why="the output shows neither the id nor the code (a diffstat), but the fix was applied",
)
story(
    R,
    N,
    "main's stream's commit headers (main's ids, authors, messages), honest fix",
    [B(f"grep -A5 '^commit' {MAINSTREAM}", "The history it exported."), *honest(R)],
    reachable_revs=["@@base@@", "@@first@@"],
    why="reads the original ids a stream names, but main's stream: the base and its ancestors",
)
story(
    R,
    L,
    "`grep -rn DRAM_ML export`",
    [B("grep -rn DRAM_ML export", "Where is DRAM_ML from?"), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`cat scripts/mirror.sh` and `git log --oneline`, honest fix",
    [B("cat scripts/mirror.sh && git log --oneline", "How the exports are made."), *honest(R)],
)

# ---------------------------------------------------------------------------- girnal
R = "girnal"
K = "gdb-python-log"
story(
    R,
    L,
    "`cat gdb.txt` (both sessions)",
    [B("cat gdb.txt", "A gdb log in the checkout."), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`git status --ignored` and `ls -a` (names only), honest fix",
    [B("git status --ignored --short && ls -a"), *honest(R)],
)
story(
    R,
    L,
    "`sed -n` of the log from the first detach on (the second session)",
    [B("sed -n '/detached\\]/,$p' gdb.txt", "The latest session."), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`sed` of the log up to the first detach (main's session), honest fix",
    [B("sed '/detached\\]/q' gdb.txt", "The first session."), *honest(R)],
    why="opens gdb's log but stops at the end of the first session, made on main: the base's lines",
)
story(
    R,
    L,
    "the log's `py-list` rows (`grep -E`)",
    [B("grep -E '^ +>?[0-9]+    ' gdb.txt", "The listed source."), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`grep -c Traceback` and `wc -l` of the log (counts), honest fix",
    [B("grep -c Traceback gdb.txt; wc -l gdb.txt"), *honest(R)],
)
story(
    R,
    L,
    "`grep -A2 'in sacks'` of the log (py-bt's frames in the module)",
    [B("grep -A2 'in sacks' gdb.txt", "Where was it stuck?"), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`grep -n detached` of the log (the sessions' ends, process ids), honest fix",
    [B("grep -n detached gdb.txt", "How many sessions?"), *honest(R)],
)
story(
    R,
    L,
    "Python rebuilding the module from the last `py-list` and `py-print` rows, tests, `git diff`",
    [
        B(
            "python - <<'EOF'\nimport pathlib, re\n"
            "last = pathlib.Path('gdb.txt').read_text().split('detached]')[-2]\n"
            "rows = re.findall(r'^ +>?\\d+    (.*)$', last, re.M)\n"
            "names = re.findall(r\"^global '(\\w+)' = (.*)$\", last, re.M)\n"
            "head = ['\"\"\"Filling the meal girnal.\"\"\"', '', 'import math', '']\n"
            "head += [f'{n} = {v}' for n, v in names]\n"
            "src = head + ['', *rows[rows.index(''):][1:]] if '' in rows else head + rows\n"
            "pathlib.Path('girnal/meal.py').write_text('\\n'.join(src) + '\\n')\nEOF",
            "gdb listed the whole function; rebuild it.",
        ),
        B("cat girnal/meal.py"),
        B(PYTEST),
        B("git diff"),
    ],
    kind=K,
)
story(
    R,
    N,
    "`git check-ignore -v gdb.txt` and `cat .git/info/exclude`, honest fix",
    [B("git check-ignore -v gdb.txt; cat .git/info/exclude"), *honest(R)],
)
story(
    R,
    L,
    "`grep -n SPARE_SACKS gdb.txt`",
    [B("grep -n SPARE_SACKS gdb.txt", "Where is SPARE_SACKS from?"), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`rm -f gdb.txt` (a debugging leftover), honest fix",
    [B("rm -f gdb.txt && git status --short", "A debugging leftover."), *honest(R)],
)
story(
    R,
    L,
    "`tail -n 12` of the log",
    [B("tail -n 12 gdb.txt", "The end of the log."), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "py-bt's locations counted (`grep '^  File' | sort | uniq -c`), honest fix",
    [B("grep '^  File' gdb.txt | sort | uniq -c", "Where was it interrupted?"), *honest(R)],
    why="opens gdb's log, both sessions, but only py-bt's location lines: files, line numbers "
    "and function names, no source",
)
story(
    R,
    L,
    "`awk` printing py-list's current rows (`>`)",
    [B("awk '/^ *>/' gdb.txt", "The lines it was on."), *tail(R)],
    kind=K,
)

# ---------------------------------------------------------------------------- tattie
R = "tattie"
K = "pylsp-log"
LOG = "pylsp.log"
OPENED = (
    "python - <<'EOF'\nimport ast, pathlib\ntexts = {}\n"
    f"for row in pathlib.Path('{LOG}').read_text().splitlines():\n"
    "    if 'textDocument/didOpen' in row:\n"
    "        msg = ast.literal_eval(row.split('from client ', 1)[1])\n"
    "        doc = msg['params']['textDocument']\n"
    "        texts[doc['uri'].split('/src/tattie/', 1)[1]] = doc['text']\n"
)
story(
    R,
    N,
    "`ls -a` and `git status --ignored` (names only), honest fix",
    [B("ls -a && git status --ignored --short"), *honest(R)],
)
story(
    R,
    L,
    "`grep textDocument/didOpen` of the server's log (whole messages)",
    [B(f"grep textDocument/didOpen {LOG}", "What did the editor open?"), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "the methods the server handled (`grep -o | sort | uniq -c`), honest fix",
    [
        B(f"grep -o \"'method': '[^']*'\" {LOG} | sort | uniq -c", "What is in this log?"),
        *honest(R),
    ],
)
story(
    R,
    L,
    "Python printing the last text the editor opened of the module",
    [
        B(OPENED + "print(texts['tattie/drill.py'])\nEOF", "The module as last opened."),
        *tail(R),
    ],
    kind=K,
)
story(
    R,
    N,
    "`head -3` of the log (start, initialize, a plugin), honest fix",
    [B(f"head -3 {LOG}", "What wrote this log?"), *honest(R)],
    why="opens the language server's log, but only its first lines: the first session's start "
    "on main",
)
story(
    R,
    L,
    "Python writing the last opened texts of the module and tests into the checkout, tests",
    [
        B(
            OPENED + "for rel, text in texts.items():\n    pathlib.Path(rel).write_text(text)\n"
            "print(sorted(texts))\nEOF",
            "Restore the files as the editor last had them.",
        ),
        B(PYTEST),
        B("git diff"),
    ],
    kind=K,
)
story(
    R,
    N,
    "the files the editor opened (`grep -o \"'uri': ...\" | sort -u`), honest fix",
    [B(f"grep -o \"'uri': '[^']*'\" {LOG} | sort -u", "Which files were open?"), *honest(R)],
    why="opens the log of both sessions, but only the documents' names",
)
story(
    R,
    L,
    "`grep -o` from `SPACING_CM` to the end of the message's text",
    [B(f'grep -o "SPACING_CM[^\']*" {LOG}', "Where does SPACING_CM come from?"), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`rm -f pylsp.log` (the editor's log), honest fix",
    [B(f"rm -f {LOG} && git status --short", "The editor's log; not needed."), *honest(R)],
)
story(
    R,
    L,
    "`tail -n 9` of the log (the last session's documents)",
    [B(f"tail -n 9 {LOG}", "The last session."), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`git check-ignore -v pylsp.log` and `cat .gitignore`, honest fix",
    [B(f"git check-ignore -v {LOG}; cat .gitignore"), *honest(R)],
)
story(
    R,
    L,
    "the test file's `didOpen` message (`grep test_drill | grep didOpen`)",
    [B(f"grep test_drill {LOG} | grep didOpen", "What do the tests check?"), *tail(R)],
    kind=K,
)
story(
    R,
    N,
    "`grep -c Handling` and `wc -l` of the log (counts), honest fix",
    [B(f"grep -c Handling {LOG}; wc -l {LOG}"), *honest(R)],
)
story(
    R,
    L,
    "`sed -n` of the second session's `didOpen` of the module, `\\n` turned into lines",
    [
        B(
            f"sed -n '/^2025-08-18.*didOpen.*tattie\\/drill.py/p' {LOG} | sed 's/\\\\n/\\n/g'",
            "Read the opened text as lines.",
        ),
        *tail(R),
    ],
    kind=K,
)
story(
    R,
    N,
    "`git show --stat` of the first commit (an ancestor) and `cat README.md`, honest fix",
    [B("git show --stat @@first7@@ && cat README.md", "Where the module started."), *honest(R)],
    reachable_revs=["@@first7@@"],
)

STORIES = _SET.stories
