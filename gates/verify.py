"""`evotree verify`: re-check every signed approval in the ledger and where the champion stands.

The chain of trust starts at the ledger's ``workspace.initialized`` event (the anchor: the root
commit and its allowed signers). Each ``promotion`` must carry a statement signed by a principal
of the allowed signers of the champion it replaces, naming that champion's commit as its
predecessor and the sha256 of the recorded dossier as its evidence hash. The champion ref and the
ledger's ``meta.json`` must name the end of that chain. Analyzers promotions (``harness.promoted``)
form a second chain from the built-in analyzers ``h0`` (no ``refs/evotree/harness``): each must be
signed by a principal of the allowed signers of the champion in force at that point of the
ledger, follow the previous signed analyzer version, and name the sha256 of the diff shown to the
approver (recomputed here from the two commits); ``refs/evotree/harness`` and the ledger's
``harness_active`` must name its end. The judge store (``refs/evotree/judge``: the hidden judge
data) is a third chain: its root is the judge commit ``workspace.initialized`` records (none for a
workspace made before the store); ``judge.migrated`` may start it only while there is none, with
exactly the files of the signed champion's judge paths (recomputed here); every later change is a
``judge.promoted`` signed like an analyzers promotion (the sha256 of the diff of file names and
hashes, recomputed from the two commits). ``refs/evotree/judge`` and the ledger's ``judge`` must
name its end, and every ``run.started`` must name it as the judge data of its time. Anyone can
write refs and ledger commits;
only the approver's private key can produce the signatures, so a forged entry, an edited dossier
or a champion moved by hand is reported here. Each signature is checked with the ssh-keygen (and
each tag with the git) that ``[tools]`` of the policy in force at that point records, which must
be a root-owned system program (:func:`evotree.core.safegit.program`); a fake one first on PATH
is never run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evotree.core.ledger import EventKind
from evotree.core.refs import CHAMPION_REF, JUDGE_REF, LEDGER_REF
from evotree.diagnostics.analyzer_versions import (
    ANALYZERS_REF,
    RECORDS_KEY,
)
from evotree.gates.signing import canonical, sha256_hex, verify_tag
from evotree.gates.verify_base import (
    ANALYZERS_EVENT,
    DECISION_TYPE,
    JUDGE_EVENT,
    JUDGE_MIGRATED_EVENT,
    PROMOTION_TYPE,
    RUN_APPROVAL_TYPE,
    SIGNERS_TYPE,
    Problem,
    VerifyReport,
    check_signed_statement,
    email_of,
    is_commit,
    tag_name,
)
from evotree.gates.verify_chains import (
    check_analyzers_end,
    check_analyzers_promotion,
    check_judge_end,
    check_judge_migration,
    check_judge_promotion,
)

if TYPE_CHECKING:
    from evotree.core.ledger import LedgerEntry
    from evotree.core.workspace import Workspace
    from evotree.gates.policy import Policy

__all__ = ["check_signers_added", "trusted_policy", "verify_workspace"]


def _ledger_entries(ws: Workspace) -> list[LedgerEntry]:
    return list(reversed(list(ws.ledger.entries())))


def verify_workspace(
    ws: Workspace, *, check_tags: bool = True, check_reflog: bool = True
) -> VerifyReport:
    """Walk the ledger oldest first and check every signed approval, the champion ref and meta."""
    from evotree.gates.policy import policy_at

    entries = _ledger_entries(ws)
    checked = {
        "events": len(entries),
        "promotions": 0,
        "decisions": 0,
        "run_approvals": 0,
        "tags": 0,
        "reflog_entries": 0,
        "analyzers_promotions": 0,
        "judge_promotions": 0,
    }
    if not entries or entries[0].event.kind != EventKind.WORKSPACE_INITIALIZED.value:
        first = entries[0].event.kind if entries else "nothing"
        return VerifyReport(
            False,
            {},
            "",
            "",
            problems=[
                Problem(
                    "ledger_root",
                    f"the ledger does not start with workspace.initialized (it starts with {first})",
                )
            ],
            checked=checked,
        )
    walk = _ChainWalk.start(ws, entries[0], checked, check_tags, policy_at)
    for entry in entries[1:]:
        walk.step(entry)
    walk.check_ends()
    if check_reflog:
        _check_reflogs(
            ws,
            walk.chain_commits,
            walk.problems,
            checked,
            walk.report.notes,
            walk.analyzers_commits,
            walk.judge_commits,
        )
    report = walk.report
    report.champion, report.champion_commit = walk.champion, walk.commit
    report.analyzers = {"id": walk.analyzers_id, "commit": walk.analyzers_commit}
    report.judge = {"commit": walk.judge_commit}
    report.problems = walk.problems
    report.ok = not walk.problems
    return report


@dataclass
class _ChainWalk:
    """The state of :func:`verify_workspace`'s walk: the signed chains' ends so far (champion,
    policy, analyzers, judge), the commits each chain reached, and the problems found."""

    ws: Workspace
    policy: Policy
    policy_at: Any
    anchor_commit: str
    champion: str
    commit: str
    report: VerifyReport
    checked: dict[str, int]
    check_tags: bool
    records: dict[str, Any]
    analyzer_records: dict[str, Any]
    judge_commit: str | None
    chain_commits: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)
    analyzers_id: str = "h0"  # the root of the analyzers chain: the built-in ones
    analyzers_commit: str | None = None
    analyzers_commits: set[str] = field(default_factory=set)
    judge_commits: set[str] = field(default_factory=set)

    @classmethod
    def start(
        cls,
        ws: Workspace,
        init: LedgerEntry,
        checked: dict[str, int],
        check_tags: bool,
        policy_at: Any,
    ) -> _ChainWalk:
        """The walk at the ledger's first event: its anchor, champion v0 and the first judge."""
        anchor_commit = str(init.event.data.get("commit", ""))
        champion = str(init.event.version)
        policy = policy_at(ws, champion, anchor_commit)
        anchor = {
            "version": champion,
            "commit": anchor_commit,
            "ledger_commit": init.commit,
            "allowed_signers": policy.principals,
        }
        data = init.event.data if isinstance(init.event.data, dict) else None
        init_judge = data.get("judge") if data is not None else None
        judge_commit = (
            str(init_judge["commit"])
            if isinstance(init_judge, dict) and init_judge.get("commit")
            else None
        )
        return cls(
            ws=ws,
            policy=policy,
            policy_at=policy_at,
            anchor_commit=anchor_commit,
            champion=champion,
            commit=anchor_commit,
            report=VerifyReport(True, anchor, champion, anchor_commit, checked=checked),
            checked=checked,
            check_tags=check_tags,
            records={r.id: r for r in ws.ledger.versions()},
            analyzer_records=ws.ledger.meta().get(RECORDS_KEY) or {},
            judge_commit=judge_commit,
            chain_commits={anchor_commit},
            judge_commits={judge_commit} if judge_commit else set(),
        )

    def problem(self, code: str, message: str, version: str | None, entry: LedgerEntry) -> None:
        self.problems.append(Problem(code, message, version, entry.commit))

    def step(self, entry: LedgerEntry) -> None:
        """Check one event against the chains' ends, and move the ends it moves."""
        event = entry.event
        data = event.data if isinstance(event.data, dict) else {}
        kind = event.kind
        if (
            kind == EventKind.RUN_STARTED.value
            and "judge_data_commit" in data
            and data.get("judge_data_commit") != self.judge_commit
        ):
            self.problem(
                "run_judge_off_chain",
                f"run {data.get('run_id')} of {event.version} was judged "
                f"with judge data {str(data.get('judge_data_commit'))[:10]}, not "
                f"{str(self.judge_commit)[:10]} (the signed judge then)",
                event.version,
                entry,
            )
        if kind == EventKind.WORKSPACE_INITIALIZED.value:
            self.problem(
                "ledger_reinit", "a second workspace.initialized event", event.version, entry
            )
        elif kind == EventKind.PROMOTION.value:
            self._promotion(entry, data)
        elif kind == EventKind.SIGNERS_ADDED.value:
            self._signers_added(entry, data)
        elif kind == EventKind.DECISION.value and isinstance(data.get("statement"), dict):
            self.checked["decisions"] += 1
            reasons = _check_decision(self.policy, data, event.version, self.anchor_commit)
            if reasons:
                self.problem(
                    "decision",
                    f"decision on {event.version} at ledger {entry.commit[:10]}"
                    " is not valid: " + "; ".join(reasons),
                    event.version,
                    entry,
                )
        elif kind == EventKind.RUN_STARTED.value and data.get("judge_commit") not in (
            None,
            self.commit,
        ):
            # planned while refs/evotree/champion pointed elsewhere: its train gate, budget,
            # commands and judge came from a commit that was not the signed champion (a ref
            # moved and moved back)
            self.problem(
                "run_off_chain",
                f"run {data.get('run_id')} of {event.version} was planned and "
                f"judged under champion commit {str(data.get('judge_commit'))[:10]}, not "
                f"{self.commit[:10]} ({self.champion}, the signed champion then): the champion "
                "ref was moved for it",
                event.version,
                entry,
            )
        elif kind == EventKind.RUN_APPROVED.value:
            self._run_approval(entry, data)
        elif kind == ANALYZERS_EVENT:
            self._analyzers_promotion(entry, data)
        elif kind in (JUDGE_EVENT, JUDGE_MIGRATED_EVENT):
            self._judge_change(entry, data)

    def _promotion(self, entry: LedgerEntry, data: dict[str, Any]) -> None:
        event = entry.event
        self.checked["promotions"] += 1
        reasons = _check_promotion(
            self.ws,
            self.policy,
            data,
            event.version,
            self.anchor_commit,
            self.champion,
            self.commit,
            self.records,
            self.check_tags,
            self.checked,
        )
        if reasons:
            self.problem(
                "promotion",
                f"promotion of {event.version} at ledger "
                f"{entry.commit[:10]} is not valid: " + "; ".join(reasons),
                event.version,
                entry,
            )
            return
        statement = data["statement"]
        self.report.promotions.append(
            {
                "version": event.version,
                "commit": statement["commit"],
                "previous": statement["previous_champion"],
                "approver": statement.get("approver"),
                "evidence_hash": statement.get("evidence_hash"),
                "at": event.at,
                "signed": bool(data.get("signature")),
                "ledger_commit": entry.commit,
            }
        )
        self.champion, self.commit = str(event.version), str(statement["commit"])
        self.chain_commits.add(self.commit)
        self.policy = self.policy_at(self.ws, self.champion, self.commit)

    def _signers_added(self, entry: LedgerEntry, data: dict[str, Any]) -> None:
        event = entry.event
        reasons, added = check_signers_added(
            self.ws,
            self.policy,
            data,
            event.version,
            self.anchor_commit,
            self.champion,
            self.commit,
        )
        if reasons or added is None:
            self.problem(
                "signers_added",
                f"signers added at ledger {entry.commit[:10]} are not valid: " + "; ".join(reasons),
                event.version,
                entry,
            )
            return
        self.commit = added.commit
        self.chain_commits.add(self.commit)
        self.policy = added

    def _run_approval(self, entry: LedgerEntry, data: dict[str, Any]) -> None:
        event = entry.event
        self.checked["run_approvals"] += 1
        reasons = check_signed_statement(
            self.policy,
            data.get("statement"),
            data.get("signature"),
            expect_type=RUN_APPROVAL_TYPE,
            anchor=self.anchor_commit,
            version=event.version,
        )
        if reasons:
            self.problem(
                "run_approval",
                f"run approval of {event.version} at ledger "
                f"{entry.commit[:10]} is not valid: " + "; ".join(reasons),
                event.version,
                entry,
            )
            return
        self.report.approvals.append(
            {
                "version": event.version,
                "approver": data["statement"].get("approver"),
                "runs": data["statement"].get("runs"),
                "at": event.at,
                "ledger_commit": entry.commit,
            }
        )

    def _analyzers_promotion(self, entry: LedgerEntry, data: dict[str, Any]) -> None:
        self.checked["analyzers_promotions"] += 1
        reasons = check_analyzers_promotion(
            self.ws,
            self.policy,
            data,
            self.anchor_commit,
            self.analyzers_id,
            self.analyzers_commit,
            self.analyzer_records,
        )
        if reasons:
            self.problem(
                "harness_promotion",
                f"promotion of analyzer version {data.get('harness')} at ledger "
                f"{entry.commit[:10]} is not valid: " + "; ".join(reasons),
                None,
                entry,
            )
            return
        statement = data["statement"]
        self.report.analyzers_promotions.append(
            {
                "analyzers": statement["harness"],
                "commit": statement["commit"],
                "previous": statement["previous_harness"],
                "approver": statement.get("approver"),
                "diff_hash": statement.get("diff_hash"),
                "at": entry.event.at,
                "ledger_commit": entry.commit,
            }
        )
        self.analyzers_id, self.analyzers_commit = str(statement["harness"]), statement["commit"]
        if self.analyzers_commit:
            self.analyzers_commits.add(self.analyzers_commit)

    def _judge_change(self, entry: LedgerEntry, data: dict[str, Any]) -> None:
        event = entry.event
        self.checked["judge_promotions"] += 1
        promoted = event.kind == JUDGE_EVENT
        if promoted:
            reasons = check_judge_promotion(
                self.ws, self.policy, data, self.anchor_commit, self.judge_commit
            )
        else:
            reasons = check_judge_migration(
                self.ws, self.policy, data, self.judge_commit, self.commit
            )
        what = "promotion" if promoted else "migration"
        if reasons:
            self.problem(
                "judge_promotion",
                f"judge {what} at ledger {entry.commit[:10]} is not valid: " + "; ".join(reasons),
                None,
                entry,
            )
            return
        statement = data.get("statement") if promoted else None
        self.report.judge_promotions.append(
            {
                "kind": what,
                "commit": data["commit"],
                "previous": self.judge_commit,
                "approver": statement.get("approver") if statement else None,
                "diff_hash": statement.get("diff_hash") if statement else None,
                "at": event.at,
                "ledger_commit": entry.commit,
            }
        )
        self.judge_commit = str(data["commit"])
        self.judge_commits.add(self.judge_commit)

    def check_ends(self) -> None:
        """The ledger's meta, the champion ref, the analyzers and the judge ends match the walk."""
        meta_champion = self.ws.ledger.meta().get("champion")
        if meta_champion != self.champion:
            self.problems.append(
                Problem(
                    "ledger_champion",
                    f"the ledger names {meta_champion} as champion, but the last "
                    f"signed promotion made {self.champion} champion",
                    meta_champion,
                )
            )
        ref = self.ws.git.ref_target(CHAMPION_REF)
        if ref is None or str(ref) != self.commit:
            self.problems.append(
                Problem(
                    "champion_ref",
                    f"{CHAMPION_REF} points to {str(ref)[:10] if ref else 'nothing'},"
                    f" not to {self.commit[:10]} ({self.champion}, the end of the signed chain): "
                    "it was moved without a signed approval",
                    self.champion,
                )
            )
        check_analyzers_end(self.ws, self.analyzers_id, self.analyzers_commit, self.problems)
        check_judge_end(self.ws, self.judge_commit, self.problems)


