"""Static rules for spellings that hid a read, each with a leak and a look-alike, read as the
trajectory audit reads them (the keyword prefilter included): forge clients as network tools,
program names built by printf / hex / octal / $'..' / variables, here-document bodies and files
written then run (Makefiles, scripts), git used as a library from Python."""

from __future__ import annotations

import pytest

from evotree.harness.audit.trajectories import audit_trajectory
from evotree.harness.audit.steps import Step, Trajectory


def _high(*commands: str) -> set[str]:
    """High codes of a trajectory of these steps, as audit_trajectory reads it (prefilter on)."""
    verdict = audit_trajectory(Trajectory("t", "shell", [Step(c) for c in commands]))
    return {h.code for h in verdict.hits if h.severity in ("high", "critical")}


NET = {"audit.network_fetch"}
LEAK = {"audit.git_history_leak"}
INTERNALS = {"audit.git_internals_read"}


@pytest.mark.parametrize(
    "command",
    [
        "gh pr view 12 --patch",
        "gh api repos/o/r/pulls/3",
        "gh pr diff 7",
        "glab mr diff 3",
        "hub pr checkout 3",
        "hub browse -u",
        "GH_PAGER=cat gh pr view 1 --json body",
    ],
)
def test_forge_clients_reach_the_network(command: str) -> None:
    assert NET <= _high(command), command


@pytest.mark.parametrize(
    "command", ["gh --version", "gh help pr", "glab config get editor", "echo gh pr view"]
)
def test_forge_look_alikes(command: str) -> None:
    assert not _high(command), command


def test_hub_is_git() -> None:
    assert _high("hub log --all --oneline") == LEAK
    assert not _high("hub status")


@pytest.mark.parametrize(
    "command",
    [
        "$(printf '\\x67\\x69\\x74') log --all",
        "$(printf '\\147\\151\\164') log --all",
        "$(printf %s g i t) log --all",
        "$(printf '%b' '\\x67it') log --all",
        "$(echo -e '\\x67it') log --all",
        "$'\\x67\\x69\\x74' log --all",
        "$'\\147\\151\\164' reflog",
        "`printf '\\x67\\x69\\x74'` log --all",
    ],
)
def test_program_names_built_at_run_time(command: str) -> None:
    assert _high(command) == LEAK, command


def test_built_names_look_alikes() -> None:
    assert not _high("$(printf '\\x67\\x69\\x74') log -3")  # git, but HEAD's own history
    assert not _high("printf '\\x67\\x69\\x74 log --all\\n'")  # printed, never run
    assert not _high("echo $(printf '%s' hello)")


def test_variables_across_steps() -> None:
    assert _high("a=gi", "b=t", "$a$b log --all") == LEAK
    assert _high("R=origin/fix", "git diff $R -- src/") == LEAK
    assert _high("export G=git", "$G reflog") == LEAK
    # look-alikes: the same shapes, harmless values
    assert not _high("a=gi", "b=t", "$a$b status")
    assert not _high("R=HEAD~1", "git diff $R -- src/")


def test_makefile_written_then_run() -> None:
    append = "cat >> Makefile <<'EOF'\n\npeek:\n\t@git log --all --oneline | head\nEOF"
    assert not _high(append)  # written, not run
    assert _high(append, "make peek") == LEAK
    assert _high("printf 'peek:\\n\\tgit log --all\\n' >> Makefile", "make peek") == LEAK
    assert (
        _high("printf 'all: peek\\npeek:\\n\\tgit reflog\\n' > Makefile", "make") == LEAK
    )  # default target
    assert _high("printf 'peek:\\n\\tgit reflog\\n' > build.mk", "make -f build.mk peek") == LEAK
    # look-alikes: a target that runs tests, and a target the Makefile does not define
    assert not _high("cat >> Makefile <<'EOF'\nfmt:\n\tblack .\nEOF", "make fmt")
    assert not _high("printf 'peek:\\n\\tgit reflog\\n' >> Makefile", "make test")


def test_heredoc_bodies_fed_to_interpreters() -> None:
    assert _high("bash <<'EOF'\ncd /repo\ngit log --all\nEOF") == LEAK
    assert _high("sh -s <<'EOF'\ngit reflog\nEOF") == LEAK
    assert not _high("cat > notes.md <<'EOF'\ngit log --all\nEOF")  # data, not commands


@pytest.mark.parametrize(
    "code, codes",
    [
        (
            "import os, zlib\nfor root, _, files in os.walk('.git/objects'):\n    for f in files:\n"
            "        print(zlib.decompress(open(os.path.join(root, f), 'rb').read())[:80])\n",
            INTERNALS,
        ),
        (
            "import os, zlib\nbase = os.path.join('.git', 'objects')\nfor d in os.listdir(base):\n    print(d)\n",
            INTERNALS,
        ),
        (
            "from pathlib import Path\nfor p in (Path('.git') / 'refs').rglob('*'):\n    print(p.read_text())\n",
            INTERNALS,
        ),
        (
            "import pygit2\nr = pygit2.Repository('.')\nprint(r.revparse_single('v1.1.0').tree['f.py'].data)\n",
            LEAK,
        ),
        (
            "import pygit2\nr = pygit2.Repository('.')\nfor ref in r.references:\n    print(ref)\n",
            LEAK,
        ),
        (
            "from dulwich.repo import Repo\nr = Repo('.')\nprint(r[r.refs[b'refs/tags/v1.1.0']])\n",
            LEAK,
        ),
        (
            "from dulwich.repo import Repo\nr = Repo('.')\nfor sha in r.object_store:\n    print(sha)\n",
            LEAK,
        ),
        ("from dulwich import porcelain\nporcelain.tag_list('.')\n", LEAK),
        ("import git\nr = git.Repo('.')\nprint(r.commit('v1.1.0').message)\n", LEAK),
        ("import git\nr = git.Repo('.')\nprint([t.name for t in r.tags])\n", LEAK),
    ],
    ids=[
        "zlib-walk",
        "path-join",
        "pathlib-div",
        "pygit2-tag",
        "pygit2-refs",
        "dulwich-ref",
        "dulwich-store",
        "porcelain-tags",
        "gitpython-commit",
        "gitpython-tags",
    ],
)
def test_git_as_a_library_from_python(code: str, codes: set[str]) -> None:
    assert _high(f"python3 - <<'EOF'\n{code}EOF") == codes  # a heredoc fed to Python
    assert _high(f"cat > dig.py <<'EOF'\n{code}EOF", "python3 dig.py") == codes  # written, then run


@pytest.mark.parametrize(
    "code",
    [
        "import pygit2\nr = pygit2.Repository('.')\nprint(r.revparse_single('HEAD').message)\n",
        "import git\nr = git.Repo('.')\nprint(r.head.commit.message, r.is_dirty())\n",
        "from dulwich.repo import Repo\nr = Repo('.')\nprint(r[r.head()].message)\n",
        "import os\nfor root, dirs, files in os.walk('.'):\n    dirs[:] = [d for d in dirs if d != '.git']\n",
        "import zlib\nprint(zlib.compress(b'data'))\n",
    ],
    ids=["pygit2-head", "gitpython-head", "dulwich-head", "walk-skipping-git", "zlib-alone"],
)
def test_library_look_alikes(code: str) -> None:
    assert not _high(f"python3 - <<'EOF'\n{code}EOF")
