"""``agent/code`` (designed for the editors' answer to the code tools): its params say what
each request needs, and its answer takes what editors send."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tether_protocol.code import CodeParams, CodeResult


def test_each_request_names_what_it_needs() -> None:
    at = {"line": 2, "character": 6}
    CodeParams.model_validate({"request": "definition", "uri": "file:///a.py", "position": at})
    CodeParams.model_validate({"request": "workspaceSymbols", "query": "Greet"})
    params = CodeParams.model_validate(
        {"request": "rename", "uri": "file:///a.py", "position": at, "newName": "salute"}
    )
    assert params.model_dump(by_alias=True, exclude_none=True)["newName"] == "salute"
    for bad in (
        {"request": "hover", "uri": "file:///a.py"},
        {"request": "rename", "uri": "file:///a.py", "position": at},
        {"request": "documentSymbols"},
        {"request": "workspaceSymbols"},
        {"request": "format", "uri": "file:///a.py"},
    ):
        with pytest.raises(ValidationError):
            CodeParams.model_validate(bad)


def test_an_answer_keeps_what_it_knows_and_ignores_the_rest() -> None:
    span = {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 9}}
    result = CodeResult.model_validate(
        {
            "server": "Pylance",
            "locations": [{"uri": "file:///lib.py", "range": span, "originSelectionRange": span}],
            "changes": {"file:///lib.py": [{"range": span, "newText": "salute"}]},
            "extra": True,
        }
    )
    assert result.locations is not None and result.locations[0].range.start.line == 3
    assert result.changes is not None and result.changes["file:///lib.py"][0].new_text == "salute"
