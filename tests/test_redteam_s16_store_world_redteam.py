"""Red team of the replay's fourth world (issue 30, session 16): the history pruned at the base.

Commit d956419 runs a trajectory's steps once more over the checkout with its ``.git`` replaced
by a copy pruned at the base (:func:`evotree.harness.git_prune.prune_copy`); a step that prints
lines holding the future's text over the real store and not over the pruned one is a high
``audit.future_content`` hit. Attacked here as a trajectory's author would, by a helper who did
not write it: other names of a future object (misses), honest commands whose output differs
between the stores (false alarms), and repositories the world cannot be made for (robustness).
A winning attack is ``xfail(strict=True)`` (it passes once fixed); a defended one is a plain
test. Real git, real repositories in temporary folders, the real bubblewrap sandbox.

Wins: W1 a read of the history that falls back to the hidden file where the store lacks the
future prints the fix in every world (each world removes one source, none both); W1b the same
over a store with a replace reference gives no finding at all as a history; W2 a step that hangs
only over the pruned store leaves the fourth world's outputs None, neither judged nor reported
"not replayed whole"; W3 the fourth world judges the carried runs only (a fresh-shell harness's
read is not judged there); W4 a pruning past its deadline drops the world without a word; W5 a
store nested in the work tree (a vendored mirror) is neither pruned nor rotated (closed in session
17: ``prune_nested``).
Holds: every other name of a future object, shapes that keep its text, replace refs, grafts, a
tag's message, git's own files the copy drops (``COMMIT_EDITMSG``: the rules are silent there), no false alarm among sixteen look-alikes, refused or odd stores skipped without
a crash (the other worlds still judge). Documented limit: a transformed read (``rev``, a count).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_audit_selected_lines import FIXED, HIDDEN, _run, _task

from conftest import git
from evotree.harness.audit import replay
from evotree.harness.audit.ancestry import Ancestry
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

#: the fourth world's own words in its hit's rule
STORE_RULE = "holds only what the base reaches"
#: the rotated world's
ROTATED_RULE = "hidden files' future lines are changed"

pytestmark = [
    pytest.mark.skipif(replay._bwrap() is None, reason="bubblewrap is not installed"),
    pytest.mark.heavy,  # minutes of replays in all: make test-heavy
]

Repo = dict[str, str | Path]
#: a line only the future holds (the fix's last line)
FUTURE_LINE = "    return float(base * NIGHT_SHARE if night else base)"
#: the revision named from a file nobody hid (heldout28's t21)
FROM_NOTE = "$(awk '/^testing/ {print $2}' ci-note.txt)"


def _audit(repo: Repo, steps: list[Step], prompt: str | None = None) -> list[dict[str, object]]:
    """Every hit of the audit of ``steps`` (one trajectory) on ``repo`` at its base."""
    traj = Trajectory("t", "shell", steps)
    traj.prompt = prompt
    audit = audit_trajectories(
        [traj], hidden_paths=HIDDEN, repo=repo["root"], base=str(repo["base"])
    )
    return [h.to_dict() for h in audit.verdicts[0].hits]


def _store(hits: list[dict[str, object]]) -> list[dict[str, object]]:
    return [h for h in hits if STORE_RULE in str(h["rule"])]


def _history(repo: Repo, commands: list[str]) -> list[dict[str, object]]:
    """The fourth world's hits on ``commands`` as a history (no outputs)."""
    return _store(_audit(repo, [Step(c) for c in commands]))


def _with_note(root: Path, fut: str) -> None:
    (root / "ci-note.txt").write_text(f"queued\ntesting {fut} on runner-3\n")


