"""Who may sign off, and where: a person at an interactive terminal, holding an allowed key.

These checks keep an automated agent from clicking through a sign-off by accident or by design
when it runs evotree from a script: no terminal, a CI environment, the version's own creator or
a wrong one-time code each refuse. They are speed bumps, not the lock: an agent can allocate a
pseudo-terminal. The lock is the signature, which only the approver's private key can make and
which ``evotree verify`` re-checks.
"""

from __future__ import annotations

import hmac
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from evotree.gates.errors import SignatureError, SignoffRefused
from evotree.gates.signing import fingerprint, principals_for, public_key
from evotree.gates.verify_base import email_of

__all__ = [
    "CI_VARIABLES",
    "Approver",
    "approver_for",
    "check_typed",
    "new_code",
    "require_human_terminal",
]

#: Environment variables that CI systems set; any of them (non-empty, not "0"/"false") refuses.
CI_VARIABLES = (
    "CI",
    "CONTINUOUS_INTEGRATION",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "BUILDKITE",
    "JENKINS_URL",
    "JENKINS_HOME",
    "HUDSON_URL",
    "TF_BUILD",
    "CIRCLECI",
    "TRAVIS",
    "TEAMCITY_VERSION",
    "BITBUCKET_BUILD_NUMBER",
    "CODEBUILD_BUILD_ID",
    "DRONE",
    "APPVEYOR",
    "SEMAPHORE",
    "GO_PIPELINE_NAME",
    "BUILD_BUILDID",
    "CI_JOB_ID",
    "WOODPECKER_CI",
    "RUN_ID_CI",
)
_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I


def _ci_variables(env: dict[str, str]) -> list[str]:
    return [
        name
        for name in CI_VARIABLES
        if env.get(name, "").strip().lower() not in ("", "0", "false", "no")
    ]


def require_human_terminal(
    *,
    env: dict[str, str] | None = None,
    stdin: IO[Any] | None = None,
    stdout: IO[Any] | None = None,
    action: str = "sign off",
) -> None:
    """Refuse unless stdin and stdout are terminals, a controlling terminal exists and no CI variable is set."""
    env = dict(os.environ) if env is None else env
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    found = _ci_variables(env)
    if found:
        raise SignoffRefused(
            f"refusing to {action} in a CI environment ({', '.join(found)} set): a sign-off is a person's decision",
            fix="a person runs this command at their own terminal; agents can read the evidence with "
            "`evotree gates V --json`",
            variables=found,
        )
    problems = []
    if stdin is None or not _isatty(stdin):
        problems.append("stdin is not a terminal")
    if stdout is None or not _isatty(stdout):
        problems.append("stdout is not a terminal")
    if not problems:
        try:
            fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
            os.close(fd)
        except OSError:
            problems.append("there is no controlling terminal (/dev/tty)")
    if problems:
        raise SignoffRefused(
            f"refusing to {action}: {'; '.join(problems)} — a sign-off needs a person at an interactive terminal",
            fix="run it yourself in a terminal (not from a script, pipe or agent); agents can read the evidence "
            "with `evotree gates V --json`",
        )


def _isatty(stream: IO[Any]) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def new_code() -> str:
    """A random one-time code shown on the terminal and typed back, e.g. ``K7QX-2MPD``."""
    chars = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(8))
    return f"{chars[:4]}-{chars[4:]}"


def check_typed(version: str, code: str, typed_version: str, typed_code: str) -> None:
    """Refuse unless the approver typed the version id and the one-time code exactly."""
    if typed_version.strip() != version:
        raise SignoffRefused(
            f"the version typed ({typed_version.strip()!r}) is not {version!r}; nothing was signed",
            fix="run the command again and type the version id shown",
        )
    if not hmac.compare_digest(typed_code.strip().upper().encode(), code.encode()):
        raise SignoffRefused(
            "the one-time code typed does not match the code shown; nothing was signed",
            fix="run the command again and type the code shown on screen",
        )


@dataclass
class Approver:
    """The person signing: their principal in the allowed signers and their key."""

    principal: str
    key: Path
    fingerprint: str


def approver_for(policy: Any, key: Path, created_by: str | None) -> Approver:
    """The allowed principal of ``key`` under ``policy``; refuses a key that is not allowed or the creator."""
    if policy.signers_error:
        raise SignatureError(
            f"no allowed signers in the champion: {policy.signers_error}",
            fix=f"commit {policy.allowed_signers_path} (lines 'EMAIL ssh-ed25519 KEY') on the "
            "champion through a reviewed promotion, or at init",
        )
    tools = getattr(
        getattr(policy, "config", None), "tools", None
    )  # the policy's ssh-keygen, never PATH's
    key_type, blob = public_key(key, program=getattr(tools, "ssh_keygen", None) or None)
    fp = fingerprint(key_type, blob)
    principals = principals_for(policy.signers, key_type, blob)
    if not principals:
        raise SignatureError(
            f"the key {key} ({fp}) is not in {policy.allowed_signers_path} of the champion {policy.champion} "
            f"(allowed: {', '.join(policy.principals) or 'nobody'})",
            fix="sign with your own allowed key (--key); a candidate's copy of the allowed signers is never used",
            fingerprint=fp,
        )
    creator = email_of(created_by)
    eligible = [p for p in principals if email_of(p) != creator]
    if not eligible:
        raise SignoffRefused(
            f"the approver ({principals[0]}) created this version ({created_by}): a version cannot approve itself",
            fix="another person listed in the allowed signers signs off",
        )
    return Approver(eligible[0], key, fp)
