"""Responses read within bounds: what a model server sends can never exhaust memory.

The ``openai`` client reads a whole response body, inflates it as its ``Content-Encoding``
says, and parses it with Python's ``json`` (recursive). A hostile or broken server could
so send a body of gigabytes, a small gzip that inflates to gigabytes, or JSON nested
100,000 deep. :class:`BoundedTransport` sits under the client (every request of our
``httpx`` client goes through it, proxies included) and reads each body itself:

- at most :data:`MAX_BODY_BYTES` on the wire, and as much once inflated (``gzip`` and
  ``deflate`` are inflated here, a little at a time, never past the cap; only those two
  are asked for, and a body in another encoding is refused);
- a JSON body nested deeper than :data:`MAX_BODY_DEPTH` is refused (a completion is about
  six levels deep);
- the client then gets the inflated bytes as an ordinary, already read response.

A refusal raises :class:`UnsafeResponse` (straight through the ``openai`` client, or
as the cause of its ``APIConnectionError``, depending on its version); the sample fails
with the reason (it is not resent: the same server would send it again).

Nothing here imports ``httpx`` by name: ``openai`` 1.x and 2.x are built on ``httpx``,
3.x on its fork ``httpx2``; the transport is wrapped by duck typing and responses are
made with the class of the one the wrapped transport returned.
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson

from dagmath_viz.formats.replies import json_depth  # also caps replies (formats/)

__all__ = ["MAX_BODY_BYTES", "MAX_BODY_DEPTH", "BoundedTransport", "UnsafeResponse", "client"]

#: Largest response body accepted, on the wire and once inflated.
MAX_BODY_BYTES = 32 * 1024 * 1024
#: Deepest JSON accepted in a response body.
MAX_BODY_DEPTH = 32
_ENCODINGS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
_DROPPED = {b"content-encoding", b"content-length", b"transfer-encoding"}


class UnsafeResponse(Exception):
    """A response refused by a cap (too large, inflating too far, nested too deep)."""


class BoundedTransport:
    """Wraps an ``httpx`` transport; every response it returns was read within the caps."""

    def __init__(self, inner: Any, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.inner = inner
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: Any) -> Any:
        request.headers["Accept-Encoding"] = ", ".join(("gzip", "deflate"))
        response = await self.inner.handle_async_request(request)
        try:
            body = await self._read(response)
        finally:
            await response.aclose()
        headers = [(k, v) for k, v in response.headers.raw if k.lower() not in _DROPPED]
        return type(response)(
            response.status_code,
            headers=headers,
            content=body,
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> BoundedTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _read(self, response: Any) -> bytes:
        inflater = _inflater(response.headers.get("content-encoding", ""))
        parts: list[bytes] = []
        raw = size = 0
        async for chunk in response.stream:  # as sent: still encoded
            raw += len(chunk)
            if raw > self.max_bytes:
                raise UnsafeResponse(_too_big(self.max_bytes, "sent"))
            if inflater is None:
                out = chunk
            else:
                out = inflater.decompress(chunk, self.max_bytes - size + 1)
                if inflater.unconsumed_tail:  # it would inflate past the cap
                    raise UnsafeResponse(_too_big(self.max_bytes, "inflated"))
            size += len(out)
            if size > self.max_bytes:
                raise UnsafeResponse(_too_big(self.max_bytes, "inflated"))
            parts.append(out)
        body = b"".join(parts)
        _check_depth(body)
        return body


def _inflater(encoding: str) -> Any:
    codings = [c.strip().lower() for c in encoding.split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    if not codings:
        return None
    if len(codings) > 1 or codings[0] not in _ENCODINGS:
        shown = ", ".join(codings)[:40]
        raise UnsafeResponse(
            f"the response is encoded as {shown!r}; only gzip or deflate was asked for"
        )
    return zlib.decompressobj(_ENCODINGS[codings[0]])


def _too_big(cap: int, how: str) -> str:
    return f"the response body {how} more than {cap // (1024 * 1024)} MB"


def _check_depth(body: bytes) -> None:
    """Refuse a body nested past :data:`MAX_BODY_DEPTH` (orjson parses without recursion
    limits of Python's own; a body that is no JSON is left to the client to report)."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if "depth" in str(exc).lower() or "recursion" in str(exc).lower():
            raise UnsafeResponse(_too_deep()) from None
        return

    if json_depth(value, MAX_BODY_DEPTH) > MAX_BODY_DEPTH:
        raise UnsafeResponse(_too_deep())


def _too_deep() -> str:
    return f"the response body is JSON nested more than {MAX_BODY_DEPTH} levels deep"


def client() -> Any:
    """The ``httpx`` client the ``openai`` client is given: its defaults (timeouts, pool
    limits, redirects followed) with every transport, proxies included, bounded."""
    import openai

    http = openai.DefaultAsyncHttpxClient()
    # httpx picks the transport per URL (the pool, or a proxy from the environment):
    # wrap each one it made, so the proxies the user set stay in use
    http._transport = BoundedTransport(http._transport)  # noqa: SLF001
    http._mounts = {  # noqa: SLF001
        pattern: None if transport is None else BoundedTransport(transport)
        for pattern, transport in http._mounts.items()  # noqa: SLF001
    }
    return http
