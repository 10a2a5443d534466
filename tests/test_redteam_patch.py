"""Red-team tests of the patch gate (harness/audit/protected.py, gates/patch.py): attacks a
candidate version could make to slip data, weights or reference answers past the gate, or to
change protected paths unseen. Real git repositories in temp dirs, real evotree code.

Each attack the gate catches is a regression test asserting the finding code (or the refusal);
an attack that still gets through asserts the safe behaviour under a strict xfail naming why.
"""

from __future__ import annotations

import base64
import bz2
import gzip
import json
import os
import random
import subprocess
import zlib
from pathlib import Path

import pygit2
import pytest
from conftest import git
from fixtures_ws import branch_version as _branch
from fixtures_ws import commit_files as _commit
from test_patch_gate import NPY, _codes, _floats, _paths, _policy, _ws

from evotree.core.refs import CHAMPION_REF
from evotree.core.workspace import Workspace
from evotree.gates.evaluation import protected_gate
from evotree.gates.patch import PatchRejected, check_patches_before_run
from evotree.harness.audit.protected import check_protected_paths
from evotree.harness.export import UnsafeTree, check_tree, export_tree
from evotree.harness.version_patch import version_patch

# the judge's hidden file of make_run_repo: `evotree init` moves it to the judge store
# (refs/evotree/judge), out of every checkout — but a worktree's git reads every object of the
# repository, so a candidate can still `git show refs/evotree/judge:judge/hidden.json`
HIDDEN = "judge/hidden.json"


def _hidden(wt: Path) -> str:
    """The hidden file's exact bytes, read from the candidate's worktree."""
    out = subprocess.run(
        ["git", "show", f"refs/evotree/judge:{HIDDEN}"], cwd=wt, capture_output=True, check=True
    )
    return out.stdout.decode()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """One workspace for the attacks that only add versions (none moves the champion)."""
    return _ws(tmp_path_factory.mktemp("redteam"))


def _tip(ws: Workspace, v: str) -> str:
    return str(ws.git.ref_target(f"refs/heads/evotree/{v}"))


def _rejected(ws: Workspace, v: str) -> PatchRejected:
    with pytest.raises(PatchRejected) as info:
        check_patches_before_run(ws, [v])
    assert info.value.exit_code == 40 and info.value.code == "patch_rejected"
    return info.value


def _lines(text: str, width: int) -> str:
    return "\n".join(text[i : i + width] for i in range(0, len(text), width))


# ------------------------------------------------------------------ protected paths, renamed or copied
def test_rename_of_a_protected_file_is_a_protected_change(shared: Workspace) -> None:
    v, wt = _branch(shared)
    git(wt, "mv", "evotree.toml", "settings.toml")
    git(wt, "commit", "-qm", "rename")
    found = _codes(check_protected_paths(shared, v))
    assert "evotree.toml" in _paths(found["audit.protected_path"])
    gate = protected_gate(shared, _policy(shared), v, _tip(shared, v))
    assert gate.status == "fail" and "evotree.toml" in gate.numbers["changed"]


def test_exact_copy_of_the_hidden_answers_is_refused(shared: Workspace) -> None:
    """``cp judge/hidden.json notes.txt``: the judge is not touched, but the run would train on
    the reference answers (the export leaves out judge/, not the copy)."""
    v, wt = _branch(shared)
    assert not (wt / HIDDEN).exists()  # not in the checkout, but in the object store
    _commit(wt, {"notes.txt": _hidden(wt)})
    f = _codes(version_patch(shared, v).findings)["audit.patch_data"]
    assert f.evidence["paths"][0]["copy_of"] == HIDDEN and _paths(f) == {"notes.txt"}
    assert "notes.txt" in _rejected(shared, v).message
    # a near copy (one byte more) is no longer the same blob: its strings are the judge's
    w, wt2 = _branch(shared)
    _commit(wt2, {"notes.txt": _hidden(wt2) + "\n"})
    f = _codes(version_patch(shared, w).findings)["audit.patch_data"]
    assert (
        f.evidence["paths"][0]["copy_of"] == [HIDDEN]
        and f.evidence["paths"][0]["copied_strings"] >= 4
    )


