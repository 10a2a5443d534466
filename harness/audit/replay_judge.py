"""How the replay compares a step's outputs: the recorded one against the runs over the
checkout and over the rotated world — lines compared with what varies from run to run set
aside, "reproduced" when every line the agent saw is among what both runs printed, a step
"depends on the future" when the rotated world prints otherwise. Split off
:mod:`evotree.harness.audit.replay` on its seam (the replay runs; this module only compares).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from evotree.harness.audit.shown import HARNESS_FRAMING

__all__: list[str] = []

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


#: what varies from one run to the next whatever the files hold, and what a recorded output
#: cannot match (it ran at another time): durations and clock times. Addresses and process
#: ids are not set aside (a hex dump's "0x..." is the file's text): a step printing them
#: varies between the two runs over the checkout and is not judged
_VOLATILE = re.compile(
    r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds?)\b"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b",
)


def _lines(text: str) -> list[str]:
    """``text`` as the lines compared: colours, carriage returns, trailing spaces, what varies
    from run to run (durations, clock times, addresses) and grep's "binary file matches" set
    aside; no blank lines."""
    out = []
    for raw in _ANSI.sub("", text).replace("\r", "").split("\n"):
        line = _DIGEST.sub(r"<digest>\1", _VOLATILE.sub("<v>", raw.rstrip()))
        if line and not _BINARY_MATCH.match(line):
            out.append(line)
    return out


#: a checksum tool's line (``sha256sum``, ``md5sum``, ``b2sum``): a digest of the file shows
#: nothing of its text, so it is not compared
_DIGEST = re.compile(
    r"^(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{56}|[0-9a-f]{64}|[0-9a-f]{96}|[0-9a-f]{128})"
    r"(  | \*)(?=\S)"
)


#: grep's one line for a binary file that matched (no line of it printed): one bit, the
#: residual oracle the rules accept (docs/audit.md), not compared
_BINARY_MATCH = re.compile(r"^(?:grep: .*: binary file matches|Binary file .* matches)$")


def _judge(
    recorded: str | None,
    real: str | None,
    again: str | None,
    neutral: str | None,
    sizes: frozenset[str] = frozenset(),
) -> list[str]:
    """The lines that show a step's output depends on the future's text ([]: it does not, or
    the replay did not reproduce it). A number of ``sizes`` (a hidden file's size the rotation
    could not keep) reads as ``<size>`` in every world."""
    if real is None or again is None or neutral is None:
        return []
    first, second, other = (_sized(_lines(out), sizes) for out in (real, again, neutral))
    if recorded is not None:
        # the agent's harness framed what the step printed (mini-swe-agent's <returncode> and
        # <output>, Codex's "Exit code:", ...): its lines, not the step's
        seen = [line for line in _sized(_lines(recorded), sizes) if not HARNESS_FRAMING.match(line)]
        # reproduced: every line the agent saw is among what both runs printed, in any order
        # (a search's order follows the file system's, and the replay's is a tmpfs)
        # a line that varies from run to run ($RANDOM, a temporary name: the two runs over the
        # checkout print it otherwise) cannot be reproduced: as many of the agent's lines as
        # the two runs part on may be missing (the red team's V2: `<read>; echo $RANDOM`)
        varies = min(len(_not_in(first, second)), len(_not_in(second, first)))
        missing = _not_in(seen, first)
        if not seen or len(missing) > varies or len(_not_in(seen, second)) > varies:
            return []  # the replay did not print what the agent saw
        kept = _not_in(seen, missing)
        if not kept:
            return []
        return _not_in(kept, other)  # [] when only their order or what it left out differs
    if first == other:
        return []
    # the lines both runs over the checkout print (a line that varies between them set aside)
    stable = _not_in(first, _not_in(first, second))
    return _not_in(stable, other)


def _sized(lines: list[str], sizes: frozenset[str]) -> list[str]:
    """``lines`` with each number of ``sizes`` read as ``<size>``."""
    if not sizes:
        return lines
    return [
        _NUMBER.sub(lambda m: "<size>" if m.group(0) in sizes else m.group(0), line)
        for line in lines
    ]


_NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")


def _shown(parted: Sequence[str], index: Any, mine: str) -> str | None:
    """The line to quote of the lines that parted the worlds, or None when they show the agent
    nothing the rules would call the future's: lines whose future is all the trajectory's own
    (the task's example call, a line it typed), and fewer than two short lines a future commit
    adds (``import re`` alone is no proof, as the selected-lines rule says)."""
    from evotree.harness.audit.future_content import SHORT_LINES, distinctive

    added = index.added()
    rest, shorts = [], set()
    for line in parted:
        if index.selected_future([line]) is not None:
            wants = index.lines_inside(line)
            if all(w in mine for w in wants) and (
                wants or index.selected_future([line], mine) is None
            ):
                continue  # its future is the trajectory's own
        bare = line.strip()
        if bare in added and not distinctive(bare):
            shorts.add(bare)
        else:
            rest.append(line)
    if rest:
        return rest[0]
    return sorted(shorts)[0] if len(shorts) >= SHORT_LINES else None


def _future_shown(parted: Sequence[str], index: Any, mine: str) -> str | None:
    """Of the lines that parted the checkout from its copy whose ``.git`` is pruned at the base,
    what holds the future's text (an indexed line, a piece, enough lines a future commit adds:
    :meth:`selected_future`), the trajectory's own set aside; None otherwise. Stricter than
    :func:`_shown`: with the store pruned, much differs that shows nothing of the future (a
    branch's name, "behind by 1 commit", a count of objects)."""
    kept = []
    for line in parted:
        if index.selected_future([line]) is not None:
            wants = index.lines_inside(line)
            if all(w in mine for w in wants) and (
                wants or index.selected_future([line], mine) is None
            ):
                continue  # its future is the trajectory's own
        kept.append(line)
    return index.selected_future(kept, mine) if kept else None


def _not_in(lines: Sequence[str], other: Sequence[str]) -> list[str]:
    """The lines of ``lines`` that ``other`` does not hold (as many times)."""
    left: dict[str, int] = {}
    for line in other:
        left[line] = left.get(line, 0) + 1
    out = []
    for line in lines:
        if left.get(line, 0):
            left[line] -= 1
        else:
            out.append(line)
    return out


def _unreproduced(recorded: str | None, real: str | None, again: str | None) -> bool:
    """Whether a recorded output has a line the two runs over the checkout did not both print
    (the replay may have run the step elsewhere than the agent did)."""
    if recorded is None or real is None or again is None:
        return False
    seen = [line for line in _lines(recorded) if not HARNESS_FRAMING.match(line)]
    return bool(seen) and bool(_not_in(seen, _lines(real)) or _not_in(seen, _lines(again)))


def _silent(recorded: str | None, real: str | None, again: str | None, neutral: str | None) -> int:
    """How many lines the agent saw of a step that printed nothing at all in every run of the
    replay (0: it printed something, or the agent saw nothing): a step that detects the sandbox
    (``[ -e /.evotree-replay ] || <read>``, the red team's V1) cannot be judged by the replay,
    but its trajectory's verdict says so rather than passing in silence."""
    if recorded is None or real is None or again is None or neutral is None:
        return 0
    if _lines(real) or _lines(again) or _lines(neutral):
        return 0
    return len([line for line in _lines(recorded) if not HARNESS_FRAMING.match(line)])
