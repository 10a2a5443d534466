"""Evidence integrity: the runs the ledger records, checked against what is on disk.

The ledger is the list of attempts: ``run.started`` for every run a driver began, ``run.finished``
for every run it (or crash recovery) ended, with a manifest of the evidence
(:func:`evotree.harness.manifest.evidence_manifest`: the sha256 of every Parquet/JSONL evidence file,
a hash of the run.json fields readers rely on, and one digest over both). Anything that counts
runs for a decision (the score gate, ``evotree compare``, reports) asks
:func:`verify_run_evidence` instead of listing run directories, so deleting the run directories
of a version's worst seeds, or editing their evidence, cannot make a version look better.

Each run the ledger knows for a version gets one state:

``ok``          finished, and its evidence matches the manifest
``missing``     finished, but its run directory, run.json or an evidence file is gone
``tampered``    finished, but an evidence file or a bound run.json field differs (or was added)
``unfinished``  started, never finished, and no process drives it (its driver died and the run
                was not recovered, or it ran on another machine)
``running``     started, and a process on this machine drives it now
``unverified``  finished before manifests were recorded: its evidence is there but cannot be
                checked
``foreign``     finished, but not recorded by this workspace's evotree nor signed by a runner key
                the champion's policy lists (:mod:`evotree.harness.provenance`): pulled from
                someone else, or forged. Shown, never counted; not a problem of the version
                (the score gate neither counts nor fails on it)
``voided``      a person signed it out of the evidence (``evotree runs void RUN_ID --reason``:
                a ``run.voided`` event whose statement is signed by an allowed signer who did
                not create the version); readers leave it out of every number and list it
                (:attr:`EvidenceCheck.voided`, ``summary()["voided"]``), and the score gate no
                longer fails on it. The only way out for an ``unverified`` run, or a
                ``missing`` one whose directory is lost for good.

Run directories of the version that the ledger does not know (copied in, or renamed) are listed
as ``unrecorded``: readers ignore them.

A ``run.voided`` event that is not validly signed (no or a forged signature, a signer not in
the champion's allowed signers, the version's own creator, another workspace, another run)
voids nothing: the run keeps its state and the rejected void is named among its problems.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError
from evotree.core.findings import Finding
from evotree.core.ledger import EventKind
from evotree.harness.layout import RunPaths
from evotree.harness.manifest import BOUND_FIELDS, evidence_files, manifest_digest, record_binding
from evotree.harness.records import runs_dir
from evotree.harness.recovery import run_is_live
from evotree.harness.safe_files import UnsafeFile
from evotree.harness.safe_files import read_regular
from evotree.harness.provenance import check_run
from evotree.harness.provenance import runner_keys_text

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = [
    "STATES",
    "PROBLEM_STATES",
    "RUN_VOIDED_EVENT",
    "RUN_VOID_TYPE",
    "RunEvidence",
    "EvidenceCheck",
    "EvidenceChanged",
    "VoidChecker",
    "find_run",
    "verify_run_evidence",
    "evidence_findings",
]

STATES = ("ok", "missing", "tampered", "unfinished", "running", "unverified", "foreign", "voided")
#: The ledger event that takes a run out of the evidence, and the type of its signed statement.
RUN_VOIDED_EVENT = EventKind.RUN_VOIDED.value
RUN_VOID_TYPE = "evotree.run-void"
#: States that make a set of runs unusable as evidence (the score gate fails on them).
PROBLEM_STATES = ("missing", "tampered", "unfinished", "unverified")

#: state -> (finding code, severity, what happened, what to do)
_FINDING = {
    "missing": (
        "score.evidence_missing",
        "critical",
        "evidence missing",
        (
            "restore the run directories (.evotree/runs/<run_id>) from a backup or from the machine that "
            "ran them (the manifest names its host); a run cannot be dropped and more seeds do not replace "
            "it: only a new commit (evotree branch) starts a fresh count, or, if the evidence is lost for "
            "good, a person who did not create the version voids the run with a signed sign-off "
            "(evotree runs void RUN_ID --reason TEXT)"
        ),
    ),
    "tampered": (
        "score.evidence_tampered",
        "critical",
        "evidence differs from what the run recorded",
        (
            "restore the original run directories; evidence edited after a run finished is not evidence "
            "(a new commit, evotree branch, starts a fresh count)"
        ),
    ),
    "unfinished": (
        "score.evidence_unfinished",
        "critical",
        "started but never finished",
        (
            "run any evotree command on the machine that drove them (crash recovery finishes them), "
            "or bring their run directories here"
        ),
    ),
    "unverified": (
        "score.evidence_unverified",
        "critical",
        "recorded before evidence manifests existed",
        (
            "these runs cannot be checked: commit anew (evotree branch --from the version) and run "
            "that commit's seeds with this evotree, or have a person who did not create the version void "
            "them with a signed sign-off (evotree runs void RUN_ID --reason TEXT)"
        ),
    ),
}


@dataclass
class RunEvidence:
    """One run the ledger knows, with what the ledger says and what was found on disk."""

    run_id: str
    version: str
    state: str
    seed: int | None = None
    commit: str | None = None
    judge_commit: str | None = None
    #: when the ledger recorded run.started (or run.finished, for a run without one: ingested)
    started_at: str | None = None
    #: the status run.finished recorded (None until it finished)
    status: str | None = None
    headline: dict[str, Any] | None = None
    digest: str | None = None
    host: str | None = None
    problems: list[str] = field(default_factory=list)
    #: the manifest's files (path -> hash) when it listed them: readers check what they read
    expected: dict[str, str] | None = field(default=None, repr=False)
    #: a voided run: who signed the void, why, when, the ledger commit, and its state before
    void: dict[str, Any] | None = None

    @property
    def usable(self) -> bool:
        """Its evidence may be read: finished, present and not shown to differ."""
        return self.state in ("ok", "unverified")

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("expected", None)
        return out

    def read_verified(self, root: Path, rel: str) -> bytes:
        """The bytes of evidence file ``rel`` of this run (under its directory ``root``), checked
        against the manifest as they are read: a file swapped after :func:`verify_run_evidence`
        raises :class:`EvidenceChanged` instead of being read. (Runs without a listed manifest
        are read as they are.) A link, a linked folder on the way or a FIFO is never read
        (:mod:`evotree.harness.safe_files`): :class:`EvidenceChanged` says what it is."""
        import hashlib

        try:
            data = read_regular(root, rel)
        except UnsafeFile as exc:
            raise EvidenceChanged(
                f"{rel} of run {self.run_id} is {exc.reason}, not a regular file: it was not read",
                fix="find out what put it into the run directory (a phase may leave links in its evidence); "
                "restore the run's evidence and evaluate again",
                run_id=self.run_id,
                path=rel,
            ) from None
        if (
            self.expected is not None
            and self.expected.get(rel) != "sha256:" + hashlib.sha256(data).hexdigest()
        ):
            raise EvidenceChanged(
                f"{rel} of run {self.run_id} changed after its evidence was checked (or is not in its manifest)",
                fix="find out what is writing into the run directory; restore it and evaluate again",
                run_id=self.run_id,
                path=rel,
            )
        return data


class EvidenceChanged(EvotreeError):
    """An evidence file differed from its manifest when it was read (exit 33: tampering)."""

    exit_code = 33
    code = "evidence_changed"


@dataclass
class EvidenceCheck:
    """The runs of one version, as the ledger records them, checked on this machine."""

    version: str
    runs: list[RunEvidence]
    unrecorded: list[str] = field(default_factory=list)
    #: runs a person voided (signed): in no number, never silently dropped (listed here and in
    #: :meth:`summary`); :attr:`runs` holds the others
    voided: list[RunEvidence] = field(default_factory=list)

    def by_state(self, *states: str) -> list[RunEvidence]:
        return [r for r in self.runs if r.state in states]

    @property
    def problems(self) -> list[RunEvidence]:
        return self.by_state(*PROBLEM_STATES)

    @property
    def ok(self) -> bool:
        """No run is missing, tampered, unfinished or unverified."""
        return not self.problems

    def run(self, run_id: str) -> RunEvidence | None:
        return next((r for r in self.runs if r.run_id == run_id), None)

    def summary(self, runs: list[RunEvidence] | None = None) -> dict[str, Any]:
        """Counts and run ids per state (of ``runs``, default all), and the unrecorded directories."""
        chosen = self.runs if runs is None else runs
        out: dict[str, Any] = {"version": self.version, "runs": len(chosen)}
        for state in STATES:
            out[state] = [r.run_id for r in chosen if r.state == state]
        out["unrecorded"] = list(self.unrecorded)
        out["problems"] = {r.run_id: r.problems for r in chosen if r.state in PROBLEM_STATES}
        out["voided"] = [r.run_id for r in self.voided]
        out["voids"] = {r.run_id: dict(r.void or {}) for r in self.voided}
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "runs": [r.to_dict() for r in self.runs],
            "unrecorded": list(self.unrecorded),
            "voided": [r.to_dict() for r in self.voided],
            "ok": self.ok,
        }


def evidence_findings(runs: list[RunEvidence], *, version: str) -> list[Finding]:
    """One critical ``score.evidence_*`` finding per problem state among ``runs``, naming the runs."""
    out = []
    for state in PROBLEM_STATES:
        chosen = [r for r in runs if r.state == state]
        if not chosen:
            continue
        code, severity, what, fix = _FINDING[state]
        ids = [r.run_id for r in chosen]
        out.append(
            Finding(
                layer="score",
                code=code,
                severity=severity,
                version=version,
                title=f"{len(chosen)} run(s) of {version} the ledger records: {what} ({', '.join(ids[:4])}"
                + (" …" if len(ids) > 4 else "")
                + ")",
                evidence={
                    "runs": ids,
                    "problems": {r.run_id: r.problems for r in chosen},
                    "seeds": {r.run_id: r.seed for r in chosen},
                    "hosts": {r.run_id: r.host for r in chosen},
                },
                suggestion=fix,
                run_id=ids[0] if len(ids) == 1 else None,
            )
        )
    return out


def _ledger_runs(ws: Workspace, version: str) -> dict[str, dict[str, Any]]:
    """run id -> {"started": event or None, "finished": newest run.finished event or None}."""
    found: dict[str, dict[str, Any]] = {}
    for entry in ws.ledger.entries(version=version):  # newest first
        event = entry.event
        if event.kind not in ("run.started", "run.finished"):
            continue
        run_id = event.data.get("run_id")
        if not isinstance(run_id, str) or not run_id:
            continue
        slot = found.setdefault(run_id, {"started": None, "finished": None})
        key = "started" if event.kind == "run.started" else "finished"
        if slot[key] is None:
            slot[key] = event
    return found


def _check_files(root: Path, manifest: dict[str, Any], run: RunEvidence) -> None:
    """Compare a finished run's directory with its manifest; sets ``run.state`` and ``problems``."""
    paths = RunPaths(root)
    if not root.is_dir():
        run.state, run.problems = "missing", [f"its run directory {root} does not exist"]
        return
    try:
        data = json.loads(paths.record.read_bytes())
    except FileNotFoundError:
        run.state, run.problems = "missing", ["run.json does not exist"]
        return
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        run.state, run.problems = "tampered", ["run.json is not a JSON object"]
        return
    try:
        files = evidence_files(root)
    except OSError as exc:
        run.state, run.problems = "missing", [f"its evidence cannot be read: {exc}"]
        return
    missing: list[str] = []
    changed: list[str] = []
    listed = manifest.get("files")
    if isinstance(listed, dict):
        missing = [name for name in listed if name not in files]
        changed = [name for name in listed if name in files and files[name] != listed[name]]
        added = [name for name in files if name not in listed]
        changed += [f"{name} (added)" for name in added]
    bound = record_binding(data)
    if bound != manifest.get("record"):
        fields = _changed_fields(data, run)
        changed.append("run.json " + (", ".join(fields) if fields else "bound fields") + " changed")
    if not missing and not changed and manifest_digest(files, bound) != manifest.get("digest"):
        changed.append(
            "the evidence digest differs"
            + (
                ""
                if isinstance(listed, dict)
                else f" ({len(files)} file(s) now, {manifest.get('n_files')} recorded)"
            )
        )
    if missing:
        run.state = "missing"
        run.problems = [f"missing: {', '.join(missing)}"] + (
            [f"changed: {', '.join(changed)}"] if changed else []
        )
    elif changed:
        run.state, run.problems = "tampered", [f"changed: {', '.join(changed)}"]
    else:
        run.state = "ok"


