"""Files the trajectory writes from the command line and with editor tools: redirections and
``tee``/``cp``/``mv``, ``apply_patch`` and unified diffs, SWE-agent's editor, and the recipes of a
Makefile it wrote — remembered in the :class:`~.shell_context.ShellContext` so that running them
later is read for what it runs."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotree.harness.audit import static as _static
from evotree.harness.audit.lexer import SimpleCommand, _basename
from evotree.harness.audit.shell_context import ShellContext, _MAKEFILES, _norm_path, _script_key
from evotree.harness.audit.shell_values import _PASS_THROUGH, _remember_listing, _static_of


def _remember_script(name: str, argv: list[str], cmd: SimpleCommand, sink: ShellContext) -> None:
    targets = [t for op, t in cmd.redirects if op in (">", ">>", ">|") and t]
    if name == "tee":
        targets += [a for a in argv[1:] if not a.startswith("-")]
    if name in ("cp", "mv") and len(argv) >= 3:
        args = [a for a in argv[1:] if not a.startswith("-")]
        key = _script_key(args[0], sink.scripts) if len(args) == 2 else None
        if key is not None:
            sink.scripts[_norm_path(args[1])] = sink.scripts[key]
        return
    if not targets:
        return
    if name == "tee" and cmd.heredoc is not None:
        body = cmd.heredoc
    elif name == "tee" and cmd.stdin is not None:
        out = _static_of(cmd.stdin, sink)
        if out is None:
            return
        body = out.decode("utf-8", "replace")
    else:
        out = _static_of(cmd, sink)
        if out is None:
            return
        body = out.decode("utf-8", "replace")
        if name == "echo":  # sh's echo reads escapes
            body = body.replace("\\n", "\n")
    for target in targets:
        path = _norm_path(target)
        if any(op == ">>" for op, t in cmd.redirects if t == target):
            sink.scripts[path] = sink.scripts.get(path, "") + body
        else:
            sink.scripts[path] = body


_PATCH_HEAD = re.compile(
    r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\+\+\+ (?:b/)?(.+?)(?:\t.*)?$|"
    r"^\*\*\* Move to: (.+?)\s*$"
)


def _patch_writes(text: str) -> list[tuple[str, str, bool]]:
    """(path, content, complete) for each file a patch writes: Codex ``apply_patch`` format
    (``*** Add File:`` / ``*** Update File:``) or a unified diff (``+++ b/path``). An update's
    content is its added lines (``complete`` False)."""
    out: list[tuple[str, list[str], bool]] = []
    for line in text.splitlines():
        m = _PATCH_HEAD.match(line)
        if m:
            if m.group(1):
                out.append((m.group(2), [], m.group(1) == "Add"))
            elif m.group(3) and m.group(3) != "/dev/null":
                out.append((m.group(3), [], False))
            elif m.group(4):
                out.append((m.group(4), [], False))
            continue
        if out and line.startswith("+") and not line.startswith("+++"):
            out[-1][1].append(line[1:])
    return [(p, "\n".join(lines), complete) for p, lines, complete in out]


def _write_file(
    path: str, content: str, complete: bool, sink: ShellContext, redirects: tuple = ()
) -> None:
    """An editor tool or patch wrote ``path``: remember its content, and let the write rules see
    it."""
    key = _norm_path(path)
    if complete:
        sink.scripts[key] = content
    else:
        old_key = _script_key(path, sink.scripts)
        sink.scripts[old_key or key] = (
            (sink.scripts.get(old_key, "") + "\n") if old_key else ""
        ) + content
    sink.append(SimpleCommand(("tee", path), redirects))


def _editor(argv: list[str], sink: ShellContext) -> None:
    """SWE-agent's ``str_replace_editor CMD PATH [--file_text T] [--old_str A] [--new_str B]``."""
    sub = argv[1] if len(argv) > 1 else ""
    path = argv[2] if len(argv) > 2 else str(sink.state.get("open_file") or "")
    opts: dict[str, str] = {}
    k = 3
    while k < len(argv):
        if argv[k].startswith("--") and k + 1 < len(argv):
            opts[argv[k][2:]] = argv[k + 1]
            k += 2
        else:
            k += 1
    if not path:
        return
    sink.state["open_file"] = path
    if sub == "view":
        sink.append(SimpleCommand(("cat", path)))
        return
    if sub == "create":
        _write_file(path, opts.get("file_text", ""), True, sink)
        return
    if sub in ("str_replace", "insert"):
        key = _script_key(path, sink.scripts)
        new, old = opts.get("new_str", ""), opts.get("old_str")
        if key is not None and old and old in sink.scripts[key]:
            _write_file(key, sink.scripts[key].replace(old, new, 1), True, sink)
        else:
            _write_file(path, new, False, sink)
        return
    sink.append(SimpleCommand(("tee", path)))


