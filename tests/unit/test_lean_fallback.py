"""The full server's side of the lean start: the ``initialize`` it answered is handled again
with the answer dropped, a refusal its shape check did not foresee is told, not lost, and a
setting that cannot be used refuses the runs, not ``initialize``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tether.lsp.dispatch import dispatch
from tether.lsp.handlers import create_server
from tether.lsp.server import TetherProtocol
from tether.tools import build_tools


class Captured:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def write(self, body: bytes) -> None:
        self.messages.append(json.loads(body))


def body(msg_id: int, method: str, params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


def served(tmp_path: Path) -> tuple[TetherProtocol, Captured]:
    env = {
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "c"),
        "TETHER_STATE_DIR": str(tmp_path / "s"),
    }
    server = create_server(build_tools(), env)
    protocol = server.protocol
    assert isinstance(protocol, TetherProtocol)
    captured = Captured()
    protocol.set_writer(captured, include_headers=False)
    return protocol, captured


def test_the_answered_initialize_is_handled_and_its_second_answer_dropped(tmp_path: Path) -> None:
    protocol, captured = served(tmp_path)
    protocol.lean_answered = 1
    options = {"provider": "scripted", "maxSteps": 3}
    dispatch(
        protocol, body(1, "initialize", {"capabilities": {}, "initializationOptions": options})
    )
    assert [m for m in captured.messages if m.get("id") == 1] == []
    assert protocol._server.config.max_steps == 3  # type: ignore[attr-defined]
    dispatch(protocol, body(2, "agent/cancel", {"runId": "none"}))
    assert "result" in next(m for m in captured.messages if m.get("id") == 2)


def test_a_refusal_after_the_lean_answer_is_shown_and_later_requests_wait_for_initialize(
    tmp_path: Path,
) -> None:
    protocol, captured = served(tmp_path)
    protocol.lean_answered = 1
    bad = {"capabilities": {"general": {"positionEncodings": 5}}}
    dispatch(protocol, body(1, "initialize", bad))
    assert [m for m in captured.messages if m.get("id") == 1] == []
    [shown] = [m for m in captured.messages if m.get("method") == "window/showMessage"]
    assert shown["params"]["type"] == 1 and "initialize" in shown["params"]["message"]
    dispatch(protocol, body(2, "agent/sessions", {}))
    refused = next(m for m in captured.messages if m.get("id") == 2)
    assert "send initialize first" in refused["error"]["message"]
    # and the client may initialize again, answered by the full server this time
    dispatch(protocol, body(3, "initialize", {"capabilities": {}}))
    assert "result" in next(m for m in captured.messages if m.get("id") == 3)
