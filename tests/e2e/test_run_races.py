"""Runs racing each other and the client, through the real server: two ``agent/run`` for one
session sent at once, and a ``$/cancelRequest`` while the server waits for the client's
answer to ``window/workDoneProgress/create`` (VS Code answers it later, not at once)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES

from .conftest import Editor, script, serving

PROGRESS_CREATE = types.WINDOW_WORK_DONE_PROGRESS_CREATE


class SlowProgressEditor(Editor):
    """An editor that answers ``window/workDoneProgress/create`` only when told to."""

    def __init__(self, client: LanguageClient, state_dir: Path) -> None:
        super().__init__(client, state_dir)
        self.progress_asked = asyncio.Event()
        self.answer_progress = asyncio.Event()
        self.progress_tokens: list[str | int] = []

        @client.feature(PROGRESS_CREATE)
        async def on_progress_create(params: types.WorkDoneProgressCreateParams) -> None:
            self.progress_tokens.append(params.token)
            self.progress_asked.set()
            async with asyncio.timeout(10):  # an editor answers eventually
                await self.answer_progress.wait()
            self.client.progress_reports.setdefault(params.token, [])


@asynccontextmanager
async def started(state_dir: Path) -> AsyncIterator[SlowProgressEditor]:
    """A server on ``state_dir`` and its editor, shut down cleanly at the end."""
    features = {m: f for m, f in DEFAULT_CLIENT_FEATURES.items() if m != PROGRESS_CREATE}
    async with serving(
        state_dir, make_editor=SlowProgressEditor, client_features=features
    ) as editor:
        editor.answer_progress.set()  # answers at once unless a test says otherwise
        yield editor


async def run_or_error(editor: Editor, **params: Any) -> dict[str, Any] | JsonRpcException:
    try:
        return await editor.run(**params)
    except JsonRpcException as exc:
        return exc


async def test_two_runs_sent_at_once_on_one_session_start_one(
    tmp_path: Path, workspace: Path
) -> None:
    state = tmp_path / "state"
    async with started(state) as editor:  # yesterday's session
        await editor.open_session(workspace, script=script({"text": "hello"}))
        session_id = (await editor.run(prompt="first"))["sessionId"]
    async with started(state) as editor:  # today: the editor resends a continuation twice
        await editor.open_session(workspace, script=script({"text": "again"}))
        answers = await asyncio.gather(
            run_or_error(editor, prompt="go on", sessionId=session_id),
            run_or_error(editor, prompt="go on", sessionId=session_id),
        )
        results = [a for a in answers if isinstance(a, dict)]
        errors = [a for a in answers if isinstance(a, JsonRpcException)]
        assert len(results) == 1 and len(errors) == 1, answers
        assert results[0]["outcome"] == "done" and results[0]["sessionId"] == session_id
        assert errors[0].code == -32602 and "sessionId" in str(errors[0])
        # the session is free again once its run is over
        after = await editor.run(prompt="and now?", sessionId=session_id)
        assert after["outcome"] == "done"


async def test_two_runs_sent_at_once_with_one_run_id_start_one(
    tmp_path: Path, workspace: Path
) -> None:
    async with started(tmp_path / "state") as editor:
        await editor.open_session(workspace, script=script({"text": "hi"}))
        answers = await asyncio.gather(
            run_or_error(editor, prompt="one", runId="same"),
            run_or_error(editor, prompt="two", runId="same"),
        )
        results = [a for a in answers if isinstance(a, dict)]
        errors = [a for a in answers if isinstance(a, JsonRpcException)]
        assert len(results) == 1 and len(errors) == 1, answers
        assert errors[0].code == -32602 and "runId" in str(errors[0])
        assert [e.kind for e in editor.events_of("same")].count("run-started") == 1


async def test_a_cancel_while_progress_is_being_created_frees_the_session(
    tmp_path: Path, workspace: Path
) -> None:
    async with started(tmp_path / "state") as editor:
        await editor.open_session(workspace, profile="vscode", script=script({"text": "ok"}))
        session_id = (await editor.run(prompt="first", runId="r1"))["sessionId"]
        editor.progress_asked.clear()
        editor.answer_progress.clear()  # the user's editor is busy: it answers later
        second = asyncio.ensure_future(
            editor.client.protocol.send_request_async(
                "agent/run", {"prompt": "second", "runId": "r2", "sessionId": session_id}, "q2"
            )
        )
        async with asyncio.timeout(5):
            await editor.progress_asked.wait()
        assert editor.progress_tokens[-1] == "tether-r2"
        editor.client.cancel_request(types.CancelParams(id="q2"))
        try:
            answer = await asyncio.wait_for(second, 5)
        except JsonRpcException as exc:  # the protocol allows -32800 for a cancelled request
            assert exc.code == -32800
        else:
            assert answer["outcome"] == "cancelled" and answer["steps"] == 0
            assert editor.kinds("r2") == ["run-started", "run-finished"]  # no model call
        editor.answer_progress.set()  # the late answer changes nothing
        third = await editor.run(prompt="third", runId="r3", sessionId=session_id)
        assert third["outcome"] == "done" and third["sessionId"] == session_id
        assert "step" not in editor.kinds("r2")
        assert editor.client.progress_reports.get("tether-r2", []) == []