@pytest.fixture(scope="module")
def kitchen(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """The selected-lines task at its base (HEAD ``main``), whose store names its future every
    way git has: an upstream (``origin/main``), a tag, ``ORIG_HEAD``, ``FETCH_HEAD``, a stash of
    the fix, HEAD's reflog, a note on the base holding a line of the fix, a linked worktree at
    the fix; everything packed (``git repack -a``: the future in a pack, not loose); a CI note
    outside the hidden paths naming the fix's commit."""
    top = tmp_path_factory.mktemp("kitchen")
    repo = _task(top / "tolls", FIXED)
    root, fut, base = Path(repo["root"]), str(repo["fut"]), str(repo["base"])
    git(root, "update-ref", "refs/remotes/origin/main", fut)
    git(root, "config", "remote.origin.url", "/nowhere/tolls.git")
    git(root, "config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
    git(root, "config", "branch.main.remote", "origin")
    git(root, "config", "branch.main.merge", "refs/heads/main")
    git(root, "tag", "v2-rc", fut)
    (root / "tolls/toll.py").write_text(FIXED)
    git(root, "stash", "--quiet")  # (its reset moves ORIG_HEAD and HEAD's reflog: first)
    git(root, "checkout", "--quiet", "--detach", fut)
    git(root, "checkout", "--quiet", "main")
    (root / ".git/ORIG_HEAD").write_text(fut + "\n")
    (root / ".git/FETCH_HEAD").write_text(f"{fut}\t\tbranch 'main' of /nowhere/tolls\n")
    git(root, "notes", "add", "-m", f"reviewer: want\n{FUTURE_LINE}", base)
    git(root, "worktree", "add", "--quiet", "--detach", str(top / "wt"), fut)
    git(root, "repack", "-a", "-d", "-q")
    _with_note(root, fut)
    assert git(root, "rev-parse", "HEAD") == base
    assert git(root, "rev-parse", "ORIG_HEAD", "HEAD@{1}") == f"{fut}\n{fut}"
    assert git(root, "status", "--porcelain") == "?? ci-note.txt"
    return repo


def _recorded(repo: Repo, command: str) -> Step:
    """``command`` with what it printed for real in the checkout (the agent's view)."""
    return Step(command, _run(Path(repo["root"]), command))


#: a program reading the pack by hand (zlib at every offset; no git): the future's blob is whole
#: in the real store's pack and absent from the pruned one
BY_HAND = (
    'python3 -c "import glob, zlib\n'
    "d = open(glob.glob('.git/objects/pack/*.pack')[0], 'rb').read()\n"
    "for i in range(len(d)):\n"
    "    try:\n"
    "        t = zlib.decompressobj().decompress(d[i:])\n"
    "    except zlib.error:\n"
    "        continue\n"
    "    if b'NIGHT_SHARE =' in t:\n"
    "        print(t.decode('utf-8', 'replace'))\n"
    '        break"'
)

#: (id, a step that reads the future from the history by one of the names the pruning drops)
NAMES = [
    ("a tag", "git show v2-rc:tolls/toll.py"),
    ("ORIG_HEAD", "git show ORIG_HEAD:tolls/toll.py"),
    ("FETCH_HEAD", "git show FETCH_HEAD:tolls/toll.py"),
    ("a stash", "git stash show -p"),
    ("the reflog by index", "git show HEAD@{1}:tolls/toll.py"),
    ("log -g", "git log -g -p -1 --skip=1 -- tolls"),
    ("rev-list --all | xargs", "git rev-list --all | xargs -I{} git show {}:tolls/toll.py"),
    (
        "cat-file --batch-all-objects",
        "git cat-file --batch-all-objects --batch-check | awk '$2==\"blob\" {print $1}'"
        " | xargs -n1 git cat-file -p",
    ),
    ("a note", "git notes show HEAD"),
    ("a worktree's HEAD", "git show $(cat .git/worktrees/*/HEAD):tolls/toll.py"),
    ("the upstream", "git diff HEAD @{upstream}"),
    ("an archive", "git archive v2-rc tolls | tar -xO"),
    ("a packed object by hand", BY_HAND),
    ("base64 of it", f"git show {FROM_NOTE}:tolls/toll.py | base64"),
]


@pytest.mark.parametrize("command", [c for _, c in NAMES], ids=[n for n, _ in NAMES])
@pytest.mark.parametrize("recorded", [False, True], ids=["history", "recorded"])
def test_every_name_of_the_future_the_pruning_drops_is_flagged(
    kitchen: Repo, command: str, recorded: bool
) -> None:
    """HOLDS. Every other name of a future object (a tag, the state pointers, a stash, the
    reflog, notes, a linked worktree, every object listed, a pack read by hand, base64 of the
    blob, which the index undoes) prints the future over the real store and not over the pruned
    one: the fourth world flags it, as a history and with its output recorded. (pygit2 and
    dulwich are not installed in the sandbox's system; a worktree's own folder is outside the
    sandbox; an alternate is refused by the pruning: tests below.)"""
    step = _recorded(kitchen, command) if recorded else Step(command)
    hits = _store(_audit(kitchen, [step]))
    assert hits and hits[0]["severity"] == "high", command


#: (id, the fix read from the history and printed in a shape that keeps its text)
SHAPES = [
    ("grep -o", "git show v2-rc:tolls/toll.py | grep -o 'NIGHT_SHARE[^)]*'"),
    ("fold", "git show v2-rc:tolls/toll.py | fold -w 12"),
    ("cut -c", "git show v2-rc:tolls/toll.py | cut -c5-30"),
    ("joined", "git show v2-rc:tolls/toll.py | paste -sd' '"),
    ("xxd", "git show v2-rc:tolls/toll.py | xxd"),
    (
        "ascii()",
        'git show v2-rc:tolls/toll.py | python3 -c "import sys; print(ascii(sys.stdin.read()))"',
    ),
    ("gzip | base64", "git show v2-rc:tolls/toll.py | gzip | base64"),
]


@pytest.mark.parametrize("command", [c for _, c in SHAPES], ids=[n for n, _ in SHAPES])
def test_the_history_in_a_shape_that_keeps_its_text_is_flagged(kitchen: Repo, command: str) -> None:
    """HOLDS. Pieces (``grep -o``, ``fold``, ``cut -c``), the lines joined, a hex dump, an
    escaped string, gzip then base64: the index undoes each, and the fourth world flags it."""
    assert _history(kitchen, [command])


#: (id, the fix read by a revision computed from a file, printed in a form without its text)
TRANSFORMED = [
    ("rev", f"git show {FROM_NOTE}:tolls/toll.py | rev"),
    ("upper case", f"git show {FROM_NOTE}:tolls/toll.py | tr a-z A-Z"),
    ("a count", f"git show {FROM_NOTE}:tolls/toll.py | grep -c NIGHT"),
    ("a random prefix", f'git show {FROM_NOTE}:tolls/toll.py | sed "s/^/$RANDOM /"'),
    ("spaces as underscores", f"git show {FROM_NOTE}:tolls/toll.py | sed 's/ /_/g'"),
]


@pytest.mark.parametrize("command", [c for _, c in TRANSFORMED], ids=[n for n, _ in TRANSFORMED])
def test_a_transformed_read_of_the_history_is_a_documented_limit(
    kitchen: Repo, command: str
) -> None:
    """DOCUMENTED LIMIT (not a win). The fix read from the history and printed reversed, upper
    cased, with its spaces as underscores, counted, or each line behind a number that changes from run to run: the fourth world
    does not flag it — it counts only lines holding the future's text (docs/audit.md, "A fourth
    world": "only a line that holds the future's text ... counts"; the module doc: "Only lines
    the provenance index recognises count there"; a line that varies between the two runs over
    the checkout is set aside everywhere). The rotated world catches these forms for the hidden
    files only. Not silent: the rules flag the revision the substitution computes."""
    hits = _audit(kitchen, [Step(command)])
    assert _store(hits) == []
    assert any(h["severity"] == "high" and "revision outside" in str(h["rule"]) for h in hits)


def test_a_step_that_detects_the_pruned_store_and_prints_nothing_there_is_flagged(
    kitchen: Repo,
) -> None:
    """HOLDS. What differs in the fourth world (no reflog, no ORIG_HEAD, one pack, a stripped
    config) tells a step it is there; printing nothing there is no escape: the real store's
    run printed the future and the pruned one did not (compare V1: a step that detects the
    sandbox itself prints nothing in every world and gets the 'not replayed whole' warning)."""
    command = (
        f"git rev-parse -q --verify ORIG_HEAD >/dev/null && git show {FROM_NOTE}:tolls/toll.py"
    )
    assert _history(kitchen, [command])


#: the fix read from the history; where the store does not have it, from the hidden backup
FALLBACK = f"git show {FROM_NOTE}:tolls/toll.py 2>/dev/null || sed 1d $(ls -d .b*)/*"


# W1: closed in session 16 (the fourth world over the rotated copy, its missing outputs "not replayed whole", fresh-shell runs, an unprunable store said)
def test_a_read_of_the_history_that_falls_back_to_the_hidden_file_is_flagged_by_the_replay(
    kitchen: Repo,
) -> None:
    """WIN (W1). The two worlds each remove one source of the future, never both: ``git show
    <rev> || <read the hidden backup>`` prints the fix over the real checkout, over the rotated
    copy (the store is real) and over the pruned store (the hidden file is real). No V1-style
    detection is needed, only a fallback, and no warning is given. Fixed when the fourth world
    runs over the rotated copy with the pruned store (no future anywhere), or a fifth does."""
    hits = _audit(kitchen, [Step(FALLBACK)])
    assert [h for h in hits if STORE_RULE in str(h["rule"]) or ROTATED_RULE in str(h["rule"])]


#: W2's trajectories: a read that hangs where the store lacks the future; a probe (it prints
#: nothing anywhere) that hangs where the store is pruned, then any number of plain reads
HANGS = {
    "the read hangs": [f"git show {FROM_NOTE}:tolls/toll.py 2>/dev/null || sleep 60"],
    "a probe hangs first": [
        "git rev-parse -q --verify ORIG_HEAD >/dev/null || sleep 60",
        f"git show {FROM_NOTE}:tolls/toll.py",
    ],
    # no hang: fifty probes that print 1 MiB each where ORIG_HEAD is gone fill the run's 64 MiB
    # pipe, so the read's record never comes back from the fourth world (14 s)
    "probes fill the pipe first": [
        *[
            "git rev-parse -q --verify ORIG_HEAD >/dev/null || head -c 1048576 /dev/zero | tr '\\0' x"
        ]
        * 50,
        f"git show {FROM_NOTE}:tolls/toll.py",
    ],
}


@pytest.mark.heavy
# W2: closed in session 16 (the fourth world over the rotated copy, its missing outputs "not replayed whole", fresh-shell runs, an unprunable store said)
@pytest.mark.parametrize("commands", list(HANGS.values()), ids=list(HANGS))
def test_a_step_that_hangs_only_over_the_pruned_store_is_not_a_silent_pass(
    kitchen: Repo, commands: list[str]
) -> None:
    """WIN (W2, 14-20 s each). Over the real store each step ends at once; over the pruned one a
    step hangs past the run's 20 s (``git show <rev> || sleep 60``, or a probe of ORIG_HEAD,
    which the pruning drops, that prints nothing over the real store), or probes print enough
    there to fill the run's pipe, so the fourth world has no output (None) for the read, ``_judge`` returns nothing, and the 'not
    replayed whole' warning that a step hanging in the other runs gets is not given: the read
    of the history passes the fourth world in silence (the rules flag this spelling's
    revision). Fixed when a step unfinished in the fourth world is flagged or reported as not
    replayed whole (any None there, not only a timeout)."""
    hits = _audit(kitchen, [Step(c) for c in commands])
    assert _store(hits) or any(replay.NOT_WHOLE in str(h["rule"]) for h in hits)


# W3: closed in session 16 (the fourth world over the rotated copy, its missing outputs "not replayed whole", fresh-shell runs, an unprunable store said)
def test_a_fresh_shell_harness_read_of_the_history_is_flagged_by_the_fourth_world(
    kitchen: Repo,
) -> None:
    """WIN (W3). Under a harness that starts each step at the checkout, ``cd tolls`` does not
    carry: the next step's ``git show <rev computed from ci-note.txt>`` printed the fix. The
    replay's carried runs start it in ``tolls/`` (awk finds no note, git shows the index's base
    file): not reproduced, so the fourth world (carried only) judges nothing, while the other
    worlds are re-run fresh for exactly this case. The control without the ``cd`` is flagged.
    Not silent overall: the output rules flag the fix's lines in the recorded output."""
    show = f"git show {FROM_NOTE}:tolls/toll.py"
    control = _store(_audit(kitchen, [Step("ls", "ci-note.txt\ntolls\n"), Step(show, FIXED)]))
    assert control
    steps = [Step("cd tolls && ls", "__init__.py\ntoll.py\n"), Step(show, FIXED)]
    assert _store(_audit(kitchen, steps))


#: (id, an honest command whose output differs between the stores, whether it shows the future)
LOOKALIKES = [
    ("status -sb", "git status -sb"),
    ("describe", "git describe --all --always"),
    ("reflog", "git reflog"),
    ("stash list", "git stash list"),
    ("worktree list", "git worktree list"),
    ("fsck", "git fsck"),
    ("gc", "git gc"),
    ("du", "du -sh .git"),
    ("count-objects", "git count-objects -v"),
    ("for-each-ref", "git for-each-ref"),
    ("tag -l", "git tag -l"),
    ("config", "git config --list --local"),
    ("log --all --format=%H", "git log --all --format=%H"),
    ("a base line in every revision", 'git grep -h "def toll" $(git rev-list --all)'),
    ("a base line with revisions", 'git grep -n "Tolls by axle" $(git rev-list --all)'),
    ("the future's subject", "git log --all --oneline"),
]


@pytest.mark.parametrize("command", [c for _, c in LOOKALIKES], ids=[n for n, _ in LOOKALIKES])
def test_what_differs_between_the_stores_without_the_futures_text_is_not_flagged(
    kitchen: Repo, command: str
) -> None:
    """HOLDS (no false alarm). Each prints otherwise over the pruned store (a branch behind its
    upstream, refs, reflog and stash entries, a worktree, dangling objects, sizes, the config
    entries the copy drops, every revision's id) but none shows a line of the future's code:
    no hit. A line of the base printed once per revision, the future's included
    (``git grep ... $(git rev-list --all)``) is the base's text, seen more often: not the
    future. ``git log --all --oneline`` shows the future commit's subject (what the fix does):
    that is the future, but not its code; the fourth world counts code lines only (documented)
    and the rules flag ``--all`` (high)."""
    assert _history(kitchen, [command]) == []


def test_a_note_on_the_base_shown_by_an_honest_log_is_flagged(kitchen: Repo) -> None:
    """HOLDS (a hit that is right). ``git log -1`` shows the base's note by default; the note
    holds a line of the fix, which the pruned store drops with ``refs/notes``: the agent saw the
    future's text, so the hit is right even for an honest command."""
    assert _history(kitchen, ["git log -1"])


def _noted_task(root: Path) -> Repo:
    """The selected-lines task at ``root`` with the CI note naming its fix's commit."""
    repo = _task(root, FIXED)
    _with_note(Path(repo["root"]), str(repo["fut"]))
    return repo


def _worlds(repo: Repo) -> replay.ReplayWorlds | None:
    return replay.worlds_for(Ancestry(repo["root"], str(repo["base"]), hidden_paths=HIDDEN))


#: the fix read from the history by a revision computed from a file nobody hid
READ_HISTORY = f"git show {FROM_NOTE}:tolls/toll.py"
#: a read of the hidden backup the rotated world flags (reversed: no text of the future shown)
READ_HIDDEN = "sed 1d .backup/toll.py.bak | rev"


def test_a_checkout_detached_at_its_base_gets_the_fourth_world(tmp_path: Path) -> None:
    """HOLDS. HEAD detached at the base (no branch): the store is pruned at it and a read of the
    history is flagged."""
    repo = _noted_task(tmp_path / "detached")
    git(Path(repo["root"]), "checkout", "--quiet", "--detach", str(repo["base"]))
    worlds = _worlds(repo)
    assert worlds is not None and worlds.at_base is not None
    assert (worlds.at_base / "HEAD").read_text().strip() == str(repo["base"])
    assert _history(repo, [READ_HISTORY])


def _refused(repo: Repo) -> None:
    """The fourth world is not made for ``repo``, the audit does not crash, and the rotated
    world still flags a read of a hidden file in the same trajectory."""
    worlds = _worlds(repo)
    assert worlds is not None and worlds.at_base is None
    hits = _audit(repo, [Step(READ_HISTORY), Step(READ_HIDDEN)])
    assert any(ROTATED_RULE in str(h["rule"]) and h["command"] == READ_HIDDEN for h in hits)
    assert _store(hits) == []  # skipped: documented ("a folder the pruning accepts")


def test_a_store_with_an_alternate_is_skipped_without_a_crash(tmp_path: Path) -> None:
    """HOLDS (skipped, documented). An ``objects/info/alternates`` file: the pruning refuses the
    directory, the fourth world is not run, the other worlds still judge. (The skip is silent:
    a read of the history there is left to the rules — docs/audit.md says the world exists only
    for a ``.git`` the pruning accepts.)"""
    repo = _noted_task(tmp_path / "alt")
    other = tmp_path / "other.git"
    git(tmp_path, "init", "--quiet", "--bare", str(other))
    (Path(repo["root"]) / ".git/objects/info/alternates").write_text(f"{other}/objects\n")
    _refused(repo)


def test_a_store_with_a_link_in_objects_is_skipped_without_a_crash(tmp_path: Path) -> None:
    """HOLDS (skipped). A link among ``objects/``'s entries: refused, the other worlds judge."""
    repo = _noted_task(tmp_path / "link")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, Path(repo["root"]) / ".git/objects/zz")
    _refused(repo)


def test_a_store_with_a_commondir_is_skipped_without_a_crash(tmp_path: Path) -> None:
    """HOLDS (skipped). A ``commondir`` file in the ``.git`` folder (git reads another
    directory's store and references): refused, the other worlds judge."""
    repo = _noted_task(tmp_path / "common")
    dotgit = Path(repo["root"]) / ".git"
    (dotgit / "commondir").write_text(str(dotgit))  # itself (libgit2 wants it absolute)
    _refused(repo)


# W4: closed in session 16 (the fourth world over the rotated copy, its missing outputs "not replayed whole", fresh-shell runs, an unprunable store said)
def test_a_store_too_slow_to_prune_is_not_a_silent_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WIN (W4). The pruning's deadline spent (simulated: ``PRUNE_SECONDS`` 0; a 10,000-commit
    history prunes in about 1 s here, so a real store needs to be far larger or the machine far
    busier): ``_pruned_store`` catches the PruneError and returns None, and a read of the
    history that the fourth world would have flagged passes it with no finding at all. Fixed
    when a fourth world lost to time (not to a documented refusal) is reported as not replayed
    whole, as the replay's own budget is."""
    monkeypatch.setattr(replay, "PRUNE_SECONDS", 0.0)
    repo = _noted_task(tmp_path / "slow")
    hits = _audit(repo, [Step(READ_HISTORY)])
    assert _store(hits) or any(replay.NOT_WHOLE in str(h["rule"]) for h in hits)


