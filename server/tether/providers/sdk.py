"""What the SDK-backed providers (OpenAI, Anthropic) share: their settings, the HTTP
client whose connections every model call of the event loop reuses, and a reply streamed,
retried and continued as ``retry.stream_reply`` says.

No SDK is imported here (the subclasses do): a subclass opens its client, makes one API
request (``_attempt``) and says which of its SDK's errors are worth a retry (``_classify``).
"""

from __future__ import annotations

import asyncio
import weakref
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import Any, ClassVar, Generic, NotRequired, TypedDict, TypeVar, Unpack, cast

from tether_protocol.config import ReasoningEffort

from .base import (
    AssistantMessage,
    ModelDelta,
    ModelRequest,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
)
from .models import ModelTable
from .retry import (
    Failure,
    OutputLimit,
    PartStream,
    RetryPolicy,
    shared_ssl_context,
    stream_reply,
)
from .unlogged import unlogged

ClientT = TypeVar("ClientT")
HttpT = TypeVar("HttpT")

CANNED_REQUEST = ModelRequest(
    system="primed",
    messages=(
        UserMessage("primed"),
        AssistantMessage("primed", (ToolCall("r0", "read_file", {"path": "r"}),)),
        ToolResultMessage("r0", "read_file", "primed", is_error=False),
    ),
    tools=(ToolSpec("read_file", "primed", {"type": "object", "properties": {"path": {}}}),),
)
"""A conversation with every kind of message and a tool: the shapes of a real run's
requests, whose transformation the SDKs work out (and cache) on first use."""

CannedCall = tuple[str, str, str]
"""A tool call of a canned reply: its id, the tool's name, its arguments as JSON."""
CANNED_CALL: CannedCall = ("r1", "r", "{}")


class SdkSettings(TypedDict):
    """What every SDK provider is made with (``providers.make_provider``)."""

    model: str
    api_key: str
    base_url: NotRequired[str | None]
    models: NotRequired[ModelTable | None]
    context_window: NotRequired[int | None]
    limit: NotRequired[OutputLimit | None]
    retry: NotRequired[RetryPolicy | None]
    reasoning_effort: NotRequired[ReasoningEffort]
    """``reasoningEffort``: how hard a reasoning model thinks (default ``off``)."""


