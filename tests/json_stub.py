"""A tiny local HTTP server answering JSON, for tests that stand in for an external REST API
(GitHub's): the server, its thread and the plumbing here; each stand-in writes only ``route``."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import urlparse


class Request:
    """One request as ``route`` sees it: method, path (with the query), parsed URL, the path's
    parts, headers, and ``body()`` (the JSON body, {} when there is none)."""

    def __init__(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        self.method, self.path, self.headers = method, handler.path, handler.headers
        self._handler = handler
        self.url = urlparse(handler.path)
        self.parts = self.url.path.strip("/").split("/")

    def body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self._handler.rfile.read(length) or b"{}")


class JsonStub:
    """Serves on 127.0.0.1 (``url``) inside ``with``: every request is recorded in ``requests``
    as (method, path) and answered with ``route(request)``'s (status, JSON body)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, method: str) -> None:
                stub.requests.append((method, self.path))
                status, body = stub.route(Request(self, method))
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def do_PATCH(self) -> None:
                self._answer("PATCH")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def route(self, request: Request) -> tuple[int, Any]:
        """The answer to ``request``: (HTTP status, JSON body)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