def _changed_fields(data: dict[str, Any], run: RunEvidence) -> list[str]:
    """Bound run.json fields that differ from what the ledger says (where it says it)."""
    ledger = {
        "run_id": run.run_id,
        "version": run.version,
        "seed": run.seed,
        "status": run.status,
        "commit": run.commit,
        "judge_commit": run.judge_commit,
        "headline": run.headline,
    }
    return [
        f"{k} ({data.get(k)!r}, the ledger says {ledger[k]!r})"
        for k in BOUND_FIELDS
        if k in ledger and ledger[k] is not None and data.get(k) != ledger[k]
    ]


def verify_run_evidence(ws: Workspace, version: str) -> EvidenceCheck:
    """Every run the ledger records for ``version`` (started or finished), checked on disk.

    Recomputes the hashes of each finished run's evidence files and bound run.json fields and
    compares them with the manifest its ``run.finished`` recorded. Runs are ordered by when the
    ledger recorded them. Never raises for a problem with a run: that is the run's state.
    """

    record = ws.resolve(version)
    base = runs_dir(ws)
    runs: list[RunEvidence] = []
    runner_keys: str | None = None
    for run_id, slot in _ledger_runs(ws, record.id).items():
        started, finished = slot["started"], slot["finished"]
        sdata = started.data if started is not None else {}
        fdata = finished.data if finished is not None else {}
        run = _run_from_events(run_id, record.id, started, finished, sdata, fdata)
        if finished is None:
            if run_is_live(ws, run_id):
                run.state = "running"
            else:
                run.problems = [
                    "the ledger has run.started but no run.finished, and no process drives it"
                ]
        else:
            if runner_keys is None:
                runner_keys = runner_keys_text(ws)
            started_data = sdata if started is not None else None
            _check_finished(ws, base, run, started_data, fdata, runner_keys)
        runs.append(run)
    runs.sort(key=lambda r: (r.started_at or "", r.run_id))
    voided = _apply_voids(ws, record, runs)
    known = {r.run_id for r in runs}
    return EvidenceCheck(
        version=record.id,
        runs=[r for r in runs if r.state != "voided"],
        unrecorded=_unrecorded(base, record.id, known),
        voided=voided,
    )


