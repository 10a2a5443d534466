"""One chain-trust type for the analyzers' and the judge's signed lineages, its walk kept by the
ledger tip and the refs: a ref moved by hand is seen on the next read, never followed."""

from __future__ import annotations

from pathlib import Path

from conftest import git
from test_runs import make_run_repo

import evotree.diagnostics.analyzer_versions as diagnostics_analyzers
import evotree.gates.judges as gates_judges
from evotree.core.chain_trust import ChainTrust
from evotree.core.ledger import Event, EventKind, LedgerTxn
from evotree.core.workspace import Workspace
from evotree.gates.analyzer_versions import active_analyzers, trusted_analyzers
from evotree.gates.judges import trusted_judge


def test_one_type_for_both_chains_and_no_copies() -> None:
    assert not hasattr(diagnostics_analyzers, "HarnessTrust")
    assert not hasattr(gates_judges, "JudgeTrust")


def test_the_walk_is_kept_until_a_ref_or_the_ledger_moves(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "ws"))
    harness, judge = trusted_analyzers(ws), trusted_judge(ws)
    assert type(harness) is ChainTrust and type(judge) is ChainTrust
    assert (harness.chain, harness.id, harness.commit, harness.trusted) == (
        "analyzers",
        "h0",
        None,
        True,
    )
    assert judge.chain == "judge" and judge.trusted and judge.warning is None
    assert trusted_analyzers(ws) is harness  # the same walk, kept
    assert trusted_judge(Workspace.open(ws.root)) is judge  # another handle on the same state

    def note(txn: LedgerTxn) -> Event:  # an event that leaves both chains alone: same verdict
        return Event(
            kind=EventKind.SPEND_RECORDED.value,
            version=None,
            actor="ada",
            data={"usd": 0.0, "note": "n"},
        )

    ws.ledger.transact(note, actor=ws.git.identity())
    again = trusted_analyzers(ws)
    assert again is not harness and again == harness  # walked again (the tip moved), same end

    head = git(ws.root, "rev-parse", "HEAD")
    git(ws.root, "update-ref", "refs/evotree/harness", head)  # by hand, no signed promotion
    moved = trusted_analyzers(ws)
    assert not moved.trusted and (moved.id, moved.commit) == ("h0", None)  # not followed
    assert "not signed" in (moved.warning or "") and "h0 is used instead" in (moved.warning or "")
    assert "git update-ref -d refs/evotree/harness" in moved.fix
    loaded = active_analyzers(ws)
    assert (loaded.id, loaded.commit, loaded.signed) == ("h0", None, False)
    assert trusted_judge(ws).trusted  # the judge chain is untouched

    signed = judge.commit
    git(ws.root, "update-ref", "refs/evotree/judge", head)
    forged = trusted_judge(ws)
    assert not forged.trusted and forged.commit == signed  # the signed end, not the ref
    assert signed and f"git update-ref refs/evotree/judge {signed}" in forged.fix