def test_answers_retyped_into_code_are_refused(shared: Workspace) -> None:
    """The held-out answers pasted into train.py as a list: not a copy of the file, the same strings."""
    v, wt = _branch(shared)
    answers = json.loads(_hidden(wt))["heldout"]
    _commit(wt, {"train.py": (wt / "train.py").read_text() + f"\nLOOKUP = {answers!r}\n"})
    f = _codes(version_patch(shared, v).findings)["audit.patch_data"]
    assert f.evidence["paths"][0]["copied_strings"] >= 4 and f.evidence["paths"][0]["copy_of"] == [
        HIDDEN
    ]
    _rejected(shared, v)
    # an ordinary mention of the split names is no copy
    ok, owt = _branch(shared)
    _commit(
        owt,
        {"train.py": (owt / "train.py").read_text() + "\n# validation and heldout splits: val-0\n"},
    )
    assert version_patch(shared, ok).findings == []


def test_plain_words_and_numbers_shared_with_the_judge_are_no_copy(tmp_path: Path) -> None:
    """Numbers and dictionary words a recipe shares with the judge's answers by chance do not count."""
    from test_runs import make_run_repo

    hidden = {
        "validation": ["1000", "0.001", "integer", "triangle"],
        "heldout": ["2048", "geometry", "1e-5"],
    }
    ws = Workspace.open(make_run_repo(tmp_path / "w", hidden=hidden))
    v, wt = _branch(ws)
    _commit(
        wt,
        {
            "train.py": (wt / "train.py").read_text()
            + "\nSTEPS, LR, BATCH, WD = 1000, 0.001, 2048, 1e-5  # integer triangle geometry prompts\n"
        },
    )
    assert version_patch(ws, v).findings == []


@pytest.mark.xfail(
    strict=True,
    reason="a transformed copy (the answers reversed, hashed or re-encoded) shares no "
    "string with the judge's file; no syntactic gate can recognise it",
)
def test_answers_reencoded_are_refused(shared: Workspace) -> None:
    v, wt = _branch(shared)
    answers = json.loads(_hidden(wt))["heldout"]
    _commit(
        wt,
        {
            "train.py": (wt / "train.py").read_text()
            + f"\nLOOKUP = {[a[::-1] for a in answers]!r}\n"
        },
    )
    _rejected(shared, v)


# ------------------------------------------------------------------ look-alike protected paths
@pytest.mark.parametrize(
    "path",
    [
        "Judge/eval.py",  # case (a case-insensitive file system)
        "judge./eval.py",  # trailing dot (Windows drops it)
        "judge /eval.py",  # trailing space
        "ju\u200bdge/eval.py",  # zero-width space (HFS+ ignores it)
        "\uff4a\uff55\uff44\uff47\uff45/eval.py",  # full-width letters (NFKC: judge)
        "EVOTREE.TOML.",
    ],
)
def test_lookalike_spellings_of_protected_paths_are_protected(shared: Workspace, path: str) -> None:
    v, wt = _branch(shared)
    _commit(wt, {path: "print(1.0)\n"})
    assert _paths(_codes(check_protected_paths(shared, v))["audit.protected_path"]) == {path}


def test_nfd_spelling_of_a_non_ascii_protected_path(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 'paths = ["evotree.toml", "judge/", "gates/", "donn\u00e9es/"]')
    v, wt = _branch(ws)
    _commit(wt, {"donne\u0301es/answers.txt": "x\n"})  # the NFD form macOS writes
    assert _paths(_codes(check_protected_paths(ws, v))["audit.protected_path"]) == {
        "donne\u0301es/answers.txt"
    }


@pytest.mark.parametrize(
    "name", ["answers.csv\u200b", "answers.\uff43\uff53\uff56", "answers.CSV. ", "warm.np\u00ady"]
)
def test_lookalike_data_suffixes_are_data(shared: Workspace, name: str) -> None:
    v, wt = _branch(shared)
    _commit(wt, {name: "q,a\nx,y\n"})
    assert _paths(_codes(version_patch(shared, v).findings)["audit.patch_data"]) == {name}