def _run_from_events(
    run_id: str,
    version: str,
    started: Any,
    finished: Any,
    sdata: dict[str, Any],
    fdata: dict[str, Any],
) -> RunEvidence:
    """A run as its ``run.started`` and ``run.finished`` events describe it (not yet checked)."""
    seed = fdata.get("seed", sdata.get("seed"))
    return RunEvidence(
        run_id=run_id,
        version=version,
        state="unfinished",
        seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
        commit=sdata.get("commit"),
        judge_commit=sdata.get("judge_commit"),
        started_at=(started or finished).at,
        status=fdata.get("status") if finished is not None else None,
        headline=fdata.get("headline"),
    )


def _check_finished(
    ws: Workspace,
    base: Path,
    run: RunEvidence,
    sdata: dict[str, Any] | None,
    fdata: dict[str, Any],
    runner_keys: str,
) -> None:
    """Check a finished run: who recorded it first (foreign evidence is never read), then its
    files against the manifest its ``run.finished`` bound."""
    # who recorded it decides before what it holds: foreign evidence is never read
    verdict = check_run(ws, run.run_id, run.version, sdata, fdata, runner_keys=runner_keys)
    manifest = fdata.get("evidence")
    if not verdict.trusted:
        run.state, run.problems = "foreign", [str(verdict.reason)]
        if isinstance(manifest, dict):
            run.digest, run.host = manifest.get("digest"), manifest.get("host")
    elif isinstance(manifest, dict):
        run.digest, run.host = manifest.get("digest"), manifest.get("host")
        listed = manifest.get("files")
        run.expected = dict(listed) if isinstance(listed, dict) else None
        _check_files(base / run.run_id, manifest, run)
    else:
        root = base / run.run_id
        if not root.is_dir() or not RunPaths(root).record.is_file():
            run.state, run.problems = (
                "missing",
                [f"its run directory {root} or its run.json does not exist"],
            )
        else:
            run.state = "unverified"
            run.problems = [
                "run.finished recorded no evidence manifest (an evotree from before manifests)"
            ]


