"""The user's editor reaches the model through `tether serve` against the fake OpenAI API:
the run's ``context`` in the system prompt (a selection read from the unsaved buffer when
the editor sends no text) and ``@file`` mentions attached to the user's message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.providers.fakes import FakeApi, Sse, openai_stream, system_text

from .conftest import Editor

UNSAVED = "def greet(name):\n    return f'hi {name}'  # unsaved\n"


def user_text(body: dict[str, Any]) -> str:
    """The first user message of an OpenAI chat request."""
    messages = body["messages"]
    [first, *_] = [m for m in messages if m["role"] == "user"]
    content = first["content"]
    return content if isinstance(content, str) else "".join(p["text"] for p in content)


async def open_with_fake(editor: Editor, workspace: Path, fake: FakeApi) -> None:
    fake.queue(Sse(openai_stream("ok", usage=(10, 2))))
    options = {"provider": "openai", "baseUrl": fake.url + "/v1", "model": "gpt-5.4"}
    await editor.open_session(workspace, options=options)


def span(line: int, char: int, end_line: int, end_char: int) -> dict[str, Any]:
    return {
        "start": {"line": line, "character": char},
        "end": {"line": end_line, "character": end_char},
    }


async def test_the_context_reaches_the_system_prompt_with_the_unsaved_selection(
    editor: Editor, workspace: Path, fake: FakeApi
) -> None:
    await open_with_fake(editor, workspace, fake)
    app = editor.open_document(workspace / "src" / "app.py", UNSAVED)
    readme = (workspace / "README.md").as_uri()
    context = {
        "uri": app,
        "selection": span(1, 4, 1, 23),  # no selectedText: the server reads the buffer
        "visibleRange": span(0, 0, 30, 0),
        "openFiles": [app, readme],
    }
    result = await editor.run(prompt="explain this", runId="r1", context=context)
    assert result["outcome"] == "done", result
    [request] = fake.requests
    system = system_text(request.body)
    assert '- Active file: "src/app.py"\n- On screen: lines 1-31\n' in system
    assert "- Selection: line 2 col 5 to line 2 col 24;" in system
    assert (
        "<editor-selection file=\"src/app.py\">\nreturn f'hi {name}'\n</editor-selection>"
    ) in system
    assert '- Open files: "src/app.py", "README.md"' in system
    assert "the user's data" in system  # framed as data, not instructions


async def test_selected_text_sent_by_the_editor_is_used_as_sent(
    editor: Editor, workspace: Path, fake: FakeApi
) -> None:
    await open_with_fake(editor, workspace, fake)
    app = (workspace / "src" / "app.py").as_uri()
    context = {"uri": app, "selection": span(0, 0, 0, 3), "selectedText": "what VS Code sent"}
    await editor.run(prompt="explain", runId="r1", context=context)
    system = system_text(fake.requests[0].body)
    assert '<editor-selection file="src/app.py">\nwhat VS Code sent\n</editor-selection>' in system


async def test_file_mentions_attach_the_buffer_and_refuse_secrets_and_outside_files(
    editor: Editor, workspace: Path, fake: FakeApi, tmp_path: Path
) -> None:
    (workspace / ".env").write_text("API_KEY=hunter2\n")
    (tmp_path / "notes.txt").write_text("private notes\n")
    await open_with_fake(editor, workspace, fake)
    editor.open_document(workspace / "src" / "app.py", UNSAVED)
    prompt = "fix @src/app.py, see @.env and @../notes.txt; mail bob@example.com"
    result = await editor.run(prompt=prompt, runId="r1")
    assert result["outcome"] == "done", result
    text = user_text(fake.requests[0].body)
    assert text.startswith(prompt + "\n\n")
    assert f'<attached-file path="src/app.py">\n{UNSAVED.rstrip()}\n</attached-file>' in text
    assert "hunter2" not in text and "private notes" not in text
    assert '".env" was not attached: it is a sensitive file (environment secrets).' in text
    assert '"../notes.txt" was not attached: it is outside the workspace.' in text
    assert "example.com was not" not in text and text.count("<attached-file") == 1
    # The run's event shows the prompt as the user wrote it.
    started = next(e for e in editor.events_of("r1") if e.kind == "run-started")
    assert getattr(started, "prompt", None) == prompt
