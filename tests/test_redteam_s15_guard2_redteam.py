"""Red team (second round) of the s15 guard fixes (issue 29): b778baf (K1-K7 of
``tests/test_redteam_s15_guard_redteam.py``), 6e48701/842aac3 (docs, the queued-cut lead) and
95a078e (a noted judge copy held open by an ``O_PATH`` descriptor), by a helper who wrote none of
them. Same attacker (the candidate's code: what its prepare phase leaves in the workspace's
shared cache, read by every later run's train phase), same future (``FUTURE_SECRET_42``,
``test_task_prune._task``), same rules: a win is ``xfail(strict=True)`` asserting the safe
outcome, its reason the mechanism; a stopped attack is a plain test, its docstring saying by
what; each has a control that shows it ran. Against 348a17e:

- M1 (WON, CLOSED): an object store laid out for git whose ``pack`` (or a loose-object folder
  ``xx``) is a relative link to a folder of another name (``S/pack -> ../blobs/data``):
  ``is_object_store`` takes only real folders (``is_dir(follow_symlinks=False)``) and the
  folder of packs has no ``pack`` of its own, so neither is found; git in the train box takes
  ``S`` as an alternate of a repository of its own in ``/tmp`` and prints every object. Made by
  renames and a link only (no open of git's storage). The threat model's "a pack copied to
  another name in another folder" is wider (the box could make the link itself); M1 is the part
  inside git's layout, which the recogniser claims (L1: a link named ``x.pack`` counts).
  Closed: ``is_object_store`` takes a link of a store's name (``pack``, ``info``, ``xx``) as
  git does, followed and read by the same rules (one that cannot be read but exists counts):
  ``S`` is found, cannot be pruned alone, hidden and said.
- M2 (WON, a K6 of its own; CLOSED): ``_mountable`` lifts only folders beyond a cut; a clone whose
  ``.git`` is 4,091 bytes long is listed, found, cannot be pruned there and is hidden by an
  empty folder bound at its own path, which bwrap cannot make under ``/newroot``: every later
  run's train box exits 1 ("File name too long"). Closed: a repository whose path is over
  ``_MOUNT_PATH_MAX`` is neither pruned nor hidden at its own path but hidden with its deepest
  parent that can be a mount point (``_lift_long``), the repositories there with it, said.
- M5 (WON, CLOSED): K5's ``_attested`` compares paths as written: an operator's read path
  ``/datasets`` that is a link to (or a bind of) ``/data``, which holds the workspace's cache,
  attested under that name, is not searched; the cache's clone is pruned at its own path but
  bound whole under ``/datasets``, nothing said. (Not attested, it is bound whole too, said as
  a row: a git directory reached through a link is not locked - the documented remainder.)
  Closed: ``_attested`` compares the folders (links resolved; device and inode of the folder,
  of each above it and of the mount points below it), so the alias is searched, said.
- M6 (WON, CLOSED): K3's fix makes a folder that cannot be listed a cut, but a ``.git`` is never
  listed: ``is_git_dir``'s ``lstat`` of a ``.git`` past ``PATH_MAX`` whose work tree (4,092
  bytes) is listable fails and reads as "no git directory"; neither found nor cut, the clone is
  bound whole and the train box reaches it with relative opens (K3's reader). Closed: a
  ``.git`` whose ``lstat`` fails other than ``ENOENT`` is a cut (hidden with its deepest
  mountable parent, said); ``is_git_dir`` takes it for a git directory, never for absent.
- M3 (stopped): bytes that are not UTF-8 in folder names (``d\xff/p\xfe``) and in ``HEAD``
  (``ref: refs/heads/x\xff``): found, pruned, bound; git reads the base (or an unborn branch).
- M4 (stopped): the ``O_PATH`` descriptors of noted copies are close-on-exec and do not pile
  up (200 judges: at most the last two held; a later note forgets a removed one).
- H1 (honest work, stopped): a virtual environment's links, a submodule's ``.git`` file,
  Megatron's ``data/pack/*.{bin,idx}``, Hugging Face/DVC/Bazel-style caches, a private folder
  and a 3,900-byte path in a candidate: nothing hidden, nothing said, the task still found.

Not tested (why): the race on the shared cache with ``jobs > 1`` (a concurrent prepare phase
writes the cache the train box has bound live) is the threat model's documented remainder.
M2 in the judge (a 4,091-byte ``.git`` the train phase leaves in ``evidence/train``) should stop
the judge's box the same way (not built: whether that is the candidate's loss or a lever is
J1's question). ``_unreachable``: as root (this machine) ``os.access`` grants search on every
folder, so it never passes one over; as another user, a folder it cannot traverse is one the
phase (same user) cannot traverse either, and ``access(2)`` is the kernel's own check (ACLs
too; not built: no ``setfacl`` here) - no bypass found.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_task_prune import _ENV, SECRET, _git, _task

from evotree.harness import git_guard, git_phase_search, git_prune, git_untraced, sandbox
from evotree.harness.sandbox import finish_trace
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture


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


def _snapshot(spec: SandboxSpec) -> dict:
    return json.loads(git_guard.snapshot_path(spec.trace).read_text())


def _train_spec(tmp_path: Path, cache: Path) -> SandboxSpec:
    """A later run's train box as ``phases._prepare_and_train`` makes it (the cache written)."""
    root = tmp_path / "run"
    (root / "candidate").mkdir(parents=True, exist_ok=True)
    (root / "evidence" / "train").mkdir(parents=True, exist_ok=True)
    return SandboxSpec(
        cwd=root / "candidate",
        read_only=(root, cache),
        read_write=(root / "candidate", root / "evidence" / "train"),
        trace=tmp_path / "raw.trace",
        written=(cache,),
    )


