"""tether.run arguments and end-of-run messages for clients with no Tether plugin."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tether.lsp.plain import outcome_message, run_params_from_arguments
from tether_protocol import RunResult, Usage

RECENT = "file:///ws/src/app.py"


@pytest.mark.parametrize(
    ("arguments", "prompt"),
    [(["fix it"], "fix it"), (["fix", "the", "bug"], "fix the bug"), ([" a ", "b "], "a b")],
)
def test_strings_are_the_prompt(arguments: list[Any], prompt: str) -> None:
    params = run_params_from_arguments(arguments, RECENT)
    assert params == {"prompt": prompt, "context": {"uri": RECENT}}


def test_an_object_keeps_its_own_context_and_gets_the_recent_one_without() -> None:
    own = {"prompt": "p", "context": {"uri": "file:///ws/b.py"}}
    assert run_params_from_arguments([own], RECENT) == own
    assert run_params_from_arguments([{"prompt": "p"}], None) == {"prompt": "p"}
    assert run_params_from_arguments([{"prompt": "p"}], RECENT)["context"] == {"uri": RECENT}


@pytest.mark.parametrize("arguments", [[], [""], [1], [None], ["a", {"prompt": "b"}]])
def test_no_prompt_says_how_to_pass_one(arguments: list[Any]) -> None:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        run_params_from_arguments(arguments, RECENT)
    assert ":CocCommand tether.run fix the bug" in caught.value.message


def result(outcome: str, answer: str = "", error: str | None = None) -> RunResult:
    return RunResult.model_validate(
        {
            "runId": "r",
            "sessionId": "s",
            "outcome": outcome,
            "answer": answer,
            "steps": 1,
            "usage": Usage(input_tokens=1, output_tokens=1).to_wire(),
            "changedFiles": [],
            "error": error,
        }
    )


def test_the_outcome_message_names_the_error_of_a_failed_run() -> None:
    shown = outcome_message(result("error", "partial", "provider: 401 bad key\ntrace"))
    assert shown.type == types.MessageType.Error
    assert shown.message == "Tether error · 1 step · provider: 401 bad key"


def test_a_long_first_line_is_cut_and_an_empty_answer_leaves_it_out() -> None:
    assert len(outcome_message(result("done", "x" * 1000)).message) < 200
    assert outcome_message(result("cancelled")).message == "Tether cancelled · 1 step"
