"""The machine's git under the compiled tracer, its read-opens pinned (issue 29).

Since the machine's git's opens to read are answered by the tracer from its own walk (the walk's
descriptor handed over, a missing name answered ENOENT: seccomp_trace.c, ``open_row``), every git
command a phase runs reads through that path: its object store, packs and their indexes, refs,
configs, ``.gitattributes`` (read ``O_NOFOLLOW``), folders listed (``O_DIRECTORY``). This runs a
full round of git in the real sandbox -- a repository of the phase's own made, committed to,
branched, cloned (hard-linked, and through upload-pack / pack-objects / index-pack), packed,
gc'd, fsck'd, bundled, archived, and the task repository read -- and asserts that each step
did what it does, printing what it prints with pinning off (the kernel opens), and that pinning
adds no finding to the audit or the trace. The race the pinning closes is in
test_redteam_trace_missing_redteam.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_redteam_trace_deputy import _run
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture

from evotree.harness.audit.trace import TRACE_FILE, read_trace_rows
from evotree.harness.audit.trajectories import TrajectoryAudit

#: runs git steps (``step NAME rc``, then what a step prints that is checked: ``NAME= ...``)
_GIT_ROUND = """\
import os, subprocess
env = dict(os.environ, GIT_AUTHOR_NAME="p", GIT_AUTHOR_EMAIL="p@x", GIT_COMMITTER_NAME="p",
           GIT_COMMITTER_EMAIL="p@x", GIT_CONFIG_NOSYSTEM="1", HOME=os.getcwd())

def g(name, *args, cwd="own", show=False):
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    print("step", name, r.returncode)
    if r.returncode:
        print("stderr", name, r.stderr.replace("\\n", " | "))
    if show:
        print(name + "=", r.stdout.strip().replace("\\n", " | "))
    return r.stdout

g("init", "init", "-q", "-b", "trunk", "own", cwd=".")
with open("own/.gitattributes", "w") as fh:
    fh.write("*.bin binary\\n*.txt diff=plain\\n")
for k in range(3):
    with open("own/f.txt", "a") as fh:
        fh.write("line %d\\n" % k)
    with open("own/d%d.bin" % k, "wb") as fh:
        fh.write(bytes(range(256)) * (k + 1))
    g("add%d" % k, "add", "-A")
    g("commit%d" % k, "commit", "-q", "-m", "c%d" % k)
os.symlink("f.txt", "own/link")
g("add-link", "add", "link")
g("commit-link", "commit", "-q", "-m", "link")
g("count", "rev-list", "--count", "HEAD", show=True)
g("log", "log", "-p", "--stat")
g("attr", "check-attr", "diff", "f.txt", show=True)
g("branch", "checkout", "-q", "-b", "side")
with open("own/side.txt", "w") as fh:
    fh.write("side\\n")
g("add-side", "add", "side.txt")
g("commit-side", "commit", "-q", "-m", "side")
g("back", "checkout", "-q", "trunk")
g("merge", "merge", "-q", "--no-edit", "side")
g("tag", "tag", "-a", "v1", "-m", "v1")
g("stash-file", "rm", "-q", "--cached", "d0.bin")
g("stash", "stash", "-q")
g("stash-pop", "stash", "pop", "-q")
g("status", "status", "--porcelain", show=True)
g("blame", "blame", "f.txt")
g("grep", "grep", "-c", "line", "HEAD", "--", "f.txt", show=True)
g("worktree", "worktree", "add", "-q", "../wt", "side")
g("wt-log", "log", "--oneline", cwd="wt")
g("clone", "clone", "-q", "own", "copy", cwd=".")
g("clone-nolocal", "clone", "-q", "--no-local", "own", "copy2", cwd=".")
g("copy2-count", "rev-list", "--count", "--all", cwd="copy2", show=True)
g("repack", "repack", "-q", "-a", "-d", "-f")
g("gc", "gc", "-q", "--prune=now")
g("verify-pack", "count-objects", "-v", show=True)
g("fsck", "fsck", "--full", "--strict")
g("commit-graph", "commit-graph", "write", "--reachable")
g("bundle", "bundle", "create", "../b.bundle", "--all")
g("clone-bundle", "clone", "-q", "b.bundle", "copy3", cwd=".")
g("copy3-log", "log", "-1", "--format=%s", cwd="copy3", show=True)
g("archive", "archive", "-o", "../a.tar", "HEAD")
g("show", "show", "v1:f.txt", show=True)
g("task-log", "log", "-p", "-1", cwd=".")
g("task-status", "status", "--porcelain", cwd=".")
print("done")
"""


def _trace_rows(folder: Path) -> list[dict[str, Any]]:
    """The trace rows of the run in FOLDER (_run's evidence)."""
    return read_trace_rows((folder / "evidence" / TRACE_FILE).read_text())


def _findings(folder: Path, audit: TrajectoryAudit) -> list[tuple[str, str]]:
    """The audit's hits (code, command) and the trace's open rows, FOLDER spelled "<run>"."""
    hits = sorted({(h.code, h.command) for v in audit.verdicts for h in v.hits})
    rows = sorted(
        {
            ("open", str(r.get("path"))) + (str(r.get("unpinned")),)
            for r in _trace_rows(folder)
            if r.get("kind") == "open"
        }
    )
    return [tuple(str(x).replace(str(folder), "<run>") for x in item) for item in hits + rows]


@pytest.mark.heavy
def test_git_works_with_its_reads_pinned(tmp_path: Path, seccomp: None) -> None:
    """Every step of the round succeeds with the outputs git gives, the same lines as with
    pinning off (EVOTREE_TRACE_PIN=off: the kernel opens); git's reads left gitread rows; the
    audit's hits and the trace's open rows are the same as with pinning off (the round itself is
    judged -- clones, a repository nested in the task's work tree, ORIG_HEAD read as a plain
    file -- but pinning adds no finding: none of git's opens went unanswered)."""
    runs = {}
    for pin in ("", "off"):
        folder = tmp_path / (pin or "pinned")
        folder.mkdir()
        proc, audit = _run(folder, _GIT_ROUND, pin=pin, timeout=300)
        runs[pin] = (proc, audit, folder)
    proc, audit, folder = runs[""]
    out = proc.stdout
    assert proc.returncode == 0 and "done" in out, out + proc.stderr[-2000:]
    failed = [
        line for line in out.splitlines() if line.startswith("step ") and not line.endswith(" 0")
    ]
    assert not failed, out
    lines = dict(line.split("= ", 1) for line in out.splitlines() if "= " in line)
    assert lines["count"] == "4"
    assert lines["attr"] == "f.txt: diff: plain"
    assert lines["status"] == ""
    assert lines["grep"] == "HEAD:f.txt:3"
    assert int(lines["copy2-count"]) == 5  # 4 on trunk, the side commit (merged fast-forward)
    assert "count: 0" in lines["verify-pack"] and "packs: 1" in lines["verify-pack"]
    assert lines["copy3-log"] == "side"
    assert lines["show"] == "line 0 | line 1 | line 2"
    kernel, kernel_audit, kernel_folder = runs["off"]
    assert out.splitlines() == kernel.stdout.splitlines(), kernel.stdout
    assert any(r.get("kind") == "gitread" for r in _trace_rows(folder))
    assert _findings(folder, audit) == _findings(kernel_folder, kernel_audit)
