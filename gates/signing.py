"""SSH signatures over canonical JSON, the allowed-signers file, and signed git tags.

Signatures are made and checked by OpenSSH's ``ssh-keygen -Y sign|verify`` in the namespace
``evotree``; tags are signed by git itself (``gpg.format=ssh``) and checked with
``git verify-tag`` against the allowed-signers file of the champion's tree (written to a
temporary file: nothing from a worktree or a candidate branch is ever used).

``ssh-keygen`` and ``git`` are absolute system programs (the signed policy's ``[tools]``, else
the first root-owned one in /usr/bin, /bin, ...; never a PATH lookup), and git runs with no
repository setting that runs a program (:mod:`evotree.core.safegit`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evotree.gates.errors import SignatureError

__all__ = [
    "NAMESPACE",
    "AllowedSigner",
    "canonical",
    "fingerprint",
    "parse_allowed_signers",
    "principals_for",
    "public_key",
    "resolve_key",
    "sha256_hex",
    "sign",
    "delete_tag",
    "run_git",
    "sign_tag",
    "ssh_keygen",
    "verify",
    "verify_tag",
]

NAMESPACE = "evotree"
_KEY_TYPE = re.compile(
    r"^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp\d+|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)$"
)


def ssh_keygen(recorded: str | None = None) -> str:
    """The absolute path of ``ssh-keygen``: ``recorded`` (the signed policy's ``[tools].ssh_keygen``)
    when it is a root-owned system program, else the system one (:func:`evotree.core.safegit.program`).

    Never looked up on PATH, never a repository setting: a workspace that puts a fake
    ``ssh-keygen`` first on PATH cannot make a forged signature verify.
    """
    from evotree.core.errors import InvalidState
    from evotree.core.safegit import program

    try:
        return program("ssh-keygen", recorded)
    except InvalidState as exc:
        raise SignatureError(
            exc.message,
            fix=exc.fix or "install OpenSSH's client tools (apt-get install openssh-client)",
        ) from exc


def run_git(
    root: Path | str, *args: str, tools: Any = None, **kwargs: Any
) -> subprocess.CompletedProcess[Any]:
    """:func:`evotree.core.safegit.run_git` with the programs of ``tools`` (a policy's ``[tools]``)."""
    from evotree.core.safegit import run_git as safe_run

    return safe_run(
        root,
        *args,
        git=getattr(tools, "git", None) or None,
        ssh_keygen=getattr(tools, "ssh_keygen", None) or None,
        **kwargs,
    )


def canonical(data: Any) -> bytes:
    """The one byte form of a JSON value that is signed and hashed: sorted keys, no spaces."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data`` (the evidence hash of a dossier)."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class AllowedSigner:
    """One line of an allowed-signers file (OpenSSH format)."""

    principals: tuple[str, ...]
    key_type: str
    key: str
    namespaces: tuple[str, ...] | None
    line: int

    def allows(self, principal: str) -> bool:
        """True when this line names ``principal`` (exact, case-insensitive) for our namespace."""
        if self.namespaces is not None and NAMESPACE not in self.namespaces:
            return False
        return principal.lower() in (p.lower() for p in self.principals)


def parse_allowed_signers(text: str, *, source: str = "allowed_signers") -> list[AllowedSigner]:
    """Parse an allowed-signers file; :class:`SignatureError` naming the line for a bad one.

    Certificate authorities (``cert-authority``) are not supported: such lines are refused
    rather than silently ignored (fail closed).
    """
    out: list[AllowedSigner] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        tokens = line.split()
        index = next((i for i, tok in enumerate(tokens) if i > 0 and _KEY_TYPE.match(tok)), None)
        if index is None or index + 1 >= len(tokens):
            raise SignatureError(
                f"{source} line {number}: expected 'PRINCIPALS [OPTIONS] KEYTYPE BASE64KEY', actually: {line[:80]!r}",
                fix="one line per approver, e.g. 'ada@example.com ssh-ed25519 AAAA...'",
            )
        options = ",".join(tokens[1:index])
        if "cert-authority" in options:
            raise SignatureError(
                f"{source} line {number}: cert-authority lines are not supported by evotree",
                fix="list each approver's own public key",
            )
        namespaces = None
        match = re.search(r'namespaces="([^"]*)"', options)
        if match:
            namespaces = tuple(n.strip() for n in match.group(1).split(","))
        out.append(
            AllowedSigner(
                tuple(p for p in tokens[0].split(",") if p),
                tokens[index],
                tokens[index + 1],
                namespaces,
                number,
            )
        )
    return out


def resolve_key(explicit: str | None, *, git_root: Path | None = None) -> Path:
    """The approver's signing key: ``--key``, else ``$EVOTREE_SIGNING_KEY``, else ``git config user.signingkey``."""
    candidate = explicit or os.environ.get("EVOTREE_SIGNING_KEY")
    origin = "--key" if explicit else "EVOTREE_SIGNING_KEY"
    if not candidate and git_root is not None:
        candidate = _configured_signing_key(git_root)
        origin = "git config user.signingkey"
    if not candidate:
        raise SignatureError(
            "no signing key: a sign-off is an SSH signature made with the approver's own key",
            fix="pass --key ~/.ssh/id_ed25519, set EVOTREE_SIGNING_KEY, or git config user.signingkey PATH",
        )
    path = Path(os.path.expanduser(candidate.removeprefix("key::")))
    if not path.is_file():
        raise SignatureError(
            f"signing key from {origin} does not exist: {path}",
            fix="give the path of an SSH private key (or its .pub with the key in ssh-agent)",
        )
    return path


def _configured_signing_key(root: Path) -> str | None:
    """``user.signingkey`` as git would read it (the approver's global configuration included),
    read by libgit2: no git process, so nothing of the repository's configuration runs."""
    import pygit2

    try:
        value = pygit2.Repository(str(root)).config["user.signingkey"]
    except (KeyError, pygit2.GitError):
        return None
    return str(value).strip() or None


def public_key(key: Path, *, program: str | None = None) -> tuple[str, str]:
    """(key type, base64 blob) of ``key`` (a private key, or a ``.pub`` file)."""
    pub = key if key.suffix == ".pub" else key.with_name(key.name + ".pub")
    if pub.is_file():
        text = pub.read_text()
    else:
        proc = subprocess.run(
            [ssh_keygen(program), "-y", "-f", str(key)], capture_output=True, check=False, text=True
        )
        if proc.returncode != 0:
            raise SignatureError(
                f"cannot read the public half of {key}: {proc.stderr.strip()}",
                fix="check the key file (ssh-keygen -y -f KEY)",
            )
        text = proc.stdout
    parts = text.split()
    if len(parts) < 2 or not _KEY_TYPE.match(parts[0]):
        raise SignatureError(
            f"{pub if pub.is_file() else key} is not an SSH public key",
            fix="use an ed25519/ecdsa/rsa SSH key made by ssh-keygen",
        )
    return parts[0], parts[1]


def fingerprint(key_type: str, blob: str) -> str:
    """The SHA256 fingerprint OpenSSH prints for a public key."""
    import base64

    digest = hashlib.sha256(base64.b64decode(blob)).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def principals_for(signers: list[AllowedSigner], key_type: str, blob: str) -> list[str]:
    """Principals the allowed-signers file grants to this public key (for the evotree namespace)."""
    out: list[str] = []
    for signer in signers:
        if (
            signer.key_type == key_type
            and signer.key == blob
            and (signer.namespaces is None or NAMESPACE in signer.namespaces)
        ):
            out.extend(signer.principals)
    return out


@contextmanager
def _tmpdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="evotree-sig-") as tmp:
        yield Path(tmp)


def sign(key: Path, data: bytes, *, program: str | None = None) -> str:
    """An armored SSH signature of ``data`` in the evotree namespace, made by ``key``.

    ssh-keygen may ask the terminal for the key's passphrase (stdin is inherited).
    """
    with _tmpdir() as tmp:
        payload = tmp / "payload"
        payload.write_bytes(data)
        proc = subprocess.run(
            [
                ssh_keygen(program),
                "-q",
                "-Y",
                "sign",
                "-n",
                NAMESPACE,
                "-f",
                str(key),
                str(payload),
            ],
            capture_output=True,
            check=False,
            text=True,
        )
        sig = tmp / "payload.sig"
        if proc.returncode != 0 or not sig.is_file():
            raise SignatureError(
                f"ssh-keygen could not sign with {key}: {proc.stderr.strip() or proc.returncode}",
                fix="check the key and its passphrase, or load it into ssh-agent",
            )
        return sig.read_text()


def verify(
    allowed_text: str, principal: str, data: bytes, signature: str, *, program: str | None = None
) -> tuple[bool, str]:
    """Check ``signature`` over ``data`` by ``principal`` against an allowed-signers text.

    Returns (valid, ssh-keygen's message). Never raises for a bad signature; ``program`` is the
    policy's ``[tools].ssh_keygen`` (invalid when that is not a system program).
    """
    if not isinstance(signature, str) or "BEGIN SSH SIGNATURE" not in signature:
        return False, "not an SSH signature"
    if not principal or any(c in principal for c in "\n\r"):
        return False, "no principal"
    try:
        exe = ssh_keygen(program)
    except SignatureError as exc:
        return False, exc.message
    with _tmpdir() as tmp:
        allowed = tmp / "allowed_signers"
        allowed.write_text(allowed_text)
        sig = tmp / "sig"
        sig.write_text(signature)
        proc = subprocess.run(
            [
                exe,
                "-Y",
                "verify",
                "-f",
                str(allowed),
                "-I",
                principal,
                "-n",
                NAMESPACE,
                "-s",
                str(sig),
            ],
            input=data,
            capture_output=True,
            check=False,
        )
        message = (proc.stdout + proc.stderr).decode(errors="replace").strip()
        return proc.returncode == 0, message


def sign_tag(
    root: Path, name: str, target: str, message: str, key: Path, *, tools: Any = None
) -> str:
    """Create the annotated tag ``name`` on ``target``, signed by git with ``key``; return its object id.

    git runs as the approver's (:func:`run_git`): the system git, no hook, no repository setting
    that runs a program; ``tools`` is the policy's ``[tools]``.
    """
    proc = run_git(
        root,
        "-c",
        f"user.signingkey={key}",
        "tag",
        "-s",
        "-f",
        "-m",
        message,
        name,
        target,
        tools=tools,
    )
    if proc.returncode != 0:
        raise SignatureError(
            f"git could not create the signed tag {name}: {proc.stderr.strip()}",
            fix="check the key (git -c gpg.format=ssh -c user.signingkey=KEY tag -s ...)",
        )
    return run_git(root, "rev-parse", f"refs/tags/{name}", tools=tools).stdout.strip()


def delete_tag(root: Path, name: str, *, tools: Any = None) -> None:
    """``git tag -d name`` as the approver's git (no hook runs); a missing tag is fine."""
    run_git(root, "tag", "-d", name, tools=tools)


@dataclass
class TagCheck:
    """What ``git verify-tag`` said of a tag."""

    exists: bool
    signed: bool
    valid: bool
    principal: str | None
    target: str | None
    object: str | None
    message: str


def verify_tag(root: Path, name: str, allowed_text: str, *, tools: Any = None) -> TagCheck:
    """Check tag ``name``: annotated, SSH-signed, by a principal of ``allowed_text``.

    ``tools``: the ``[tools]`` of the policy whose signers are checked (its git and ssh-keygen).
    """

    def git(*args: str) -> subprocess.CompletedProcess[Any]:
        return run_git(root, *args, tools=tools)

    try:
        obj = git("rev-parse", "--verify", "--quiet", f"refs/tags/{name}").stdout.strip()
    except Exception as exc:  # noqa: BLE001 - an untrusted program is a failed check, not a crash
        return TagCheck(
            True, False, False, None, None, None, f"tag {name} cannot be checked: {exc}"
        )
    if not obj:
        return TagCheck(False, False, False, None, None, None, f"tag {name} does not exist")
    kind = git("cat-file", "-t", obj).stdout.strip()
    target = git("rev-parse", f"{obj}^{{commit}}").stdout.strip() or None
    if kind != "tag":
        return TagCheck(
            True, False, False, None, target, obj, f"tag {name} is a lightweight tag, not signed"
        )
    body = git("cat-file", "tag", obj).stdout
    if "-----BEGIN SSH SIGNATURE-----" not in body:
        return TagCheck(True, False, False, None, target, obj, f"tag {name} is not signed")
    # git verifies the LAST signature block of the body, in the format its header names: a PGP
    # or X.509 block after the SSH one would be handed to gpg (a program, never ssh-keygen)
    blocks = [line.rstrip("\r") for line in body.splitlines() if line.startswith("-----BEGIN ")]
    if not blocks or blocks[-1] != "-----BEGIN SSH SIGNATURE-----":
        from evotree.core.text import escape_control

        return TagCheck(
            True,
            True,
            False,
            None,
            target,
            obj,
            f"tag {name} ends with a signature block that is not an SSH signature "
            f"({escape_control(blocks[-1][:60]) if blocks else 'none at a line start'}); not verified",
        )
    with _tmpdir() as tmp:
        allowed = tmp / "allowed_signers"
        allowed.write_text(allowed_text)
        proc = git("-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-tag", obj)
    message = (proc.stdout + proc.stderr).strip()
    match = re.search(r'Good "git" signature for (\S+) with', message)
    ok = proc.returncode == 0 and match is not None
    return TagCheck(
        True,
        True,
        ok,
        match.group(1) if match else None,
        target,
        obj,
        message.splitlines()[0] if message else "",
    )
