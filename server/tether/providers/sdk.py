"""What the SDK-backed providers (OpenAI, Anthropic) share: their settings, and a reply
streamed on a client of its own, retried and continued as ``retry.stream_reply`` says.

No SDK is imported here (the subclasses do): a subclass opens its client, makes one API
request (``_attempt``) and says which of its SDK's errors are worth a retry (``_classify``).
"""

from __future__ import annotations

import asyncio
import importlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, aclosing
from contextvars import ContextVar
from typing import Any, ClassVar, Generic, TypeVar

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

CONNECTION_MODULES = (
    "anyio._backends._asyncio",
    "anyio._core._sockets",
    "anyio._core._synchronization",
    "anyio.streams.memory",
    "anyio.streams.stapled",
)
"""What an SDK's first real connection imports (``rehearse``'s requests make none)."""

ClientT = TypeVar("ClientT")
HttpT = TypeVar("HttpT")

REHEARSAL = ModelRequest(
    system="rehearsal",
    messages=(
        UserMessage("rehearsal"),
        AssistantMessage("rehearsal", (ToolCall("r0", "read_file", {"path": "r"}),)),
        ToolResultMessage("r0", "read_file", "rehearsal", is_error=False),
    ),
    tools=(ToolSpec("read_file", "rehearsal", {"type": "object", "properties": {"path": {}}}),),
)
"""A conversation with every kind of message and a tool: the shapes of a real run's
requests, whose transformation the SDKs work out (and cache) on first use."""

RehearsedCall = tuple[str, str, str]
"""A tool call of a rehearsed reply: its id, the tool's name, its arguments as JSON."""
REHEARSED_CALL: RehearsedCall = ("r1", "r", "{}")

REHEARSAL_SOCKET: ContextVar[str | None] = ContextVar("tether_rehearsal_socket", default=None)
"""Set only in a run rehearsal's own event loop (``lsp.rehearsal``): the Unix socket, in its
private folder, that answers every request of the providers made there. Unset (every real
run): the SDK's default connection."""


class SdkProvider(ABC, Generic[ClientT]):
    """A model behind an SDK's streaming API; ``ClientT`` is the SDK's async client."""

    name: str
    default_limit: ClassVar[tuple[int | None, int | None]] = (None, None)
    """The output limit of a request and after a cut-off reply, unless one is given."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str,
        base_url: str | None = None,
        models: ModelTable | None = None,
        context_window: int | None = None,
        limit: OutputLimit | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.model = model
        self._api_key = api_key
        self._base_url = base_url
        self._models = models or ModelTable()
        # ``context_window`` (contextWindowTokens) is for models the table does not know.
        self.context_window = self._models.window(
            model, configured=context_window, local=base_url is not None
        )
        self._limit = limit or OutputLimit(*self.default_limit)
        self._retry = retry or RetryPolicy()
        self._rehearsal: bytes | None = None
        """Set by ``rehearse``: every request is answered in-process with this stream."""

    def _http(self, factory: Callable[..., HttpT]) -> HttpT:
        """The SDK's default HTTP client (``factory``) on the shared TLS context; in a
        rehearsal, one whose requests never leave the process (answered in-process by
        ``rehearse``, or by a run rehearsal's socket: ``REHEARSAL_SOCKET``)."""
        socket = REHEARSAL_SOCKET.get()
        if self._rehearsal is None and socket is None:
            return factory(verify=shared_ssl_context())
        import httpx2  # the SDKs' HTTP client

        if self._rehearsal is None:
            uds = httpx2.AsyncHTTPTransport(uds=socket)
            return factory(verify=shared_ssl_context(), transport=uds)
        body = self._rehearsal
        headers = {"content-type": "text/event-stream"}
        transport = httpx2.MockTransport(
            lambda _: httpx2.Response(200, headers=headers, content=body)
        )
        return factory(verify=shared_ssl_context(), transport=transport)

    @abstractmethod
    def _client(self) -> AbstractAsyncContextManager[ClientT]:
        """A new client, closed after the call (its connections belong to this event loop)."""

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
        async with self._client() as client:

            def attempt(part: ModelRequest, max_tokens: int | None) -> PartStream:
                return self._attempt(client, part, max_tokens)

            reply = stream_reply(
                request, attempt, limit=self._limit, policy=self._retry, classify=self._classify
            )
            # aclosing: a consumer that stops early closes the HTTP stream now, not at GC.
            async with aclosing(reply) as deltas:
                async for delta in deltas:
                    yield delta


def rehearse(provider: SdkProvider[Any], stream: bytes) -> None:
    """Stream one reply of ``provider`` to ``REHEARSAL``, answered in-process with
    ``stream`` (the provider's wire format, ending in a tool call), on an event loop of
    its own: what a first real call would load and build — the SDK's lazily imported
    modules, its request transformation and stream event validators, the TLS context —
    is then done. No request leaves the process. For the warm-up and the daemon
    (``providers.prime``); the caller has no running event loop in this thread."""
    provider._rehearsal = stream
    # The rehearsal's requests skip the socket: what the first real connection imports
    # (anyio's event-loop backend and its socket streams, under the SDK's HTTP client).
    for name in CONNECTION_MODULES:
        importlib.import_module(name)

    async def drain() -> None:
        async for _ in provider.stream(REHEARSAL):
            pass

    asyncio.run(drain())
