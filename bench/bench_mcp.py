#!/usr/bin/env python
"""Benchmark: MCP tool-call latency of `evotree serve` vs the CLI's process start.

Target (issue): the median `tree` / `show` call over a warm server ≤ 50 ms with 1,000 versions.

A real repository is built in a temp folder: a small recipe, `evotree init` (the CLI), then
--versions versions made through evotree's own library (benchlib.populate: create_version +
abandon_version; the last --active keep real worktrees). Two servers are started as real
processes of the virtualenv's console script, `evotree -C REPO serve --as bench`: one over
stdio (the SDK's `stdio_client`), one on a unix socket (`--socket`, the client
`evotree.server.transport.unix_socket_client`). Each is warmed up (--warmup calls of every
tool), then, for --repeats repetitions in rotated order, one sample of each variant:

  mcp-stdio-tree   session.call_tool("tree")            over stdio
  mcp-stdio-show   session.call_tool("show", {version})  over stdio (an active version with a worktree)
  mcp-sock-tree    the same over the unix socket
  mcp-sock-show
  mcp-http-tree    the same over Streamable HTTP on a unix-domain socket (uvicorn ``uds=``, the
  mcp-http-show    SDK's `streamable_http_client` with an httpx2 UDS transport): the transport
                   `--socket` did not choose, measured on the same tools for the record
  cli-tree         evotree tree --json > /dev/null       (the console script, a new process)
  cli-show         evotree show V --json > /dev/null

Then, for the record of two design choices, the SDK's floor with a bare `MCPServer` over stdio
(FLOOR_SERVER, no evotree code in the call): `echo` (a tiny result), `text` (the tree's JSON as
one text block, what evotree sends) and `both` (the same text plus the parsed document as
`structuredContent`), --repeats calls each, rotated.

A call is timed in the client from the request to the parsed result (the SDK's ClientSession
validates it), i.e. what an agent waits for. For information, in this process: the server's
own work per call (lib-tree: `Verbs.tree_encoded()`, the tree kept per ledger head; lib-show:
`Verbs.show(V)` encoded) and the library call behind the CLI without that state
(lib-*-uncached: `tree_view` / `show_version` + `json.dumps`). Run:

    .venv/bin/python bench/bench_mcp.py [--versions 1000] [--repeats 30] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import benchlib as bl  # first: isolates git's configuration before pygit2 is imported

TARGET_SECONDS = 0.050

#: Streamable HTTP on a unix-domain socket, the alternative to `--socket`'s line framing
HTTP_SERVER = """
import sys, uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from evotree.server.tools import build_server
from evotree.server.verbs import Principal, Verbs, pin_principal
principal = Principal.parse("bench")
pin_principal(principal)
app, _ = build_server(Verbs(sys.argv[1], principal))
http = app.streamable_http_app(transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
uvicorn.run(http, uds=sys.argv[2], log_level="warning")
"""


#: A bare MCPServer for the SDK's floor: argv[1] is a JSON file served as text and structure
FLOOR_SERVER = """
import json, sys
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent
app = MCPServer("floor")
text = open(sys.argv[1]).read()
data = json.loads(text)

@app.tool()
def echo(x: int) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=json.dumps({"x": x}))])

@app.tool()
def text_only() -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])

@app.tool()
def both() -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)

