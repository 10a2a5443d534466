"""Who a verb acts for: a person at this machine (their git identity) or a named principal.

A principal (``evotree serve --as NAME``, ``evotree agent --as NAME``) is what every verb checks
writes against: an agent writes only to the versions it created and records spend only there.
:func:`pin_principal` makes the principal the git identity of the whole server process.
"""

from __future__ import annotations

import os
import re
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evotree.core.errors import EvotreeError
from evotree.core.text import escape_control

if TYPE_CHECKING:
    from evotree.core.gitio import Identity

__all__ = ["GIT_PINNED_CONFIG", "Principal", "PrincipalError", "UnknownRun", "pin_principal"]

#: ``-c`` settings pinned for every git subprocess of the server (GIT_CONFIG_COUNT, see
#: :func:`pin_principal`): no hook and no fsmonitor program configured in the repository runs.
GIT_PINNED_CONFIG = (("core.hooksPath", "/dev/null"), ("core.fsmonitor", "false"))


class UnknownRun(EvotreeError):
    """No run with that id on this machine (a bad argument: exit 2)."""

    exit_code = 2
    code = "unknown_run"


class PrincipalError(EvotreeError):
    """``--as NAME`` is not a usable principal."""

    exit_code = 2
    code = "bad_principal"


_EMAIL_FORM = re.compile(r"^\s*([^<>]*?)\s*<([^<>\s]+)>\s*$")


@dataclass(frozen=True)
class Principal:
    """Whom the server acts for: ``name`` and ``email`` as git records them.

    ``alice`` -> ``alice <alice>``; ``alice@example.org`` -> ``alice <alice@example.org>``;
    ``Alice Liddell <alice@example.org>`` as given. The email part is what sign-off compares
    (a version's creator cannot approve it), so use the same address as the person's
    allowed-signers line when the agent acts for a person.
    """

    name: str
    email: str

    @classmethod
    def parse(cls, text: str) -> Principal:
        raw = (text or "").strip()
        if not raw:
            raise PrincipalError(
                "--as needs a name: the principal the server acts for",
                fix="evotree serve --as alice (or --as 'Alice <alice@example.org>')",
            )
        if len(raw) > 200 or not raw.isprintable():
            raise PrincipalError(
                f"--as {escape_control(raw[:80])!r} is not a usable name "
                "(control characters or longer than 200 characters)",
                fix="use a plain name or 'Name <email>'",
            )
        match = _EMAIL_FORM.match(raw)
        if match:
            name, email = match.group(1) or match.group(2).split("@")[0], match.group(2)
        elif "<" in raw or ">" in raw:
            raise PrincipalError(
                f"--as {raw!r}: expected NAME or 'Name <email>'",
                fix="evotree serve --as 'Alice <alice@example.org>'",
            )
        elif "@" in raw and " " not in raw:
            name, email = raw.split("@")[0], raw
        else:
            name, email = raw, raw
        return cls(name=name, email=email)

    def identity(self) -> Identity:
        from evotree.core.gitio import Identity

        return Identity(self.name, self.email)

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


def pin_principal(principal: Principal, environ: MutableMapping[str, str] | None = None) -> None:
    """Make ``principal`` the git identity of this process and pin git's code-running settings.

    Sets ``GIT_AUTHOR_*`` / ``GIT_COMMITTER_*`` (what :meth:`evotree.core.gitio.Git.identity`
    and git read first), overriding whatever the agent's environment had, so every event the
    server writes (runs, findings, memory, audits) names the principal. Drops the variables that
    would point git elsewhere or configure it from the environment (``GIT_DIR``,
    ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``, ``GIT_CONFIG_PARAMETERS``, ``GIT_CONFIG_COUNT`` and its
    keys), then sets ``core.hooksPath=/dev/null`` and ``core.fsmonitor=false`` as command-line
    settings (``GIT_CONFIG_COUNT``) for every git subprocess, above the repository's config.
    """
    env = os.environ if environ is None else environ
    for key in [k for k in env if k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
        del env[key]
    for key in (
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
    ):
        env.pop(key, None)
    env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = principal.name
    env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = principal.email
    for i, (key, value) in enumerate(GIT_PINNED_CONFIG):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env["GIT_CONFIG_COUNT"] = str(len(GIT_PINNED_CONFIG))