class SdkProvider(ABC, Generic[ClientT]):
    """A model behind an SDK's streaming API; ``ClientT`` is the SDK's async client."""

    name: str
    default_limit: ClassVar[tuple[int | None, int | None]] = (None, None)
    """The output limit of a request and after a cut-off reply, unless one is given."""

    def __init__(self, **settings: Unpack[SdkSettings]) -> None:
        model = self.model = settings["model"]
        self._api_key = settings["api_key"]
        base_url = self._base_url = settings.get("base_url")
        self._models = settings.get("models") or ModelTable()
        context_window = settings.get("context_window")
        # ``context_window`` (contextWindowTokens) is for models the table does not know.
        self.context_window = self._models.window(
            model, configured=context_window, local=base_url is not None
        )
        self._limit = settings.get("limit") or OutputLimit(*self.default_limit)
        self._retry = settings.get("retry") or RetryPolicy()
        self._effort: ReasoningEffort = settings.get("reasoning_effort") or "off"
        self._canned: bytes | None = None
        """Set by ``prime_with``: every request is answered in-process with this stream."""

    def _http(self, factory: Callable[..., HttpT]) -> HttpT:
        """The event loop's shared HTTP client of the SDK (``shared_http``); when primed,
        one of the call's own whose requests never leave the process (``prime_with``; it
        holds no connection, so nothing of it needs closing)."""
        if self._canned is None:
            return shared_http(factory)
        import httpx2  # the SDKs' HTTP client

        body = self._canned
        headers = {"content-type": "text/event-stream"}
        transport = httpx2.MockTransport(
            lambda _: httpx2.Response(200, headers=headers, content=body)
        )
        return factory(verify=shared_ssl_context(), transport=transport)

    @abstractmethod
    def _client(self) -> ClientT:
        """The SDK's client for one call, on ``_http``'s HTTP client."""

    @abstractmethod
    def _attempt(
        self, client: ClientT, request: ModelRequest, max_tokens: int | None
    ) -> PartStream:
        """One API request for ``request``, ending with a ``ReplyEnd``."""

    @abstractmethod
    def _classify(self, exc: Exception) -> Failure | None:
        """The ``Failure`` an SDK error is; None for anything else (a bug: it propagates)."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        """Stream one reply, retried and continued as ``retry.stream_reply`` describes."""
        client = self._client()

        def attempt(part: ModelRequest, max_tokens: int | None) -> PartStream:
            return self._attempt(client, part, max_tokens)

        reply = stream_reply(
            request, attempt, limit=self._limit, policy=self._retry, classify=self._classify
        )
        # aclosing: a consumer that stops early closes the HTTP stream now, not at GC (its
        # connection is then closed, not put back for the next call).
        async with aclosing(reply) as deltas:
            async for delta in deltas:
                yield delta


_SHARED_HTTP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[object, Any]] = (
    weakref.WeakKeyDictionary()
)


KEEP_ALIVE_SECONDS = 60.0
"""How long an idle connection to the API is kept: through a person's pause between two
prompts (the HTTP client's default, 5 s, is shorter than most), and no longer than the
APIs' and their load balancers' own idle limits (60 s and more)."""


def shared_http(factory: Callable[..., HttpT]) -> HttpT:
    """The running event loop's HTTP client made by ``factory`` (an SDK's default) on the
    shared TLS context (``retry.shared_ssl_context``), made on first use.

    Its connections are kept between calls (``KEEP_ALIVE_SECONDS`` idle), so that a run's
    next model call, and the next prompt's, reuse one rather than pay a TCP and a TLS
    handshake to the API again: two round trips to a distant API, and the TLS handshake's
    own work, per model call. A connection the API has closed meanwhile is seen closed
    and replaced before the request goes; one it closes just as the request goes is
    answered by nothing, and the request is sent again at once (``Failure.at_once``).
    Connections belong to the loop they were opened on: each loop has its own
    (``close_shared_http`` at the end of a front's)."""
    import httpx2  # the SDKs' HTTP client (loaded with the SDK that calls this)

    context = shared_ssl_context()
    clients = _SHARED_HTTP.setdefault(asyncio.get_running_loop(), {})
    key = (factory, context)
    client = clients.get(key)
    if client is None or client.is_closed:
        limits = httpx2.Limits(
            max_connections=1000, max_keepalive_connections=100, keepalive_expiry=KEEP_ALIVE_SECONDS
        )  # the SDKs' own limits, but for the keep-alive
        client = clients[key] = factory(verify=context, limits=limits)
    return cast(HttpT, client)


async def close_shared_http() -> None:
    """Close the running loop's shared HTTP clients and their kept connections."""
    clients = _SHARED_HTTP.pop(asyncio.get_running_loop(), {})
    for client in clients.values():
        await client.aclose()


def prime_with(provider: SdkProvider[Any], stream: bytes) -> None:
    """Stream one reply of ``provider`` to ``CANNED_REQUEST``, answered in-process with
    ``stream`` (the provider's wire format, ending in a tool call), on an event loop of
    its own: what a first real call would load and build — the SDK's lazily imported
    modules, its request transformation and stream event validators, the TLS context —
    is then done. No request leaves the process. For the warm-up and the daemon
    (``providers.prime``); the caller has no running event loop in this thread."""
    provider._canned = stream
    # The canned request skips the socket: what the first real connection imports
    # (anyio's event-loop backend and its socket streams, under the SDK's HTTP client).
    from anyio._backends import _asyncio
    from anyio._core import _sockets, _synchronization
    from anyio.streams import memory, stapled

    del _asyncio, _sockets, _synchronization, memory, stapled

    async def drain() -> None:
        async for _ in provider.stream(CANNED_REQUEST):
            pass

    with unlogged():  # no traffic: nothing of it is logged as if it were
        asyncio.run(drain())
