"""A read of a hidden file the provenance index did not read whole is never cleared by what it
printed (issue 30, session 19; found by the lead while reading the T7 fix): a binary file over
the index's 4 MiB, a tar whose first member passes the member cap, the 201st file of a hidden
folder. With the task repository such reads (``strings``, ``tail -c``, ``grep -a``, ``tar -xO``,
``head``) used to be judged against an index that could not hold the idea in them, and passed.
The same reads of a file the index covers are still judged by what they print. Real git, real
files, the real audit (recorded outputs and a history).
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest

from conftest import git
from evotree.harness.audit.future_content import covered_hidden
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

IDEA = "    return round(x * 2.125 + 7, 3)  # the idea from the night shift"
HIDDEN = ["shelf"]


def _tar(members: list[tuple[str, bytes]], mode: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture(scope="module")
def shelf(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A task repository at its base with a hidden shelf: the idea past a 5 MB run of NULs in
    a binary file, in a gzip'd tar behind a 5 MB first member, in the 201st file of a folder;
    and beside them a small tar holding a copy of the base's module (covered, no idea)."""
    root = tmp_path_factory.mktemp("uncovered") / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "a@example.com")
    git(root, "config", "user.name", "a")
    (root / "m.py").write_text("def f(x):\n    return x * 2\n")
    git(root, "add", "m.py")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")
    idea = f"def f(x):\n{IDEA}\n".encode()
    shelf = root / "shelf"
    (shelf / "many").mkdir(parents=True)
    (shelf / "big.bin").write_bytes(b"\0" * 5_000_000 + b"\0" + idea + b"\0")
    (shelf / "idea.tgz").write_bytes(
        _tar([("big.bin", b"\0" * 5_000_000), ("idea.py", idea)], "w:gz")
    )
    (shelf / "cover").mkdir()
    (shelf / "cover/note.tar").write_bytes(
        _tar([("note.txt", b"def f(x):\n    return x * 2\n")], "w")
    )
    for k in range(200):
        (shelf / "many" / f"a{k:03d}.txt").write_text(f"tally {k}\n")
    (shelf / "many" / "zz.py").write_text(f"def f(x):\n{IDEA}\n")
    return root, base


def _flagged(shelf: tuple[Path, str], command: str, recorded: bool) -> bool:
    root, base = shelf
    out = None
    if recorded:
        out = subprocess.run(["bash", "-c", command], cwd=root, capture_output=True).stdout
        out = out.decode("utf-8", "replace")
        assert "night shift" in out or "return x * 2" in out  # it printed what it read
    traj = Trajectory("t", "shell", [Step(command, out)])
    audit = audit_trajectories([traj], hidden_paths=HIDDEN, repo=root, base=base)
    return bool(audit.verdicts[0].flagged)


def test_what_the_index_covers(shelf: tuple[Path, str]) -> None:
    root, _ = shelf
    assert not covered_hidden(root, HIDDEN, root / "shelf/big.bin")
    assert not covered_hidden(root, HIDDEN, root / "shelf/idea.tgz")
    assert not covered_hidden(root, HIDDEN, root / "shelf/many/zz.py")
    assert covered_hidden(root, HIDDEN, root / "shelf/cover/note.tar")
    assert covered_hidden(root, HIDDEN, root / "shelf/many/a000.txt")


@pytest.mark.parametrize("recorded", [True, False], ids=["recorded", "history"])
@pytest.mark.parametrize(
    "command",
    [
        "strings shelf/big.bin",
        "strings -n 20 shelf/big.bin",
        "tail -c 200 shelf/big.bin",
        "grep -a night shelf/big.bin",
        "grep -a night shelf/*.bin",
        "tar -xzOf shelf/idea.tgz idea.py",
        "tar -xzOf shelf/idea.tgz",
        "zcat shelf/idea.tgz | tar -xO idea.py",
        "head -n 3 shelf/many/zz.py",
        "cat shelf/many/zz.py",
    ],
)
def test_a_read_of_a_file_the_index_did_not_cover_stays_high(
    shelf: tuple[Path, str], command: str, recorded: bool
) -> None:
    assert _flagged(shelf, command, recorded)


@pytest.mark.parametrize("recorded", [True, False], ids=["recorded", "history"])
def test_a_covered_archive_is_still_judged_by_what_it_prints(
    shelf: tuple[Path, str], recorded: bool
) -> None:
    assert not _flagged(shelf, "tar -xOf shelf/cover/note.tar note.txt", recorded)
