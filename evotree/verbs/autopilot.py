"""``evotree autopilot``: the loop driven by a proposer, through the verbs an agent uses.

For each proposal: branch from the champion (its hypothesis is the proposal), apply it in the
new version's worktree, commit, run the seeds the score gate asks for (its ``numbers``: the
champion's re-runs, the candidate's looks), evaluate every gate, and either record the version
as passed or abandon it with the gate's reason (negative evidence). The autopilot **never
signs**: a passed version waits for a person's ``evotree promote``; the session stops there
unless a ``promote`` callable is passed in (a benchmark's or a demo's second signer, made in a
temporary workspace), after which it goes on from the new champion.

Proposals come from

- a **search space** declared in ``evotree.toml`` (``[autopilot]`` with ``[autopilot.knobs.NAME]``
  low/high/step): each proposal moves one knob by one or two steps, up or down, from the
  champion's value in the recipe file; the sequence is drawn from ``[autopilot].seed``, fixed in
  advance, so the same moves can be judged by other rules (``bench/bench_real_loop.py``);
- ``suggest`` on the champion (recipe changes and skills the findings call for);
- a **folder of patches** (``*.patch`` / ``*.diff``, applied in name order with libgit2).

The search-level stop rule: **post-peak** (``patience`` proposals in a row not passed after the
last promotion), **futility** (as many before any promotion), **budget** (``max_runs`` runs, or
the workspace's own budget refusing a run), or the proposals run out.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError, UsageError
from evotree.harness.budget import BudgetExceeded

if TYPE_CHECKING:
    from evotree.verbs import Session

__all__ = [
    "AutopilotResult",
    "Knob",
    "Outcome",
    "Proposal",
    "ProposalError",
    "format_number",
    "knob_proposals",
    "knobs_from_config",
    "patch_proposals",
    "read_knob",
    "run_autopilot",
    "set_knob",
    "suggest_proposals",
]

#: gate evaluations per proposal beyond the gate's own looks before it is left unsettled: a guard
#: against a gate that keeps asking (the first look's readiness and the champion's first re-run
#: are evaluations of their own)
SPARE_ROUNDS = 2
#: the gate's looks assumed when its decision does not say how many it plans
DEFAULT_LOOKS = 8
_NUMBER = r"[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


class ProposalError(EvotreeError):
    """A proposal cannot be applied to the champion's files (a knob without its line, a patch that
    does not apply): the version is abandoned, the session goes on."""

    code = "proposal_not_applicable"


@dataclass(frozen=True)
class Knob:
    """One knob of the search space: the ``NAME = number`` line of ``file``, within [low, high]."""

    name: str
    low: float
    high: float
    step: float
    file: str

    @property
    def integer(self) -> bool:
        return all(float(v).is_integer() for v in (self.low, self.high, self.step))


def knobs_from_config(section: Any) -> list[Knob]:
    """The knobs of an ``[autopilot]`` section (validated by :mod:`evotree.core.config`)."""
    return [
        Knob(
            name,
            float(k["low"]),
            float(k["high"]),
            float(k["step"]),
            str(k.get("file") or section.recipe),
        )
        for name, k in sorted(section.knobs.items())
    ]


def _line(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?m)^(?P<head>[ \t]*{re.escape(name)}[ \t]*=[ \t]*)(?P<value>{_NUMBER})"
        r"(?P<tail>[ \t]*(?:#.*)?)$"
    )


def read_knob(text: str, name: str) -> float:
    """The value of the first ``NAME = number`` line of ``text`` (a TOML or Python recipe)."""
    found = _line(name).search(text)
    if found is None:
        raise ProposalError(
            f"the recipe has no line `{name} = <number>`",
            fix=f"add `{name} = <default>` to the recipe file, or drop the knob from [autopilot]",
        )
    return float(found.group("value").replace("_", ""))


def format_number(value: float, integer: bool = False) -> str:
    """``value`` as the recipe writes it: an integer, or the shortest float text (10 digits)."""
    if integer:
        return str(int(round(value)))
    text = f"{value:.10g}"
    return text if any(c in text for c in ".en") else text + ".0"


def set_knob(text: str, name: str, value: float, integer: bool = False) -> str:
    """``text`` with its first ``NAME = number`` line set to ``value`` (comments kept)."""
    pattern = _line(name)
    found = pattern.search(text)
    if found is None:
        read_knob(text, name)  # raises the clear error
    assert found is not None
    return text[: found.start("value")] + format_number(value, integer) + text[found.end("value") :]


@dataclass
class Proposal:
    """One change to try: ``kind`` knob, change (a suggested recipe change), skill or patch."""

    key: str
    kind: str
    summary: str
    #: knob: {"knob", "steps"}; change: {"param", "to", "file"}; skill: {"skill"}; patch: {"path"}
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def knob_proposals(knobs: Sequence[Knob], *, count: int, seed: int = 0) -> list[Proposal]:
    """``count`` knob moves drawn from ``seed`` (fixed in advance): one knob, ±1 or ±2 steps each.
    A move is relative to the champion at the time it is tried (see :func:`apply_proposal`)."""
    if not knobs:
        raise UsageError(
            "the search space has no knobs",
            fix="declare [autopilot.knobs.NAME] low/high/step in "
            "evotree.toml, or pass --suggest or --patches DIR",
        )
    rng = random.Random(seed)
    out = []
    for i in range(count):
        knob = knobs[rng.randrange(len(knobs))]
        steps = rng.choice((-2, -1, 1, 2))
        out.append(
            Proposal(
                key=f"k{i + 1}",
                kind="knob",
                summary=f"{knob.name} {steps:+d} step(s) of {knob.step:g}",
                data={"knob": knob.name, "steps": steps},
            )
        )
    return out


def patch_proposals(folder: str | Path) -> list[Proposal]:
    """One proposal per ``*.patch`` / ``*.diff`` file of ``folder``, in name order."""
    root = Path(folder)
    if not root.is_dir():
        raise UsageError(
            f"--patches {folder}: not a folder", fix="pass a folder of *.patch or *.diff files"
        )
    files = sorted(p for p in root.iterdir() if p.is_file() and p.suffix in (".patch", ".diff"))
    if not files:
        raise UsageError(
            f"--patches {folder}: no *.patch or *.diff file in it",
            fix="write one with `git diff > DIR/01-change.patch`",
        )
    out = []
    for path in files:
        subject = next(
            (
                line[9:].strip()
                for line in path.read_text(errors="replace").splitlines()
                if line.startswith("Subject: ")
            ),
            path.stem,
        )
        out.append(
            Proposal(
                key=path.stem,
                kind="patch",
                summary=subject[:200],
                data={"path": str(path.resolve())},
            )
        )
    return out


def suggest_proposals(
    session: Session, version: str, recipe: str = "recipe.toml"
) -> list[Proposal]:
    """The recipe changes and applicable skills ``suggest`` offers for ``version``, best first."""
    result = session.suggest(version)
    data = result.to_dict() if hasattr(result, "to_dict") else dict(result or {})
    out: list[Proposal] = []
    for i, change in enumerate(data.get("changes") or []):
        if isinstance(change.get("to"), (int, float)) and not isinstance(change.get("to"), bool):
            out.append(
                Proposal(
                    key=f"c{i + 1}",
                    kind="change",
                    summary=f"{change['param']} {change.get('from')} -> {change['to']}"[:200],
                    data={
                        "param": str(change["param"]),
                        "to": change["to"],
                        "file": str(change.get("file") or recipe),
                    },
                )
            )
    for i, item in enumerate(data.get("suggestions") or []):
        if item.get("skill") and item.get("applies", True) and not item.get("applied", False):
            out.append(
                Proposal(
                    key=f"s{i + 1}",
                    kind="skill",
                    summary=f"apply the skill {item['skill']}",
                    data={"skill": str(item["skill"])},
                )
            )
    return out


def _inside(worktree: Path, rel: str) -> Path:
    path = (worktree / rel).resolve()
    if worktree.resolve() not in path.parents:
        raise ProposalError(
            f"{rel} is outside the version's tree", fix="name a file inside the repository"
        )
    if not path.is_file():
        raise ProposalError(
            f"the version has no file {rel}", fix="check [autopilot].recipe / the knob's file"
        )
    return path


def apply_proposal(proposal: Proposal, worktree: Path, knobs: dict[str, Knob]) -> str:
    """Apply ``proposal`` in ``worktree`` (a knob move, a recipe change or a patch); the commit
    message. Skills are applied by ``branch`` itself."""
    kind, data = proposal.kind, proposal.data
    if kind == "knob":
        knob = knobs[data["knob"]]
        path = _inside(worktree, knob.file)
        text = path.read_text()
        old = read_knob(text, knob.name)
        new = min(knob.high, max(knob.low, old + data["steps"] * knob.step))
        if new == old:  # at a bound: the move goes the other way
            new = min(knob.high, max(knob.low, old - data["steps"] * knob.step))
        new = round(new, 12)
        path.write_text(set_knob(text, knob.name, new, knob.integer))
        data["from"], data["to"] = old, new
        return f"{knob.name} {format_number(old, knob.integer)} -> {format_number(new, knob.integer)} (autopilot)"
    if kind == "change":
        path = _inside(worktree, data["file"])
        text = path.read_text()
        old = read_knob(text, data["param"])
        path.write_text(
            set_knob(text, data["param"], float(data["to"]), isinstance(data["to"], int))
        )
        data["from"] = old
        return f"{data['param']} {format_number(old)} -> {data['to']} (suggested)"
    if kind == "patch":
        import pygit2

        repo = pygit2.Repository(str(worktree))
        try:
            text = Path(data["path"]).read_text()
            diff = pygit2.Diff.parse_diff(text if text.endswith("\n") else text + "\n")
            repo.apply(diff, pygit2.GIT_APPLY_LOCATION_WORKDIR)
        except (pygit2.GitError, ValueError, OSError) as exc:
            raise ProposalError(
                f"the patch {Path(data['path']).name} does not apply to the champion: {exc}",
                fix="regenerate it against the champion (git diff)",
            ) from None
        return f"{proposal.summary} (patch {Path(data['path']).name})"
    if kind == "skill":
        return f"apply the skill {data['skill']}"
    raise ProposalError(f"unknown proposal kind {kind!r}", fix="knob, change, skill or patch")


@dataclass
class Outcome:
    """What became of one proposal."""

    proposal: Proposal
    version: str | None = None
    commit: str | None = None
    #: passed, not_passed, not_applicable, no_change, budget
    status: str = "not_passed"
    verdict: str | None = None
    delta: float | None = None
    ci: list[float] | None = None
    summary: str = ""
    runs: int = 0
    champion: str | None = None
    promoted: bool = False
    first_run: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "proposal": self.proposal.to_dict()}


@dataclass
class AutopilotResult:
    """A session of the autopilot: every proposal's outcome, totals and why it stopped."""

    start_champion: str
    champion: str
    outcomes: list[Outcome] = field(default_factory=list)
    stopped: str = "exhausted"
    stop_reason: str = ""
    runs: int = 0
    champion_runs: int = 0
    #: a passed version waiting for a person's sign-off (the autopilot never signs)
    awaiting_signoff: str | None = None
    v: int = 1

    @property
    def promoted(self) -> list[str]:
        return [o.version for o in self.outcomes if o.promoted and o.version]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["outcomes"] = [o.to_dict() for o in self.outcomes]
        out["promoted"] = self.promoted
        out["passed"] = [o.version for o in self.outcomes if o.status == "passed"]
        return out