def _unrecorded(base: Path, version: str, known: set[str]) -> list[str]:
    """Run directories of ``version`` on disk that the ledger does not record."""
    unrecorded = []
    if base.is_dir():
        for path in sorted(base.glob("*/run.json")):
            try:
                data = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue
            if (
                isinstance(data, dict)
                and data.get("version") == version
                and path.parent.name not in known
            ):
                unrecorded.append(path.parent.name)
    return unrecorded


# ---------------------------------------------------------------------------- voids
def find_run(ws: Workspace, run_id: str) -> tuple[str, dict[str, Any]] | None:
    """(version, the newest run.started/run.finished data) of the run ``run_id`` the ledger records."""
    for entry in ws.ledger.entries():  # newest first
        event = entry.event
        if (
            event.kind in ("run.started", "run.finished")
            and event.data.get("run_id") == run_id
            and event.version
        ):
            return str(event.version), dict(event.data)
    return None


#: Decides whether a ``run.voided`` event voids a run: ``(ws, version record, run_id, event data)``
#: -> reasons it does not ([] = it does). Signatures are checked against the signed champion's
#: policy, which lives in the gates layer: the verb layer passes it in on the workspace it opens
#: (``ws.void_checker``, :func:`evotree.verbs.policy.attach`). Without one, every void is rejected
#: (fail closed).
VoidChecker = Callable[["Workspace", Any, str, dict[str, Any]], list[str]]


