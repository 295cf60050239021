"""One chat-completions call that returns JSON, with every retry a long run needs.

The call goes through the ``openai`` client (``AsyncOpenAI``) over HTTP to any
OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama, OpenAI itself). The client's
own retries are switched off so that this module alone decides:

- **transport faults** (429, 5xx, timeouts, dropped connections): wait and resend, up to
  ``RetryPolicy.transport_retries`` times; a 429's ``Retry-After`` is honoured, otherwise
  the wait grows exponentially with random jitter;
- **content faults** (no JSON in the reply, a reply cut off at ``max_tokens``, JSON of the
  wrong shape): ask again, up to ``RetryPolicy.content_attempts`` replies in all;
- **a server that refuses ``response_format``** (HTTP 400/422 while structured output is
  on): resend the request without it; when that succeeds, switch to plain text for the
  rest of the run and say so once (a 400 that the plain request gets too, such as a prompt
  too long, fails only its own sample);
- **401, 403, 404**: every request would fail the same way, so the run stops
  (:class:`FatalAPIError`);
- **a run that cannot succeed** stops too, with one line: before the first request,
  :meth:`ChatClient.preflight` asks ``GET /models`` (and, when the model is not listed or
  the list is not offered, sends one request of one token), so a wrong port, an unknown
  model or a bad key is known in seconds; during the run, a :class:`Breaker` shared by
  every call stops it after ``N`` connection failures in a row, or ``N`` identical
  client-error (4xx) answers in a row (a proxy such as LiteLLM answers a wrong model or
  key with HTTP 400, which would otherwise fail every sample on its own).

Every response passes through :mod:`dagmath_viz.generation.bounded` (size, inflation and
nesting caps), and every request has one deadline for the whole exchange, however slowly
the server sends its bytes.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from dagmath_viz.formats.replies import extract_json  # the one reply parser (formats/)
from dagmath_viz.schema import DagMathError

__all__ = [
    "Breaker",
    "CallFailed",
    "ChatClient",
    "FatalAPIError",
    "Reply",
    "RetryPolicy",
    "Sampling",
    "extract_json",
    "public_url",
    "run_to_completion",
]


class FatalAPIError(DagMathError):
    """The server refuses every request the same way (bad key, unknown model or URL)."""


class CallFailed(Exception):
    """One request gave up after its retries; ``reason`` says why, for the failures file."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.attempts = attempts


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounds on retrying. ``base_delay`` seconds doubles per transport retry (with jitter)
    up to ``max_delay``; ``Retry-After`` is honoured up to ``max_delay`` too."""

    transport_retries: int = 6
    content_attempts: int = 3
    base_delay: float = 1.0
    max_delay: float = 60.0
    timeout: float = 600.0


@dataclass(frozen=True)
class Sampling:
    """What every request asks of the model besides the messages; ``None`` (or empty)
    sends nothing, so the server's own default applies. ``extra_body`` is merged into the
    request as it is (vLLM's ``chat_template_kwargs``, a provider's own fields)."""

    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()
    extra_body: dict[str, Any] | None = None

    def fields(self) -> dict[str, Any]:
        """The request fields these settings add (for the request and the manifest)."""
        out: dict[str, Any] = {}
        for name in ("temperature", "max_tokens", "top_p", "seed"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.stop:
            out["stop"] = list(self.stop)
        return out


class Breaker:
    """Stops a run that cannot succeed: after ``limit`` connection failures in a row, or
    ``limit`` identical client-error answers in a row, with no success in between.

    Shared by every call of a run (gold's two clients too): with ``K`` requests in flight a
    dead server fails ``K`` at once, so the count is the run's, not one request's.
    """

    def __init__(self, limit: int = 8) -> None:
        self.limit = max(limit, 1)
        self._streak = 0
        self._what: str | None = None

    def success(self) -> None:
        self._streak, self._what = 0, None

    def failure(self, what: str, message: str) -> None:
        """Count one failure; ``what`` names its kind and ``message`` is the line to stop
        with. Raises :class:`FatalAPIError` when the streak reaches the limit."""
        self._streak = self._streak + 1 if what == self._what else 1
        self._what = what
        if self._streak >= self.limit:
            raise FatalAPIError(f"{message}; stopped after {self._streak} in a row")


@dataclass(frozen=True, slots=True)
class Reply:
    """A successful call: the parsed JSON and what it cost."""

    value: Any
    text: str
    finish_reason: str | None
    reasoning: str
    attempts: int


@dataclass
class Usage:
    """Running totals over every reply received (retried ones included: they are billed)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    transport_retries: int = 0
    content_retries: int = 0


def public_url(url: str) -> str:
    """``url`` without user, password, query or fragment: safe to write in a manifest.

    >>> public_url("https://user:secret@api.example.com/v1?key=abc")
    'https://api.example.com/v1'
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _retry_after(exc: Any) -> float | None:
    """Seconds a 429/503 asks us to wait (``retry-after-ms``, ``retry-after`` seconds or
    HTTP date), or ``None``."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(float(value) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _short(text: Any, limit: int = 200) -> str:
    """One line of at most ``limit`` characters, control characters escaped: what a
    server sent reaches a terminal and ``failures.csv`` only as visible text."""
    from dagmath_viz.text import printable

    flat = " ".join(str(text).split())
    flat = flat if len(flat) <= limit else flat[:limit] + "..."
    return printable(flat, one_line=True)


def _status_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        message = err.get("message") if isinstance(err, dict) else err
        if message:
            return _short(message)
    return _short(getattr(exc, "message", exc))


@dataclass
class ChatClient:
    """Chat-completions calls to one model on one server, with retries (see module doc).

    ``notice`` receives one-line messages meant for the user (the plain-text fallback).
    ``structured`` is shared by every call: once a server refuses ``response_format``,
    no later call sends it. ``breaker`` may be shared with the run's other clients.
    """

    base_url: str
    model: str
    api_key: str | None = None
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    structured: bool = True
    sampling: Sampling = field(default_factory=Sampling)
    notice: Callable[[str], None] = print
    usage: Usage = field(default_factory=Usage)
    breaker: Breaker = field(default_factory=Breaker)
    _client: Any = None

    def _openai(self) -> Any:
        if self._client is None:
            try:
                from openai import AsyncOpenAI

                from dagmath_viz.generation import bounded
            except ImportError as exc:  # pragma: no cover - a broken install
                raise DagMathError(f"the 'openai' package is needed ({exc})") from None
            # Local servers need no key, but the client insists on one: any placeholder.
            self._client = AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key or "no-key",
                max_retries=0,
                timeout=self.policy.timeout,
                http_client=bounded.client(),
            )
        return self._client

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    # ----------------------------------------------------------------- pre-flight

    async def preflight(self) -> str | None:
        """Check the server and the model before the run; a note for the user, or None.

        ``GET /models`` first: a model it lists is ready. When the list is not offered, or
        does not name the model (Ollama answers ``llama3`` for ``llama3:latest``; a proxy
        may route names it does not list), one chat request of one token decides.

        Raises:
            FatalAPIError: the server cannot be reached, refuses the key, or refuses the
                model; the message names which, in one line.
        """
        import openai

        from dagmath_viz.generation.bounded import UnsafeResponse

        client = self._openai()
        where = public_url(self.base_url)
        listed: list[str] | None = None
        try:
            page = await self._deadline(client.models.list(), min(self.policy.timeout, 20.0))
            listed = [str(getattr(m, "id", "")) for m in getattr(page, "data", None) or []]
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise FatalAPIError(self._refused_key(exc)) from None
        except (openai.APITimeoutError, TimeoutError):
            raise FatalAPIError(
                f"{where} did not answer GET /models within "
                f"{min(self.policy.timeout, 20.0):g} s; is the URL right?"
            ) from None
        except openai.APIConnectionError as exc:
            raise FatalAPIError(self._unreachable(exc)) from None
        except (openai.APIError, ValueError, TypeError, AttributeError, UnsafeResponse):
            listed = None  # not offered (404, 405), or not a list: ask the model itself
        if listed and self.model in listed:
            return None
        return await self._tiny_request(listed)

    async def _tiny_request(self, listed: list[str] | None) -> str | None:
        import openai

        from dagmath_viz.generation.bounded import UnsafeResponse

        kwargs = self._request_fields()
        kwargs["max_tokens"] = 1
        kwargs["messages"] = [{"role": "user", "content": "Say OK."}]
        where = public_url(self.base_url)
        served = f" (it lists {_names(listed)})" if listed else ""
        create = self._openai().chat.completions.create
        try:
            try:
                await self._deadline(create(**kwargs))
            except openai.BadRequestError as exc:
                # a model that takes max_completion_tokens only (OpenAI's reasoning models)
                # refuses max_tokens: that is the check's own field, so ask without it
                if "max_tokens" not in _status_message(exc) or self.sampling.max_tokens:
                    raise
                del kwargs["max_tokens"]
                await self._deadline(create(**kwargs))
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise FatalAPIError(self._refused_key(exc)) from None
        except openai.NotFoundError as exc:
            raise FatalAPIError(
                f"{where}: model {self.model!r} or the chat-completions endpoint was not "
                f"found{served} (HTTP 404: {_status_message(exc)})"
            ) from None
        except openai.APIConnectionError as exc:
            if isinstance(exc, openai.APITimeoutError):
                return "the one-token check request timed out; starting anyway"
            raise FatalAPIError(self._unreachable(exc)) from None
        except TimeoutError:
            return "the one-token check request timed out; starting anyway"
        except openai.APIStatusError as exc:
            if exc.status_code in (408, 409, 429) or exc.status_code >= 500:
                return f"the check request got HTTP {exc.status_code}; starting anyway"
            # a proxy answers a wrong model or a bad key with 400 ("Invalid model name
            # passed in model=...", "Authentication Error"): the run cannot succeed
            raise FatalAPIError(
                f"{where} refused a one-token request for model {self.model!r}{served} "
                f"(HTTP {exc.status_code}: {_status_message(exc)}); check --model and the "
                "API key (--no-preflight skips this check)"
            ) from None
        except (openai.APIError, ValueError, UnsafeResponse) as exc:
            return (
                f"the check request got an unreadable answer ({_short(exc, 80)}); starting anyway"
            )
        return None

    def _refused_key(self, exc: Any) -> str:
        return (
            f"{public_url(self.base_url)} refused the credentials "
            f"(HTTP {exc.status_code}: {_status_message(exc)})"
        )

    def _unreachable(self, exc: Any) -> str:
        return (
            f"cannot connect to {public_url(self.base_url)} "
            f"({_short(exc.__cause__ or exc, 120)}); is the server running and --base-url right?"
        )

    async def _deadline(self, awaitable: Any, seconds: float | None = None) -> Any:
        """``awaitable`` with one deadline for the whole exchange: the client's own timeout
        bounds each read, so a server sending a byte a second would otherwise never end."""
        return await asyncio.wait_for(awaitable, seconds or self.policy.timeout)

    # ----------------------------------------------------------------- calls

    async def json_call(
        self,
        messages: list[dict[str, str]],
        schema_name: str,
        schema: dict[str, Any],
        check: Callable[[Any], str | None],
        required_key: str | None = None,
    ) -> Reply:
        """Send ``messages`` until a reply holds JSON that ``check`` accepts.

        ``check`` returns ``None`` for an acceptable value, else the reason it is not
        (the call asks again, up to the content-attempt bound).

        Raises:
            CallFailed: transport or content retries are exhausted, or the server rejects
                this request (HTTP 400 in plain-text mode, e.g. a prompt too long).
            FatalAPIError: 401, 403 or 404: no request can succeed; or the breaker
                tripped.
        """
        reason = "no reply"
        attempts = 0
        for _ in range(self.policy.content_attempts):
            attempts += 1
            completion = await self._send(messages, schema_name, schema, attempts)
            choice = completion.choices[0] if completion.choices else None
            if choice is None:
                reason = "the reply had no choices"
                self.usage.content_retries += 1
                continue
            message = choice.message
            text = (message.content if message is not None else None) or ""
            reasoning = _reasoning(message)
            if choice.finish_reason == "length":
                reason = "the reply was cut off at max_tokens (finish_reason 'length')"
                self.usage.content_retries += 1
                continue
            value = extract_json(text, required_key)
            if value is None:
                reason = f"no JSON object in the reply: {_short(text, 80)!r}"
                self.usage.content_retries += 1
                continue
            problem = check(value)
            if problem is not None:
                reason = problem
                self.usage.content_retries += 1
                continue
            return Reply(value, text, choice.finish_reason, reasoning, attempts)
        raise CallFailed(f"{reason} (after {attempts} replies)", attempts)

    def _request_fields(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, **self.sampling.fields()}
        if self.sampling.extra_body:
            kwargs["extra_body"] = self.sampling.extra_body
        return kwargs

    async def _send(
        self, messages: list[dict[str, str]], schema_name: str, schema: dict, attempt: int
    ) -> Any:
        import openai

        from dagmath_viz.generation.bounded import UnsafeResponse

        client = self._openai()
        retries = 0
        refusal = None  # the 400/422 a structured request got: is it about response_format?
        while True:
            structured = self.structured and refusal is None
            kwargs = self._request_fields()
            kwargs["messages"] = messages
            if structured:
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "schema": schema, "strict": True},
                }
            self.usage.requests += 1  # every request sent, refused and failed ones included
            try:
                completion = await self._deadline(client.chat.completions.create(**kwargs))
            except UnsafeResponse as exc:  # a cap: resending is no use
                raise CallFailed(f"refused: {exc}", attempt) from None
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise FatalAPIError(self._refused_key(exc)) from None
            except openai.NotFoundError as exc:
                raise FatalAPIError(
                    f"{public_url(self.base_url)}: model {self.model!r} or the chat-completions "
                    f"endpoint was not found (HTTP 404: {_status_message(exc)})"
                ) from None
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                if structured:
                    refusal = exc  # resend plain; only its success blames response_format
                    continue
                self._client_error(exc)
                raise CallFailed(
                    f"HTTP {exc.status_code}: {_status_message(exc)}", attempt
                ) from None
            except (openai.RateLimitError, openai.InternalServerError) as exc:
                wait = _retry_after(exc)
                retries = await self._pause(retries, wait, f"HTTP {exc.status_code}", attempt)
                continue
            except openai.APIStatusError as exc:
                if exc.status_code >= 500 or exc.status_code in (408, 409):
                    retries = await self._pause(
                        retries, _retry_after(exc), f"HTTP {exc.status_code}", attempt
                    )
                    continue
                self._client_error(exc)
                raise CallFailed(
                    f"HTTP {exc.status_code}: {_status_message(exc)}", attempt
                ) from None
            except (openai.APITimeoutError, TimeoutError):
                retries = await self._pause(retries, None, "the request timed out", attempt)
                continue
            except openai.APIConnectionError as exc:
                if isinstance(exc.__cause__, UnsafeResponse):  # as older clients raise it
                    raise CallFailed(f"refused: {exc.__cause__}", attempt) from None
                self.breaker.failure("connection", self._unreachable(exc))
                why = f"connection failed ({_short(exc.__cause__ or exc, 80)})"
                retries = await self._pause(retries, None, why, attempt)
                continue
            except (openai.APIError, ValueError, RecursionError) as exc:  # no completion
                why = f"unreadable response ({_short(exc, 80)})"
                retries = await self._pause(retries, None, why, attempt)
                continue
            if refusal is not None:
                self._fall_back(refusal)
            if not hasattr(completion, "choices"):  # some clients hand back a bare string
                why = f"unreadable response ({_short(completion, 80)!r})"
                retries = await self._pause(retries, None, why, attempt)
                continue
            self.breaker.success()
            usage = getattr(completion, "usage", None)
            if usage is not None:
                self.usage.prompt_tokens += usage.prompt_tokens or 0
                self.usage.completion_tokens += usage.completion_tokens or 0
            return completion

    def _client_error(self, exc: Any) -> None:
        """Count a 4xx answer: the same one again and again means no request can pass."""
        message = _status_message(exc)
        self.breaker.failure(
            f"{exc.status_code} {message}",
            f"{public_url(self.base_url)} gave every request the same answer "
            f"(HTTP {exc.status_code}: {message}); check --model and the API key",
        )

    def _fall_back(self, exc: Any) -> None:
        if self.structured:
            self.structured = False
            self.notice(
                f"the server refused response_format (HTTP {exc.status_code}: "
                f"{_status_message(exc)}); asking for plain JSON text instead"
            )

    async def _pause(self, retries: int, retry_after: float | None, why: str, attempt: int) -> int:
        """Sleep before resending; raises :class:`CallFailed` when the retries are spent."""
        if retries >= self.policy.transport_retries:
            raise CallFailed(f"{why}, {retries + 1} times", attempt)
        if retry_after is not None:
            delay = min(retry_after, self.policy.max_delay)
        else:
            ceiling = min(self.policy.base_delay * 2**retries, self.policy.max_delay)
            # jitter: requests that failed together should not all come back together
            delay = random.uniform(ceiling / 2, ceiling)
        self.usage.transport_retries += 1
        await asyncio.sleep(delay)
        return retries + 1


def _names(names: list[str], shown: int = 5) -> str:
    listed = ", ".join(repr(n) for n in names[:shown])
    return listed + (f" and {len(names) - shown} more" if len(names) > shown else "")


def _reasoning(message: Any) -> str:
    """The server's separate reasoning text, if any (vLLM/SGLang ``reasoning_content``)."""
    if message is None:
        return ""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def run_to_completion(make_coroutine: Callable[[], Any]) -> Any:
    """Run ``make_coroutine()`` to completion from synchronous code and return its result.

    ``asyncio.run`` refuses to start inside a thread whose event loop is already running
    (a Jupyter cell, or a test session driving Playwright's sync API). There the run gets a
    thread of its own, with its own loop; elsewhere it runs here.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop running in this thread: the usual command-line case
        return asyncio.run(make_coroutine())
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = asyncio.run(make_coroutine())
        except BaseException as exc:  # re-raised in the caller's thread below
            outcome["error"] = exc

    thread = threading.Thread(target=run, name="dagmath-generation")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]
