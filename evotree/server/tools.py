"""The MCP tools of ``evotree serve``: the agent's verbs (:mod:`evotree.server.verbs`) on the
official MCP SDK's ``MCPServer``.

Every tool returns what the CLI's ``--json`` prints for the same command, as the JSON text of the
tool's one text content block (no ``structuredContent`` copy: see :func:`ok_result`). Failures are tool errors
(``isError``) whose content is the CLI's ``{"error": {"code", "exit_code", "message", "fix",
"details"}}`` (schema ``error``): an :class:`~evotree.core.errors.EvotreeError` carries its own
``to_dict()``; a bug is ``internal_error`` (exit code 1) and the traceback goes to the server's
stderr. Bad arguments (checked against the JSON Schema published with each tool) are
``bad_arguments`` and an unknown tool ``unknown_tool``, both with exit code 2 (a usage error).

The library is blocking: each call runs in a worker thread, so the server keeps answering
(progress, pings, other connections) while a run trains. ``run`` sends MCP progress
notifications (``notifications/progress``) from the harness's progress events when the
client asks for them (a ``progressToken``); cancelling the request (or closing the
connection) stops the runs as Ctrl-C does: they are marked ``cancelled``.

Promotion, run approval, analyzers promotion, the judge and the policy are not here:
:data:`FORBIDDEN_WORDS` lists the words no tool name may contain (``tests/test_server.py``).
"""

import json
import logging
import sys
import threading
import time
import traceback
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from evotree.core import __version__
from evotree.core.errors import EvotreeError
from evotree.core.text import escape_control
from evotree.server.verbs import Encoded, Verbs
from evotree.verbs.policy import hidden_now
from evotree.verbs.policy import redacted

__all__ = [
    "FORBIDDEN_WORDS",
    "TOOL_NAMES",
    "EvotreeTools",
    "build_server",
    "error_result",
    "ok_result",
]

log = logging.getLogger("evotree.server")

#: No tool name contains one of these: promotion and approvals need a person at a terminal, and
#: the judge, the analyzers in force and the policy change only through signed promotions
#: ("harness": the analyzers' lineage's first name).
FORBIDDEN_WORDS = (
    "promote",
    "approve",
    "approval",
    "analyzers",
    "harness",
    "judge",
    "policy",
    "config",
    "sign",
    "verify",
    "abandon",
    "champion",
)

#: The tools, in the order they are listed.
TOOL_NAMES = (
    "tree",
    "show",
    "log",
    "branch",
    "commit",
    "run",
    "runs",
    "compare",
    "diagnose",
    "suggest",
    "skill_list",
    "skill_show",
    "memory_search",
    "memory_add",
    "audit",
    "gates",
    "report",
    "sql",
    "spend_record",
)

INSTRUCTIONS = """\
evotree: a git-native version tree of an RL training recipe. The loop: tree -> diagnose V ->
suggest V / memory_search -> branch (parent, hypothesis, skills) -> edit the files of the new
version's worktree (path in the branch result) -> commit -> run -> diagnose -> compare
champion vN -> audit -> gates -> report. Results are the documents of `evotree CMD --json`
(`evotree schema NAME`); errors carry code, exit_code, message and fix. Promotion is a
person's decision: when gates pass, stop and hand over."""

_READ = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
_WRITE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)

Version = Annotated[
    str,
    Field(
        description="a version id (v3), a name given at branch, or 'champion'",
        min_length=1,
        max_length=200,
    ),
]


#: ``EvotreeTools.call``: runs a blocking function in a worker thread, shapes its result for MCP.
ToolCall = Callable[..., Awaitable[CallToolResult]]


def ok_result(data: Any) -> CallToolResult:
    """``data`` as the CLI's ``--json`` prints it: one text content block holding the JSON.

    No ``structuredContent`` copy: the tools declare no output schema, and a second, parsed copy
    of a large document costs more than everything else together (a 1,000-version ``tree``,
    512 KB, through the bare SDK: 41.7 ms a call with both forms against 7.9 ms with the text
    alone; BENCHMARKS.md, "MCP tool-call latency"). Clients parse the text; its schema is the
    command's (``evotree schema NAME``).
    """
    text = data.text if isinstance(data, Encoded) else json.dumps(data, default=str)
    return CallToolResult(content=[TextContent(type="text", text=text)])