def _apply_voids(ws: Workspace, record: Any, runs: list[RunEvidence]) -> list[RunEvidence]:
    """Mark the runs a valid ``run.voided`` names (state ``voided``); name rejected voids among the
    run's problems. Returns the voided runs."""
    events = [
        (entry, entry.event)
        for entry in ws.ledger.entries(version=record.id)
        if entry.event.kind == RUN_VOIDED_EVENT
    ]
    if not events:
        return []
    by_id = {r.run_id: r for r in runs}
    checker: VoidChecker | None = getattr(ws, "void_checker", None)
    for entry, event in reversed(events):  # oldest first
        run_id = event.data.get("run_id") if isinstance(event.data, dict) else None
        run = by_id.get(run_id) if isinstance(run_id, str) else None
        if run is None or run.state == "voided":
            continue
        data = event.data if isinstance(event.data, dict) else {}
        reasons = (
            ["no void checker is loaded (evotree.gates validates voids against the signed policy)"]
            if checker is None
            else checker(ws, record, run.run_id, data)
        )
        if reasons:
            run.problems = [
                *run.problems,
                f"a run.voided event at ledger {entry.commit[:10]} was rejected: "
                + "; ".join(str(r) for r in reasons),
            ]
            continue
        statement = event.data["statement"]
        run.void = {
            "approver": statement.get("approver"),
            "reason": statement.get("reason"),
            "at": event.at,
            "ledger_commit": entry.commit,
            "state_before": run.state,
        }
        run.state = "voided"
    return [r for r in runs if r.state == "voided"]