def _score(report: Any) -> Any:
    return next((g for g in report.gates if g.name == "score"), None)


def _seeds_of(session: Session, version: str) -> list[int]:
    return [r.seed for r in session.runs(version) if r.seed is not None]


def _headline(records: Sequence[Any]) -> dict[str, float]:
    return {
        r.run_id: float(r.headline["value"])
        for r in records
        if r.headline and isinstance(r.headline.get("value"), (int, float))
    }


def run_autopilot(
    session: Session,
    proposals: Sequence[Proposal],
    *,
    max_proposals: int | None = None,
    max_runs: int = 0,
    patience: int = 3,
    futility: int = 0,
    first_seeds: int | None = None,
    jobs: int | None = None,
    max_rounds: int | None = None,
    promote: Callable[[str], bool] | None = None,
    progress: Callable[[str, dict[str, Any]], None] | None = None,
) -> AutopilotResult:
    """Try ``proposals`` in order through ``session``'s verbs (module doc); never signs.

    ``max_rounds``: gate evaluations per proposal at most, the champion's first re-run's included;
    None (the default) follows the score gate's whole look schedule, so its last look (where its
    alpha spending puts the largest share) is always reached. The autopilot before 2026-12-06
    stopped at 8, which cut the last look whenever a champion re-run took a round; the real-loop
    benchmark's ``--max-rounds 8`` replays it.

    ``promote``: called with a passed version; returns whether it is now the champion (a second
    signer's promotion, for benchmarks and the demo). Without it the session stops at the first
    passed version (``awaiting_signoff``). ``progress(event, info)``: events ``proposal``,
    ``run``, ``gate``, ``outcome``, ``stop``, each with the running totals.
    """

    ws = session.act()
    config = ws.config
    knobs = {k.name: k for k in knobs_from_config(config.autopilot)}
    first = max(1, first_seeds if first_seeds is not None else config.gates.min_seeds)
    champion_seeds = max(1, int(config.gates.champion_seeds))
    result = AutopilotResult(start_champion=ws.champion(), champion=ws.champion())
    pilot = _Pilot(
        session=session,
        result=result,
        knobs=knobs,
        todo=list(proposals)[: max_proposals if max_proposals else None],
        first=first,
        champion_seeds=champion_seeds,
        #: the session starts after a peak when its champion was itself promoted (not the root)
        after_peak=bool(getattr(ws.resolve(result.start_champion), "parent", None)),
        max_runs=max_runs,
        patience=patience,
        futility=futility or patience,
        jobs=jobs,
        promote=promote,
        progress=progress,
        max_rounds=max_rounds,
    )
    for index, proposal in enumerate(pilot.todo):
        if pilot.attempt(index, proposal):
            break
    else:
        result.stop_reason = f"all {len(pilot.todo)} proposals were tried"
    result.champion = session.open().champion()
    pilot.tell("stop", stopped=result.stopped, reason=result.stop_reason)
    return result