# ------------------------------------------------------------------ links, gitlinks, raw trees
def test_symlinks_to_a_folder_holding_the_judge(shared: Workspace) -> None:
    v, wt = _branch(shared)
    os.symlink(".", wt / "here")  # here/judge/hidden.json
    os.symlink("judge", wt / "j")  # the judge folder itself
    os.symlink("sub/../judge", wt / "k")  # normalised
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "links")
    f = _codes(version_patch(shared, v).findings)["audit.patch_symlink"]
    assert _paths(f) == {"here", "j", "k"}
    _rejected(shared, v)
    with pytest.raises(UnsafeTree):  # and the export never writes a link into a run
        check_tree(shared.git.repo, _tip(shared, v))


def test_a_gitlink_carries_nothing_into_a_run(shared: Workspace) -> None:
    """A submodule entry holds 20 bytes of the candidate's choosing: the export refuses it."""
    v, wt = _branch(shared)
    git(wt, "update-index", "--add", "--cacheinfo", f"160000,{os.urandom(20).hex()},vendor/blob")
    git(wt, "commit", "-qm", "gitlink")
    assert "audit.patch_submodule" in _codes(version_patch(shared, v).findings)
    with pytest.raises(UnsafeTree, match="submodule"):
        check_tree(shared.git.repo, _tip(shared, v))


@pytest.mark.parametrize("entries", ["dotdot", "slash", "duplicate", "absolute"])
def test_raw_trees_git_porcelain_refuses_never_reach_a_run(shared: Workspace, entries: str) -> None:
    repo = shared.git.repo
    v, wt = _branch(shared)
    base = repo[_tip(shared, v)]
    weights = repo.create_blob(NPY)
    rows = [(e.filemode, e.name.encode(), e.id) for e in base.tree]
    extra = {
        "dotdot": (0o100644, b"..", weights),
        "slash": (0o100644, b"judge/eval.py", weights),
        "duplicate": (0o100644, b"train.py", weights),
        "absolute": (0o100644, b"/etc", weights),
    }[entries]
    rows.append(extra)
    rows.sort(key=lambda r: r[1])
    body = b"".join(
        f"{mode:o}".encode() + b" " + name + b"\0" + oid.raw for mode, name, oid in rows
    )
    tree = repo.odb.write(pygit2.enums.ObjectType.TREE, body)
    sig = pygit2.Signature("x", "x@example.com")
    repo.create_commit(f"refs/heads/evotree/{v}", sig, sig, "raw", tree, [base.id])
    with pytest.raises(UnsafeTree):
        check_tree(repo, _tip(shared, v))


# ------------------------------------------------------------------ what the run sees vs what the gate reads
def test_gitattributes_filters_change_nothing_the_run_sees(
    shared: Workspace, tmp_path: Path
) -> None:
    """export-ignore, smudge/clean filters, eol conversion: the gate reads blobs and the export
    writes blobs (pygit2, no filters), so both see the same bytes."""
    v, wt = _branch(shared)
    _commit(
        wt,
        {
            ".gitattributes": "*.npy export-ignore\n*.py filter=evil eol=crlf\n*.txt -text\n",
            "warm.npy": NPY,
        },
    )
    assert _paths(_codes(version_patch(shared, v).findings)["audit.patch_data"]) == {"warm.npy"}
    w, wt2 = _branch(shared)
    _commit(wt2, {".gitattributes": "*.py filter=evil eol=crlf\n", "helper.py": "x = 1\ny = 2\n"})
    export_tree(shared.git.repo, _tip(shared, w), tmp_path / "out")
    assert (tmp_path / "out" / "helper.py").read_bytes() == b"x = 1\ny = 2\n"


