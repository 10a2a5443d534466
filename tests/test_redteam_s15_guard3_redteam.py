"""State after the lead's fixes (fifteenth session): N1 and N2 closed (plain tests now) — a
store-named link whose resolution passes through /proc or /dev is taken for a store, and a
folder reached through such a link is listed once (by device, inode and times) and at most
10,000 names (more: a store); N3 (a bind's root in mountinfo) is still WON (an xfail).

Red team (third round) of the s15 guard fixes (issue 29): 9a00868, 6d37ba0, 839feae and
a2420d9 (M1, M2, M5, M6 of ``tests/test_redteam_s15_guard2_redteam.py`` closed), by a helper
who wrote none of them. Same attacker (the candidate's code: what its prepare phase leaves in
the workspace's shared cache, read by every later run's train phase), same future
(``FUTURE_SECRET_42``, ``test_task_prune._task``), same rules: a win is ``xfail(strict=True)``
asserting the safe outcome, its reason the mechanism; a stopped attack is a plain test.

- N1 (WON): M1 again, the link's target read differently by the guard and by git: a store
  ``S`` whose ``pack`` is a link to ``/proc/self/cwd``. The guard, on the host, follows it to
  evotree's own working folder (no pack there: not a store); git in the train box, run with
  its working folder in the cache's ``blobs/data`` (the task's packs, moved there by renames),
  follows it to the packs. ``S`` is neither found nor hidden; an alternate of a repository of
  the box's own prints the future. The same with ``/proc/self/fd/200`` (git started holding
  ``blobs/data`` open as its descriptor 200; the guard has no such descriptor: ENOENT). (The threat model's "a pack copied to another name, the
  box could make the link itself" is wider; N1 is the layout M1's fix claims.)
- N2 (WON): M1's fix follows every link of a store's name with a full ``listdir``, outside the
  entry cap: folders each holding 258 links (``pack``, ``info``, ``00``..``ff``) to one big
  folder make the search list (links x big) names while counting (links + big) entries. A
  prepare phase can leave enough within the read-only cap (1,000,000 links to a 1,000,000-entry
  folder: 10^12 names, about 2 million a second here, days) that every later run's phase start
  never ends. Shown small: 40 folders of links to 40,000 files (about 51,000 entries) run past
  30 s (measured: 2 such folders alone, 11 s); the same links to an empty folder, 0.17 s.
- N3 (WON): M5's alias check sees an alias only where the attested folder is a link or holds a
  mount point; the other way round - the workspace reached through a bind of a part of the
  attested folder (``/home`` bound from ``/data/home``, ``/data`` attested as datasets) - the
  cache's path never lies under ``/data`` by name nor by the device/inode chain (the chain of a
  bind's path climbs the mount, not the folder it was bound from), so ``/data`` is left out and
  the cache's clone is bound whole under ``/data/...``, nothing said. (Control: ``ws`` a link
  to ``data/home`` is caught - ``realpath`` climbs through ``data``; only the bind is missed.)
- N4 (stopped): links that chain (``pack -> a -> b -> packs``) are followed to the packs and
  found; a link loop (``pack -> p2 -> pack``, ELOOP) counts as a store (fails closed).
- N5 (stopped): a mount point whose name holds a space, a newline, a tab and a backslash
  (``\\040``, ``\\012``, ``\\011``, ``\\134`` in mountinfo) below an attested folder is read back
  right: a bind of the cache's folder there leaves the attested folder searched.
- H1 (honest work, stopped): links of a store's name to folders git reads nothing from
  (``info -> docs``, ``pack -> assets`` of non-git ``*.pack``, ``ab -> shard``) and dangling
  ones: no store, nothing hidden or said.

Not tested (why): ELOOP/EACCES on a ``.git`` (as root ``lstat`` of a listed entry fails only
past ``PATH_MAX``, M6's case; ELOOP needs a looping folder above it, which the listing went
through); ``_lift_long`` with ``..`` (the search's paths come from ``scandir``, never hold
``..``; the roots are the operator's); two long repositories whose lifted parents nest (read:
``tops`` keeps the outer one, the inner one's reason said with it - no bind below a hidden one);
a mount made in the phase's own namespace (it dies with the box; the guard reads the host's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_redteam_s15_guard2_redteam import _linked_store, _run_box, _train_spec
from test_task_prune import SECRET, _git, _task

from evotree.harness import git_guard, git_prune, git_untraced
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture

_REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _first_line_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The first line on (the default); a private prune cache and a private folder of untraced
    copies (the host's are left alone)."""
    monkeypatch.delenv(git_prune.ENV_TASK_REPOS, raising=False)
    monkeypatch.delenv(git_guard.ENV_NO_REPOS, raising=False)
    cache = tmp_path / "prune-cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setattr(git_prune, "_cache_root", lambda: cache)
    untraced = tmp_path / "untraced-copies"
    untraced.mkdir(mode=0o700)
    monkeypatch.setattr(git_untraced, "_untraced_root", lambda: untraced)