def _run_box(tmp_path: Path, spec: SandboxSpec, script: str, *args: str) -> tuple:
    """(the box's process, the start's snapshot, its binds) for ``script`` in ``spec``'s box."""
    ev = tmp_path / "ev"
    ev.mkdir(exist_ok=True)
    try:
        binds = sandbox._guard_task_repositories(spec)
        git_prune.remove_copies(spec.trace)
        proc = subprocess.run(
            accounted(sandbox.wrap(spec, ["python3", "-c", script, *args])),
            env=sandbox_env(dict(_ENV)),
            capture_output=True,
            text=True,
            timeout=180,
        )
        seen = _snapshot(spec)
    finally:
        finish_trace(spec, ev)
        git_prune.remove_copies(spec.trace)
    return proc, seen, binds


# ---------------------------------- M1: an object store whose pack/ folder is a symbolic link

#: In the train box: a fresh repository of the box's own borrowing ``store`` as an alternate,
#: every object of it printed.
_ALTERNATE_READER = """
import subprocess, sys
subprocess.run(['git', 'init', '-q', '/tmp/g'], check=True)
with open('/tmp/g/.git/objects/info/alternates', 'w') as fh:
    fh.write(sys.argv[1] + '\\n')
out = subprocess.run(['git', '-C', '/tmp/g', 'cat-file', '--batch-all-objects', '--batch'],
                     capture_output=True, text=True, errors='replace')
print('rc', out.returncode, 'seen', out.stdout.replace(chr(10), ' | ')[-4000:], out.stderr[-300:])
"""


def _linked_store(cache: Path, upstream: Path) -> Path:
    """What a prepare phase leaves in the cache, by renames and a link only (no open of git's
    storage): a clone's packs moved to ``blobs/data`` (no folder named ``pack``), its git
    directory renamed ``proj/meta`` with ``HEAD`` renamed away (no repository), and a store
    ``S`` whose ``pack`` is a relative link to the packs."""
    _git(cache, "clone", "-q", "--no-local", str(upstream), "proj")
    (cache / "blobs").mkdir()
    os.rename(cache / "proj" / ".git" / "objects" / "pack", cache / "blobs" / "data")
    os.rename(cache / "proj" / ".git", cache / "proj" / "meta")
    os.rename(cache / "proj" / "meta" / "HEAD", cache / "proj" / "meta" / "HEAD.orig")
    store = cache / "S"
    store.mkdir()
    os.symlink("../blobs/data", store / "pack")
    return store


