"""SSH signatures over canonical JSON, the allowed-signers file, and signed git tags.

Signatures are made and checked by OpenSSH's ``ssh-keygen -Y sign|verify`` in the namespace
``evotree``; tags are signed by git itself (``gpg.format=ssh``) and checked with
``git verify-tag`` against the allowed-signers file of the champion's tree (written to a
temporary file: nothing from a worktree or a candidate branch is ever used).
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
    "sign_tag",
    "verify",
    "verify_tag",
]

NAMESPACE = "evotree"
_KEY_TYPE = re.compile(r"^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-nistp\d+|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)$")


def ssh_keygen() -> str:
    """The absolute path of ``ssh-keygen`` on this machine's PATH (never a repository setting)."""
    import shutil

    found = shutil.which("ssh-keygen")
    if not found:
        raise SignatureError("ssh-keygen is not installed: signatures are made and checked with OpenSSH",
                             fix="install OpenSSH's client tools (e.g. apt-get install openssh-client)")
    return found


def git_command(*args: str) -> list[str]:
    """``git`` with the repository's code-running settings overridden.

    A person runs ``evotree promote`` in a repository an agent could write to: its ``.git/config``
    could point ``gpg.ssh.program`` at a script that fakes verification or steals the key, set a
    ``core.fsmonitor`` or hooks. These are pinned here for every git call the gates make.
    """
    return ["git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "gpg.format=ssh",
            "-c", f"gpg.ssh.program={ssh_keygen()}", "-c", "gpg.ssh.defaultKeyCommand=", *args]


def canonical(data: Any) -> bytes:
    """The one byte form of a JSON value that is signed and hashed: sorted keys, no spaces."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


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
            raise SignatureError(f"{source} line {number}: cert-authority lines are not supported by evotree",
                                 fix="list each approver's own public key")
        namespaces = None
        match = re.search(r'namespaces="([^"]*)"', options)
        if match:
            namespaces = tuple(n.strip() for n in match.group(1).split(","))
        out.append(AllowedSigner(tuple(p for p in tokens[0].split(",") if p), tokens[index],
                                 tokens[index + 1], namespaces, number))
    return out


def resolve_key(explicit: str | None, *, git_root: Path | None = None) -> Path:
    """The approver's signing key: ``--key``, else ``$EVOTREE_SIGNING_KEY``, else ``git config user.signingkey``."""
    candidate = explicit or os.environ.get("EVOTREE_SIGNING_KEY")
    origin = "--key" if explicit else "EVOTREE_SIGNING_KEY"
    if not candidate and git_root is not None:
        proc = subprocess.run(git_command("config", "user.signingkey"), cwd=git_root, capture_output=True, check=False, text=True)
        candidate = proc.stdout.strip() or None
        origin = "git config user.signingkey"
    if not candidate:
        raise SignatureError(
            "no signing key: a sign-off is an SSH signature made with the approver's own key",
            fix="pass --key ~/.ssh/id_ed25519, set EVOTREE_SIGNING_KEY, or git config user.signingkey PATH",
        )
    path = Path(os.path.expanduser(candidate.removeprefix("key::")))
    if not path.is_file():
        raise SignatureError(f"signing key from {origin} does not exist: {path}",
                             fix="give the path of an SSH private key (or its .pub with the key in ssh-agent)")
    return path


def public_key(key: Path) -> tuple[str, str]:
    """(key type, base64 blob) of ``key`` (a private key, or a ``.pub`` file)."""
    pub = key if key.suffix == ".pub" else key.with_name(key.name + ".pub")
    if pub.is_file():
        text = pub.read_text()
    else:
        proc = subprocess.run([ssh_keygen(), "-y", "-f", str(key)], capture_output=True, check=False, text=True)
        if proc.returncode != 0:
            raise SignatureError(f"cannot read the public half of {key}: {proc.stderr.strip()}",
                                 fix="check the key file (ssh-keygen -y -f KEY)")
        text = proc.stdout
    parts = text.split()
    if len(parts) < 2 or not _KEY_TYPE.match(parts[0]):
        raise SignatureError(f"{pub if pub.is_file() else key} is not an SSH public key",
                             fix="use an ed25519/ecdsa/rsa SSH key made by ssh-keygen")
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
        if signer.key_type == key_type and signer.key == blob and (
                signer.namespaces is None or NAMESPACE in signer.namespaces):
            out.extend(signer.principals)
    return out


@contextmanager
def _tmpdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="evotree-sig-") as tmp:
        yield Path(tmp)