_EDIT_BLOCK = re.compile(r"^edit\s+(?:\d+(?::\d+)?\s*)?\n(.*?)(?:\n)?end_of_edit\s*$", re.S)


_MAKE_RULE = re.compile(r"^([^\s#:=][^:=]*?)\s*::?(?!=)\s*([^;=]*?)\s*(?:;\s*(.*))?$")


def _make_recipes(argv: Sequence[str], sink: ShellContext) -> list[str]:
    """The recipe lines ``make [-f FILE] [TARGET...]`` runs, from a Makefile the trajectory wrote
    (the first target when none is named; prerequisites that are targets first). Empty when the
    Makefile is not known."""
    path = None
    targets: list[str] = []
    k = 1
    while k < len(argv):
        word = argv[k]
        if word in ("-f", "--file", "--makefile") and k + 1 < len(argv):
            path = argv[k + 1]
            k += 2
            continue
        if word.startswith("-f") and len(word) > 2:
            path = word[2:]
        elif word in ("-C", "--directory", "-j", "-l", "-o", "-W", "-I") and k + 1 < len(argv):
            k += 2
            continue
        elif not word.startswith("-") and "=" not in word:
            targets.append(word)
        k += 1
    key = (
        _script_key(path, sink.scripts)
        if path
        else next((p for p in sink.scripts if _basename(p) in _MAKEFILES), None)
    )
    if key is None:
        return []
    rules: dict[str, tuple[list[str], list[str]]] = {}
    order: list[str] = []
    current: list[list[str]] = []
    for line in sink.scripts[key].split("\n"):
        if line.startswith("\t"):
            for recipe in current:
                recipe.append(line[1:].lstrip("@-+ ").replace("$$", "$"))
            continue
        m = _MAKE_RULE.match(line)
        if not m or line.startswith((" ", "export ", "include ")):
            current = [] if line.strip() and not line.startswith(" ") else current
            continue
        current = []
        for target in m.group(1).split():
            entry = rules.setdefault(target, ([], []))
            entry[0].extend(m.group(2).split())
            if m.group(3):
                entry[1].append(m.group(3).lstrip("@-+ "))
            current.append(entry[1])
            if not target.startswith("."):
                order.append(target)
    lines: list[str] = []
    done: set[str] = set()

    def run(target: str, depth: int) -> None:
        if target in done or target not in rules or depth > 20:
            return
        done.add(target)
        for dep in rules[target][0]:
            run(dep, depth + 1)
        lines.extend(rules[target][1])

    for target in targets or order[:1]:
        run(target, 0)
    return lines


def _editor_tool(name: str, argv: list[str], cmd: SimpleCommand, sink: ShellContext) -> bool:
    """apply_patch, SWE-agent's editor (str_replace_editor, create, open), patch and git apply
    of a here-document: the files they write (True: nothing else runs)."""
    if name in ("apply_patch", "applypatch"):
        text = argv[1] if len(argv) > 1 else (cmd.heredoc or "")
        if not text and cmd.stdin is not None:
            text = (_static_of(cmd.stdin, sink) or b"").decode("utf-8", "replace")
        for path, content, complete in _patch_writes(text):
            _write_file(path, content, complete, sink)
        return True
    if name == "str_replace_editor":
        _editor(argv, sink)
        return True
    if name == "create" and len(argv) == 2:  # SWE-agent's editor: create FILE (and open it)
        sink.state["open_file"] = argv[1]
        _write_file(argv[1], "", True, sink)
        return True
    if name == "open" and len(argv) in (2, 3):  # SWE-agent's editor: open FILE [LINE]
        sink.state["open_file"] = argv[1]
    if name in ("patch", "git") and cmd.heredoc and (name == "patch" or argv[1:2] == ["apply"]):
        for path, content, complete in _patch_writes(cmd.heredoc):
            _write_file(path, content, complete, sink)
    return False


def _remember_writes(name: str, argv: list[str], cmd: SimpleCommand, sink: ShellContext) -> None:
    """Files written from the command line, and files a listing of references went to."""
    if name in ("cat", "tee", "echo", "printf", "cp", "mv") or (
        cmd.redirects and name in _static.FILTERS
    ):
        _remember_script(name, argv, cmd, sink)
    if cmd.redirects and (name == "git" or cmd.stdin is not None or name in _PASS_THROUGH):
        _remember_listing(
            SimpleCommand(tuple(argv), cmd.redirects, cmd.heredoc, (), cmd.stdin), sink
        )


def _reads_stdin_makefile(argv: Sequence[str]) -> bool:
    """``make -f -`` / ``make -f /dev/stdin`` / ``make --file=-``: the Makefile is the input."""
    for k, word in enumerate(argv[1:], 1):
        if (
            word in ("-f", "--file", "--makefile")
            and k + 1 < len(argv)
            and argv[k + 1] in ("-", "/dev/stdin")
        ):
            return True
        if word in ("-f-", "--file=-", "--file=/dev/stdin", "--makefile=-"):
            return True
    return False
