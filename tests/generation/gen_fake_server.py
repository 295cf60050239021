"""A chat-completions server on 127.0.0.1 that plays a model from a script.

It speaks enough of the OpenAI API for the real ``openai`` client: ``POST
/v1/chat/completions`` with a JSON body, answered with a ``chat.completion`` object or an
error. What it answers is decided per request by ``script(body) -> Action``; the server
records every request (time, body, headers) so tests can count them and check what was
sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Action:
    """What to do with one request.

    kind: "reply" (a completion with ``content`` and ``finish_reason``), "error" (HTTP
    ``status`` with an OpenAI-style error body and ``headers``), "drop" (close the
    connection without answering), "raw" (status 200 with ``content`` as the body).
    ``delay`` seconds pass before anything is sent.
    """

    kind: str = "reply"
    content: str = ""
    finish_reason: str = "stop"
    status: int = 200
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    reasoning: str | None = None


def reply(content: str, finish_reason: str = "stop", delay: float = 0.0) -> Action:
    return Action("reply", content=content, finish_reason=finish_reason, delay=delay)


def error(status: int, message: str = "error", headers: dict | None = None) -> Action:
    return Action("error", status=status, message=message, headers=headers or {})


def drop() -> Action:
    return Action("drop")


@dataclass
class Request:
    time: float
    body: dict[str, Any]
    headers: dict[str, str]
    #: when a completion ("reply") was written back to it, if one was
    replied: float | None = None


class FakeServer:
    """Start with ``with FakeServer(script) as server:``; ``server.base_url`` ends in /v1."""

    def __init__(self, script: Callable[[dict], Action]) -> None:
        self.script = script
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                request = Request(
                    time.monotonic(), body, {k.lower(): v for k, v in self.headers.items()}
                )
                with server.lock:
                    server.requests.append(request)
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                action = server.script(body)
                with server.lock:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if action.delay:
                        time.sleep(action.delay)
                    self._act(action, body)
                    if action.kind == "reply":
                        request.replied = time.monotonic()
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _act(self, action: Action, body: dict) -> None:
                try:
                    if action.kind == "drop":
                        self.close_connection = True
                        return
                    if action.kind == "raw":  # a 200 whose body is no completion
                        data = action.content.encode()
                        self.send_response(200)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(data)))
                        self.end_headers()
                        self.wfile.write(data)
                        return
                    if action.kind == "error":
                        payload = {"error": {"message": action.message, "type": "test"}}
                        self._send(action.status, payload, action.headers)
                        return
                    message = {"role": "assistant", "content": action.content}
                    if action.reasoning is not None:
                        message["reasoning_content"] = action.reasoning
                    self._send(
                        200,
                        {
                            "id": "cmpl-test",
                            "object": "chat.completion",
                            "created": 0,
                            "model": body.get("model", "test"),
                            "choices": [
                                {
                                    "index": 0,
                                    "message": message,
                                    "finish_reason": action.finish_reason,
                                }
                            ],
                            "usage": {
                                "prompt_tokens": 10,
                                "completion_tokens": 5,
                                "total_tokens": 15,
                            },
                        },
                    )
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                # a client that hung up (after a timeout, or when a run stops) is expected
                import sys

                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def chat_requests(self) -> list[Request]:
        with self.lock:
            return list(self.requests)