def test_m1_control_the_same_store_with_a_real_pack_folder_is_found(tmp_path: Path) -> None:
    """The control of M1: the same packs in a real ``S/pack`` folder make ``S`` an object store
    the search finds (and the start hides: it cannot be pruned alone). The attack's layout (a
    link) is found the same since the fix; a link of a store's name whose folder holds nothing
    git reads, or that names nothing, is not."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")
    store = _linked_store(cache, tmp_path / "upstream")
    found, _ = git_guard.find_git_dirs([cache])
    assert found == [store], found  # the attack's layout: found since the fix...
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "notes.txt").write_text("x")
    os.symlink(tmp_path / "plain", cache / "blobs" / "pack")
    os.symlink(tmp_path / "absent", cache / "blobs" / "ab")
    assert not git_guard.is_object_store(cache / "blobs")  # links to no store: none
    os.unlink(store / "pack")
    os.rename(cache / "blobs" / "data", store / "pack")  # ...a real folder: a store, found
    assert git_guard.is_object_store(store)
    found, _ = git_guard.find_git_dirs([cache])
    assert found == [store], found


@pytest.mark.parametrize("layout", ["pack", "fanout"])
def test_m1_a_store_whose_pack_folder_is_a_link_is_not_bound_whole(
    tmp_path: Path, seccomp: None, layout: str
) -> None:
    """M1 (was WON at 348a17e: ``is_object_store`` took only real folders, so neither ``S``
    nor the folder its link names was found, the cache bound whole): the prepare phase (the
    cache read-write) leaves the task's packs under ``blobs/data`` and a store ``S`` with
    ``pack -> ../blobs/data`` (``fanout``: a loose object's folder moved to ``blobs/l``,
    ``S/xx -> ../blobs/l``); a later run's train box borrows ``S`` as an alternate and prints
    every object. Closed: a link of a store's name counts, followed as git follows it, so ``S``
    is found, cannot be pruned alone and is hidden, said; the alternate reads nothing."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True)
    ids = _task(tmp_path / "upstream")
    store = _linked_store(cache, tmp_path / "upstream")
    if layout == "fanout":  # only the loose object: 'loose FUTURE_SECRET_42'
        os.unlink(store / "pack")
        fan = ids["loose"][:2]
        os.rename(tmp_path / "upstream" / ".git" / "objects" / fan, cache / "blobs" / "l")
        os.symlink("../blobs/l", store / fan)
    spec = _train_spec(tmp_path, cache)
    proc, seen, binds = _run_box(tmp_path, spec, _ALTERNATE_READER, str(store))
    assert "rc 0" in proc.stdout, proc  # control: git ran in the box, the alternate taken
    assert any(str(store) in h and "could not be pruned" in h for h in seen["hidden"]), seen
    assert [s for _, s, d in binds if d == store and s.name.endswith(".hidden")], binds
    assert SECRET not in proc.stdout, (
        "the train box read the task's future through S's linked folder"
    )


# ------------------------ M2: a repository just under PATH_MAX: its hidden bind cannot be made


def _long_clone(cache: Path, upstream: Path, length: int) -> Path:
    """A clone of ``upstream`` moved (renames, relative opens) to a work tree in ``cache``
    whose absolute path is ``length`` bytes; the work tree."""
    _git(cache, "clone", "-q", "--no-local", str(upstream), "c")
    fd = os.open(cache, os.O_RDONLY | os.O_DIRECTORY)
    top = os.open(cache, os.O_RDONLY | os.O_DIRECTORY)
    total, names = len(os.fsencode(cache)), []
    try:
        while length - total > 252:
            name = chr(ord("a") + len(names) % 26) * 250
            os.mkdir(name, dir_fd=fd)
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
            names.append(name)
            total += 251
        names.append("p" * (length - total - 1))
        os.rename("c", names[-1], src_dir_fd=top, dst_dir_fd=fd)
    finally:
        os.close(fd)
        os.close(top)
    return Path(cache, *names)


