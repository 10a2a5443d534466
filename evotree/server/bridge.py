"""A byte pipe between stdin/stdout and ``evotree serve``'s unix socket (standard library only).

An MCP client inside ``evotree agent`` starts its tool servers as stdio commands; this is that
command: ``python -P -m evotree.server.bridge SOCKET``. It carries the JSON-RPC lines unchanged
both ways (the socket speaks MCP's stdio framing, :mod:`evotree.server.transport`), so the agent
reaches the server without reaching the workspace. Kept free of evotree imports beyond its own
package so it starts in a few milliseconds inside the sandbox.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

__all__ = ["bridge", "main"]

_CHUNK = 1 << 16


def _pump_in(sock: socket.socket, fd: int) -> None:
    """stdin -> socket; at end of stdin, half-close so the server sees the client leave."""
    try:
        while True:
            data = os.read(fd, _CHUNK)
            if not data:
                break
            sock.sendall(data)
    except OSError:
        pass
    finally:
        try:
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def bridge(path: str, *, stdin: int = 0, stdout: int = 1) -> int:
    """Connect to the unix socket ``path`` and copy bytes both ways until the server closes.

    Returns 0, or 1 (with a one-line reason on stderr) when the socket cannot be reached.
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError as exc:
        sys.stderr.write(
            f"evotree bridge: cannot reach the evotree server at {path}: {exc.strerror or exc}\n"
        )
        return 1
    threading.Thread(target=_pump_in, args=(sock, stdin), daemon=True).start()
    try:
        while True:
            data = sock.recv(_CHUNK)
            if not data:
                return 0
            view = memoryview(data)
            while view:
                written = os.write(stdout, view)
                view = view[written:]
    except OSError:
        return 0
    finally:
        sock.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m evotree.server.bridge [SOCKET]`` (default ``$EVOTREE_MCP_SOCKET``)."""
    args = sys.argv[1:] if argv is None else argv
    path = args[0] if args else os.environ.get("EVOTREE_MCP_SOCKET", "")
    if not path or path in ("-h", "--help"):
        sys.stderr.write(
            "usage: python -m evotree.server.bridge SOCKET  (or set EVOTREE_MCP_SOCKET)\n"
        )
        return 2
    return bridge(path)


if __name__ == "__main__":
    raise SystemExit(main())