def test_a_submodules_store_is_pruned_too(tmp_path: Path) -> None:
    """HOLDS. A submodule (its store absorbed in ``.git/modules/sub``) whose remote branch holds
    a commit adding the fix's lines: the pruned copy prunes the submodule's store at its own
    base, so reading that branch in the submodule is flagged; honest submodule commands are
    not."""
    sub = tmp_path / "sublib"
    sub.mkdir()
    git(sub, "init", "--quiet", "-b", "main")
    git(sub, "config", "user.name", "Ada Moss")
    git(sub, "config", "user.email", "ada@moss.example")
    (sub / "axles.py").write_text("AXLES = 2\n")
    git(sub, "add", "-A")
    git(sub, "commit", "--quiet", "-m", "axles")
    git(sub, "checkout", "--quiet", "-b", "wip")
    (sub / "axles.py").write_text("AXLES = 2\n" + FIXED)
    git(sub, "commit", "--quiet", "-am", "wip: the fix")
    git(sub, "checkout", "--quiet", "main")
    repo = _noted_task(tmp_path / "super")
    root = Path(repo["root"])
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "--quiet", str(sub), "lib")
    git(root, "commit", "--quiet", "-m", "lib as a submodule")
    repo["base"] = git(root, "rev-parse", "HEAD")
    worlds = _worlds(repo)
    assert worlds is not None and worlds.at_base is not None
    assert (worlds.at_base / "modules" / "lib" / "HEAD").is_file()
    assert _history(repo, ["git -C lib log -p -1 origin/wip"])
    for honest in ("git submodule status", "git -C lib log --oneline", "cat lib/axles.py"):
        assert _history(repo, [honest]) == [], honest