def test_m2_a_clone_just_under_path_max_does_not_stop_later_train_boxes(
    tmp_path: Path, seccomp: None
) -> None:
    """M2 (was WON at 348a17e: ``_mountable`` lifted only the folders beyond a cut; the
    repository, unprunable there, was hidden by an empty folder bound at its own path, which
    bwrap cannot make below its new root - 'File name too long', every later train box exited
    1): the prepare phase moves a clone to a work tree 4,086 bytes long in the cache (its
    ``.git`` 4,091); a later run's train box. Control: the same at 4,080 bytes starts (the
    repository hidden, said). Closed: a repository whose path is too long to be a mount point
    is hidden with its deepest parent that can be one, said; the box starts."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")
    spec = _train_spec(tmp_path, cache)
    script = "print('started')"
    work = _long_clone(cache, tmp_path / "upstream", 4_080)
    try:
        control, seen, _ = _run_box(tmp_path, spec, script)
        assert "started" in control.stdout, control  # control: 4,080 bytes: the box starts...
        assert any("could not be pruned" in h for h in seen["hidden"]), seen  # ...it is hidden
        os.rename(work, work.with_name("p" * (len(work.name) + 6)))  # the work tree: 4,086
        proc, seen, _ = _run_box(tmp_path, spec, script)
    finally:
        subprocess.run(["rm", "-rf", str(cache)], check=False)
    assert "started" in proc.stdout or "File name too long" in proc.stderr, proc
    assert "started" in proc.stdout, f"the later run's train box did not start: {proc.stderr}"
    assert any("too long to be a mount point" in h for h in seen["hidden"]), seen


# ----------------------------- M3: bytes that are not UTF-8 in folder names and in HEAD


_LOG_READER = (
    "import subprocess, sys\n"
    "out = subprocess.run(['git', '--git-dir', sys.argv[1], 'log', '--all', '-p'],"
    " capture_output=True, text=True, errors='replace')\n"
    "print('rc', out.returncode, 'seen', out.stdout.replace(chr(10), ' | ')[-3000:],"
    " out.stderr[-300:])\n"
)


@pytest.mark.parametrize("odd_head", [False, True])
def test_m3_non_utf8_folder_names_and_head_neither_crash_nor_leak(
    tmp_path: Path, seccomp: None, odd_head: bool
) -> None:
    """Stopped: a clone in the cache below folders named ``d\\xff/p\\xfe`` (and, with
    ``odd_head``, its ``HEAD`` naming a branch ``x\\xff``) is found, pruned and bound; the train
    box starts and git there reads the base (or, for the odd HEAD, an unborn branch: the name
    read with replacement names no reference), never the future."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")
    odd = os.path.join(os.fsencode(cache), b"d\xff")
    os.mkdir(odd)
    _git(cache, "clone", "-q", "--no-local", str(tmp_path / "upstream"), "c")
    os.rename(os.path.join(os.fsencode(cache), b"c"), os.path.join(odd, b"p\xfe"))
    gd = Path(os.fsdecode(os.path.join(odd, b"p\xfe", b".git")))
    if odd_head:
        _git(gd, "branch", "-q", os.fsdecode(b"x\xff"), "main")
        (gd / "HEAD").write_bytes(b"ref: refs/heads/x\xff\n")
    spec = _train_spec(tmp_path, cache)
    proc, seen, binds = _run_box(tmp_path, spec, _LOG_READER, str(gd))
    sources = [src for _, src, dest in binds if dest == gd]
    assert sources and str(sources[0]).startswith(str(git_prune.copies_path(spec.trace)))
    assert "rc 0" in proc.stdout, proc  # control: the box started, git read the copy
    assert odd_head or "base" in proc.stdout, proc
    assert SECRET not in proc.stdout, "the future read through an odd name"


# ------------------------------------- M4: the O_PATH descriptors of noted judge copies