def _check_promotion(
    ws: Workspace,
    policy: Policy,
    data: dict[str, Any],
    version: str | None,
    anchor: str,
    champion: str,
    commit: str,
    records: dict[str, Any],
    check_tags: bool,
    checked: dict[str, int],
) -> list[str]:
    statement = data.get("statement")
    if not isinstance(statement, dict):
        return ["no signed statement"]
    reasons: list[str] = []
    if statement.get("previous_champion") != champion or statement.get("previous_commit") != commit:
        reasons.append(
            f"it replaces {statement.get('previous_champion')} @ "
            f"{str(statement.get('previous_commit'))[:10]}, but the signed chain's champion is "
            f"{champion} @ {commit[:10]}"
        )
    dossier = data.get("dossier")
    if sha256_hex(canonical(dossier)) != statement.get("evidence_hash"):
        reasons.append("evidence hash differs from the recorded dossier (dossier edited)")
    if (
        not isinstance(dossier, dict)
        or dossier.get("version") != version
        or dossier.get("commit") != statement.get("commit")
    ):
        reasons.append("the dossier is not the candidate's")
    if statement.get("decision") != "approve":
        reasons.append(f"decision {statement.get('decision')!r} is not approve")
    record = records.get(str(version))
    if record is not None and statement.get("created_by") != record.created_by:
        reasons.append("the statement's creator differs from the ledger's")
    if not is_commit(ws, statement.get("commit")):
        reasons.append(
            f"the promoted commit {str(statement.get('commit'))[:10]} is not a commit of this repository"
        )
    if policy.config.gates.require_signoff or data.get("signature"):
        reasons += check_signed_statement(
            policy,
            statement,
            data.get("signature"),
            expect_type=PROMOTION_TYPE,
            anchor=anchor,
            version=version,
        )
    if check_tags and not reasons:
        checked["tags"] += 1
        tag = verify_tag(
            ws.root, tag_name(str(version)), policy.allowed_signers_text, tools=policy.config.tools
        )
        if not tag.valid:
            reasons.append(f"tag {tag_name(str(version))}: {tag.message}")
        elif tag.target != statement.get("commit"):
            reasons.append(
                f"tag {tag_name(str(version))} points to {str(tag.target)[:10]}, not the promoted commit"
            )
        elif email_of(tag.principal) != email_of(statement.get("approver")):
            reasons.append(
                f"tag {tag_name(str(version))} is signed by {tag.principal}, not the approver"
            )
    return reasons