app.run("stdio")
"""


def _wait_listening(path: Path, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(str(path))
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"the socket server exited: {proc.communicate()[1].decode()}"
                ) from None
            if time.monotonic() > deadline:
                raise RuntimeError("the socket server did not start listening") from None
            time.sleep(0.05)
        finally:
            probe.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--versions", type=int, default=1000, help="versions added after v0 (default 1000)"
    )
    parser.add_argument(
        "--active", type=int, default=20, help="of which active, with worktrees (default 20)"
    )
    parser.add_argument("--files", type=int, default=30, help="files in the recipe (default 30)")
    parser.add_argument("--repeats", type=int, default=30, help="timed repetitions (default 30)")
    parser.add_argument(
        "--warmup", type=int, default=5, help="untimed calls of each tool first (default 5)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temp repository")
    args = parser.parse_args()

    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from evotree.server.transport import unix_socket_client
    from evotree.server.verbs import Principal, Verbs

    started = time.perf_counter()
    env = bl.environment()
    with bl.workdir(args.keep, "evotree-bench-mcp-") as tmp:
        repo = tmp / "repo"
        print(f"building a tree of {args.versions} versions ...", file=sys.stderr, flush=True)
        bl.make_recipe_repo(repo, files=args.files, seed=args.seed)
        bl.evotree(repo, "init")
        pop = bl.populate(repo, args.versions, active=args.active, seed=args.seed)
        shown = pop.ids[-1]  # active, with a worktree: the version an agent works on
        print(f"  built in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)

        tree_json = bl.evotree(repo, "tree", "--json").stdout
        tree_bytes = len(tree_json.encode())
        (tmp / "tree.json").write_text(tree_json)
        show_bytes = len(bl.evotree(repo, "show", shown, "--json").stdout.encode())

        verbs = Verbs(repo, Principal.parse("bench"))
        server_env = {**os.environ}
        sock = tmp / "s.sock"
        sock_proc = subprocess.Popen(
            [*bl.EVOTREE, "-C", str(repo), "serve", "--as", "bench", "--socket", str(sock)],
            env=server_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        _wait_listening(sock, sock_proc)
        http_sock = tmp / "h.sock"
        http_proc = subprocess.Popen(
            [bl.PYTHON, "-P", "-c", HTTP_SERVER, str(repo), str(http_sock)],
            env=server_env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        _wait_listening(http_sock, http_proc)

        def cli(*cmd: str) -> float:
            return bl.timed_run([*bl.EVOTREE, *cmd], repo, stdout=subprocess.DEVNULL)[0]

        from evotree.core.versions import show_version, tree_view
        from evotree.core.workspace import Workspace
        from evotree.server.verbs import Encoded

        def lib(name: str) -> float:
            """The server's own work for one call: the ledger state kept per head, encoded."""
            t0 = time.perf_counter()
            if name == "tree":
                verbs.tree_encoded()
            else:
                Encoded.of(verbs.show(shown))
            return time.perf_counter() - t0

        def uncached(name: str) -> float:
            """The library call behind the CLI, in-process, plus the `--json` encoding."""
            t0 = time.perf_counter()
            ws = Workspace.open(repo)
            data = tree_view(ws).to_dict() if name == "tree" else show_version(ws, shown).to_dict()
            json.dumps(data, default=str)
            return time.perf_counter() - t0

        async def measure() -> dict[str, list[float]]:
            params = StdioServerParameters(
                command=bl.EVOTREE[0],
                args=[*bl.EVOTREE[1:], "-C", str(repo), "serve", "--as", "bench"],
                env=server_env,
            )
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http_client = httpx2.AsyncClient(
                transport=httpx2.AsyncHTTPTransport(uds=str(http_sock)), timeout=60
            )
            async with (
                stdio_client(params) as (r1, w1),
                ClientSession(r1, w1) as stdio_session,
                unix_socket_client(sock) as (r2, w2),
                ClientSession(r2, w2) as sock_session,
                http_client,
                streamable_http_client("http://localhost/mcp", http_client=http_client) as (r3, w3),
                ClientSession(r3, w3) as http_session,
            ):
                await stdio_session.initialize()
                await sock_session.initialize()
                await http_session.initialize()

                async def timed(session: ClientSession, tool: str) -> float:
                    arguments = {} if tool == "tree" else {"version": shown}
                    t0 = time.perf_counter()
                    result = await session.call_tool(tool, arguments)
                    elapsed = time.perf_counter() - t0
                    if result.is_error:
                        raise RuntimeError(result.content[0].text)
                    return elapsed

                for _ in range(args.warmup):
                    for session in (stdio_session, sock_session, http_session):
                        await timed(session, "tree")
                        await timed(session, "show")
                    lib("tree")
                    lib("show")
                variants: dict[str, Any] = {
                    "mcp-stdio-tree": lambda: timed(stdio_session, "tree"),
                    "mcp-stdio-show": lambda: timed(stdio_session, "show"),
                    "mcp-sock-tree": lambda: timed(sock_session, "tree"),
                    "mcp-sock-show": lambda: timed(sock_session, "show"),
                    "mcp-http-tree": lambda: timed(http_session, "tree"),
                    "mcp-http-show": lambda: timed(http_session, "show"),
                    "cli-tree": lambda: cli("tree", "--json"),
                    "cli-show": lambda: cli("show", shown, "--json"),
                    "lib-tree": lambda: lib("tree"),
                    "lib-show": lambda: lib("show"),
                    "lib-tree-uncached": lambda: uncached("tree"),
                    "lib-show-uncached": lambda: uncached("show"),
                }
                names = list(variants)
                samples: dict[str, list[float]] = {n: [] for n in names}
                for rep in range(args.repeats):
                    shift = rep % len(names)
                    for name in names[shift:] + names[:shift]:
                        value = variants[name]()
                        samples[name].append(await value if hasattr(value, "__await__") else value)
                    if (rep + 1) % 10 == 0:
                        print(f"  repetition {rep + 1}/{args.repeats}", file=sys.stderr, flush=True)
            floor = StdioServerParameters(
                command=bl.PYTHON,
                args=["-P", "-c", FLOOR_SERVER, str(tmp / "tree.json")],
                env=server_env,
            )
            async with stdio_client(floor) as (r4, w4), ClientSession(r4, w4) as floor_session:
                await floor_session.initialize()

                async def floor_call(tool: str) -> float:
                    t0 = time.perf_counter()
                    await floor_session.call_tool(tool, {"x": 1} if tool == "echo" else {})
                    return time.perf_counter() - t0

                for _ in range(args.warmup):
                    for tool in ("echo", "text_only", "both"):
                        await floor_call(tool)
                tools = ["echo", "text_only", "both"]
                for rep in range(args.repeats):
                    shift = rep % len(tools)
                    for tool in tools[shift:] + tools[:shift]:
                        samples.setdefault(f"sdk-{tool}", []).append(await floor_call(tool))
                return samples

        print("measuring ...", file=sys.stderr, flush=True)
        try:
            samples = anyio.run(measure)
        finally:
            for proc in (sock_proc, http_proc):
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=60)

    stats = {name: bl.summary(values) for name, values in samples.items()}
    bl.print_table(
        f"tree and show with {args.versions + 1} versions ({args.repeats} repetitions, warm servers)",
        list(stats.items()),
        note=f"tree --json {tree_bytes:,} bytes, show --json {show_bytes:,} bytes; "
        f"target: median MCP call <= {TARGET_SECONDS * 1000:.0f} ms",
    )
    verdict = {
        name: stats[name]["median"] <= TARGET_SECONDS
        for name in stats
        if name.startswith(("mcp-stdio", "mcp-sock"))
    }
    ratios = {
        f"cli/{name}": statistics.median(
            c / m for c, m in zip(samples["cli-" + name.split("-")[-1]], samples[name])
        )
        for name in stats
        if name.startswith("mcp-")
    }
    for name, ok in verdict.items():
        print(
            f"  {name}: {stats[name]['median'] * 1000:.1f} ms median -> {'met' if ok else 'NOT met'}; "
            f"the CLI takes {ratios['cli/' + name]:.1f}x as long (paired)"
        )
    transport = {
        tool: bl.paired_ratio(samples[f"mcp-http-{tool}"], samples[f"mcp-sock-{tool}"])
        for tool in ("tree", "show")
    }
    print(
        f"  Streamable HTTP on a unix socket vs --socket's line framing (paired): tree {transport['tree']:.2f}x, "
        f"show {transport['show']:.2f}x"
    )
    bl.write_json(
        args.json,
        {
            "benchmark": "bench_mcp",
            "environment": env,
            "parameters": {
                **vars(args),
                "shown_version": shown,
                "tree_bytes": tree_bytes,
                "show_bytes": show_bytes,
            },
            "seconds": stats,
            "paired_ratios": ratios,
            "http_vs_socket": transport,
            "target_met": verdict,
            "total_seconds": round(time.perf_counter() - started, 1),
        },
    )
    return 0 if all(verdict.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