# ------------------------- N1: a link whose target is read differently by the guard and git

#: In the train box: a repository of the box's own borrowing ``S`` as an alternate; git runs
#: with its working folder in the cache's ``blobs/data`` (no ``-C``: ``/proc/self/cwd`` is it).
_CWD_READER = """
import os, subprocess, sys
subprocess.run(['git', 'init', '-q', '/tmp/g'], check=True)
with open('/tmp/g/.git/objects/info/alternates', 'w') as fh:
    fh.write(sys.argv[1] + '\\n')
fd = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)
os.dup2(fd, 200)  # inheritable: /proc/self/fd/200 in git is the packs' folder
cwd = sys.argv[2] if sys.argv[3] == 'cwd' else '/tmp'
out = subprocess.run(['git', '--git-dir', '/tmp/g/.git', 'cat-file', '--batch-all-objects',
                      '--batch'], capture_output=True, text=True, errors='replace', cwd=cwd,
                     pass_fds=(200,))
print('rc', out.returncode, 'seen', out.stdout.replace(chr(10), ' | ')[-4000:], out.stderr[-300:])
"""
#: Where ``S/pack`` points: the reader's working folder, or its descriptor 200.
_PROC_LINKS = {"cwd": "/proc/self/cwd", "fd": "/proc/self/fd/200"}


@pytest.mark.parametrize("via", ["cwd", "fd"])
def test_n1_a_store_whose_pack_link_names_the_readers_working_folder(
    tmp_path: Path, seccomp: None, via: str
) -> None:
    """N1 (was WON: M1's layout, ``S/pack`` a link to ``/proc/self/cwd``; the train box ran git
    in ``blobs/data`` — ``fd``: ``/proc/self/fd/200``, git holding ``blobs/data`` as its
    descriptor 200 — and the guard, following the link to its own working folder, saw no
    pack). Closed: a store-named link whose resolution passes through ``/proc`` or ``/dev`` is
    taken for a store (``git_stores._through_proc``): ``S`` is hidden, the future not read."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")
    store = _linked_store(cache, tmp_path / "upstream")
    os.unlink(store / "pack")
    os.symlink(_PROC_LINKS[via], store / "pack")
    assert git_guard.is_object_store(store)  # taken for a store: fails closed
    spec = _train_spec(tmp_path, cache)
    proc, seen, binds = _run_box(
        tmp_path, spec, _CWD_READER, str(store), str(cache / "blobs" / "data"), via
    )
    assert SECRET not in proc.stdout, (
        f"the train box read the task's future through S/pack -> {_PROC_LINKS[via]}: {seen}"
    )


# ------------------------- N2: links of a store's name followed outside the entry cap

_SEARCH = textwrap.dedent(
    """
    import sys, time
    from evotree.harness import git_guard
    t = time.monotonic()
    found, problems = git_guard.find_git_dirs([sys.argv[1]])
    print(round(time.monotonic() - t, 2), len(found), len(problems), flush=True)
    """
)


def _link_farm(cache: Path, target: Path, folders: int) -> None:
    """``folders`` folders in ``cache``, each with 258 links of a store's name to ``target``."""
    names = ["pack", "info", *(f"{i:02x}" for i in range(256))]
    for j in range(folders):
        folder = cache / f"f{j}"
        folder.mkdir()
        for name in names:
            os.symlink(target, folder / name)


def _timed_search(root: Path, timeout: float) -> str | None:
    """The search of ``root`` in a child process: its output, ``None`` past ``timeout``."""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _SEARCH, str(root)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=_REPO,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return None
    return proc.stdout