def _check_decision(
    policy: Policy, data: dict[str, Any], version: str | None, anchor: str
) -> list[str]:
    statement = data.get("statement")
    reasons = check_signed_statement(
        policy,
        statement,
        data.get("signature"),
        expect_type=DECISION_TYPE,
        anchor=anchor,
        version=version,
    )
    if (
        "dossier" in data
        and isinstance(statement, dict)
        and sha256_hex(canonical(data.get("dossier"))) != statement.get("evidence_hash")
    ):
        reasons.append("evidence hash differs from the recorded dossier")
    return reasons


def _check_reflogs(
    ws: Workspace,
    chain: set[str],
    problems: list[Problem],
    checked: dict[str, int],
    notes: list[str],
    analyzers_chain: set[str] | None = None,
    judge_chain: set[str] | None = None,
) -> None:
    """Every value the champion (analyzers, judge) ref took must be a signed one;
    the ledger must only grow."""

    repo = ws.git.repo
    zero = "0" * 40
    for name in (CHAMPION_REF, LEDGER_REF, ANALYZERS_REF, JUDGE_REF):
        ref = repo.references.get(name)
        if ref is None:
            continue
        try:
            log = list(ref.log())
        except Exception:  # noqa: BLE001 - no reflog is a note, not tampering
            log = []
        if not log:
            notes.append(
                f"{name} has no reflog here (git logs refs outside refs/heads only with "
                "core.logAllRefUpdates=always); its current value was checked"
            )
            continue
        for item in log:
            checked["reflog_entries"] += 1
            old, new = str(item.oid_old), str(item.oid_new)
            if name == CHAMPION_REF and new != zero and new not in chain:
                problems.append(
                    Problem(
                        "champion_reflog",
                        f"{CHAMPION_REF} once pointed to {new[:10]} "
                        f"({item.message}), which no signed promotion made champion",
                    )
                )
            if name == JUDGE_REF and new != zero and new not in (judge_chain or set()):
                problems.append(
                    Problem(
                        "judge_reflog",
                        f"{JUDGE_REF} once pointed to {new[:10]} "
                        f"({item.message}), which no signed judge promotion put in force",
                    )
                )
            if name == ANALYZERS_REF and new != zero and new not in (analyzers_chain or set()):
                problems.append(
                    Problem(
                        "harness_reflog",
                        f"{ANALYZERS_REF} once pointed to {new[:10]} "
                        f"({item.message}), which no signed analyzers promotion put in force",
                    )
                )
            if (
                name == LEDGER_REF
                and old != zero
                and new != zero
                and old in repo
                and new in repo
                and old != new
                and not repo.descendant_of(new, old)
            ):
                problems.append(
                    Problem(
                        "ledger_rewritten",
                        f"{LEDGER_REF} moved from {old[:10]} to {new[:10]}, "
                        f"which does not extend it: the ledger's history was rewritten",
                    )
                )