@dataclass
class _Pilot:
    """One autopilot session: its settings, its running result, and the steps of one proposal
    (branch, apply, run, look at the gates, settle), in the order :func:`run_autopilot` takes."""

    session: Session
    result: AutopilotResult
    knobs: dict[str, Knob]
    todo: list[Proposal]
    #: seeds of a candidate's first look
    first: int
    #: seeds of a champion re-run when it has no runs since its promotion
    champion_seeds: int
    after_peak: bool
    max_runs: int
    patience: int
    futility: int
    jobs: int | None
    promote: Callable[[str], bool] | None
    progress: Callable[[str, dict[str, Any]], None] | None
    #: gate evaluations per proposal at most (None: the gate's whole look schedule)
    max_rounds: int | None = None
    #: proposals in a row not passed
    missed: int = 0
    #: champions re-run this session (the gate's champion_seeds)
    reran: set[str] = field(default_factory=set)

    def tell(self, event: str, **info: Any) -> None:
        """Report ``event`` with the running totals to ``progress``."""
        if self.progress is not None:
            self.progress(
                event,
                {
                    **info,
                    "runs": self.result.runs,
                    "proposals_done": len(self.result.outcomes),
                    "proposals": len(self.todo),
                    "champion": self.result.champion,
                    "promoted": len(self.result.promoted),
                },
            )

    def next_seed(self, version: str) -> int:
        """The first seed ``version`` has not run."""
        return max(_seeds_of(self.session, version) or [-1]) + 1

    def run(self, version: str, count: int, start: int, outcome: Outcome) -> list[Any]:
        """Run ``count`` seeds of ``version`` from ``start``, within the autopilot's run budget."""
        result = self.result
        if self.max_runs and result.runs + count > self.max_runs:
            raise BudgetExceeded(
                f"the autopilot's run budget ({self.max_runs}) would be passed",
                fix="raise --max-runs",
            )
        self.tell("run", version=version, seeds=count, seed_start=start)
        records = self.session.run([version], seeds=count, seed_start=start, jobs=self.jobs)
        result.runs += len(records)
        outcome.runs += len(records)
        if version == result.champion:
            result.champion_runs += len(records)
        return records

    def stop(self) -> bool:
        """The search-level rule after a proposal that did not pass: post-peak or futility."""
        result, missed = self.result, self.missed
        if (result.promoted or self.after_peak) and missed >= self.patience:
            result.stopped = "post_peak"
            result.stop_reason = (
                f"{missed} proposals in a row did not pass since the last promotion "
                f"(champion {self.session.open().champion()}); patience {self.patience}"
            )
            return True
        if not (result.promoted or self.after_peak) and missed >= self.futility:
            result.stopped = "futility"
            result.stop_reason = (
                f"{missed} proposals in a row did not pass, none promoted "
                f"(futility {self.futility})"
            )
            return True
        return False

    def attempt(self, index: int, proposal: Proposal) -> bool:
        """One proposal from its branch to its outcome; whether the session stops after it."""
        session = self.session
        champion = session.open().champion()
        self.result.champion = champion
        outcome = Outcome(proposal=proposal, champion=champion)
        self.tell("proposal", index=index + 1, key=proposal.key, summary=proposal.summary)
        record = None
        try:
            skills = {proposal.data["skill"]: {}} if proposal.kind == "skill" else None
            record = session.branch(
                f"autopilot {proposal.key}: {proposal.summary}", parent="champion", skills=skills
            )
            outcome.version = record.id
            worktree = session.open().absolute(record.worktree)
            message = apply_proposal(proposal, worktree, self.knobs)
            committed = session.commit(record.id, message)
            outcome.commit = committed.commit
            if not committed.changed and proposal.kind != "skill":
                self._unchanged(record.id, outcome)
                return False
            self._judge(record.id, champion, outcome)
        except BudgetExceeded as exc:
            return self._out_of_budget(record, outcome, exc)
        except ProposalError as exc:
            return self._not_applicable(record, outcome, exc)
        return self._settle(record.id, outcome)

    def _unchanged(self, version: str, outcome: Outcome) -> None:
        """A proposal that changes nothing: its version abandoned, not counted as a miss."""
        outcome.status, outcome.summary = (
            "no_change",
            "the proposal changes nothing in the champion's files",
        )
        self.session.abandon(version, reason="autopilot: the proposal changed nothing")
        self.result.outcomes.append(outcome)
        self.tell("outcome", **outcome.to_dict())

    def _judge(self, version: str, champion: str, outcome: Outcome) -> None:
        """The candidate's first seeds, then the gates' looks, running the seeds each asks for,
        until the gate stops asking (its last look decides) or ``max_rounds`` evaluations."""
        records = self.run(version, self.first, self.next_seed(version), outcome)
        outcome.first_run = _headline(records[:1])
        round_ = 0
        while True:
            report, score, numbers = self._look(version, outcome)
            round_ += 1
            if report.passed:
                outcome.status = "passed"
                return
            failed = [g for g in report.failed if g.name != "score"]
            if failed and outcome.verdict == "pass":
                outcome.verdict = "other_gates"
                outcome.summary = "; ".join(f"{g.name}: {g.summary}" for g in failed)[:500]
                return
            more = numbers.get("next_seeds") or {}
            limit = self._round_limit(numbers)
            if (
                score is not None
                and score.status == "unavailable"
                and "verdict" not in numbers
                and champion not in self.reran
                and round_ < limit
            ):
                # no comparison yet: the champion has no runs since its promotion
                self.reran.add(champion)
                self.run(champion, self.champion_seeds, self.next_seed(champion), outcome)
                continue
            if outcome.verdict not in ("more_seeds", "not_ready") or not any((more or {}).values()):
                return
            if round_ >= limit:  # no look would follow: seeds run now would only be spent
                return
            self._more_seeds(version, champion, more, outcome)

    def _round_limit(self, numbers: dict[str, Any]) -> int:
        """Gate evaluations this proposal may have: ``max_rounds`` when set, else the gate's own
        looks (its decision's ``max_looks``) and :data:`SPARE_ROUNDS`."""
        if self.max_rounds:
            return self.max_rounds
        return int(numbers.get("max_looks") or DEFAULT_LOOKS) + SPARE_ROUNDS

    def _look(self, version: str, outcome: Outcome) -> tuple[Any, Any, dict[str, Any]]:
        """Diagnose and evaluate the gates once; the score gate's verdict into ``outcome``."""
        self.session.diagnose(version)  # the analyzers gate reads this machine's diagnosis
        report = self.session.gates(version)
        score = _score(report)
        numbers = dict(getattr(score, "numbers", None) or {})
        outcome.verdict = numbers.get("verdict") or (score.status if score else None)
        outcome.delta, outcome.ci = numbers.get("delta"), numbers.get("ci")
        outcome.summary = getattr(score, "summary", "") if score is not None else ""
        self.tell(
            "gate",
            version=version,
            verdict=outcome.verdict,
            delta=outcome.delta,
            passed=report.passed,
            summary=outcome.summary,
        )
        return report, score, numbers

    def _more_seeds(
        self, version: str, champion: str, more: dict[str, Any], outcome: Outcome
    ) -> None:
        """Run the seeds the score gate asks for: the champion's, then the candidate's."""
        if more.get("champion"):
            self.reran.add(champion)
            self.run(champion, int(more["champion"]), self.next_seed(champion), outcome)
        if more.get("candidate"):
            self.run(version, int(more["candidate"]), self.next_seed(version), outcome)

    def _out_of_budget(self, record: Any, outcome: Outcome, exc: BudgetExceeded) -> bool:
        """A budget refused a run: the proposal's version abandoned and the session stopped."""
        outcome.status, outcome.summary = "budget", exc.message
        self.result.outcomes.append(outcome)
        self.result.stopped, self.result.stop_reason = "budget", exc.message
        if record is not None:
            _abandon(self.session, record.id, f"autopilot: stopped by the budget ({exc.message})")
        self.tell("outcome", **outcome.to_dict())
        return True

    def _not_applicable(self, record: Any, outcome: Outcome, exc: ProposalError) -> bool:
        """A proposal that does not apply: abandoned, counted as a miss."""
        outcome.status, outcome.summary = "not_applicable", exc.message
        if record is not None:
            _abandon(self.session, record.id, f"autopilot: {exc.message}")
        self.result.outcomes.append(outcome)
        self.tell("outcome", **outcome.to_dict())
        self.missed += 1
        return self.stop()

    def _settle(self, version: str, outcome: Outcome) -> bool:
        """A judged proposal: passed (promoted, or awaiting a person), or abandoned with the
        gates' reason; whether the session stops."""
        result = self.result
        result.outcomes.append(outcome)
        if outcome.status == "passed":
            self.missed = 0
            if self.promote is None:
                result.awaiting_signoff = version
                result.stopped = "awaiting_signoff"
                result.stop_reason = (
                    f"{version} passed every gate; promotion needs a person: "
                    f"evotree promote {version}"
                )
                self.tell("outcome", **outcome.to_dict())
                return True
            outcome.promoted = bool(self.promote(version))
            if outcome.promoted:
                result.champion = version
        else:
            outcome.status = "not_passed"
            self.missed += 1
            _abandon(
                self.session,
                version,
                f"autopilot: the gates did not pass ({outcome.verdict}): {outcome.summary}"[:500],
            )
        self.tell("outcome", **outcome.to_dict())
        return self.stop()


def _abandon(session: Session, version: str, reason: str) -> None:
    try:
        session.abandon(version, reason=reason)
    except EvotreeError:  # already abandoned, or the verb refuses: the outcome says what happened
        pass
