"""Transports of ``evotree serve``: stdio, and the same newline-delimited JSON-RPC over a unix socket.

**stdio** is the SDK's own (``MCPServer.run_stdio_async``): one client, the process that
started the server (Claude Code, Codex CLI).

**unix socket** (``--socket PATH``) is the MCP stdio framing -- one JSON-RPC message per line,
parsed and written with the SDK's own message types -- over each accepted connection, every
connection a session of the SDK's server loop. Chosen over Streamable HTTP on a unix-domain
socket (uvicorn ``uds=`` with the SDK's ``streamable_http_client``), measured with the same
server and client (BENCHMARKS.md, "MCP tool-call latency"): ``tree`` of 1,000 versions 8.7 ms
a call against 19.6 ms (2.2x paired), ``show`` 9.7 against 12.3 ms (1.3x); a trivial tool
~1.6 ms against ~6 ms in a first prototype. No HTTP server, sessions, SSE streams or Host/Origin checks in between, and any stdio
MCP client can use it through a byte pipe (``socat - UNIX-CONNECT:PATH``). The socket is
created mode 0600 (owner only) and a peer whose uid differs from the server's is refused
(``SO_PEERCRED``). :func:`unix_socket_client` is the client side, for Python agents and tests.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import stat
import struct
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mcp_types
from anyio.abc import SocketAttribute
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.shared.message import SessionMessage

from evotree.core.errors import AlreadyExists, EvotreeError

__all__ = ["MAX_LINE", "serve_stdio", "serve_unix_socket", "unix_socket_client"]

log = logging.getLogger("evotree.server")

#: The longest message accepted on a socket (one line of JSON-RPC).
MAX_LINE = 64 * 1024 * 1024


class SocketError(EvotreeError):
    """The unix socket cannot be created."""

    exit_code = 7
    code = "socket_unavailable"


async def serve_stdio(app: Any) -> None:
    """Serve over this process's stdin and stdout until the client closes stdin."""
    await app.run_stdio_async()


async def _frame_in(stream: Any, sink: Any, limit: int) -> None:
    """Lines from ``stream`` -> JSON-RPC messages into ``sink`` (a bad line becomes an exception
    item, as in the SDK's stdio transport); ends at end of stream."""
    buffered = BufferedByteReceiveStream(stream)
    async with sink:
        while True:
            try:
                line = await buffered.receive_until(b"\n", limit)
            except (
                anyio.EndOfStream,
                anyio.IncompleteRead,
                anyio.BrokenResourceError,
                anyio.ClosedResourceError,
            ):
                return
            except anyio.DelimiterNotFound:
                log.warning("a message longer than %d bytes: closing the connection", limit)
                return
            if not line.strip():
                continue
            try:
                message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except Exception as exc:  # noqa: BLE001 - the session answers a parse error
                await sink.send(exc)
                continue
            await sink.send(SessionMessage(message))


async def _frame_out(stream: Any, source: Any) -> None:
    """JSON-RPC messages from ``source`` -> one line each on ``stream``."""
    async with source:
        async for item in source:
            data = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8")
            try:
                await stream.send(data + b"\n")
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return


@contextlib.asynccontextmanager
async def _line_session(stream: Any, limit: int = MAX_LINE) -> AsyncIterator[tuple[Any, Any]]:
    """(read_stream, write_stream) of SessionMessages over a byte stream, both ways."""
    in_send, in_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](0)
    async with anyio.create_task_group() as group:
        group.start_soon(_frame_in, stream, in_send, limit)
        group.start_soon(_frame_out, stream, out_receive)
        try:
            yield in_receive, out_send
        finally:
            group.cancel_scope.cancel()


def _peer_uid(stream: Any) -> int | None:
    sock = stream.extra(SocketAttribute.raw_socket, None)
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return None
    try:
        _pid, uid, _gid = struct.unpack(
            "3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        )
    except OSError:
        return None
    return uid


def _claim_path(path: Path) -> None:
    """Make ``path`` free for a new socket: a stale socket (nobody listening) is removed; a live
    one, or anything else there, is refused."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise SocketError(f"{path} exists and is not a socket", fix="choose another --socket path")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        path.unlink(missing_ok=True)  # stale: its server is gone
        return
    finally:
        probe.close()
    raise AlreadyExists(
        f"{path}: another server is listening on this socket",
        fix="stop it, or choose another --socket path",
    )


async def serve_unix_socket(
    app: Any, path: str | os.PathLike[str], *, task_status: Any = anyio.TASK_STATUS_IGNORED
) -> None:
    """Serve every connection to the unix socket ``path`` (created mode 0600, removed at exit)
    as its own MCP session, until cancelled."""
    target = Path(path).absolute()
    if len(os.fsencode(target)) > 100:
        raise SocketError(
            f"the socket path {target} is too long for a unix socket (at most ~100 bytes)",
            fix="choose a shorter --socket path, e.g. under /tmp",
        )
    if not target.parent.is_dir():
        raise SocketError(
            f"{target.parent} is not a directory", fix="create it, or choose another --socket path"
        )
    _claim_path(target)
    previous = os.umask(0o177)
    try:
        listener = await anyio.create_unix_listener(target)
    except OSError as exc:
        raise SocketError(
            f"cannot listen on {target}: {exc.strerror or exc}", fix="choose another --socket path"
        ) from None
    finally:
        os.umask(previous)
    os.chmod(target, 0o600)
    identity = target.lstat().st_ino
    low = app._lowlevel_server  # noqa: SLF001 - the SDK's per-connection loop (its in-memory client does the same)
    me = os.getuid()

    async def handle(stream: Any) -> None:
        uid = _peer_uid(stream)
        async with stream:
            if uid is not None and uid != me:
                log.warning("refused a connection from uid %d (the server runs as uid %d)", uid, me)
                return
            try:
                async with _line_session(stream) as (read_stream, write_stream):
                    await low.run(read_stream, write_stream, low.create_initialization_options())
            except Exception:  # noqa: BLE001 - one connection's failure never stops the server
                log.warning("a connection ended with an error", exc_info=True)

    try:
        async with listener:
            task_status.started(str(target))
            log.info("listening on %s", target)
            await listener.serve(handle)
    finally:
        with contextlib.suppress(OSError):
            if target.lstat().st_ino == identity:
                target.unlink()


@contextlib.asynccontextmanager
async def unix_socket_client(path: str | os.PathLike[str]) -> AsyncIterator[tuple[Any, Any]]:
    """(read_stream, write_stream) for ``mcp.ClientSession`` to a server on the unix socket ``path``::

    async with unix_socket_client(path) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("tree", {})
    """
    stream = await anyio.connect_unix(os.fspath(path))
    async with stream, _line_session(stream, limit=1 << 30) as streams:
        yield streams