def _open_fds() -> dict[int, str]:
    """This process's open descriptors and what each names."""
    out = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            out[int(name)] = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue  # the listing's own descriptor, closed since
    return out


def test_m4_noted_copies_hold_no_descriptor_in_the_box_and_do_not_pile_up(
    tmp_path: Path,
) -> None:
    """Stopped: a noted judge copy's ``O_PATH`` descriptor is close-on-exec (a child holds none
    of this process's descriptors to it), and 200 judges' copies made, noted and removed in turn
    leave at most the last two descriptors open; a later note forgets a removed one."""
    before = len(_open_fds())
    copies = []
    for i in range(200):
        copy = tmp_path / f"judge-{i}"
        copy.mkdir()
        git_untraced.note_pruned_copy(copy)
        copies.append(copy)
        if i:
            shutil.rmtree(copies[i - 1])
    # (this test's own copies: earlier tests in the process may hold notes of theirs)
    held = {fd: name for fd, name in _open_fds().items() if name.startswith(str(tmp_path))}
    # the last note holds its folder (the control), the one before it until the next note
    assert sorted(held.values()) == [f"{copies[-2]} (deleted)", str(copies[-1])], held
    assert len(_open_fds()) <= before + 2
    assert all(os.get_inheritable(fd) is False for fd in held)
    proc = subprocess.run(
        ["sh", "-c", "ls -l /proc/$$/fd"], capture_output=True, text=True, check=True
    )
    assert "judge-" not in proc.stdout, proc.stdout
    shutil.rmtree(copies[-1])
    git_untraced.note_pruned_copy(tmp_path / "absent")  # a later note forgets the removed one
    assert not [name for name in _open_fds().values() if name.startswith(str(tmp_path))]


# ------------------ M5: an attested read path that reaches the cache through another path


def test_m5_an_attested_alias_of_the_cache_does_not_bind_its_clone_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seccomp: None
) -> None:
    """M5 (was WON at 348a17e: ``_attested`` compared paths as written, so the alias was not
    searched and the clone bound whole there, nothing said): ``/data`` holds the datasets and
    the workspace; the operator reads it as ``/datasets`` (a link) and attests that name.
    Control: not attested, the alias is searched and the clone there said (a ``git_state``
    row: reached through a link, not locked). Closed: ``_attested`` compares the folders
    themselves (links resolved, device and inode of each folder on the way and of the mount
    points below the attested one: a bind too), so the alias is searched as unattested, said."""
    data = tmp_path / "data"
    (data / "imagenet").mkdir(parents=True)
    cache = data / "proj" / ".evotree" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")
    _git(cache, "clone", "-q", "--no-local", str(tmp_path / "upstream"), "proj")
    alias = tmp_path / "datasets"
    os.symlink(data, alias)
    base = _train_spec(tmp_path, cache)
    spec = SandboxSpec(
        cwd=base.cwd,
        read_only=(*base.read_only, alias),
        read_write=base.read_write,
        trace=base.trace,
        written=base.written,
    )
    gd = alias / "proj" / ".evotree" / "cache" / "proj" / ".git"
    _, control, binds = _run_box(tmp_path, spec, "print('started')")
    assert any("symbolic link" in p and str(gd) in p for p in control["problems"]), control
    assert [s for _, s, d in binds if d == cache / "proj" / ".git"]  # pruned at its own path
    monkeypatch.setenv(git_guard.ENV_NO_REPOS, str(alias))
    proc, seen, _ = _run_box(tmp_path, spec, _LOG_READER, str(gd))
    assert "rc 0" in proc.stdout, proc  # control: git read the clone through the alias
    assert SECRET not in proc.stdout or seen["problems"], "the future read, nothing said"
    assert any("symbolic link" in p and str(gd) in p for p in seen["problems"]), seen