@pytest.mark.heavy
def test_n2_links_of_store_names_multiply_the_search_past_its_cap(tmp_path: Path) -> None:
    """N2: the cache holds a folder of 40,000 files and 40 folders of 258 links each to it
    (about 50,000 entries in all, 2.5% of the read-only cap); the search lists 413 million names.
    Control: the same links to an empty folder are searched in well under a second."""
    cache = tmp_path / "ws" / "cache"
    (cache / "empty").mkdir(parents=True)
    big = cache / "big"
    big.mkdir()
    for i in range(40_000):
        os.close(os.open(big / f"{i:08d}.bin", os.O_CREAT | os.O_WRONLY, 0o644))
    _link_farm(cache, cache / "empty", 40)
    control = _timed_search(cache, 30)
    assert control is not None and float(control.split()[0]) < 5, control  # control: fast
    for j in range(40):
        for entry in os.scandir(cache / f"f{j}"):
            os.unlink(entry.path)
            os.symlink(big, entry.path)
    out = _timed_search(cache, 30)
    assert out is not None, "the search ran past 30 s over 50,000 entries (the links followed)"


# ------------------------- N3: the workspace reached through a bind of part of an attested one

_ATTESTED = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from evotree.harness import git_phase_search
    a = [Path(p) for p in json.loads(sys.argv[1])]
    rw, ro, wrote = a[:1], a[1:4], a[2:3]
    found = git_phase_search._search(rw, ro, [], wrote)[0]
    print(json.dumps({"attested": [str(p) for p in git_phase_search._attested(rw, ro, wrote)],
                      "found": [str(p) for p in found]}))
    """
)


def _in_namespace(
    tmp_path: Path,
    mounts: str,
    folders: list[Path],
    attest: list[Path],
    extra: dict[str, str] | None = None,
) -> dict:
    """``_attested`` and ``_search`` in a private mount namespace made by ``mounts`` (``extra``:
    more of the shell's environment)."""
    env = dict(os.environ) | {git_guard.ENV_NO_REPOS: os.pathsep.join(map(str, attest))}
    env |= extra or {}
    env.pop(git_prune.ENV_TASK_REPOS, None)
    proc = subprocess.run(
        [
            "unshare",
            "--mount",
            "sh",
            "-c",
            f'{mounts} exec "$0" -c "$1" "$2"',
            sys.executable,
            _ATTESTED,
            json.dumps([str(p) for p in folders]),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=_REPO,
        check=False,
    )
    if proc.returncode != 0 and "mount" in proc.stderr + proc.stdout:
        pytest.skip(f"no private mount namespace here: {proc.stderr[-200:]}")
    assert proc.returncode == 0, proc
    return json.loads(proc.stdout)


@pytest.mark.xfail(
    strict=True,
    reason="N3: the workspace is a bind of a folder inside the attested /data: its path's "
    "device/inode chain climbs the bind's mount, never /data, so /data is left out",
)
def test_n3_a_workspace_bound_from_inside_an_attested_folder(tmp_path: Path) -> None:
    """N3: ``data`` (datasets, attested) holds ``home``; the workspace ``ws`` is a bind of
    ``data/home`` (as ``/home`` bound from ``/data/home``), its cache ``ws/proj/.evotree/cache``
    holding a clone. Control: without the bind (``ws`` a folder of its own, the same clone under
    ``data/home``) ``data`` is attested and the clone under ``ws`` is found. Safe: ``data``
    searched (not attested) or the clone there found."""
    data = tmp_path / "data"
    (data / "imagenet").mkdir(parents=True)
    (data / "home" / "proj" / ".evotree" / "cache").mkdir(parents=True)
    _task(tmp_path / "upstream")
    _git(
        data / "home" / "proj" / ".evotree" / "cache",
        "clone",
        "-q",
        "--no-local",
        str(tmp_path / "upstream"),
        "proj",
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    cache = ws / "proj" / ".evotree" / "cache"
    run = tmp_path / "run"
    (run / "candidate").mkdir(parents=True)
    folders = [run / "candidate", run, cache, data]
    whole = data / "home" / "proj" / ".evotree" / "cache" / "proj" / ".git"
    # control: ws a folder of its own holding its own clone: data attested, ws's clone found
    cache.mkdir(parents=True)
    _git(cache, "clone", "-q", "--no-local", str(tmp_path / "upstream"), "proj")
    control = _in_namespace(tmp_path, "", folders, [data])
    assert control["attested"] == [str(data)], control
    assert control["found"] == [str(cache / "proj" / ".git")], control
    subprocess.run(["rm", "-rf", str(ws)], check=True)
    os.symlink(data / "home", ws)  # control: ws a link to data/home - data searched, found
    linked = _in_namespace(tmp_path, "", folders, [data])
    assert linked["attested"] == [] and str(whole) in linked["found"], linked
    os.unlink(ws)
    ws.mkdir()
    seen = _in_namespace(tmp_path, f"mount --bind {data / 'home'} {ws} &&", folders, [data])
    assert str(cache / "proj" / ".git") in seen["found"], seen  # the cache's own path: found
    assert seen["attested"] == [] or str(whole) in seen["found"], (
        f"the clone under the attested {data} is bound whole there, nothing said: {seen}"
    )


# ------------------------- N4: links that chain and a link loop


def test_n4_chained_links_and_a_loop_count(tmp_path: Path) -> None:
    """N4, stopped: ``S/pack -> a``, ``a -> b``, ``b -> ../blobs/data`` is followed to the
    packs (a store, found); ``T/pack -> p2``, ``p2 -> pack`` (ELOOP) counts (fails closed).
    Control: ``U/pack -> absent`` (ENOENT) is no store."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")
    store = _linked_store(cache, tmp_path / "upstream")
    os.unlink(store / "pack")
    os.symlink("b", store / "a")
    os.symlink("../blobs/data", store / "b")
    os.symlink("a", store / "pack")
    assert git_guard.is_object_store(store)
    loop = cache / "T"
    loop.mkdir()
    os.symlink("p2", loop / "pack")
    os.symlink("pack", loop / "p2")
    assert git_guard.is_object_store(loop)
    (cache / "U").mkdir()
    os.symlink("absent", cache / "U" / "pack")
    assert not git_guard.is_object_store(cache / "U")
    found, _ = git_guard.find_git_dirs([cache])
    assert sorted(found) == sorted([store, loop]), found


# ------------------------- N5: mountinfo's escapes in a mount point below an attested folder


def test_n5_a_bind_with_escaped_characters_below_an_attested_folder(tmp_path: Path) -> None:
    """N5, stopped: the attested ``other`` holds a folder named ``a b<newline>c<tab>d\\e``,
    a bind of the folder holding the cache (mountinfo writes ``\\040``, ``\\012``, ``\\011``,
    ``\\134``): ``other`` is searched, the clone there found. Control: without the bind
    ``other`` is attested."""
    data = tmp_path / "data"
    cache = data / "proj" / ".evotree" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")
    _git(cache, "clone", "-q", "--no-local", str(tmp_path / "upstream"), "proj")
    other = tmp_path / "other"
    odd = other / "a b\nc\td\\e"
    odd.mkdir(parents=True)
    run = tmp_path / "run"
    (run / "candidate").mkdir(parents=True)
    folders = [run / "candidate", run, cache, other]
    control = _in_namespace(tmp_path, "", folders, [other])
    assert control["attested"] == [str(other)], control
    # the odd name passed through the environment (no shell word holds it plainly)
    seen = _in_namespace(
        tmp_path,
        'mount --bind "$RT3_DATA" "$RT3_ODD" &&',
        folders,
        [other],
        {"RT3_DATA": str(data), "RT3_ODD": str(odd)},
    )
    assert seen["attested"] == [], seen
    assert str(odd / "proj" / ".evotree" / "cache" / "proj" / ".git") in seen["found"], seen


# ------------------------- H1: honest links of a store's name


def test_h1_honest_links_of_store_names_are_no_store(tmp_path: Path) -> None:
    """Honest work, stopped: a candidate's ``info -> docs`` (a README), ``pack -> assets``
    (game assets ``*.pack`` of another format), ``ab -> shard`` (files of other names) and a
    dangling ``ff``: no store; the prepare phase's start hides and says nothing, and still finds
    the task beside them."""
    work = tmp_path / "run" / "candidate"
    _task(work / "task")
    for name in ("docs", "assets", "shard"):
        (work / name).mkdir()
    (work / "docs" / "README").write_text("x")
    (work / "assets" / "level1.pack").write_bytes(b"UNITYPAK" + b"\0" * 64)
    (work / "assets" / "level1.idx").write_bytes(b"IDX1" + b"\0" * 16)
    (work / "shard" / "part-0001.bin").write_bytes(b"x")
    game = work / "game"
    game.mkdir()
    os.symlink("../docs", game / "info")
    os.symlink("../assets", game / "pack")
    os.symlink("../shard", game / "ab")
    os.symlink("../absent", game / "ff")
    assert not git_guard.is_object_store(game)
    trace = tmp_path / "raw.trace"
    try:
        binds = git_guard.before_phase([work], trace)
        seen = json.loads(git_guard.snapshot_path(trace).read_text())
    finally:
        git_prune.remove_copies(trace)
    assert [s for _, s, d in binds if d == work / "task" / ".git"]  # control: the task found
    assert not seen["hidden"] and not seen["problems"], seen
