"""What a trajectory's commands defined so far (:class:`ShellContext`: shell variables, aliases,
git aliases, files written, state later steps depend on), and how a word is read against it:
variables expanded, a written file found by the path a later command runs it by."""

from __future__ import annotations

import re

from evotree.harness.audit.lexer import _basename

__all__ = ["LISTED_REFS", "ShellContext"]


class ShellContext(list):  # type: ignore[type-arg]
    """The simple commands found so far, and what earlier commands defined: shell variables
    (``G=git``), aliases (``alias gl='git log --all'``), git aliases (``git config alias.h
    'log --all'``) and files written from the command line or by editor tools (``cat > s.sh
    <<EOF``, ``echo ... > s.sh``, ``apply_patch``, ``str_replace_editor create``), so ``$G log
    --all``, ``gl``, ``git h`` and ``bash s.sh`` / ``python s.py`` are seen for what they run.
    ``state`` holds what the trajectory did that later steps depend on (its own stashes, the
    file an editor has open). One context may span a trajectory's steps."""

    def __init__(self) -> None:
        super().__init__()
        self.vars: dict[str, str] = {}
        self.aliases: dict[str, str] = {}
        self.scripts: dict[str, str] = {}
        self.git_aliases: dict[str, str] = {}
        self.state: dict[str, object] = {}

    def share(self, other: ShellContext) -> None:
        """Read and write ``other``'s definitions (not its commands)."""
        self.vars, self.aliases, self.scripts = other.vars, other.aliases, other.scripts
        self.git_aliases, self.state = other.git_aliases, other.state

    def exported(self) -> dict[str, str]:
        """The loader variables (``PYTHONPATH``, ``LD_PRELOAD``, ...) an earlier ``export``
        set: the environment of every later command."""
        got = self.state.get("exported")
        return dict(got) if isinstance(got, dict) else {}

    @property
    def defines(self) -> bool:
        return bool(self.vars or self.aliases or self.scripts or self.git_aliases)

    def relevant(self, text: str) -> bool:
        """Could a definition change how ``text`` parses? (False: the memoized parse is right.)"""
        if self.vars and "$" in text:
            return True
        if self.state.get("exported"):
            return True  # every command's environment: a parse without it is not right
        if self.git_aliases and "git" in text:
            return True
        listed = self.state.get("listed_files")
        if isinstance(listed, dict) and any(_basename(p) in text for p in listed):
            return True
        if self.aliases and any(a in text for a in self.aliases):
            return True
        if self.scripts:
            if "end_of_edit" in text or "str_replace_editor" in text or "apply_patch" in text:
                return True
            if "make" in text and any(_basename(p) in _MAKEFILES for p in self.scripts):
                return True
            return any(_basename(p).rsplit(".", 1)[0] in text for p in self.scripts if p)
        return False


_VAR_WORD = re.compile(
    r"^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)"
    r"(?:\[(?:0|@|\*)\])?\})$"
)


_VAR_REF = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")


#: what a variable or an ``xargs`` argument holds when it comes from a listing of references
#: beyond the task's base (``git branch -r | xargs git show``): a ref, as far as the rules go
LISTED_REFS = "refs/<listed-by-the-trajectory>"


def _expand(argv: list[str], vars_: dict[str, str]) -> list[str]:
    out: list[str] = []
    for word in argv:
        m = _VAR_WORD.match(word)
        if m and (m.group(1) or m.group(2)) in vars_:
            out.extend(vars_[m.group(1) or m.group(2)].split())
        elif "$" in word:
            out.append(
                _VAR_REF.sub(lambda r: vars_.get(r.group(1) or r.group(2), r.group(0)), word)
            )
        else:
            out.append(word)
    return out


def _norm_path(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def _script_key(path: str, scripts: dict[str, str]) -> str | None:
    """The key of ``scripts`` that ``path`` names: the same path, or one ends with the other
    (``/repo/tools/dig.py`` written, ``python tools/dig.py`` run from ``/repo``)."""
    clean = _norm_path(path)
    if clean in scripts:
        return clean
    if not clean or clean.endswith("/"):
        return None
    for key in scripts:
        if key.endswith("/" + clean) or clean.endswith("/" + key):
            return key
    return None


_MAKEFILES = frozenset({"Makefile", "makefile", "GNUmakefile"})
