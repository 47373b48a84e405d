"""A request the server withdrew (``$/cancelRequest``: the run ended, a question or an
approval timed out) may still be answered by the client, mostly with its "cancelled" error.
No one waits for that answer any more; it must be read all the same, or asyncio logs "Future
exception was never retrieved" once it is collected — in ``tether chat`` that error landed
on the terminal, under the prompt."""

from __future__ import annotations

import asyncio
import gc
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcRequestCancelled

from tether.lsp.editor import LspEditor
from tether.tools.ask import Question


class Link:
    """The client's connection as ``LspEditor`` uses it: requests are kept, not sent."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, Future[Any]]] = []
        self.notifications: list[tuple[str, Any]] = []
        self.asked = asyncio.Event()

    def send_request(self, method: str, params: Any, msg_id: str | None = None) -> Future[Any]:
        future: Future[Any] = Future()
        self.requests.append((method, future))
        self.asked.set()
        return future

    def send_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))


async def _queued_callbacks_run() -> None:
    """Until the callbacks queued now have run, then those they queued (the loop runs them
    in order): the answer reaches asyncio's side of the future, then that future's own."""
    loop = asyncio.get_running_loop()
    ran = asyncio.Event()
    loop.call_soon(lambda: loop.call_soon(ran.set))
    await ran.wait()


async def test_the_late_answer_to_a_withdrawn_question_is_read(tmp_path: Path) -> None:
    reported: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: reported.append(context))
    link = Link()
    editor = LspEditor(link, None, lambda: tmp_path)  # type: ignore[arg-type]
    asking = asyncio.ensure_future(editor.ask_user(Question("r-1", "c-1", "Which database?")))
    await link.asked.wait()
    asking.cancel()  # the question timed out
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert [method for method, _ in link.notifications] == ["$/cancelRequest"]
    [(method, answer)] = link.requests
    assert method == "agent/ask"
    answer.set_exception(JsonRpcRequestCancelled("withdrawn by the server"))  # the client's
    await _queued_callbacks_run()
    del asking, answer
    link.requests.clear()
    gc.collect()
    assert reported == []