def test_m5_the_alias_check_by_folder_identity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M5's check itself: an attested folder is left out only when neither it nor a mount
    point below it is, holds or lies in a folder the candidate writes - compared by the
    folders (links resolved, device and inode), not by their names. Control: an honest
    dataset folder beside the cache stays attested."""
    data = tmp_path / "data"
    cache = data / "proj" / ".evotree" / "cache"
    cache.mkdir(parents=True)
    (tmp_path / "imagenet").mkdir()
    os.symlink(data, tmp_path / "datasets")
    os.symlink(cache, tmp_path / "cache-link")
    os.symlink(data / "proj", tmp_path / "proj-link")
    words = ["datasets", "cache-link", "proj-link", "imagenet"]
    monkeypatch.setenv(git_guard.ENV_NO_REPOS, os.pathsep.join(str(tmp_path / w) for w in words))
    run = tmp_path / "run"
    attested = git_phase_search._attested([run / "candidate"], [run, cache], [cache])
    assert attested == [tmp_path / "imagenet"], attested
    # binds (a private mount namespace): an attested bind of /data, and an attested folder
    # with a bind of /data below it, are left out as well; the dataset stays attested
    for name in ("bound", "other", "other/x"):
        (tmp_path / name).mkdir()
    script = (
        "import json, sys; from pathlib import Path; from evotree.harness import git_phase_search; "
        "a = [Path(p) for p in json.loads(sys.argv[1])]; "
        "print(json.dumps([str(p) for p in git_phase_search._attested(a[:1], a[1:3], a[2:3])]))"
    )
    folders = json.dumps([str(run / "candidate"), str(run), str(cache)])
    env = dict(os.environ) | {
        git_guard.ENV_NO_REPOS: os.pathsep.join(
            str(tmp_path / w) for w in ("bound", "other", "imagenet")
        )
    }
    proc = subprocess.run(
        [
            "unshare",
            "--mount",
            "sh",
            "-c",
            f"mount --bind {data} {tmp_path / 'bound'} && "
            f"mount --bind {data} {tmp_path / 'other' / 'x'} && "
            f'exec "$0" -c "$1" "$2"',
            sys.executable,
            script,
            folders,
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0 and "mount" in proc.stderr + proc.stdout:
        pytest.skip(f"no private mount namespace here: {proc.stderr[-200:]}")
    assert proc.returncode == 0, proc
    assert json.loads(proc.stdout) == [str(tmp_path / "imagenet")], proc.stdout


# ------------------------- M6: a .git past PATH_MAX in a work tree that can still be listed

#: In the train box: walk to the clone's ``.git`` with relative opens, copy it to /tmp (relative
#: opens again), and run git there (K3's reader).
_DEEP_READER = """
import os, subprocess, sys
print('walking', flush=True)
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
for name in sys.argv[2].split('/') + ['.git']:
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
def copy(src_fd, dst):
    os.mkdir(dst)
    for entry in os.scandir(src_fd):
        if entry.is_dir(follow_symlinks=False):
            sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=src_fd)
            copy(sub, os.path.join(dst, entry.name))
            os.close(sub)
        elif entry.is_file(follow_symlinks=False):
            f = os.open(entry.name, os.O_RDONLY, dir_fd=src_fd)
            with open(os.path.join(dst, entry.name), 'wb') as out:
                out.write(os.read(f, 1 << 26))
            os.close(f)
copy(fd, '/tmp/stolen.git')
out = subprocess.run(['git', '--git-dir', '/tmp/stolen.git', 'log', '--all', '-p'],
                     capture_output=True, text=True)
