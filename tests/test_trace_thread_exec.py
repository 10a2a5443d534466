"""The check after an exec reaches the new program when a thread other than the leader exec'd.

The tracer reads an exec's argv from the caller's memory before the kernel copies it (a racing
thread can change it in between), so it reads the program and command line back from ``/proc``
at the process's next reported call. After an exec by a thread other than the leader, that
thread runs under the process's pid -- and so does the old leader until the exec has killed it.
A leader that keeps making reported calls (here: opens in a loop) must not use up the check
before the exec is over: each exec must end with its "execed" row, the new program's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from test_runtime_trace import _repo

from evotree.harness import sandbox
from evotree.harness.sandbox import finish_trace, wrap
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec

#: a second thread execs cat while the main thread opens a file in a loop (C: Python's threads
#: would wait on its lock while one of them execs)
_RACE = r"""
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
static char *trial;
static void *run(void *arg) {
    (void)arg;
    usleep(2000);
    execl("/bin/cat", "cat", "/dev/null", trial, (char *)0);
    return 0;
}
int main(int argc, char **argv) {
    pthread_t t;
    trial = argc > 1 ? argv[1] : "trial";
    pthread_create(&t, 0, run, 0);
    for (;;) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd >= 0) close(fd);
    }
}
"""

TRIALS = 12


@pytest.fixture
def seccomp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "TRACER", "seccomp")
    monkeypatch.setattr(sandbox, "TRACE_OPENS", True)
    if not (sandbox.check_sandbox().ok and sandbox._seccomp_works()):
        pytest.skip("needs bubblewrap and the compiled seccomp tracer (a C compiler)")


@pytest.mark.heavy
@pytest.mark.xfail(
    strict=False,
    reason="a race seen once: on a loaded machine (the suite at load 2-4 with another suite beside "
    "it) 1 of 12 execs by a second thread had no execed row of the new program; the path found in "
    "the tracer (the old leader's call answered while it exits) is closed, but the failure was "
    "never reproduced, so the xfail stays non-strict (docs/threat-model.md, the trace's residual "
    "channels)",
)
def test_an_exec_by_a_second_thread_is_checked_in_the_new_program(
    tmp_path: Path, seccomp: None
) -> None:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None or not Path("/bin/cat").exists():
        pytest.skip("needs a C compiler and /bin/cat")
    work = _repo(tmp_path / "work")
    source = tmp_path / "race.c"
    source.write_text(_RACE)
    subprocess.run(
        [compiler, "-O2", "-pthread", "-o", str(work / "race"), str(source)],
        check=True,
        capture_output=True,
    )
    script = "; ".join(f"./race trial-{k}" for k in range(TRIALS)) + "; true"
    spec = SandboxSpec(cwd=work, read_write=(work,), trace=tmp_path / "raw.trace")
    argv = accounted(wrap(spec, ["bash", "-c", script]))
    proc = subprocess.run(
        argv, env=sandbox_env(dict(os.environ)), capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    raw = [json.loads(line) for line in (tmp_path / "raw.trace").read_text().splitlines()]
    (tmp_path / "evidence").mkdir()
    finish_trace(spec, tmp_path / "evidence")
    execed = [r for r in raw if r["kind"] == "execed" and not r.get("same_exe")]
    checked = {r["cmdline"][-1] for r in execed if (r.get("cmdline") or [""])[0] == "cat"}
    assert checked == {f"trial-{k}" for k in range(TRIALS)}, sorted(checked)