def test_lfs_pointer_is_a_pointer_in_the_run(shared: Workspace, tmp_path: Path) -> None:
    v, wt = _branch(shared)
    pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{os.urandom(32).hex()}\nsize 123456789\n"
    _commit(
        wt, {".gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n", "model.bin": pointer}
    )
    assert _paths(_codes(version_patch(shared, v).findings)["audit.patch_weights"]) == {"model.bin"}
    w, wt2 = _branch(shared)
    _commit(wt2, {".gitattributes": "*.dat filter=lfs -text\n", "w.dat": pointer})
    export_tree(shared.git.repo, _tip(shared, w), tmp_path / "out")
    assert (tmp_path / "out" / "w.dat").read_text() == pointer  # never the large file


def test_data_in_commit_messages_and_notes_is_not_in_the_run(
    shared: Workspace, tmp_path: Path
) -> None:
    v, wt = _branch(shared)
    blob = base64.b64encode(os.urandom(30000)).decode()
    (wt / "lib.py").write_text("x = 1\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", blob)
    git(wt, "notes", "add", "-m", blob, "HEAD")
    patch = version_patch(shared, v)
    assert patch.findings == [] and {f["path"] for f in patch.files} == {"lib.py"}
    export_tree(shared.git.repo, _tip(shared, v), tmp_path / "out")
    text = b"".join(p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert blob[:64].encode() not in text and not (tmp_path / "out" / ".git").exists()


def test_a_replace_ref_does_not_hide_weights_from_the_gate(shared: Workspace) -> None:
    """``git replace`` (a ref any worktree can write) makes git's porcelain show a clean commit in
    place of the branch's tip; the gate and the export read objects with libgit2, which does not
    follow replace refs, so they see the weights the run would get."""
    v, wt = _branch(shared)
    _commit(wt, {"lib.py": "x = 1\n"}, "clean")
    clean = git(wt, "rev-parse", "HEAD")
    _commit(wt, {"warm.npy": NPY}, "weights")
    git(wt, "replace", "HEAD", clean)
    try:
        assert "warm.npy" not in git(
            wt, "ls-tree", "-r", "--name-only", f"evotree/{v}"
        )  # porcelain fooled
        assert "warm.npy" in _paths(_codes(version_patch(shared, v).findings)["audit.patch_data"])
        _rejected(shared, v)
        assert "warm.npy" in {e.path for e in check_tree(shared.git.repo, _tip(shared, v))}
    finally:
        git(wt, "replace", "-d", _tip(shared, v))


# ------------------------------------------------------------------ encodings
def _payload(seed: int = 0, n: int = 20000) -> bytes:
    return random.Random(seed).randbytes(n)


def _letters(data: bytes) -> str:
    abc = "abcdefghijklmnop"
    return "".join(abc[b >> 4] + abc[b & 15] for b in data)


ENCODED = {
    "gzip_as.py": (gzip.compress(_payload(1)), "audit.patch_binary"),
    "zlib_as.txt": (zlib.compress(_payload(2)), "audit.patch_binary"),
    "bz2_as.json": (bz2.compress(_payload(3)), "audit.patch_binary"),
    "b64_32cols.py": (
        'B = """\n' + _lines(base64.b64encode(_payload(4)).decode(), 32) + '\n"""\n',
        "audit.patch_payload",
    ),
    "b85.py": (
        'B = """\n' + _lines(base64.b85encode(_payload(5)).decode(), 76) + '\n"""\n',
        "audit.patch_payload",
    ),
    "a85.py": (
        'B = """\n' + _lines(base64.a85encode(_payload(6)).decode(), 76) + '\n"""\n',
        "audit.patch_payload",
    ),
    "letters_hex.py": (
        'B = """\n' + _lines(_letters(_payload(7)), 76) + '\n"""\n',
        "audit.patch_payload",
    ),
    "hex_spaced.py": (
        'H = "' + " ".join(_payload(8, 4000).hex()[i : i + 8] for i in range(0, 8000, 8)) + '"\n',
        "audit.patch_payload",
    ),
    "weights_bytes.py": ("W = " + repr(_payload(9, 5000)) + "\n", "audit.patch_payload"),
    "unicode_escapes.py": (
        'S = "' + "".join(f"\\u{0x4E00 + b:04x}" for b in _payload(10, 3000)) + '"\n',
        "audit.patch_payload",
    ),
}


@pytest.mark.parametrize("name", sorted(ENCODED))
def test_payloads_however_encoded(shared: Workspace, name: str) -> None:
    content, code = ENCODED[name]
    v, wt = _branch(shared)
    _commit(wt, {name: content})
    found = _codes(version_patch(shared, v).findings)
    assert set(found) == {code} and _paths(found[code]) == {name}, found
    _rejected(shared, v)


@pytest.mark.xfail(
    strict=True,
    reason="one byte a CJK character (3 bytes of UTF-8) compresses like CJK prose "
    "(ratio 0.47 < 0.5): 20 KB pass, bounded only by max_patch_info",
)
def test_bytes_as_cjk_characters_are_refused(shared: Workspace) -> None:
    v, wt = _branch(shared)
    _commit(
        wt,
        {
            "cjk.py": 'S = """\n'
            + _lines("".join(chr(0x4E00 + b) for b in _payload(11, 20000)), 60)
            + '\n"""\n'
        },
    )
    _rejected(shared, v)


WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def _as_words(data: bytes) -> str:
    digits = "".join(f"{b:03d}" for b in data)
    return _lines(" ".join(WORDS[int(c)] for c in digits), 70)


@pytest.mark.xfail(
    strict=True,
    reason="numbers written as words (or any low-density code book) compress like "
    "prose; under max_patch_info (256 KiB compressed) a few KB of weights or "
    "answers pass",
)
def test_a_small_payload_as_number_words_is_refused(shared: Workspace) -> None:
    v, wt = _branch(shared)
    _commit(wt, {"notes.py": 'DOC = """\n' + _as_words(_payload(12, 4000)) + '\n"""\n'})
    _rejected(shared, v)


@pytest.mark.heavy
def test_a_large_payload_as_number_words_is_refused_as_a_whole(shared: Workspace) -> None:
    """However it is encoded, the information a patch carries is bounded: its added text, compressed."""
    v, wt = _branch(shared)
    files = {
        f"docs/part{i}.py": 'DOC = """\n' + _as_words(_payload(20 + i, 60000)) + '\n"""\n'
        for i in range(6)
    }
    _commit(wt, files)
    f = _codes(version_patch(shared, v).findings)["audit.patch_payload"]
    item = f.evidence["paths"][0]
    assert item["compressed"] > item["limit"] == 262_144
    _rejected(shared, v)


def test_ordinary_code_and_prose_pass_the_density_rules(shared: Workspace) -> None:
    root = Path(__file__).resolve().parents[1]
    v, wt = _branch(shared)
    _commit(
        wt,
        {
            "lib/protected_copy.py": (root / "harness" / "audit" / "protected.py").read_text(),
            "docs/gates.md": (root / "docs" / "gates.md").read_text(),
            "lib/conftest_copy.py": (root / "tests" / "conftest.py").read_text(),
        },
    )
    assert version_patch(shared, v).findings == []


def test_rows_spread_over_several_shapes_are_refused(shared: Workspace) -> None:
    """990 question/answer rows with no digits, in five literal shapes of 198 rows each: every
    shape is under max_row_lines (200), all of them together are not."""
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()

    def name(i: int) -> str:
        return words[i % 13] + words[(i // 13) % 13] + words[(i // 169) % 13]

    forms = [
        '"{a}", "{b}",',
        '("{a}", "{b}"),',
        '["{a}", "{b}"],',
        '{{"{a}": "{b}"}},',
        '"{a}" : "{b}";',
    ]
    rows = "\n".join(forms[i % 5].format(a=name(i), b=name(i * 7 + 3)) for i in range(990))
    v, wt = _branch(shared)
    _commit(wt, {"qa.py": "QA = [\n" + rows + "\n]\n"})
    item = _codes(version_patch(shared, v).findings)["audit.patch_payload"].evidence["paths"][0]
    assert item["rows"] == 990 and item["shapes"] == 5 and item["limit"] == 400
    _rejected(shared, v)


# ------------------------------------------------------------------ data spread thin
def test_data_in_file_names_is_refused(shared: Workspace) -> None:
    v, wt = _branch(shared)
    encoded = base64.b32encode(_payload(13, 6000)).decode().rstrip("=").lower()
    files = {f"cache/{encoded[i : i + 96]}.py": "" for i in range(0, len(encoded), 96)}
    _commit(wt, files)
    f = _codes(version_patch(shared, v).findings)["audit.patch_payload"]
    assert f.evidence["paths"][0]["path"] == "file names"
    _rejected(shared, v)


def test_dense_text_split_into_small_files_is_refused(shared: Workspace) -> None:
    """40 files of 3 KB of base85 each: every file is under the size the density rule needs."""
    v, wt = _branch(shared)
    text = base64.b85encode(_payload(14, 96000)).decode()
    _commit(
        wt, {f"k/part{i:02d}.py": f'P = "{text[i * 3000 : (i + 1) * 3000]}"\n' for i in range(40)}
    )
    item = _codes(version_patch(shared, v).findings)["audit.patch_payload"].evidence["paths"][0]
    assert item["path"] == "40 small files" and item["compressed"] >= 0.5 * item["bytes"]
    _rejected(shared, v)


def test_data_split_over_many_commits_is_measured_as_one_patch(shared: Workspace) -> None:
    v, wt = _branch(shared)
    for i in range(5):  # 900 numbers a commit, 100 a file: each under every per-file limit
        _commit(
            wt,
            {f"w/part{i}_{k}.json": json.dumps(_floats(100, 40 + i * 10 + k)) for k in range(9)},
            f"part {i}",
        )
    f = _codes(version_patch(shared, v).findings)["audit.patch_payload"]
    assert (
        f.evidence["paths"][0]["numbers"] == 4500 and f.evidence["paths"][0]["path"] == "45 files"
    )


def test_a_merge_of_two_clean_halves_is_refused(shared: Workspace) -> None:
    a, awt = _branch(shared)
    _commit(awt, {f"a/w{i}.json": json.dumps([_floats(100, 60 + i)]) for i in range(25)})
    b, bwt = _branch(shared)
    _commit(bwt, {f"b/w{i}.json": json.dumps([_floats(100, 90 + i)]) for i in range(25)})
    assert version_patch(shared, a).findings == [] and version_patch(shared, b).findings == []
    git(bwt, "merge", "-q", "--no-edit", f"evotree/{a}")
    f = _codes(version_patch(shared, b).findings)["audit.patch_payload"]
    assert f.evidence["paths"][0]["numbers"] == 5000
    _rejected(shared, b)


# ------------------------------------------------------------------ allowlists
def test_editable_keys_quoted_dotted_key_is_not_the_nested_key(tmp_path: Path) -> None:
    """``"train.steps" = 3`` at the top and ``[train]`` without ``steps`` flatten to the same
    dotted keys as the base's ``[train] steps = 3``: the run's ``cfg["train"]["steps"]`` is gone."""
    from test_runs import make_run_repo

    repo = make_run_repo(
        tmp_path / "w",
        budget='[protect]\neditable_keys = ["recipe.toml:skill"]\n',
        recipe="skill = 0.5\n[train]\nsteps = 3\nlr = 1\n",
    )
    ws = Workspace.open(repo)
    v, wt = _branch(ws)
    _commit(wt, {"recipe.toml": 'skill = 0.9\n"train.steps" = 3\n[train]\nlr = 1\n'})
    f = _codes(version_patch(ws, v).findings)["audit.patch_config_key"]
    assert "train.steps" in f.evidence["paths"][0]["keys"]
    _rejected(ws, v)


def test_patch_allow_is_an_allowlist_matched_exactly(tmp_path: Path) -> None:
    """``patch_allow = ["fixtures/"]`` exempts that folder, not ``Fixtures/`` or ``fixtures./``
    (the protected paths' forgiving matcher is for a denylist, not for an exemption)."""
    ws = _ws(tmp_path, 'patch_allow = ["fixtures/"]')
    ok, owt = _branch(ws)
    _commit(owt, {"fixtures/tiny.csv": "a,b\n1,2\n"})
    assert version_patch(ws, ok).findings == []
    for path in (
        "Fixtures/warm.npy",
        "FIXTURES/warm.npy",
        "fixtures./warm.npy",
        "sub/fixtures/warm.npy",
    ):
        v, wt = _branch(ws)
        _commit(wt, {path: NPY})
        assert _paths(_codes(version_patch(ws, v).findings)["audit.patch_data"]) == {path}, path


def test_base_champion_measures_a_child_of_an_unpromoted_parent(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 'base = "champion"')
    parent, pwt = _branch(ws)
    _commit(pwt, {"warm.npy": NPY})
    child, cwt = _branch(ws, parent=parent)
    _commit(cwt, {"recipe.toml": "skill = 0.7\nsteps = 3\n"})
    patch = version_patch(ws, child)
    assert patch.base == "champion" and [f.code for f in patch.blocking] == ["audit.patch_data"]
    _rejected(ws, child)


# ------------------------------------------------------------------ the policy is the champion's
def test_the_candidates_own_protect_section_changes_nothing(shared: Workspace) -> None:
    v, wt = _branch(shared)
    text = (wt / "evotree.toml").read_text()
    _commit(wt, {"warm.npy": NPY})
    own = _tip(shared, v)
    relaxed = f'\n[protect]\nbase = "{own}"\npatch_allow = ["**"]\nmax_file_numbers = 999999\n'
    _commit(wt, {"evotree.toml": text + relaxed})
    patch = version_patch(shared, v)
    assert [f.code for f in patch.blocking] == ["audit.patch_data"] and patch.base == "root (v0)"
    assert "evotree.toml" in patch.changed_protected
    _rejected(shared, v)


def test_moving_the_champion_ref_from_the_worktree_does_not_relax_the_gate(tmp_path: Path) -> None:
    """Refs are shared by every worktree: the candidate points refs/evotree/champion at its own
    commit, whose [protect] allows everything and whose tree holds its weights."""
    ws = _ws(tmp_path)
    v, wt = _branch(ws)
    text = (wt / "evotree.toml").read_text()
    _commit(
        wt,
        {
            "warm.npy": NPY,
            "evotree.toml": text + '\n[protect]\npatch_allow = ["**"]\nbase = "champion"\n',
        },
    )
    git(wt, "update-ref", CHAMPION_REF, "HEAD")  # from the candidate's own worktree
    assert str(ws.git.ref_target(CHAMPION_REF)) == _tip(ws, v)
    err = _rejected(Workspace.open(ws.root), v)
    assert (
        err.details["base"] == "root (v0)"
        and err.details["findings"][0]["code"] == "audit.patch_data"
    )


def _forge_v0_base(wt: Path, commit: str) -> None:
    """From the candidate's worktree, with plain git: a ledger commit whose v0 record names
    ``commit`` as the root's first commit (the pristine base)."""
    head = git(wt, "rev-parse", "refs/evotree/ledger")
    path = next(
        r.split("\t")[1]
        for r in git(wt, "ls-tree", "-r", head).splitlines()
        if r.endswith("/v0.json")
    )
    record = json.loads(git(wt, "show", f"{head}:{path}"))
    record["base_commit"] = commit
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"],
        cwd=wt,
        input=json.dumps(record),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    env = {**os.environ, "GIT_INDEX_FILE": str(wt.parent / f"forge-{wt.name}.idx")}
    for args in (["read-tree", head], ["update-index", "--cacheinfo", f"100644,{blob},{path}"]):
        subprocess.run(["git", *args], cwd=wt, env=env, check=True)
    tree = subprocess.run(
        ["git", "write-tree"], cwd=wt, env=env, capture_output=True, text=True
    ).stdout.strip()
    message = git(wt, "log", "-1", "--format=%B", head)
    forged = subprocess.run(
        ["git", "commit-tree", tree, "-p", head, "-m", message],
        cwd=wt,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(wt, "update-ref", "refs/evotree/ledger", forged)


def test_a_forged_ledger_cannot_move_the_pristine_base(tmp_path: Path) -> None:
    """refs/evotree/ledger is a ref like any other: the candidate appends a ledger commit naming
    its own tip (weights included) as v0's first commit, so that its patch would be empty."""
    from evotree.gates.errors import TamperingFound
    from evotree.harness.audit.errors import AuditInputError

    ws = _ws(tmp_path)
    v, wt = _branch(ws)
    _commit(wt, {"warm.npy": NPY})
    anchor = ws.resolve("v0").base_commit
    _forge_v0_base(wt, _tip(ws, v))
    ws = Workspace.open(ws.root)
    assert ws.resolve("v0").base_commit == _tip(ws, v)  # the forgery took
    with pytest.raises(AuditInputError, match="not in the champion's history"):
        version_patch(ws, v)  # the audit
    gate = protected_gate(ws, _policy(ws), v, _tip(ws, v))
    assert gate.status == "unavailable" and not gate.passed  # the gate
    with pytest.raises(AuditInputError):
        check_patches_before_run(ws, [v])  # before a run
    # an older commit of the champion's own history (an ancestor, not the signed anchor)
    _forge_v0_base(wt, git(wt, "rev-parse", f"{anchor}~1"))
    with pytest.raises(TamperingFound, match="not the anchor of the signed chain"):
        check_patches_before_run(Workspace.open(ws.root), [v])


# ------------------------------------------------------------------ time of check, time of use
@pytest.mark.heavy
def test_a_commit_added_after_the_check_is_never_run(tmp_path: Path) -> None:
    """The branch moves right after the patch check (inside the authorizer, before the
    reservation's compare-and-swap): the run trains the commit that was checked, not the new one."""
    from evotree.gates.runs import authorize_runs
    from evotree.harness.execute import run_versions

    ws = _ws(tmp_path)
    v, wt = _branch(ws)
    _commit(wt, {"recipe.toml": "skill = 0.8\nsteps = 3\n"})
    checked = _tip(ws, v)

    def racing(ws_: Workspace, requests: dict[str, int]):  # noqa: ANN202 - the authorizer's recheck
        recheck = authorize_runs(ws_, requests)
        _commit(wt, {"warm.npy": NPY}, "weights after the check")
        return recheck

    (record,) = run_versions(ws, [v], authorize=racing)
    assert record.commit == checked != _tip(ws, v)
    started = [e.event for e in ws.ledger.entries(version=v) if e.event.kind == "run.started"]
    assert started[0].data["patch"]["sha256"] == version_patch(ws, v, commit=checked).sha256
    # and the next request refuses the new tip
    _rejected(Workspace.open(ws.root), v)


def test_a_branch_cleaned_just_before_the_check_is_refused(tmp_path: Path) -> None:
    """The other order: the plan reads the tip with the weights, the candidate cleans the branch
    just before the check. The check passes the clean tip, the reservation's compare-and-swap
    sees that the planned commit is not the checked one, and nothing is reserved."""
    from evotree.gates.runs import authorize_runs
    from evotree.harness.planning import plan_runs

    ws = _ws(tmp_path)
    v, wt = _branch(ws)
    _commit(wt, {"warm.npy": NPY}, "weights")

    def racing(ws_: Workspace, requests: dict[str, int]):  # noqa: ANN202 - the authorizer's recheck
        _commit(wt, {"warm.npy": None}, "clean just in time")
        return authorize_runs(ws_, requests)

    before = [e.event.kind for e in ws.ledger.entries()]
    with pytest.raises(PatchRejected, match="moved while its runs were being planned"):
        plan_runs(ws, [v], authorize=racing, reserve=True)
    assert [e.event.kind for e in Workspace.open(ws.root).ledger.entries()] == before
