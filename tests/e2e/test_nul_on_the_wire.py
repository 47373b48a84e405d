"""A NUL in what a run shows (the model's text, a command's output) reaches the editor
as the text ``\\x00``, never as a JSON ``\\u0000``: Emacs 28's JSON reader refuses the whole
message for one (``json-parse-error``), so the chat lost the answer and never finished.
What the model said stays as it was, in the session log."""

from __future__ import annotations

from pathlib import Path

from .conftest import Editor, script

NUL_TEXT = "Hello\x00there."


async def test_a_nul_is_sent_to_the_editor_as_the_text_backslash_x00(
    editor: Editor, workspace: Path
) -> None:
    printed = {"name": "bash", "arguments": {"command": "printf 'a\\000b'"}}
    await editor.open_session(
        workspace,
        script=script({"text": NUL_TEXT, "toolCalls": [printed]}, {"text": NUL_TEXT}),
        options={"autoApprove": ["bash"]},
    )
    result = await editor.run(prompt="say it", runId="r1")
    assert result["outcome"] == "done", result
    assert result["answer"] == "Hello\\x00there."
    events = editor.events_of("r1")
    said = [getattr(e, "text", "") for e in events if e.kind in ("text-delta", "assistant")]
    assert said and all("\x00" not in text for text in said), said
    assert any("Hello\\x00there." in text for text in said), said
    [output] = [e.output for e in events if e.kind == "tool-result"]  # type: ignore[union-attr]
    assert "\x00" not in output and "a\\x00b" in output, output
    logs = list((editor.state_dir).rglob("*.jsonl"))
    assert any("Hello\\u0000there." in log.read_text() for log in logs), logs
