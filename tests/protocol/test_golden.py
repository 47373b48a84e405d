"""Every golden wire shape round-trips through the models unchanged.

The files under tests/golden/ are also where client authors (TypeScript, Lua) read the shapes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from tether_protocol import (
    ApproveParams,
    ApproveResult,
    AskParams,
    AskResult,
    CheckpointsResult,
    DiagnosticsParams,
    DiagnosticsResult,
    JobOutputParams,
    JobOutputResult,
    JobsResult,
    JobStopParams,
    JobStopResult,
    RewindParams,
    RewindResult,
    RulesAddParams,
    RulesListResult,
    RulesRemoveParams,
    RunEvent,
    RunParams,
    RunResult,
    TetherSettings,
    UndoResult,
    parse_event,
)
from tether_protocol.code import CodeParams, CodeResult
from tether_protocol.schema import SHAPES, render

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

MODELS: dict[str, Any] = {
    "agent-run.params.json": RunParams,
    "agent-run.params.context.json": RunParams,
    "agent-diagnostics.params.json": DiagnosticsParams,
    "agent-diagnostics.result.json": DiagnosticsResult,
    "agent-run.result.json": RunResult,
    "agent-run.result.error.json": RunResult,
    "agent-event.params.json": RunEvent,
    "agent-approve.params.json": ApproveParams,
    "agent-approve.result.json": ApproveResult,
    "agent-ask.params.json": AskParams,
    "agent-ask.result.json": AskResult,
    "agent-code.params.json": CodeParams,
    "agent-code.result.json": CodeResult,
    "settings.json": TetherSettings,
    "agent-undo.result.json": UndoResult,
    "agent-checkpoints.result.json": CheckpointsResult,
    "agent-rewind.params.json": RewindParams,
    "agent-rewind.result.json": RewindResult,
    "agent-rules-list.result.json": RulesListResult,
    "agent-rules-add.params.json": RulesAddParams,
    "agent-rules-remove.params.json": RulesRemoveParams,
    "agent-jobs.result.json": JobsResult,
    "agent-jobStop.params.json": JobStopParams,
    "agent-jobStop.result.json": JobStopResult,
    "agent-jobOutput.params.json": JobOutputParams,
    "agent-jobOutput.result.json": JobOutputResult,
}


def as_list(data: Any) -> list[Any]:
    return data if isinstance(data, list) else [data]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_golden_round_trip(name: str) -> None:
    adapter: TypeAdapter[Any] = TypeAdapter(MODELS[name])
    for original in as_list(json.loads((GOLDEN / name).read_text())):
        parsed = adapter.validate_json(json.dumps(original))
        again = adapter.dump_python(parsed, mode="json", by_alias=True, exclude_none=True)
        assert again == original


def test_every_golden_file_is_checked() -> None:
    assert sorted(p.name for p in GOLDEN.glob("*.json")) == sorted(MODELS)


def test_every_event_kind_has_a_golden_example() -> None:
    from tether_protocol import EVENT_KINDS

    events = [parse_event(e) for e in json.loads((GOLDEN / "agent-event.params.json").read_text())]
    assert [e.kind for e in events] == list(EVENT_KINDS)


def test_checked_in_schema_matches_the_models() -> None:
    schema_dir = Path(__file__).resolve().parents[2] / "protocol" / "schema"
    files = render()
    on_disk = {p.name: p.read_text() for p in schema_dir.glob("*.json")}
    assert set(on_disk) == set(files), "run: python -m tether_protocol.schema"
    for name, text in files.items():
        assert on_disk[name] == text, f"{name} is stale; run: python -m tether_protocol.schema"
    assert len(files) == len(SHAPES)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"prompt": ""}, "prompt"),
        ({"prompt": "x", "limits": {"maxSteps": 0}}, "maxSteps"),
        ({"prompt": "x", "runId": 5}, "runId"),
        ({"prompt": "x", "workDoneToken": 1.5}, "workDoneToken"),
        ({"prompt": "x", "extra": 1}, "extra"),
    ],
)
def test_run_params_refuse_bad_fields(data: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        RunParams.model_validate_json(json.dumps(data))
    assert field in str(caught.value)


def test_an_approval_answer_without_a_decision_is_invalid() -> None:
    with pytest.raises(ValidationError):
        ApproveResult.model_validate({"feedback": "no decision"})