print('rc', out.returncode, 'seen', out.stdout.replace(chr(10), ' | ')[-3000:], out.stderr[-300:])
"""


def test_m6_a_git_dir_past_path_max_in_a_listable_work_tree_is_not_bound_whole(
    tmp_path: Path, seccomp: None
) -> None:
    """M6 (was WON at 348a17e: ``is_git_dir``'s ``lstat`` of the ``.git`` failed
    ``ENAMETOOLONG`` and read as "no git directory", the clone bound whole, nothing said): the
    prepare phase moves a clone to a work tree 4,092 bytes long in the cache (its ``.git``
    4,097: past ``PATH_MAX``, the work tree not); a later run's train box walks to it with
    relative opens. Control: at 4,080 bytes the same clone is found (and hidden). Closed: a
    ``.git`` that cannot be looked at for another reason than its absence is a cut, hidden with
    its deepest mountable parent, said; the reader's walk ends at the empty folder."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")
    spec = _train_spec(tmp_path, cache)
    work = _long_clone(cache, tmp_path / "upstream", 4_080)
    names = "/".join(work.relative_to(cache).parts)
    try:
        _, control, _ = _run_box(tmp_path, spec, "print('started')")
        assert any("could not be pruned" in h for h in control["hidden"]), control
        os.rename(work, work.with_name("p" * (len(work.name) + 12)))  # the work tree: 4,092
        names = names[: -len(work.name)] + "p" * (len(work.name) + 12)
        proc, seen, _ = _run_box(tmp_path, spec, _DEEP_READER, str(cache), names)
    finally:
        subprocess.run(["rm", "-rf", str(cache)], check=False)
    assert "walking" in proc.stdout, proc  # control: the box started, the reader ran
    assert any("could not be looked at" in h for h in seen["hidden"]), seen
    assert "FileNotFoundError" in proc.stderr, proc  # the walk ends at the hidden folder
    assert SECRET not in proc.stdout, "the train box read the task's future"


# --------------------------- H1: honest layouts beside the fixes: nothing hidden, nothing said


