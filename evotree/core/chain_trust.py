"""The end of a signed chain of promotions (the analyzers' or the judge's), and what disagrees
with it.

One type for every lineage that is put in force only by signed promotions: ``evotree verify``'s
walk (:func:`evotree.gates.trust.chain_trust`, cached by the ledger tip and the refs) says where
the chain ends and lists the problems (a ref or the ledger moved without a signature). A reader
that acts uses :attr:`ChainTrust.commit` — the signed end — never the ref; a problem makes it
warn (reading verbs) or refuse (verbs that would act on it).

The type lives in ``core`` so that the layer that only reads commits (the analyzer versions'
loader in ``evotree.diagnostics``) and the gates layer that verifies signatures share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evotree.core.refs import JUDGE_REF, NAMESPACE

__all__ = ["CHAINS", "ChainTrust"]

#: the signed chains: name -> (its ref, the command that promotes along it)
CHAINS: dict[str, tuple[str, str]] = {
    # the ref keeps the lineage's first spelling: persisted name (existing ledgers and signed
    # statements use it)
    "analyzers": (NAMESPACE + "harness", "evotree analyzers promote HN"),
    "judge": (JUDGE_REF, "evotree judge promote DIR"),
}
#: what one end of each chain is called in messages
_END_NOUN = {"analyzers": "analyzer version", "judge": "judge"}


@dataclass(frozen=True)
class ChainTrust:
    """Where the signed chain ``chain`` ends (``id``, ``commit``) and the problems verify found."""

    #: "analyzers" or "judge" (a key of :data:`CHAINS`)
    chain: str
    #: the end's name (an analyzer version such as ``h2``; for the judge, None: judges are named
    #: by commit)
    id: str | None
    #: the end's commit (None: nothing promoted along the chain yet)
    commit: str | None
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def trusted(self) -> bool:
        """True when the ref and the ledger agree with the signed chain."""
        return not self.problems

    @property
    def ref(self) -> str:
        """The git ref the chain's end should be at."""
        return CHAINS[self.chain][0]

    @property
    def label(self) -> str:
        """The end, for people: its id, else its short commit, else "none"."""
        return self.id or (self.commit[:10] if self.commit else "none")

    @property
    def noun(self) -> str:
        """What one end of the chain is called in messages ("analyzer version", "judge")."""
        return _END_NOUN.get(self.chain, self.chain)

    @property
    def warning(self) -> str | None:
        """One sentence for people and agents, or None when everything matches the signed chain."""
        if not self.problems:
            return None
        more = len(self.problems) - 1
        return (
            f"the {self.noun} in force is not signed: {self.problems[0]}"
            + (f" (+{more} more problem(s))" if more else "")
            + f"; the last signed {self.noun} {self.label} is used instead"
        )

    @property
    def fix(self) -> str:
        """How to restore the ref to the signed chain."""
        restore = (
            f"git update-ref {self.ref} {self.commit}"
            if self.commit
            else f"git update-ref -d {self.ref}"
        )
        return (
            f"run `evotree verify` for the full list; restore the {self.chain} ref to the signed "
            f"chain ({restore}) and the ledger from a trusted copy; a new {self.noun} goes in "
            f"force only through `{CHAINS[self.chain][1]}` with a person's signed sign-off"
        )
