"""What the SDK-backed providers (OpenAI, Anthropic) share: their settings, and a reply
streamed on a client of its own, retried and continued as ``retry.stream_reply`` says.

No SDK is imported here (the subclasses do): a subclass opens its client, makes one API
request (``_attempt``) and says which of its SDK's errors are worth a retry (``_classify``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, aclosing
from typing import ClassVar, Generic, TypeVar

from .base import ModelDelta, ModelRequest
from .models import ModelTable
from .retry import Failure, OutputLimit, PartStream, RetryPolicy, stream_reply

ClientT = TypeVar("ClientT")


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