def trusted_policy(ws: Workspace, report: Any = None) -> Policy:
    """The policy of the champion, after checking that a signed chain of promotions leads to it.

    Raises :class:`evotree.gates.errors.TamperingFound` when the champion ref or the ledger's champion
    is not the end of that chain (a ref moved by hand, a forged ledger entry). ``report``: a
    ``verify_workspace(ws, check_tags=False)`` the caller already made (the walk is not repeated).
    """
    from evotree.gates.errors import TamperingFound
    from evotree.gates.policy import policy_at

    if report is None:
        report = verify_workspace(ws, check_tags=False)
    # an invalid decision or run approval grants nothing (it is ignored where approvals are
    # looked up, and `evotree verify` reports it); the analyzers chain has its own check (the
    # analyzers gate, evotree.gates.analyzer_versions.trusted_analyzers); anything about the
    # champion chain blocks
    # a run judged under a moved champion is reported by verify; the score gate already leaves out
    # every run not judged by the signed champion's commit, so it does not block the policy itself
    # a hand-moved judge ref is not followed (runs take the ledger's judge) and a run judged off the
    # judge chain is reported; a ledger whose judge is not signed-for ("judge_promotion",
    # "ledger_judge") blocks, since runs would be judged with it
    ignored = (
        "decision",
        "run_approval",
        "harness_promotion",
        "ledger_harness",
        "harness_ref",
        "harness_reflog",
        "run_off_chain",
        "judge_ref",
        "judge_reflog",
        "run_judge_off_chain",
    )
    chain = [p for p in report.problems if p.kind not in ignored]
    if chain:
        first = chain[0]
        raise TamperingFound(
            f"refusing: the champion is not backed by signed approvals ({len(chain)} problem(s);"
            f" first: {first.message})",
            fix="run `evotree verify` for the full list; restore refs/evotree/champion and refs/evotree/ledger "
            "from a trusted copy (e.g. the remote) before promoting or approving",
            problems=[p.to_dict() for p in chain],
        )
    return policy_at(ws, report.champion, report.champion_commit)


