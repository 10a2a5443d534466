"""The seccomp tracer remembers which program each thread runs between its opens (a stat of
``/proc/PID/exe`` per open was most of its work per open of the machine's git); what it
remembers must never outlive an exec.

Attacks from inside the sandbox on that memory: the machine's git (its opens exempt from open
rows) turned, in the same process, into another program that reads git storage -- by an exec
from its main thread, and by an exec from a second thread (after which the thread runs under
the process's pid). The library that does it is loaded with ``LD_PRELOAD`` (the only way to run
code in the machine's git); it execs ``cat`` of the reflog before git's own code runs. Each
read must be an open row of ``cat``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_runtime_trace import _repo

from evotree.harness import sandbox
from evotree.harness.audit.trace import git_identities
from evotree.harness.sandbox import finish_trace, wrap
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec

#: a library whose constructor, in the machine's git, execs cat of the reflog (from a second
#: thread when EXEC_FROM_THREAD is set); LD_PRELOAD is dropped first so cat does not load it
_HOOK = r"""
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static void *run(void *arg) {
    (void)arg;
    unsetenv("LD_PRELOAD");
    execl("/bin/cat", "cat", ".git/logs/HEAD", (char *)0);
    return 0;
}
__attribute__((constructor)) static void start(void) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 4 || strncmp(exe + n - 4, "/git", 4)) return;
    if (getenv("EXEC_FROM_THREAD")) {
        pthread_t t;
        pthread_create(&t, 0, run, 0);
        pthread_join(t, 0);
    } else {
        run(0);
    }
}
"""


@pytest.fixture
def seccomp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "TRACER", "seccomp")
    monkeypatch.setattr(sandbox, "TRACE_OPENS", True)
    if not (sandbox.check_sandbox().ok and sandbox._seccomp_works()):
        pytest.skip("needs bubblewrap and the compiled seccomp tracer (a C compiler)")
    if not git_identities():
        pytest.skip("no git on this machine")


@pytest.mark.heavy
@pytest.mark.parametrize("thread", [False, True], ids=["main thread", "second thread"])
def test_git_turned_into_another_program_by_an_exec_has_its_opens_recorded(
    tmp_path: Path, seccomp: None, thread: bool
) -> None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None or not Path("/bin/cat").exists():
        pytest.skip("needs a C compiler and /bin/cat")
    work = _repo(tmp_path / "work")
    hook = work / "hook.so"
    (tmp_path / "hook.c").write_text(_HOOK)
    source = tmp_path / "hook.c"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-pthread", "-o", str(hook), str(source)],
        check=True,
        capture_output=True,
    )
    # plain git first (exempt), then the git that becomes cat: a process of its own (not bash
    # exec'ing its last command), so that what is remembered of it is that it runs git
    script = (
        f"git log --oneline >/dev/null && {'EXEC_FROM_THREAD=1 ' if thread else ''}"
        f"LD_PRELOAD={hook} git status --short; true"
    )
    spec = SandboxSpec(cwd=work, read_write=(work,), trace=tmp_path / "raw.trace")
    env = sandbox_env(dict(os.environ))
    argv = accounted(wrap(spec, ["bash", "-c", script]))
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    rows = finish_trace(spec, evidence)
    assert proc.returncode == 0, proc.stderr
    assert "base" in proc.stdout, proc.stdout  # cat printed the reflog, in git's place
    opens = [r for r in rows if r["kind"] == "open"]
    reads = [r for r in opens if str(r.get("path", "")).endswith("/.git/logs/HEAD")]
    assert reads and all(str(r.get("exe", "")).endswith("/cat") for r in reads), opens
    # the plain git's reads of the same repository stay exempt
    assert not [r for r in opens if str(r.get("exe", "")).endswith("/git")], opens