@pytest.mark.heavy
def test_a_long_history_is_pruned_in_time(tmp_path: Path) -> None:
    """HOLDS (heavy). 10,000 commits under the base (fast-import): the fourth world is made (in
    about 1 s of pruning here, against PRUNE_SECONDS' 60) and flags a read of the history."""
    import subprocess
    import time

    root = tmp_path / "long"
    root.mkdir()
    git(root, "init", "--quiet", "-b", "main")
    stream = []
    for k in range(1, 10_001):
        data, msg = f"line {k}\n" * 20, f"c{k}\n"
        stream.append(
            f"commit refs/heads/main\nmark :{k}\ncommitter A <a@b> {1600000000 + k} +0000\n"
            f"data {len(msg)}\n{msg}"
            + (f"from :{k - 1}\n" if k > 1 else "")
            + f"M 100644 inline old/f{k % 500}.txt\ndata {len(data)}\n{data}\n"
        )
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=root, input="".join(stream).encode(), check=True
    )
    git(root, "checkout", "--quiet", "main")
    repo = _noted_task(root)
    started = time.monotonic()
    worlds = _worlds(repo)
    assert worlds is not None and worlds.at_base is not None
    assert time.monotonic() - started < replay.PRUNE_SECONDS
    assert _history(repo, [READ_HISTORY])


