"""A tool's argument schema is made once per process (a daemon makes it for every run it
forks), and each caller gets its own copy to change."""

from __future__ import annotations

from typing import Any

import pytest

from tether.tools.base import Tool, ToolArgs


class Args(ToolArgs):
    path: str
    count: int = 1


class Counted(Tool[Args]):
    name = "counted"
    description = "test"
    args_model = Args


def test_the_schema_is_made_once_and_each_caller_gets_a_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[int] = []
    real = Args.model_json_schema.__func__  # type: ignore[attr-defined]

    def counting(cls: type[Args], *a: Any, **k: Any) -> dict[str, Any]:
        made.append(1)
        return real(cls, *a, **k)  # type: ignore[no-any-return]

    monkeypatch.setattr(Args, "model_json_schema", classmethod(counting))
    first = Counted().parameters_schema()
    assert "title" not in first and "title" not in first["properties"]["path"]
    first["properties"]["path"]["type"] = "changed"
    second = Counted().parameters_schema()
    assert second["properties"]["path"]["type"] == "string"
    assert len(made) == 1
