"""The machine's git handed sealed copies of its HEAD and pointer files (issue 29, red team (A)).

For the machine's git's open to read of a HEAD file (``HEAD``, ``ORIG_HEAD``, ``FETCH_HEAD``...)
or a pointer file (``commondir``, ``info/grafts``) that is a regular file, the tracer reads the
whole file once, puts those bytes in a memfd sealed against every change and hands git a
read-only open of that (seccomp_trace.c, ``git_seal``); the ``gitread`` row's ``content`` is
those bytes. A file over 64 KiB that the audit may judge by its text (in a worktree's folder) is
not handed (EIO, a finding). This runs git in a linked
worktree and with ``ORIG_HEAD`` (rebase) and ``FETCH_HEAD`` (fetch) in a repository of the
phase's own, in the real sandbox, and checks that git prints what it prints with pinning off
(the kernel opens), that the rows hold the files' whole text, and the limit. The attack the copy
stops is ``test_redteam_trace_pin_git_redteam.py::test_a_worktree_head_rewritten_after_the_peek``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_redteam_trace_deputy import _run
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture

from evotree.harness.audit.trace import TRACE_FILE, read_trace_rows

#: git steps in a repository of the phase's own (``step NAME rc``; ``NAME= ...`` what is checked)
_ROUND = """\
import os, subprocess
env = dict(os.environ, GIT_AUTHOR_NAME="p", GIT_AUTHOR_EMAIL="p@x", GIT_COMMITTER_NAME="p",
           GIT_COMMITTER_EMAIL="p@x", GIT_CONFIG_NOSYSTEM="1", HOME=os.getcwd(),
           GIT_AUTHOR_DATE="2020-01-01T00:00:00Z", GIT_COMMITTER_DATE="2020-01-01T00:00:00Z")

def g(name, *args, cwd="own", show=False):
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    print("step", name, r.returncode)
    if show:
        print(name + "=", r.stdout.strip().replace("\\n", " | "))
    return r.stdout

def commit(name, cwd="own"):
    with open(os.path.join(cwd, name), "w") as fh:
        fh.write(name + "\\n")
    g("add-" + name, "add", name, cwd=cwd)
    g("commit-" + name, "commit", "-q", "-m", name, cwd=cwd)

g("init", "init", "-q", "-b", "trunk", "own", cwd=".")
commit("a")
commit("b")
g("wt-add", "worktree", "add", "-q", "--detach", "../wt")
g("wt-head", "rev-parse", "HEAD", cwd="wt", show=True)
g("wt-status", "status", "--porcelain", cwd="wt", show=True)
commit("c", cwd="wt")
g("wt-log", "log", "--format=%s", cwd="wt", show=True)
g("wt-branch", "checkout", "-q", "-b", "topic", cwd="wt")
commit("d", cwd="wt")
g("wt-stash-file", "rm", "-q", "--cached", "d", cwd="wt")
g("wt-stash", "stash", "-q", cwd="wt")
g("wt-stash-pop", "stash", "pop", "-q", cwd="wt")
g("wt-restore", "add", "d", cwd="wt")
commit("e")
g("wt-rebase", "rebase", "-q", "trunk", cwd="wt")
g("wt-orig", "log", "-1", "--format=%s", "ORIG_HEAD", cwd="wt", show=True)
g("wt-rebased", "log", "--format=%s", cwd="wt", show=True)
g("wt-back", "checkout", "-q", "--detach", "trunk", cwd="wt")
g("clone", "clone", "-q", "own", "other", cwd=".")
commit("f", cwd="other")
g("fetch", "fetch", "-q", "../other", "trunk")
g("fetch-head", "log", "-1", "--format=%s", "FETCH_HEAD", show=True)
g("merge", "merge", "-q", "--ff-only", "FETCH_HEAD")
g("log", "log", "--format=%s", show=True)
g("wt-list", "worktree", "list", "--porcelain", show=True)
# files named HEAD over the tracer's limit (64 KiB): the repository's reflog (its text judged
# nowhere: handed as pinned) and the worktree's HEAD (judged by its text: refused)
with open("own/.git/logs/HEAD") as fh:
    last = fh.read().splitlines()[-1]
with open("own/.git/logs/HEAD", "a") as fh:
    fh.write((last + "\\n") * 600)
g("big-reflog", "log", "-g", "-1", "--format=%s", show=True)
wt_head = os.path.join("wt", g("path", "rev-parse", "--git-path", "HEAD", cwd="wt").strip())
with open(wt_head) as fh:
    text = fh.read()
with open(wt_head, "w") as fh:
    fh.write(text + "\\n" * 70000)
r = subprocess.run(["git", "rev-parse", "HEAD"], cwd="wt", env=env, capture_output=True)
print("big-wt", r.returncode)
print("done")
"""


def _rows(folder: Path) -> list[dict]:
    return read_trace_rows((folder / "evidence" / TRACE_FILE).read_text())


@pytest.mark.heavy
def test_git_reads_sealed_heads_as_it_reads_the_files(tmp_path: Path, seccomp: None) -> None:
    """Every step succeeds and prints what it prints with pinning off; the gitread rows of the
    worktree's HEAD and commondir hold their whole text; a HEAD file over 64 KiB in a worktree's
    folder is refused with pinning (a finding row) and read with pinning off; one elsewhere (the
    repository's reflog, logs/HEAD: no text judged) is read either way."""
    runs = {}
    for pin in ("", "off"):
        folder = tmp_path / (pin or "pinned")
        folder.mkdir()
        runs[pin] = (*_run(folder, _ROUND, pin=pin, timeout=300), folder)
    (proc, _audit, folder), (kernel, _kaudit, kernel_folder) = runs[""], runs["off"]
    out = proc.stdout
    assert proc.returncode == 0 and "done" in out, out + proc.stderr[-2000:]
    steps = [line for line in out.splitlines() if line.startswith("step ")]
    assert steps and all(line.endswith(" 0") for line in steps), out
    lines = dict(line.split("= ", 1) for line in out.splitlines() if "= " in line)
    assert lines["wt-log"] == "c | b | a"
    assert lines["wt-orig"] == "d"
    assert lines["wt-rebased"] == "d | c | e | b | a"
    assert lines["fetch-head"] == "f"
    assert lines["log"] == "f | e | b | a"

    # the same lines as the kernel's opens give, but the worktree's HEAD file over the limit
    def lines_of(text: str, where: Path) -> list[str]:
        return [x.replace(str(where), "<run>") for x in text.splitlines() if "big-wt" not in x]

    assert lines_of(out, folder) == lines_of(kernel.stdout, kernel_folder)
    assert lines["big-reflog"] == "f"
    assert "big-wt 0" in kernel.stdout and "big-wt 0" not in out
    rows = _rows(folder)
    over = [r for r in rows if r.get("kind") == "open" and "over 65536" in str(r.get("unpinned"))]
    assert over and all(str(r["path"]).endswith("/worktrees/wt/HEAD") for r in over), over
    texts: dict[str, set[str]] = {}
    for r in rows:
        if r.get("kind") == "gitread" and r.get("what") in ("head", "pointer") and "content" in r:
            texts.setdefault(str(r.get("resolved")), set()).add(str(r["content"]))
    wt = [t for p, t in texts.items() if p.endswith("/.git/worktrees/wt/HEAD")]
    # the whole file: one line (an id, or "ref: refs/heads/topic"), the newline included
    assert wt and all(x.count("\n") == 1 and x.endswith("\n") for x in set().union(*wt)), texts
    assert any(p.endswith("/worktrees/wt/commondir") and t == {"../..\n"} for p, t in texts.items())
