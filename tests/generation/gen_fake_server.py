"""A chat-completions server on 127.0.0.1 that plays a model from a script.

It speaks enough of the OpenAI API for the real ``openai`` client: ``POST
/v1/chat/completions`` with a JSON body, answered with a ``chat.completion`` object or an
error. What it answers is decided per request by ``script(body) -> Action``; the server
records every request (time, body, headers) so tests can count them and check what was
sent.

The pre-flight check a run starts with: ``GET /v1/models`` lists ``models`` (404 when
``None``, as on a server that offers no list), or ``models_script(headers) -> Action``
decides; the one-token check request (``max_tokens`` 1, the message ``Say OK.``) is
answered ``OK`` and kept in ``pings``, not ``requests``, unless ``answer_pings`` is off
(then the script gets it like any other request). ``gate(headers) -> Action | None``,
when given, sees every request first (GET and POST) and may answer it instead (a proxy
refusing a key everywhere).
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
    connection without answering), "raw" (status 200 with ``content`` as the body, or the
    bytes ``body`` with ``headers``, e.g. ``Content-Encoding: gzip``).
    ``delay`` seconds pass before anything is sent; with ``trickle``, a "raw" or "reply"
    body is sent one byte every ``trickle`` seconds.
    """

    kind: str = "reply"
    content: str = ""
    finish_reason: str = "stop"
    status: int = 200
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    reasoning: str | None = None
    body: bytes | None = None
    trickle: float = 0.0


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

    def __init__(
        self,
        script: Callable[[dict], Action],
        models: list[str] | None = None,
        models_script: Callable[[dict], Action] | None = None,
        answer_pings: bool = True,
        gate: Callable[[dict], Action | None] | None = None,
    ) -> None:
        self.script = script
        self.gate = gate
        self.models = models
        self.models_script = models_script
        self.answer_pings = answer_pings
        self.pings: list[Request] = []
        self.model_lists: list[Request] = []
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                headers = {k.lower(): v for k, v in self.headers.items()}
                with server.lock:
                    server.model_lists.append(Request(time.monotonic(), {}, headers))
                refusal = server.gate(headers) if server.gate else None
                if refusal is not None:
                    self._act(refusal, {})
                elif not self.path.endswith("/models"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                elif server.models_script is not None:
                    self._act(server.models_script(headers), {})
                elif server.models is None:
                    self._send(404, {"error": {"message": "no model list here"}})
                else:
                    data = [{"id": m, "object": "model", "owned_by": "t"} for m in server.models]
                    self._send(200, {"object": "list", "data": data})

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
                ping = body.get("max_tokens") == 1 and body.get("messages") == [
                    {"role": "user", "content": "Say OK."}
                ]
                if ping and server.answer_pings:
                    with server.lock:
                        server.pings.append(request)
                    self._act(reply("OK"), body)
                    return
                with server.lock:
                    server.requests.append(request)
                refusal = server.gate(request.headers) if server.gate else None
                if refusal is not None:
                    self._act(refusal, body)
                    return
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
                        data = action.body if action.body is not None else action.content.encode()
                        self.send_response(action.status)
                        self.send_header("Content-Type", "application/json")
                        self.send_header("Content-Length", str(len(data)))
                        for name, value in action.headers.items():
                            self.send_header(name, value)
                        self.end_headers()
                        self._write(data, action.trickle)
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
                        trickle=action.trickle,
                        payload={
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

            def _send(
                self, status: int, payload: dict, headers: dict | None = None, trickle: float = 0
            ) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self._write(data, trickle)

            def _write(self, data: bytes, trickle: float) -> None:
                if not trickle:
                    self.wfile.write(data)
                    return
                for i in range(len(data)):  # one byte at a time: every read is quick
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    time.sleep(trickle)

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