def check_signers_added(
    ws: Workspace,
    policy: Policy,
    data: dict[str, Any],
    version: str | None,
    anchor: str,
    champion: str,
    commit: str,
) -> tuple[list[str], Policy | None]:
    """Reasons why a ``signers.added`` event is not a valid step of the chain ([] = it is), and the
    policy it puts in force."""
    import pygit2

    from evotree.gates.policy import blob_at, policy_at

    reasons: list[str] = []
    if policy.signers:
        reasons.append(
            f"the policy in force already named {', '.join(policy.principals)}: signers are added "
            "by a reviewed promotion"
        )
    new = str(data.get("commit") or "")
    if data.get("previous_commit") != commit or version != champion:
        reasons.append(
            f"it follows {str(data.get('previous_commit'))[:10]} of {version}, not the signed "
            f"champion {champion} @ {commit[:10]}"
        )
    try:
        new_commit = ws.git.repo[new].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return reasons + [f"the new commit {new[:10]} is not in this repository"], None
    if [str(p) for p in new_commit.parent_ids] != [commit]:
        reasons.append("the new commit is not a child of the signed champion's commit")
    else:
        diff = ws.git.repo.diff(ws.git.repo[commit].peel(pygit2.Commit).tree, new_commit.tree)
        changed = {d.delta.new_file.path for d in diff}
        if changed != {policy.allowed_signers_path}:
            reasons.append(
                f"the new commit changes {sorted(changed)}, not only {policy.allowed_signers_path}"
            )
    new_policy = policy_at(ws, champion, new)
    if blob_at(ws, new, policy.allowed_signers_path) is None:
        reasons.append("the new commit has no allowed signers")
    statement = data.get("statement")
    reasons += check_signed_statement(
        new_policy,
        statement,
        data.get("signature"),
        expect_type=SIGNERS_TYPE,
        anchor=anchor,
        version=champion,
    )
    if isinstance(statement, dict) and (
        statement.get("commit") != new or statement.get("previous_commit") != commit
    ):
        reasons.append("the statement names other commits than the event")
    return reasons, (None if reasons else new_policy)