def error_result(error: dict[str, Any]) -> CallToolResult:
    """A tool error carrying the CLI's ``{"error": {...}}`` document."""
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps({"error": error}, default=str))],
        is_error=True,
    )


class _Server(MCPServer):
    """``MCPServer`` whose argument errors and unknown tools are ``{"error": ...}`` documents too
    (code ``bad_arguments`` / ``unknown_tool``, exit code 2: a usage error), like every other
    failure, instead of the SDK's plain text."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except UnexpectedToolError:
            raise
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                    for e in cause.errors()
                )
                return error_result(
                    {
                        "code": "bad_arguments",
                        "exit_code": 2,
                        "message": f"bad arguments for {name}: {problems}",
                        "fix": f"call {name} with the arguments of its input schema (tools/list)",
                        "details": {"tool": name},
                    }
                )
            if self._tool_manager.get_tool(name) is None:  # noqa: SLF001 - the SDK's registry of tools
                return error_result(
                    {
                        "code": "unknown_tool",
                        "exit_code": 2,
                        "message": f"unknown tool {name!r}",
                        "fix": f"the tools are: {', '.join(TOOL_NAMES)}",
                        "details": {"tool": name},
                    }
                )
            return error_result(
                {
                    "code": "tool_error",
                    "exit_code": 1,
                    "message": str(exc),
                    "details": {"tool": name},
                }
            )


class _RunProgress:
    """The harness's progress events of one ``run`` call as MCP progress: ``total`` = runs
    planned, ``progress`` = finished runs plus the fraction of each running one (steps of its
    step budget in the train phase, 0.9 once judged); strictly increasing, as MCP requires.
    Step events are thinned to a few per second per run; metric events are not forwarded."""

    STEP_INTERVAL = 0.25

    def __init__(self, total: int) -> None:
        self.total = float(max(total, 1))
        self.fraction: dict[str, float] = {}
        self.max_steps: dict[str, int | None] = {}
        self.last_step_sent: dict[str, float] = {}
        self.last = 0.0
        self.lock = threading.Lock()

    def update(
        self, run_id: str, event: str, info: dict[str, Any]
    ) -> tuple[float, float, str] | None:
        with self.lock:
            if event == "started":
                self.fraction[run_id] = 0.0
                self.max_steps[run_id] = info.get("max_steps")
                message = f"{run_id}: started ({info.get('version')}, seed {info.get('seed')})"
            elif event == "phase":
                if info.get("phase") == "judge":
                    self.fraction[run_id] = max(self.fraction.get(run_id, 0.0), 0.9)
                message = f"{run_id}: {info.get('phase')} phase"
            elif event == "step":
                now = time.monotonic()
                if now - self.last_step_sent.get(run_id, 0.0) < self.STEP_INTERVAL:
                    return None
                self.last_step_sent[run_id] = now
                limit = self.max_steps.get(run_id)
                step = info.get("step")
                if limit and isinstance(step, (int, float)):
                    self.fraction[run_id] = max(
                        self.fraction.get(run_id, 0.0), min(0.9 * step / limit, 0.9)
                    )
                message = f"{run_id}: {info.get('phase')} step {step}"
            elif event == "finished":
                self.fraction[run_id] = 1.0
                headline = info.get("headline") or {}
                score = f" {headline.get('metric')}={headline.get('value')}" if headline else ""
                message = f"{run_id}: {info.get('status')}{score}"
            else:
                return None
            value = min(sum(self.fraction.values()), self.total)
            value = max(value, self.last + 1e-6)
            self.last = value
            return value, self.total, escape_control(message)


class EvotreeTools:
    """Calls :class:`Verbs` in worker threads and shapes results and errors for MCP."""

    def __init__(self, verbs: Verbs) -> None:
        self.verbs = verbs
        self._inflight: set[threading.Event] = set()
        self._cancels: set[threading.Event] = set()
        self._lock = threading.Lock()

    async def call(
        self, fn: Callable[[], Any], *, cancel: threading.Event | None = None
    ) -> CallToolResult:
        """Run ``fn`` in a worker thread; its dict as the result, an error as a tool error.

        With ``cancel``, cancelling the request sets it (the runs stop and are marked cancelled,
        in the background) instead of waiting for ``fn`` to finish.
        """
        done = threading.Event()

        def work() -> Any:
            try:
                return fn()
            finally:
                with self._lock:
                    self._inflight.discard(done)
                    if cancel is not None:
                        self._cancels.discard(cancel)
                done.set()

        with self._lock:
            self._inflight.add(done)
            if cancel is not None:
                self._cancels.add(cancel)
        try:
            if cancel is None:
                data = await anyio.to_thread.run_sync(work)
            else:
                try:
                    data = await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
                except anyio.get_cancelled_exc_class():
                    cancel.set()
                    raise
        except EvotreeError as exc:
            return error_result(exc.to_dict())
        except Exception as exc:  # noqa: BLE001 - a bug: report it to the agent, keep serving
            log.error("tool call failed unexpectedly:\n%s", traceback.format_exc())
            return error_result(
                {
                    "code": "internal_error",
                    "exit_code": 1,
                    "message": f"unexpected internal error: {type(exc).__name__}: {exc}",
                    "fix": "a bug in evotree: report it with the server's stderr",
                }
            )
        try:
            data = await anyio.to_thread.run_sync(self._shown, data)
        except Exception:  # noqa: BLE001 - the boundary could not be decided: show nothing (fail closed)
            log.error("visibility check failed:\n%s", traceback.format_exc())
            return error_result(
                {
                    "code": "hidden_until_finalize",
                    "exit_code": 10,
                    "message": "the result could not be checked for hidden figures, so it is withheld",
                    "fix": "a bug in evotree: report it with the server's stderr",
                }
            )
        return ok_result(data)

    def _shown(self, data: Any) -> Any:
        """``data`` as an agent may see it: while the workspace hides validation and held-out
        figures (EvoPolicyGym's boundary, decided by :mod:`evotree.verbs.policy`), without them."""

        if not hidden_now(self.verbs.open()):
            return data
        if isinstance(data, Encoded):
            return Encoded.of(redacted(data.data))
        return redacted(data)

    def shutdown(self, timeout: float = 60.0) -> int:
        """Cancel runs still in flight and wait (up to ``timeout`` s) for every call to end, so
        that runs are recorded as cancelled rather than crashed. Returns the calls left over."""
        with self._lock:
            for cancel in self._cancels:
                cancel.set()
            pending = list(self._inflight)
        deadline = time.monotonic() + timeout
        for done in pending:
            done.wait(max(0.0, deadline - time.monotonic()))
        return sum(1 for d in pending if not d.is_set())


def build_server(verbs: Verbs) -> tuple[MCPServer, EvotreeTools]:
    """The MCP server of ``verbs``: one tool per verb (:data:`TOOL_NAMES`)."""
    app: MCPServer = _Server(
        "evotree",
        version=__version__,
        instructions=INSTRUCTIONS,
        description=f"evotree version tree at {verbs.root}, acting for {verbs.principal}",
        log_level="WARNING",
    )
    tools = EvotreeTools(verbs)
    call = tools.call
    _version_tree_tools(app, verbs, call)
    _run_tools(app, verbs, call)
    _analysis_tools(app, verbs, call)
    _skill_and_memory_tools(app, verbs, call)
    _evidence_tools(app, verbs, call)
    return app, tools


def _version_tree_tools(app: MCPServer, verbs: Verbs, call: ToolCall) -> None:
    """The version tree: tree, show, log, branch, commit."""

    @app.tool(name="tree", annotations=_READ)
    async def tree() -> CallToolResult:
        """Every version: parents, children, status, hypothesis, headline score, the champion
        (`evotree tree --json`, schema `tree`)."""
        return await call(verbs.tree_encoded)

    @app.tool(name="show", annotations=_READ)
    async def show(version: Version) -> CallToolResult:
        """One version in detail: record, commits since branching, uncommitted files of its
        worktree, its events (`evotree show V --json`, schema `show`)."""
        return await call(lambda: verbs.show(version))

    @app.tool(name="log", annotations=_READ)
    async def log_(
        version: Annotated[str | None, Field(description="only this version's events")] = None,
        limit: Annotated[
            int | None, Field(ge=1, le=100_000, description="at most this many")
        ] = None,
    ) -> CallToolResult:
        """Ledger events, newest first (`evotree log --json`, schema `log`)."""
        return await call(lambda: verbs.log(version, limit))

    @app.tool(name="branch", annotations=_WRITE)
    async def branch(
        hypothesis: Annotated[
            str,
            Field(
                min_length=1,
                max_length=10_000,
                description="what this version changes and what you expect",
            ),
        ],
        parent: Annotated[
            str, Field(min_length=1, max_length=200, description="version to branch from")
        ] = "champion",
        name: Annotated[str | None, Field(description="version id (default: the next vN)")] = None,
        skills: Annotated[
            dict[str, dict[str, Any]] | None,
            Field(
                description="skills to apply with their parameters, e.g. "
                '{"StdGroupFilter": {"min_std": 0.1}} (skill_list)'
            ),
        ] = None,
    ) -> CallToolResult:
        """A new version from `parent`: branch evotree/vN and its own worktree, created by this
        server's principal (`evotree branch --json`, schema `version`). Edit the files under
        its `worktree`, then `commit`."""
        return await call(lambda: verbs.branch(hypothesis, parent=parent, name=name, skills=skills))

    @app.tool(name="commit", annotations=_WRITE)
    async def commit(
        version: Version,
        message: Annotated[
            str, Field(min_length=1, max_length=10_000, description="what changed and why")
        ],
    ) -> CallToolResult:
        """Commit every file of the version's worktree (new, changed, deleted; .gitignore'd ones
        left out) on its branch, authored by this server's principal. Runs use committed trees
        only. Returns {"v", "version", "branch", "commit", "previous_commit", "changed", "files"}."""
        return await call(lambda: verbs.commit(version, message))


def _run_tools(app: MCPServer, verbs: Verbs, call: ToolCall) -> None:
    """Runs: run (with progress notifications), runs."""

    @app.tool(name="run", annotations=_WRITE)
    async def run(
        versions: Annotated[
            list[str], Field(min_length=1, max_length=100, description="versions to run")
        ],
        ctx: Context,
        seeds: Annotated[int, Field(ge=1, le=1000, description="runs per version")] = 1,
        seed_start: Annotated[
            int, Field(ge=0, description="first seed (add seeds instead of repeating)")
        ] = 0,
        jobs: Annotated[
            int | None, Field(ge=1, le=1024, description="runs at once (default [executor].jobs)")
        ] = None,
        heldout: Annotated[bool, Field(description="also score the held-out split")] = False,
    ) -> CallToolResult:
        """Train and judge versions x seeds under the harness (train gate and budgets first), as
        `evotree run --json` (schema `run`). Sends progress notifications while it runs;
        cancelling the request stops the runs (marked cancelled)."""
        return await _with_progress(
            call,
            ctx,
            len(versions) * seeds,
            lambda progress, cancel: verbs.run(
                versions,
                seeds=seeds,
                seed_start=seed_start,
                jobs=jobs,
                heldout=heldout,
                progress=progress,
                cancel=cancel,
            ),
        )

    @app.tool(name="runs", annotations=_READ)
    async def runs(
        version: Annotated[str | None, Field(description="only runs of this version")] = None,
        run_id: Annotated[str | None, Field(description="only this run (its status)")] = None,
    ) -> CallToolResult:
        """Run records on this machine, oldest first, or one run's record and status
        (`evotree runs --json`, schema `run`)."""
        return await call(lambda: verbs.runs(version, run_id))


def _analysis_tools(app: MCPServer, verbs: Verbs, call: ToolCall) -> None:
    """Analysis: compare, diagnose, suggest."""

    @app.tool(name="compare", annotations=_READ)
    async def compare(
        a: Version,
        b: Version,
        split: Annotated[str, Field(description="eval split")] = "validation",
        intersect: Annotated[
            bool, Field(description="compare on the tasks both were scored on")
        ] = False,
        bootstrap: Annotated[
            int | None, Field(ge=100, le=1_000_000, description="bootstrap resamples")
        ] = None,
        seed: Annotated[int, Field(description="seed of the bootstrap")] = 0,
        look: Annotated[
            int | None, Field(ge=1, description="sequential evaluation: this is look K")
        ] = None,
        max_looks: Annotated[
            int | None, Field(ge=1, description="sequential evaluation: N looks")
        ] = None,
    ) -> CallToolResult:
        """Δ = b − a on the same task pool, seed-aware CI, p-value and a decision
        (`evotree compare A B --json`, schema `compare`). Act on `decision`."""
        return await call(
            lambda: verbs.compare(
                a,
                b,
                split=split,
                intersect=intersect,
                bootstrap=bootstrap,
                seed=seed,
                look=look,
                max_looks=max_looks,
            )
        )

    @app.tool(name="diagnose", annotations=_WRITE)
    async def diagnose(
        version: Version,
        layers: Annotated[
            list[Literal["score", "signal", "behavior", "version"]] | None,
            Field(description="only these layers (default all)"),
        ] = None,
    ) -> CallToolResult:
        """Findings of the version's runs, by the signed harness in force; recorded in the
        `findings` view (`evotree diagnose V --json`, schema `diagnose`)."""
        return await call(lambda: verbs.diagnose(version, layers))

    @app.tool(name="suggest", annotations=_READ)
    async def suggest(version: Version) -> CallToolResult:
        """Skills that address the version's findings, ranked by memory (`evotree suggest V --json`,
        schema `suggest`)."""
        return await call(lambda: verbs.suggest(version))


def _skill_and_memory_tools(app: MCPServer, verbs: Verbs, call: ToolCall) -> None:
    """Skills and memory: skill_list, skill_show, memory_search, memory_add."""

    @app.tool(name="skill_list", annotations=_READ)
    async def skill_list() -> CallToolResult:
        """The skills, marked when they do not apply to this workspace's domain
        (`evotree skill list --json`, schema `skill_list`)."""
        return await call(verbs.skill_list)

    @app.tool(name="skill_show", annotations=_READ)
    async def skill_show(
        name: Annotated[str, Field(min_length=1, max_length=200)],
    ) -> CallToolResult:
        """One skill: trigger, intervention, parameters, domains (`evotree skill show NAME --json`,
        schema `skill_show`)."""
        return await call(lambda: verbs.skill_show(name))

    @app.tool(name="memory_search", annotations=_READ)
    async def memory_search(
        query: Annotated[
            str,
            Field(
                min_length=1, max_length=2_000, description="every word must match; word* = prefix"
            ),
        ],
        kind: Annotated[
            Literal["skill_verification", "lesson", "negative_evidence", "incident"] | None,
            Field(description="only entries of this kind"),
        ] = None,
        limit: Annotated[int, Field(ge=1, le=1000)] = 20,
    ) -> CallToolResult:
        """What the tree learned: full-text search over memory (`evotree memory search --json`,
        schema `memory_search`)."""
        return await call(lambda: verbs.memory_search(query, kind=kind, limit=limit))

    @app.tool(name="memory_add", annotations=_WRITE)
    async def memory_add(
        text: Annotated[str, Field(min_length=1, max_length=20_000)],
        kind: Literal["lesson", "negative_evidence"] = "lesson",
        version: Annotated[str | None, Field(description="the version it is about")] = None,
        skill: Annotated[str | None, Field(description="the skill it is about")] = None,
        evidence: Annotated[
            dict[str, str] | None, Field(description="links: run id, finding code, commit")
        ] = None,
        tags: Annotated[list[str] | None, Field(max_length=50)] = None,
    ) -> CallToolResult:
        """Add a lesson or negative evidence to memory (`evotree memory add --json`, schema
        `memory_entry`)."""
        return await call(
            lambda: verbs.memory_add(
                text, kind=kind, version=version, skill=skill, evidence=evidence, tags=tags
            )
        )


def _evidence_tools(app: MCPServer, verbs: Verbs, call: ToolCall) -> None:
    """Evidence before a person decides: audit, gates, report, sql, spend_record."""

    @app.tool(name="audit", annotations=_WRITE)
    async def audit(
        version: Version,
        hidden_paths: Annotated[
            list[str] | None, Field(description="more paths no trajectory may touch")
        ] = None,
    ) -> CallToolResult:
        """The leak audit of the version's runs (`evotree audit V --json`, schema `audit`). A
        report that did not pass is a result, not an error: read `passed` (the CLI exits 28)."""
        return await call(lambda: verbs.audit(version, hidden_paths))

    @app.tool(name="gates", annotations=_WRITE)
    async def gates(
        version: Version,
        bootstrap: Annotated[
            int | None, Field(ge=100, le=1_000_000, description="bootstrap resamples")
        ] = None,
    ) -> CallToolResult:
        """Every promotion gate, evaluated; promotes nothing (`evotree gates V --json`, schema
        `gates`). When `passed`, stop and hand over to a person."""
        return await call(lambda: verbs.gates(version, bootstrap))

    @app.tool(name="report", annotations=_WRITE)
    async def report(
        version: Version,
        against: Annotated[str, Field(min_length=1, max_length=200)] = "champion",
        split: str = "validation",
        audit: Annotated[bool, Field(description="run the audit and the gates' audit gate")] = True,
    ) -> CallToolResult:
        """The report document: verdict, scores with Δ and CI, findings, audit, gates, lineage
        (`evotree report V --format json`, schema `report`); writes no file."""
        return await call(lambda: verbs.report(version, against=against, split=split, audit=audit))

    @app.tool(name="sql", annotations=_READ)
    async def sql(
        query: Annotated[
            str,
            Field(
                min_length=1,
                max_length=100_000,
                description="one SELECT over runs, signals, rollouts, evals, findings",
            ),
        ],
        max_rows: Annotated[int, Field(ge=1, le=100_000)] = 1000,
    ) -> CallToolResult:
        """Read-only DuckDB SQL over the evidence views (`evotree sql --json`): one SELECT; no file,
        network, SET, COPY, ATTACH or extension (exit 14, code query_not_allowed)."""
        return await call(lambda: verbs.sql(query, max_rows=max_rows))

    @app.tool(name="spend_record", annotations=_WRITE)
    async def spend_record(
        usd: Annotated[
            float, Field(ge=0, allow_inf_nan=False, description="what was spent, in USD")
        ],
        note: Annotated[
            str, Field(min_length=1, max_length=2_000, description="what it was spent on")
        ],
        tokens: Annotated[int | None, Field(ge=0)] = None,
        version: Annotated[
            str | None, Field(description="the version it was spent on (its budget too)")
        ] = None,
    ) -> CallToolResult:
        """Record your own LLM/API spend (`evotree spend record --json`): it counts in the USD
        budgets (`evotree budget`); recorded for the server's principal; never negative."""
        return await call(lambda: verbs.spend_record(usd, note, tokens=tokens, version=version))


async def _with_progress(
    call: ToolCall,
    ctx: Context,
    planned: int,
    work: Callable[[Callable[[str, str, dict[str, Any]], None], threading.Event], Any],
) -> CallToolResult:
    """``work(progress, cancel)`` through ``call``, its progress events forwarded to the client
    as MCP progress notifications (:class:`_RunProgress`); cancelling the request sets ``cancel``."""
    tracker = _RunProgress(planned)
    token = anyio.lowlevel.current_token()
    send, receive = anyio.create_memory_object_stream[tuple[float, float, str]](max_buffer_size=256)
    cancel = threading.Event()

    def progress(run_id: str, event: str, info: dict[str, Any]) -> None:
        update = tracker.update(run_id, event, info)
        if update is None:
            return
        try:
            anyio.from_thread.run_sync(send.send_nowait, update, token=token)
        except Exception:  # noqa: BLE001, S110 - progress is advice: a full buffer or a closed loop drops it
            pass

    async def forward() -> None:
        async with receive:
            async for value, total, message in receive:
                try:
                    await ctx.report_progress(value, total, message)
                except Exception:  # noqa: BLE001 - the client went away: the result decides
                    log.debug("progress notification not sent", exc_info=True)

    async with anyio.create_task_group() as group:
        group.start_soon(forward)
        try:
            result = await call(lambda: work(progress, cancel), cancel=cancel)
        finally:
            send.close()
    return result


def configure_logging() -> None:
    """The server's own log lines (errors, connections) on stderr; stdout is the protocol's."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("evotree serve: %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
