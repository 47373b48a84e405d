"""What the model is told: the system prompt of a run (it travels with every request)."""

from __future__ import annotations

from pathlib import Path

from tether.host import NoBuffers
from tether.prompting import system_prompt
from tether.workspace import Workspace
from tether_protocol import Position, Range, RunContext


def test_the_prompt_names_the_workspace_tools_and_the_selection(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")
    context = RunContext(
        uri=(tmp_path / "src" / "app.py").as_uri(),
        selection=Range(start=Position(line=0, character=0), end=Position(line=2, character=4)),
    )
    prompt = system_prompt(Workspace([tmp_path], NoBuffers()), ["read_file", "search"], context)
    assert f"You work in the workspace at {tmp_path}." in prompt
    assert "Your tools: read_file, search." in prompt
    assert "approval and may be denied" in prompt
    assert "\nThe user's active file is src/app.py.\n" in prompt
    assert "Their selection spans line 1 col 1 to line 3 col 5;" in prompt


def test_without_context_the_prompt_ends_with_the_rules(tmp_path: Path) -> None:
    prompt = system_prompt(Workspace([tmp_path], NoBuffers()), ["read_file"], None)
    assert prompt.endswith("Do not paste whole files back.\n")
    assert "active file" not in prompt
