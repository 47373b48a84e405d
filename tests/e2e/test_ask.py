"""``ask_user`` through a real ``tether serve``: ``agent/ask`` to a headless client that
declared ``ask`` (its answer reaches the model), none to one that did not (the model is told
at once that no one can be asked)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from tether.client.headless import connect
from tether_protocol import AskParams, RunEvent, ToolResultEvent

from .conftest import script

QUESTION = "Which one?\x1b[31m\u202e"
CHOICES = ["the first", "the \x1b]0;x\x07second"]


def _options(tmp_path: Path, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"provider": "scripted", "script": script(*turns), "stateDir": str(tmp_path / "state")}


def _ask(**arguments: Any) -> dict[str, Any]:
    return {"toolCalls": [{"name": "ask_user", "arguments": arguments}]}


async def test_a_client_that_declares_ask_is_asked_and_its_answer_reaches_the_model(
    workspace: Path, tmp_path: Path
) -> None:
    asked: list[dict[str, Any]] = []
    answers = iter(["the \\x1b]0;x\\x07second", "not offered", None])

    async def asker(params: Any) -> dict[str, Any]:
        asked.append(params)
        answer = next(answers)
        return {} if answer is None else {"answer": answer}

    events: list[RunEvent] = []
    asks = [_ask(question=QUESTION + "?" * n, choices=CHOICES, free_text=False) for n in range(3)]
    options = _options(tmp_path, *asks, {"text": "done"})
    async with connect(workspace, options, asker=asker) as client:
        client.on_event = events.append
        result = await client.run("pick one", runId="r1")
    assert result["outcome"] == "done"
    first = AskParams.model_validate(asked[0], strict=False)  # the documented shape
    assert first.run_id == "r1" and first.call_id
    assert first.question == "Which one?\\x1b[31m\\u202e"  # shown escaped, not acted on
    assert first.choices == ["the first", "the \\x1b]0;x\\x07second"]
    assert first.free_text is False
    outputs = [e.output for e in events if isinstance(e, ToolResultEvent)]
    assert outputs[0] == "The user chose: the \x1b]0;x\x07second"  # the model's own choice
    assert outputs[1].startswith("The user closed the question")  # not a choice: no answer
    assert outputs[2].startswith("The user closed the question")  # declined
    assert len(asked) == 3


async def test_a_client_that_declares_nothing_is_not_asked(workspace: Path, tmp_path: Path) -> None:
    events: list[RunEvent] = []
    options = _options(tmp_path, _ask(question="Which one?", choices=["a", "b"]), {"text": "a"})
    async with connect(workspace, options) as client:  # no asker: ask not declared
        client.on_event = events.append
        result = await client.run("pick one", runId="r1")
    assert result["outcome"] == "done"
    [tool_result] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert not tool_result.ok and tool_result.output.startswith("No one to ask")


async def test_a_question_left_unanswered_is_withdrawn_at_the_approval_timeout(
    workspace: Path, tmp_path: Path
) -> None:
    asked = anyio.Event()
    never = anyio.Event()

    async def asker(params: Any) -> dict[str, Any]:
        asked.set()
        await never.wait()  # a person who walked away
        return {"answer": "too late"}

    events: list[RunEvent] = []
    options = {
        **_options(tmp_path, _ask(question="Which one?"), {"text": "went on"}),
        "approvalTimeoutSeconds": 0.5,
    }
    async with connect(workspace, options, asker=asker) as client:
        client.on_event = events.append
        result = await client.run("pick one", runId="r1")
        assert asked.is_set()
    assert result["outcome"] == "done"
    [tool_result] = [e for e in events if isinstance(e, ToolResultEvent)]
    assert not tool_result.ok
    assert tool_result.output.startswith("No answer came within 0.5 s (approvalTimeoutSeconds)")