def sign(key: Path, data: bytes) -> str:
    """An armored SSH signature of ``data`` in the evotree namespace, made by ``key``.

    ssh-keygen may ask the terminal for the key's passphrase (stdin is inherited).
    """
    with _tmpdir() as tmp:
        payload = tmp / "payload"
        payload.write_bytes(data)
        proc = subprocess.run([ssh_keygen(), "-q", "-Y", "sign", "-n", NAMESPACE, "-f", str(key), str(payload)],
                              capture_output=True, check=False, text=True)
        sig = tmp / "payload.sig"
        if proc.returncode != 0 or not sig.is_file():
            raise SignatureError(f"ssh-keygen could not sign with {key}: {proc.stderr.strip() or proc.returncode}",
                                 fix="check the key and its passphrase, or load it into ssh-agent")
        return sig.read_text()


def verify(allowed_text: str, principal: str, data: bytes, signature: str) -> tuple[bool, str]:
    """Check ``signature`` over ``data`` by ``principal`` against an allowed-signers text.

    Returns (valid, ssh-keygen's message). Never raises for a bad signature.
    """
    if not isinstance(signature, str) or "BEGIN SSH SIGNATURE" not in signature:
        return False, "not an SSH signature"
    if not principal or any(c in principal for c in "\n\r"):
        return False, "no principal"
    with _tmpdir() as tmp:
        allowed = tmp / "allowed_signers"
        allowed.write_text(allowed_text)
        sig = tmp / "sig"
        sig.write_text(signature)
        proc = subprocess.run(
            [ssh_keygen(), "-Y", "verify", "-f", str(allowed), "-I", principal, "-n", NAMESPACE, "-s", str(sig)],
            input=data, capture_output=True, check=False,
        )
        message = (proc.stdout + proc.stderr).decode(errors="replace").strip()
        return proc.returncode == 0, message


def sign_tag(root: Path, name: str, target: str, message: str, key: Path) -> str:
    """Create the annotated tag ``name`` on ``target``, signed by git with ``key``; return its object id."""
    proc = subprocess.run(
        git_command("-c", f"user.signingkey={key}", "tag", "-s", "-f", "-m", message, name, target),
        cwd=root, capture_output=True, check=False, text=True,
    )
    if proc.returncode != 0:
        raise SignatureError(f"git could not create the signed tag {name}: {proc.stderr.strip()}",
                             fix="check the key (git -c gpg.format=ssh -c user.signingkey=KEY tag -s ...)")
    out = subprocess.run(git_command("rev-parse", f"refs/tags/{name}"), cwd=root, capture_output=True, check=False, text=True)
    return out.stdout.strip()


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


def verify_tag(root: Path, name: str, allowed_text: str) -> TagCheck:
    """Check tag ``name``: annotated, SSH-signed, by a principal of ``allowed_text``."""
    obj = subprocess.run(git_command("rev-parse", "--verify", "--quiet", f"refs/tags/{name}"), cwd=root,
                         capture_output=True, check=False, text=True).stdout.strip()
    if not obj:
        return TagCheck(False, False, False, None, None, None, f"tag {name} does not exist")
    kind = subprocess.run(git_command("cat-file", "-t", obj), cwd=root, capture_output=True, check=False, text=True).stdout.strip()
    target = subprocess.run(git_command("rev-parse", f"{obj}^{{commit}}"), cwd=root, capture_output=True, check=False,
                            text=True).stdout.strip() or None
    if kind != "tag":
        return TagCheck(True, False, False, None, target, obj, f"tag {name} is a lightweight tag, not signed")
    body = subprocess.run(git_command("cat-file", "tag", obj), cwd=root, capture_output=True, check=False, text=True).stdout
    if "-----BEGIN SSH SIGNATURE-----" not in body:
        return TagCheck(True, False, False, None, target, obj, f"tag {name} is not signed")
    with _tmpdir() as tmp:
        allowed = tmp / "allowed_signers"
        allowed.write_text(allowed_text)
        proc = subprocess.run(
            git_command("-c", f"gpg.ssh.allowedSignersFile={allowed}", "verify-tag", obj),
            cwd=root, capture_output=True, check=False, text=True,
        )
    message = (proc.stdout + proc.stderr).strip()
    match = re.search(r'Good "git" signature for (\S+) with', message)
    ok = proc.returncode == 0 and match is not None
    return TagCheck(True, True, ok, match.group(1) if match else None, target, obj,
                    message.splitlines()[0] if message else "")