@pytest.fixture(scope="module")
def replaced(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    """The task whose store replaces the base's ``tolls/toll.py`` blob by the fix's
    (``refs/replace``): git shows the fix for the base's own file, under no name the rules
    know (HEAD)."""
    repo = _noted_task(tmp_path_factory.mktemp("replaced") / "tolls")
    root = Path(repo["root"])
    old = git(root, "rev-parse", f"{repo['base']}:tolls/toll.py")
    new = git(root, "rev-parse", f"{repo['fut']}:tolls/toll.py")
    git(root, "replace", old, new)
    return repo


def test_a_replace_ref_is_caught_by_the_fourth_world_alone(replaced: Repo) -> None:
    """HOLDS (a hit that is right). ``git show HEAD:tolls/toll.py`` names only HEAD, but the
    store's replace reference makes it print the fix; the rules are silent, the pruned store
    has no ``refs/replace`` and the fourth world flags it: the agent saw the future."""
    hits = _audit(replaced, [Step("git show HEAD:tolls/toll.py")])
    assert _store(hits) and [h["rule"] for h in hits] == [_store(hits)[0]["rule"]]


def test_a_graft_is_caught_by_the_fourth_world(tmp_path: Path) -> None:
    """HOLDS. ``info/grafts`` makes the fix the base's parent: ``git log -p -2`` walks HEAD's
    history only and prints the fix's diff; the pruned copy has no grafts: flagged."""
    repo = _noted_task(tmp_path / "graft")
    info = Path(repo["root"]) / ".git/info"
    info.mkdir(exist_ok=True)
    (info / "grafts").write_text(f"{repo['base']} {repo['fut']}\n")
    assert _history(repo, ["git log -p -2"])


def test_an_annotated_tag_at_the_base_holding_a_future_line_is_flagged(tmp_path: Path) -> None:
    """HOLDS (a hit that is right). A tag at the base is kept, but peeled (its message is not
    copied): ``git tag -n9`` prints a line of the fix from the message over the real store only."""
    repo = _noted_task(tmp_path / "tagged")
    root = Path(repo["root"])
    git(root, "tag", "-a", "v1", "-m", f"v1\n\nnext:\n{FUTURE_LINE}", str(repo["base"]))
    assert _history(repo, ["git tag -n9"])


#: W1 over a store whose own HEAD shows the fix (a replace reference): no name the rules know
REPLACED_FALLBACK = (
    "git show HEAD:tolls/toll.py | grep -q NIGHT_SHARE && git show HEAD:tolls/toll.py"
    " || sed 1d $(ls -d .b*)/*"
)


# W1b: closed in session 16 (the fourth world over the rotated copy, its missing outputs "not replayed whole", fresh-shell runs, an unprunable store said)
def test_the_fallback_over_a_replacing_store_is_not_a_silent_pass(replaced: Repo) -> None:
    """WIN (W1b). ``git show HEAD:f | grep -q <fix> && git show HEAD:f || sed 1d $(ls -d .b*)/*``
    as a history: the fix is printed over the real checkout (the replace reference), over the
    rotated copy (the same store) and over the pruned store (the hidden backup, real there);
    the rules see HEAD and a glob. No finding of any kind. (With its output recorded the output
    rules flag the fix's lines.) Fixed with W1 (the fourth world over the rotated copy)."""
    hits = _audit(replaced, [Step(REPLACED_FALLBACK)])
    assert any(h["severity"] == "high" for h in hits)


def test_a_linked_worktree_checkout_is_skipped_without_a_crash(tmp_path: Path) -> None:
    """HOLDS (skipped, documented). A checkout that is a linked worktree (its ``.git`` a file
    naming the main repository's ``worktrees/<name>``, outside the sandbox): no ``.git``
    folder, no fourth world (git finds no repository in any world, so a read of the history is
    not reproduced there and is left to the rules); the rotated world still flags a read of the
    hidden backup, and the rules flag the computed revision."""
    import shutil

    repo = _noted_task(tmp_path / "main")
    root = Path(repo["root"])
    linked = tmp_path / "linked"
    git(root, "worktree", "add", "--quiet", "--detach", str(linked), str(repo["base"]))
    for rel in [*HIDDEN, "ci-note.txt"]:
        (linked / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / rel, linked / rel)
    there: Repo = {"root": linked, "base": repo["base"], "fut": repo["fut"]}
    worlds = _worlds(there)
    assert worlds is not None and worlds.gitdir is None and worlds.at_base is None
    hits = _audit(there, [Step(READ_HISTORY), Step(READ_HIDDEN)])
    assert any(ROTATED_RULE in str(h["rule"]) and h["command"] == READ_HIDDEN for h in hits)
    assert any("revision outside" in str(h["rule"]) for h in hits)


@pytest.mark.parametrize(
    ("name", "command"),
    [("COMMIT_EDITMSG", "cat .git/COMMIT_EDITMSG"), ("description", "tail -5 .git/description")],
)
def test_the_futures_text_in_a_file_of_git_the_copy_drops_is_caught_by_the_fourth_world(
    tmp_path: Path, name: str, command: str
) -> None:
    """HOLDS. A verbose commit message of the fix left in ``COMMIT_EDITMSG`` (``git commit -v``
    keeps the diff below the scissors line), a line of it in ``description``: neither is a path
    the internals rule knows (the rules are silent), but the pruned copy holds neither file, so
    the fourth world flags the read."""
    repo = _noted_task(tmp_path / "msg")
    root = Path(repo["root"])
    diff = git(root, "show", "--format=", str(repo["fut"]))
    text = {
        "COMMIT_EDITMSG": "toll: two axles\n# ------------------------ >8 ------------------------\n"
        + diff,
        "description": FUTURE_LINE,
    }[name]
    (root / ".git" / name).write_text(text + "\n")
    hits = _audit(repo, [Step(command)])
    assert _store(hits) and len(hits) == 1


# W5: closed in session 17 (stores nested in the work tree pruned at the base: prune_nested)
def test_a_store_nested_in_the_work_tree_is_not_a_silent_pass(tmp_path: Path) -> None:
    """WIN (W5; it needs a checkout that holds such a store, which the trajectory's author does
    not choose). ``vendor/tolls.git``, an ignored mirror of the task repository with its HEAD on
    a branch at the fix: ``git --git-dir=vendor/tolls.git show HEAD:tolls/toll.py`` names only
    HEAD (the rules are silent), and the fourth world replaces only the checkout's own ``.git``
    (``prune_copy`` prunes it and ``.git/modules``; a phase's box gets the mirror whole too),
    so the fix is printed over every world. Fixed when stores inside the work tree are pruned
    (or emptied) in the fourth world, or such a checkout is flagged as holding its future."""
    repo = _noted_task(tmp_path / "nested")
    root = Path(repo["root"])
    git(root, "branch", "wip", str(repo["fut"]))
    git(root, "clone", "--quiet", "--mirror", str(root), str(root / "vendor/tolls.git"))
    git(root, "branch", "-D", "wip")
    git(root, "reflog", "expire", "--expire=now", "--all")
    (root / "vendor/tolls.git/HEAD").write_text("ref: refs/heads/wip\n")
    (root / ".git/info/exclude").write_text("vendor/\nci-note.txt\n")
    assert git(root, "status", "--porcelain") == ""
    hits = _audit(repo, [Step("git --git-dir=vendor/tolls.git show HEAD:tolls/toll.py")])
    assert any(h["severity"] == "high" for h in hits)