def test_h1_common_layouts_in_a_candidate_are_neither_hidden_nor_said(tmp_path: Path) -> None:
    """Honest work, stopped: a candidate folder holding a virtual environment's links, a
    submodule's ``.git`` file, Megatron's ``data/pack/*.{bin,idx}`` (K7's fix reads the
    magic), a Hugging Face hub cache (``blobs/<64 hex>``, ``refs/main``, linked snapshots), a
    DVC cache (``ab/<30 hex>``), a Bazel-style disk cache (``ab/<64 hex>``), a private folder
    (0o700) and a folder 3,900 bytes deep (listable, K3's lift not needed) - the prepare
    phase's start hides nothing and says nothing, and still finds the task beside them."""
    root = tmp_path / "run"
    work = root / "candidate"
    _task(work / "task")
    venv = work / ".venv"
    (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (venv / "bin").mkdir()
    os.symlink("lib", venv / "lib64")
    os.symlink("/usr/bin/python3", venv / "bin" / "python")
    (work / "vendor" / "lib").mkdir(parents=True)
    (work / "vendor" / "lib" / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    (work / "data" / "pack").mkdir(parents=True)
    (work / "data" / "pack" / "train_text_document.bin").write_bytes(b"\0" * 256)
    (work / "data" / "pack" / "train_text_document.idx").write_bytes(b"MMIDIDX\0\0" + b"\0" * 64)
    hub = work / "hf" / "models--org--tiny"
    (hub / "blobs").mkdir(parents=True)
    (hub / "refs").mkdir()
    (hub / "snapshots" / ("c" * 40)).mkdir(parents=True)
    (hub / "blobs" / ("a" * 64)).write_text("{}")
    (hub / "refs" / "main").write_text("c" * 40)
    os.symlink(f"../../blobs/{'a' * 64}", hub / "snapshots" / ("c" * 40) / "config.json")
    for name, length in (("dvc", 30), ("bazel", 64)):
        (work / name / "ab").mkdir(parents=True)
        (work / name / "ab" / ("d" * length)).write_bytes(b"x")
    (work / "private").mkdir(mode=0o700)
    deep = work / "deep"
    deep.mkdir()
    depth = (3_900 - len(os.fsencode(deep))) // 201
    (deep / "/".join(["e" * 200] * depth)).mkdir(parents=True)
    (root / "evidence" / "prepare").mkdir(parents=True)
    spec = SandboxSpec(
        cwd=work,
        read_only=(root,),
        read_write=(tmp_path / "ws" / "cache", root / "evidence" / "prepare"),
        trace=tmp_path / "raw.trace",
    )
    (tmp_path / "ws" / "cache").mkdir(parents=True)
    try:
        binds = sandbox._guard_task_repositories(spec)
        seen = _snapshot(spec)
    finally:
        git_prune.remove_copies(spec.trace)
    assert [s for _, s, d in binds if d == work / "task" / ".git"]  # control: the task found
    assert not seen["hidden"] and not seen["problems"], seen
    assert not [s for _, s, _ in binds if s.name.endswith(".hidden")], binds


def test_m6_in_the_judges_copy_and_an_operators_folder_the_long_git_dir_is_never_whole(
    tmp_path: Path,
) -> None:
    """M6 beside the train box, stopped: the judge's copy of a candidate holding the same clone
    (its work tree 4,092 bytes, its ``.git`` past ``PATH_MAX``) refuses the ``.git`` (it cannot
    be read) and copies no git directory; an operator's read path holding it refuses the phase
    (:class:`~evotree.harness.git_guard.ReadPathCut`), never binds it whole. Control: a file of
    the candidate's beside it is copied."""
    from evotree.harness.sandbox_copy import copy_regular_files

    src = tmp_path / "cand"
    src.mkdir()
    _task(tmp_path / "upstream")
    _long_clone(src, tmp_path / "upstream", 4_092)
    (src / "notes.txt").write_text("mine")
    dst = tmp_path / "copy"
    dst.mkdir()
    try:
        report = copy_regular_files(src, dst, max_files=10_000, max_bytes=1 << 30)
        gits = subprocess.run(
            ["find", str(dst), "-name", ".git"], capture_output=True, text=True, check=False
        ).stdout
        files = subprocess.run(
            ["find", str(dst), "-type", "f"], capture_output=True, text=True, check=False
        ).stdout
        assert files.strip() == str(dst / "notes.txt"), files  # control: the copy was made
        assert not gits.strip(), gits
        assert any(r.endswith("/.git: cannot be read (File name too long)") for r in report.refused)
        with pytest.raises(git_guard.ReadPathCut, match="could not be looked at"):
            git_guard.before_phase([], tmp_path / "raw.trace", read_only=[src])
    finally:
        git_prune.remove_copies(tmp_path / "raw.trace")
        subprocess.run(["rm", "-rf", str(src), str(dst)], check=False)


def test_m2_a_repository_in_the_lifted_parent_is_hidden_with_it(
    tmp_path: Path, seccomp: None
) -> None:
    """M2's lift beside a repository that is not too long: a clone at ``A/q...q`` (its ``.git``
    over 3,800 bytes) is hidden with ``A``, its deepest mountable parent, and the clone
    ``A/s`` (short enough to be pruned) is hidden with it, said, never bound inside the empty
    folder (bwrap could not make that mount point: K6's lesson); the box starts. Control: the
    short clone alone in ``A`` is pruned and bound."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")
    depth = (3_700 - len(os.fsencode(cache))) // 201
    top = cache / "/".join(["f" * 200] * depth)
    top.mkdir(parents=True)
    for name in ("s", "long"):
        _git(cache, "clone", "-q", "--no-local", str(tmp_path / "upstream"), name)
    os.rename(cache / "s", top / "s")
    spec = _train_spec(tmp_path, cache)
    try:
        control, seen, binds = _run_box(tmp_path, spec, "print('started')")
        assert "started" in control.stdout, control
        assert [s for _, s, d in binds if d == top / "s" / ".git" and "hidden" not in s.name]
        assert not seen["hidden"], seen  # control: the short clone pruned, nothing hidden
        long = top / ("q" * (3_805 - len(os.fsencode(top))))
        os.rename(cache / "long", long)
        proc, seen, binds = _run_box(tmp_path, spec, "print('started')")
    finally:
        subprocess.run(["rm", "-rf", str(cache)], check=False)
    assert "started" in proc.stdout, proc
    assert [s for _, s, d in binds if d == top and s.name.endswith(".hidden")], binds
    assert not [d for _, _, d in binds if top in d.parents], binds
    said = " ".join(seen["hidden"])
    assert "too long to be a mount point" in said and str(top / "s" / ".git") in said, seen
