"""The connection to the client as the Host side of the LSP layer uses it — the open
documents, what the client declared, requests and notifications out — so that the buffers,
the editor and the event sinks see that much of the server, not all of it.

``TetherServer`` is one; a unit test can pass a stand-in with only what it needs.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from lsprotocol import types
    from pygls.workspace import Workspace

    from tether_protocol import ClientTetherCapabilities


class ClientLink(Protocol):
    """What buffers, editor and sinks may use of the client's connection."""

    @property
    def workspace(self) -> Workspace:
        """The open documents (keyed by percent-decoded URI) and the negotiated encoding."""
        ...

    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...

    @property
    def client_tether(self) -> ClientTetherCapabilities:
        """What the client declared in ``experimental.tether`` at ``initialize``."""
        ...

    def send_request(self, method: str, params: Any, msg_id: str | None = None) -> Future[Any]:
        """Send a request; the future holds the answer (or the client's error)."""
        ...

    def send_notification(self, method: str, params: Any) -> None: ...

    def write_message(self, body: bytes) -> bool:
        """Write one JSON-RPC message already serialized; False when there is no transport
        (yet) and nothing was written."""
        ...
