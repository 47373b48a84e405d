"""The fake Responses API streams parse with the official OpenAI SDK, item by item."""

from __future__ import annotations

import json
import typing

import openai
import pytest
from openai.types.responses import ResponseStreamEvent

from .fake_responses import responses_failed, responses_stream, tool_outputs
from .fakes import FakeApi, Sse


def test_the_sdk_reads_text_function_and_custom_tool_calls() -> None:
    frames = responses_stream(
        "Let me ",
        "read it.",
        calls=[("c1", "exec_command", ['{"cmd": ', '"cat a.py"}'])],
        custom_calls=[("c2", "apply_patch", "*** Begin Patch\n*** End Patch\n")],
        usage=(7, 3),
    )
    with FakeApi() as fake:
        fake.queue(Sse(frames))
        client = openai.OpenAI(base_url=fake.url + "/v1", api_key="test-key", max_retries=0)
        deltas: list[str] = []
        with client.responses.stream(model="gpt-test", input="hi") as stream:
            for event in stream:
                if event.type == "response.output_text.delta":
                    deltas.append(event.delta)
            response = stream.get_final_response()
    assert fake.requests[0].path == "/v1/responses"
    assert deltas == ["Let me ", "read it."]
    message, call, custom = response.output
    assert message.type == "message" and message.content[0].text == "Let me read it."  # type: ignore[union-attr]
    assert call.type == "function_call" and call.arguments == '{"cmd": "cat a.py"}'
    assert custom.type == "custom_tool_call" and custom.input.startswith("*** Begin Patch")
    assert response.usage is not None and response.usage.total_tokens == 10


def test_tool_outputs_are_counted_from_the_request_input() -> None:
    body = {
        "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "function_call_output", "call_id": "c1", "output": "x"},
            {"type": "custom_tool_call_output", "call_id": "c2", "output": "y"},
        ]
    }
    assert tool_outputs(body) == 2 and tool_outputs({}) == 0


def _event_types() -> dict[str, type[openai.BaseModel]]:
    """The SDK's model of each Responses stream event, by its ``type``."""
    union = typing.get_args(ResponseStreamEvent)[0]
    return {
        typing.get_args(model.model_fields["type"].annotation)[0]: model
        for model in typing.get_args(union)
    }


@pytest.mark.parametrize(
    "frames",
    [
        responses_stream(
            "It is 4.",
            calls=[("c1", "read_file", ['{"path": ', '"a.py"}'])],
            summary=[["Two ", "and two."], ["Four."]],
            encrypted="gAAAAenc==",
            reasoning_tokens=12,
            cached=40,
        ),
        responses_stream("cut", summary=[["Thinking"]], encrypted="e", incomplete=True),
        responses_failed("The server had an error."),
    ],
    ids=["reasoning, text and a call", "incomplete", "failed"],
)
def test_every_event_is_valid_as_the_sdks_own_type(frames: list[str]) -> None:
    """Validated, not just read: the SDK's stream builds its events without validation,
    so a fake that drifted from the API's shapes would go unnoticed there."""
    types = _event_types()
    for frame in frames:
        name, data = frame.split("\n", 1)
        event = json.loads(data.removeprefix("data: "))
        assert name == f"event: {event['type']}"
        types[event["type"]].model_validate(event)
