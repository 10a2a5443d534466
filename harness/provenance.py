"""Run provenance: which recorded runs count, because someone trusted produced them.

The ledger travels (``evotree pull``, ``git fetch``), and anyone who can push to a shared remote
can append ``run.finished`` events whose evidence manifests they computed with evotree's own
functions over evals they wrote themselves. A manifest says the evidence was not changed since it
was recorded; it does not say *who* recorded it. So every ``run.finished`` that this workspace's
evotree records also carries a ``provenance`` attestation (:func:`attest_run`) over the facts
readers decide by (run, version, seed, status, headline, commit, judge commit, evidence digest):

``mac``      HMAC-SHA256 with this workspace's secret key: 32 random bytes created on first use in
             ``<git dir>/evotree/provenance.key`` (mode 0600; in the git directory, not in
             ``.evotree/``, so ``git clean -xdf`` keeps it; git never pushes or fetches it).
             Only this workspace can make or check it.
``runner``   optional: an SSH signature (``ssh-keygen -Y sign``, namespace ``evotree-run``) by the
             runner key named in ``$EVOTREE_RUNNER_KEY`` (principal ``$EVOTREE_RUNNER_PRINCIPAL``,
             default the host name): team machines and cluster nodes whose runs should count in
             other workspaces. It counts where the signed policy lists that key: the allowed-signers
             file ``[share] runner_keys`` (default ``gates/runner_keys``) of the champion's commit.

:func:`check_run` is the one rule every reader applies (through
:func:`evotree.harness.integrity.verify_run_evidence`, which ``compare``, the gates and the reports
use, and :func:`evotree.diagnostics.run_scores.tree_spread`): a finished run whose attestation is
missing, made with another workspace's key, or signed by a key the policy does not list is
``foreign`` — shown (``evotree runs`` notes it), never counted. Pulled runs of a teammate are
foreign here unless their machine signs as a listed runner.

The same two marks bind the budget's reservations (:mod:`evotree.harness.reservations`): a
:func:`seal` by this workspace's key, and a :func:`sign_as_runner` signature that
:func:`check_runner` accepts where the policy lists the key — so clones sharing a budget count
each other's reservations only through a listed runner key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = [
    "SEAL_TYPE",
    "STATEMENT_TYPE",
    "seal",
    "sealed",
    "RUNNER_NAMESPACE",
    "FOREIGN_NOTE",
    "Provenance",
    "attest_run",
    "check_run",
    "check_runner",
    "foreign_runs",
    "key_path",
    "mark_foreign",
    "runner_keys_text",
    "sign_as_runner",
]

STATEMENT_TYPE = "evotree.run-provenance"
#: what :func:`seal` MACs besides the facts (never a run's statement: the types differ)
SEAL_TYPE = "evotree.local-seal"
#: the ssh-keygen namespace of runner signatures (not the one of promotions: a signature of one
#: kind can never be replayed as the other)
RUNNER_NAMESPACE = "evotree-run"
_KEY_BYTES = 32
_KEYS: dict[str, bytes] = {}
_VERIFIED: dict[str, bool] = {}


@dataclass(frozen=True)
class Provenance:
    """Who recorded a run, as far as this workspace can tell: ``local`` (this workspace's key),
    ``runner`` (a runner key the policy lists) or ``foreign`` (anyone else: not counted)."""

    source: str
    reason: str | None = None
    signer: str | None = None

    @property
    def trusted(self) -> bool:
        return self.source in ("local", "runner")


def _canonical(data: Any) -> bytes:
    return json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode()


def statement(
    run_id: str,
    version: str,
    *,
    seed: Any,
    status: Any,
    headline: Any,
    digest: Any,
    commit: Any,
    judge_commit: Any,
) -> dict[str, Any]:
    """The facts an attestation vouches for (the same dict when made and when checked)."""
    return {
        "type": STATEMENT_TYPE,
        "v": 1,
        "run_id": run_id,
        "version": version,
        "seed": seed,
        "status": status,
        "headline": headline,
        "digest": digest,
        "commit": commit,
        "judge_commit": judge_commit,
    }


def key_path(ws: Workspace) -> Path:
    """``<common git dir>/evotree/provenance.key``: per workspace, kept by ``git clean``, never pushed."""
    common = Path(ws.git.repo.path)
    if (common / "commondir").is_file():
        common = (common / (common / "commondir").read_text().strip()).resolve()
    return common / "evotree" / "provenance.key"


def _load_key(ws: Workspace, *, create: bool) -> bytes | None:
    path = key_path(ws)
    cached = _KEYS.get(str(path))
    if cached is not None:
        return cached
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        if not create:
            return None
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.parent / f".provenance.key.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600
        )
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(_KEY_BYTES) + "\n")
        try:
            os.link(tmp, path)  # atomic, and never over a key another process made first
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd) as handle:
        text = handle.read(4 * _KEY_BYTES).strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != _KEY_BYTES:
        return None
    _KEYS[str(path)] = key
    return key


def _key_id(key: bytes) -> str:
    return hashlib.sha256(b"evotree-provenance-key-id\0" + key).hexdigest()[:16]


def _mac(key: bytes, data: dict[str, Any]) -> str:
    return "hmac-sha256:" + hmac.new(key, _canonical(data), hashlib.sha256).hexdigest()


def seal(ws: Workspace, facts: dict[str, Any]) -> str | None:
    """This workspace's MAC over ``facts`` (its key made if missing): binds a ledger record to this
    workspace's own evotree, which a fetched ledger cannot forge (the key is never pushed)."""
    key = _load_key(ws, create=True)
    return None if key is None else _mac(key, {"type": SEAL_TYPE, **facts})


def sealed(ws: Workspace, facts: dict[str, Any], mac: Any) -> bool:
    """Whether ``mac`` is :func:`seal` of ``facts`` by this workspace's key."""
    key = _load_key(ws, create=False)
    return (
        key is not None
        and isinstance(mac, str)
        and hmac.compare_digest(mac, _mac(key, {"type": SEAL_TYPE, **facts}))
    )


def _ssh_keygen() -> str | None:
    from evotree.core.errors import EvotreeError
    from evotree.core.safegit import program

    try:
        return program("ssh-keygen")
    except EvotreeError:
        return None


def sign_as_runner(
    data: dict[str, Any], env: dict[str, str] | None = None
) -> dict[str, str] | None:
    """``{"principal", "signature"}``: ``data`` signed with the runner key ``$EVOTREE_RUNNER_KEY``
    of ``env`` (default this process's), or None without a key (or when signing failed). What
    :func:`check_runner` accepts where the signed policy lists that key."""
    return _runner_sign(data, dict(os.environ) if env is None else env)


def _runner_sign(data: dict[str, Any], env: dict[str, str]) -> dict[str, str] | None:
    """The runner signature of ``data`` with ``$EVOTREE_RUNNER_KEY``, or None (no key, or it failed)."""
    key = env.get("EVOTREE_RUNNER_KEY", "").strip()
    exe = _ssh_keygen() if key else None
    if not key or exe is None:
        return None
    principal = env.get("EVOTREE_RUNNER_PRINCIPAL", "").strip() or socket.gethostname()
    with tempfile.TemporaryDirectory(prefix="evotree-run-sig-") as tmp:
        payload = Path(tmp) / "statement"
        payload.write_bytes(_canonical(data))
        proc = subprocess.run(
            [
                exe,
                "-q",
                "-Y",
                "sign",
                "-n",
                RUNNER_NAMESPACE,
                "-f",
                os.path.expanduser(key),
                str(payload),
            ],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        sig = payload.with_name("statement.sig")
        if proc.returncode != 0 or not sig.is_file():
            return None
        return {"principal": principal, "signature": sig.read_text()}


def attest_run(
    ws: Workspace, record: Any, manifest: dict[str, Any] | None, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """The ``provenance`` that ``run.finished`` of ``record`` carries: this workspace's MAC (and a
    runner signature when ``$EVOTREE_RUNNER_KEY`` names a key) over :func:`statement`."""
    commit, judge_commit = getattr(record, "commit", None), getattr(record, "judge_commit", None)
    try:
        key = _load_key(ws, create=True)
    except OSError as exc:  # never lose a run over its attestation: it is recorded, and foreign
        return {
            "v": 1,
            "error": f"no workspace key ({exc.strerror or exc})",
            "commit": commit,
            "judge_commit": judge_commit,
        }
    if key is None:
        return {
            "v": 1,
            "error": f"{key_path(ws)} is not a key evotree wrote",
            "commit": commit,
            "judge_commit": judge_commit,
        }
    data = statement(
        record.run_id,
        record.version,
        seed=record.seed,
        status=record.status,
        headline=record.headline,
        digest=(manifest or {}).get("digest"),
        commit=commit,
        judge_commit=judge_commit,
    )
    out: dict[str, Any] = {
        "v": 1,
        "key_id": _key_id(key),
        "mac": _mac(key, data),
        "commit": commit,
        "judge_commit": judge_commit,
    }
    runner = _runner_sign(data, dict(os.environ) if env is None else env)
    if runner is not None:
        out["runner"] = runner
    return out


def _champion_commit(ws: Workspace) -> str | None:
    from evotree.core.refs import CHAMPION_REF

    if getattr(ws, "pinned_commit", None):
        return str(ws.pinned_commit)
    target = ws.git.ref_target(CHAMPION_REF)
    return str(target) if target is not None else None


def runner_keys_text(ws: Workspace) -> str:
    """The allowed-signers text of the runner keys the champion's commit lists ("" when none)."""
    import pygit2

    commit = _champion_commit(ws)
    if commit is None:
        return ""
    try:
        path = ws.config.share.runner_keys
        tree = ws.git.repo[commit].peel(pygit2.Commit).tree
        obj = ws.git.repo[tree[path].id]
    except (KeyError, ValueError, AttributeError):
        return ""
    except Exception:  # noqa: BLE001 - a policy that cannot be read lists no runner (fail closed)
        return ""
    return obj.data.decode("utf-8", errors="replace") if isinstance(obj, pygit2.Blob) else ""


def _runner_verified(allowed: str, principal: str, data: dict[str, Any], signature: str) -> bool:
    if (
        not allowed.strip()
        or "BEGIN SSH SIGNATURE" not in signature
        or not principal
        or any(c in principal for c in "\r\n\0")
        or principal.startswith("-")
    ):
        return False
    payload = _canonical(data)
    cache = hashlib.sha256(
        b"\0".join([allowed.encode(), principal.encode(), payload, signature.encode()])
    ).hexdigest()
    if cache in _VERIFIED:
        return _VERIFIED[cache]
    exe = _ssh_keygen()
    if exe is None:
        return False
    with tempfile.TemporaryDirectory(prefix="evotree-run-sig-") as tmp:
        signers = Path(tmp) / "runner_keys"
        signers.write_text(allowed)
        sig = Path(tmp) / "sig"
        sig.write_text(signature)
        proc = subprocess.run(
            [
                exe,
                "-Y",
                "verify",
                "-f",
                str(signers),
                "-I",
                principal,
                "-n",
                RUNNER_NAMESPACE,
                "-s",
                str(sig),
            ],
            input=payload,
            capture_output=True,
            check=False,
        )
    _VERIFIED[cache] = proc.returncode == 0
    return _VERIFIED[cache]


def check_run(
    ws: Workspace,
    run_id: str,
    version: str,
    started: dict[str, Any] | None,
    finished: dict[str, Any],
    *,
    runner_keys: str | None = None,
) -> Provenance:
    """Whether the ``run.finished`` data ``finished`` (and ``run.started`` data ``started``, when the
    ledger has one) was recorded by this workspace or a listed runner. ``runner_keys``: the text of
    :func:`runner_keys_text`, when the caller checks many runs."""
    payload = finished.get("provenance")
    if not isinstance(payload, dict):
        return Provenance(
            "foreign",
            "its run.finished carries no provenance: not recorded by this workspace's evotree",
        )
    if "mac" not in payload and "runner" not in payload:
        return Provenance(
            "foreign", f"recorded without an attestation: {str(payload.get('error'))[:200]}"
        )
    commit, judge_commit = payload.get("commit"), payload.get("judge_commit")
    if started is not None and (
        started.get("commit") != commit or started.get("judge_commit") != judge_commit
    ):
        return Provenance(
            "foreign",
            "its run.started names another commit than the one its provenance vouches for",
        )
    manifest = finished.get("evidence")
    data = statement(
        run_id,
        version,
        seed=finished.get("seed"),
        status=finished.get("status"),
        headline=finished.get("headline"),
        digest=manifest.get("digest") if isinstance(manifest, dict) else None,
        commit=commit,
        judge_commit=judge_commit,
    )
    key = _load_key(ws, create=False)
    mac = payload.get("mac")
    if key is not None and isinstance(mac, str) and hmac.compare_digest(mac, _mac(key, data)):
        return Provenance("local")
    runner = payload.get("runner")
    if runner is not None:
        verdict = check_runner(ws, data, runner, runner_keys=runner_keys)
        if verdict.trusted or verdict.signer is not None:
            return verdict
    if key is not None and payload.get("key_id") == _key_id(key):
        return Provenance(
            "foreign",
            "its provenance names this workspace's key but does not match: edited after "
            "it was recorded",
        )
    return Provenance(
        "foreign",
        "recorded by another workspace's evotree (another key), not signed by a listed runner",
    )


def check_runner(
    ws: Workspace, data: dict[str, Any], runner: Any, *, runner_keys: str | None = None
) -> Provenance:
    """Whether ``runner`` (:func:`sign_as_runner` of ``data``) is a signature by a runner key the
    signed policy lists (:func:`runner_keys_text`; ``runner_keys``: that text, when the caller
    checks many): ``runner`` with its principal, else ``foreign`` (the reason says why)."""
    if not (
        isinstance(runner, dict)
        and isinstance(runner.get("principal"), str)
        and isinstance(runner.get("signature"), str)
    ):
        return Provenance("foreign", "no runner signature")
    allowed = runner_keys_text(ws) if runner_keys is None else runner_keys
    if _runner_verified(allowed, runner["principal"], data, runner["signature"]):
        return Provenance("runner", signer=runner["principal"])
    name = runner["principal"][:80]
    return Provenance(
        "foreign",
        f"signed as runner {name!r}, a key the champion's runner keys do "
        "not list (or the signature does not match)",
        signer=runner["principal"],
    )


def foreign_runs(ws: Workspace) -> dict[str, str]:
    """run id -> why it is foreign, for every run the ledger records as finished that does not count."""
    started: dict[str, dict[str, Any]] = {}
    finished: dict[str, tuple[str, dict[str, Any]]] = {}
    for entry in ws.ledger.entries():  # newest first
        event = entry.event
        rid = event.data.get("run_id") if isinstance(event.data, dict) else None
        if not isinstance(rid, str) or not rid:
            continue
        if event.kind == "run.started":
            started.setdefault(rid, event.data)
        elif event.kind == "run.finished":
            finished.setdefault(rid, (str(event.version), event.data))
    allowed = runner_keys_text(ws)
    out = {}
    for rid, (version, data) in finished.items():
        verdict = check_run(ws, rid, version, started.get(rid), data, runner_keys=allowed)
        if not verdict.trusted:
            out[rid] = verdict.reason or "foreign"
    return out


#: the note `evotree runs` shows on a foreign run (and the start of it, for readers)
FOREIGN_NOTE = "foreign evidence, not counted in compare, gates or reports"


def mark_foreign(ws: Workspace, records: list[Any]) -> list[Any]:
    """``records`` (run records of this machine) with a note on each foreign one: why it does not
    count (:func:`foreign_runs`). The run directories are left as they are."""
    foreign = foreign_runs(ws)
    for record in records:
        why = foreign.get(record.run_id)
        if why is not None and not any(str(n).startswith(FOREIGN_NOTE) for n in record.notes):
            record.notes = [f"{FOREIGN_NOTE}: {why}", *record.notes]
    return records
