"""One glob language for the repository's paths: the patch gate, the audit and the intervention rules.

Patterns are anchored at the repository root; ``**`` crosses folders, ``*``, ``?`` and ``[...]``
(``[!...]``) stay within one path segment.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["glob_regex"]


@lru_cache(maxsize=512)
def glob_regex(pattern: str, *, fold: bool = False) -> re.Pattern[str]:
    """An anchored glob: ``**`` crosses folders, ``*`` ``?`` ``[...]`` (``[!...]``) stay in one."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            inner = pattern[i + 1 : end]
            negate = inner[:1] in ("!", "^")
            inner = inner[1:] if negate else inner
            inner = inner.replace("\\", "\\\\")
            out.append(f"[^/{inner}]" if negate else f"[{inner}]")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.IGNORECASE if fold else 0)
