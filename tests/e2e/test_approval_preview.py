"""The approval preview's changed window (``proposed``) and answers that carry the user's text
for it (``editedText``), as an editor sees them over the wire."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether.text.model import encoding_name, offset_at

from .calls import edit, one_call_a_turn
from .conftest import Editor

HELLO = "    return 'hello ' + name\n"
HI = "    return 'hi ' + name\n"


def negotiated(editor: Editor) -> str:
    assert editor.init_result is not None
    return encoding_name(editor.init_result.capabilities.position_encoding)


def window_applied(text: str, proposed: dict[str, Any], encoding: str) -> str:
    """``text`` with the window (or a hunk) replaced as a client does it: the range, read by
    LSP rules."""
    start, end = proposed["range"]["start"], proposed["range"]["end"]
    first = offset_at(text, start["line"], start["character"], encoding)
    last = offset_at(text, end["line"], end["character"], encoding)
    assert proposed.get("baseText", text[first:last]) == text[first:last]
    return text[:first] + proposed["text"] + text[last:]


async def test_the_preview_carries_the_changed_window(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done"
    [approval] = editor.approvals
    lines = {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}
    assert approval["preview"]["proposed"] == {
        "range": lines,
        "text": HI,
        "baseText": HELLO,
        "hunks": [{"range": lines, "text": HI}],
    }
    assert "+    return 'hi ' + name\n" in approval["preview"]["diff"]  # old clients keep this


@pytest.mark.parametrize("profile", ["vscode", "neovim"])
async def test_a_window_ending_inside_a_lone_cr_line_with_astral_characters(
    editor: Editor, workspace: Path, profile: str
) -> None:
    # The last line has no line end, so the range ends inside it: counted in the encoding.
    text = "a\rb \U0001f30d\rlast \U0001f30d x = 1"
    (workspace / "cr.txt").write_bytes(text.encode())
    call = edit("x = 1", "x = 2", path="cr.txt")
    await editor.open_session(workspace, profile=profile, script=one_call_a_turn(call))
    await editor.run(prompt="go", runId="r1")
    encoding = negotiated(editor)
    proposed = editor.approvals[0]["preview"]["proposed"]
    width = {"utf-8": 15, "utf-16": 13, "utf-32": 12}[encoding]
    assert proposed["range"] == {
        "start": {"line": 2, "character": 0},
        "end": {"line": 2, "character": width},
    }
    assert proposed["baseText"] == "last \U0001f30d x = 1"
    assert proposed["text"] == "last \U0001f30d x = 2"
    assert proposed["hunks"] == [{"range": proposed["range"], "text": proposed["text"]}]
    assert window_applied(text, proposed, encoding) == text.replace("x = 1", "x = 2")
    assert (workspace / "cr.txt").read_bytes().decode() == text.replace("x = 1", "x = 2")


@pytest.mark.parametrize("profile", ["vscode", "neovim"])
async def test_the_preview_carries_each_hunk_in_the_negotiated_encoding(
    editor: Editor, workspace: Path, profile: str
) -> None:
    # Two changes lines apart in a CRLF file whose last line (astral, no line end) grows.
    text = "x = \U0001f30d\r\nkeep\r\nkeep\r\nend \U0001f30d"
    new = "x = 2\r\nkeep\r\nkeep\r\nend \U0001f30d\r\nmore"
    (workspace / "two.txt").write_bytes(text.encode())
    content = new.replace("\r\n", "\n")  # the model writes "\n"; the file keeps its CRLF
    call = {"name": "write_file", "arguments": {"path": "two.txt", "content": content}}
    await editor.open_session(workspace, profile=profile, script=one_call_a_turn(call))
    await editor.run(prompt="go", runId="r1")
    encoding = negotiated(editor)
    proposed = editor.approvals[0]["preview"]["proposed"]
    width = {"utf-8": 8, "utf-16": 6, "utf-32": 5}[encoding]
    assert proposed["hunks"] == [
        {
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}},
            "text": "x = 2\r\n",
        },
        {
            "range": {"start": {"line": 3, "character": 0}, "end": {"line": 3, "character": width}},
            "text": "end \U0001f30d\r\nmore",
        },
    ]
    for hunk in reversed(proposed["hunks"]):  # as a client applies them: by their ranges
        text = window_applied(text, hunk, encoding)
    assert text == new == (workspace / "two.txt").read_bytes().decode()


async def test_a_one_line_change_in_a_big_file_sends_a_small_window(
    editor: Editor, workspace: Path
) -> None:
    lines = [f"line {n}\n" for n in range(200_000)]  # ~2 MB
    (workspace / "big.txt").write_text("".join(lines))
    call = edit("line 123456\n", "line 123456 changed\n", path="big.txt")
    await editor.open_session(workspace, script=one_call_a_turn(call))
    await editor.run(prompt="go", runId="r1")
    proposed = editor.approvals[0]["preview"]["proposed"]
    assert len(proposed["text"]) + len(proposed["baseText"]) < 200
    assert proposed["range"]["start"]["line"] <= 123456 < proposed["range"]["end"]["line"]
    assert "line 123456 changed\n" in proposed["text"]


async def test_an_edited_window_is_applied_and_the_model_is_told(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    mine = "    return 'good day ' + name  # by the user\n"
    editor.approve = lambda params: {"decision": "allow", "editedText": mine}
    await editor.run(prompt="go", runId="r1")
    assert (workspace / "src" / "app.py").read_text() == "def greet(name):\n" + mine
    [result] = editor.tool_results()
    assert result.ok and "the user changed this call" in result.output
    assert "good day" in result.output and '"old_text": "    return \'hello \' + name\\n"' in (
        result.output
    )
    assert editor.decisions() == ["allow"]


async def test_an_unchanged_edited_window_runs_the_call_as_proposed(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    editor.approve = lambda params: {
        "decision": "allow",
        "editedText": params["preview"]["proposed"]["text"],
    }
    await editor.run(prompt="go", runId="r1")
    assert "'hi ' + name" in (workspace / "src" / "app.py").read_text()
    [result] = editor.tool_results()
    assert result.ok and "the user changed" not in result.output


async def test_an_edited_window_keeps_a_crlf_files_line_ends(
    editor: Editor, workspace: Path
) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await editor.open_session(workspace, script=one_call_a_turn(edit("two", "2", "w.txt")))

    # The window is whole lines around the change; an editor may send it with "\n" ends.
    def answer(params: dict[str, Any]) -> dict[str, Any]:
        window = params["preview"]["proposed"]["text"].replace("\r\n", "\n")
        return {"decision": "allow", "editedText": window.replace("2\n", "TWO\nand more\n")}

    editor.approve = answer
    await editor.run(prompt="go", runId="r1")
    assert (workspace / "w.txt").read_bytes() == b"one\r\nTWO\r\nand more\r\nthree\r\n"


async def test_write_file_takes_an_edited_window(editor: Editor, workspace: Path) -> None:
    call = {"name": "write_file", "arguments": {"path": "new.py", "content": "x = 1\n"}}
    await editor.open_session(workspace, script=one_call_a_turn(call))
    editor.approve = lambda params: {"decision": "allow-always", "editedText": "x = 42\n"}
    await editor.run(prompt="go", runId="r1")
    proposed = editor.approvals[0]["preview"]["proposed"]
    empty = {"line": 0, "character": 0}
    at_start = {"start": empty, "end": empty}
    assert proposed == {
        "range": at_start,
        "text": "x = 1\n",
        "baseText": "",
        "hunks": [{"range": at_start, "text": "x = 1\n"}],
    }
    assert (workspace / "new.py").read_text() == "x = 42\n"
    [result] = editor.tool_results()
    assert result.ok and '"content": "x = 42\\n"' in result.output


@pytest.mark.parametrize(
    "answer",
    [
        {"decision": "allow", "editedText": 42},
        {"decision": "allow", "editedText": ["not", "text"]},
        {"decision": "allow", "editedText": "x" * (3 << 20)},
        {"decision": "allow", "editedText": "x\n", "arguments": {"new_text": "y"}},
    ],
    ids=["number", "list", "huge", "with-arguments"],
)
async def test_an_unusable_edited_text_is_a_deny(
    editor: Editor, workspace: Path, answer: dict[str, Any]
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    editor.approve = lambda params: answer
    await editor.run(prompt="go", runId="r1")
    assert (workspace / "src" / "app.py").read_text() == "def greet(name):\n" + HELLO
    assert editor.decisions() == ["denied-by-default"]
    assert not editor.tool_results()[0].ok


async def test_edited_text_for_a_command_is_a_deny(editor: Editor, workspace: Path) -> None:
    call = {"name": "bash", "arguments": {"command": "touch ran.txt"}}
    await editor.open_session(workspace, script=one_call_a_turn(call))
    editor.approve = lambda params: {"decision": "allow", "editedText": "touch other.txt"}
    await editor.run(prompt="go", runId="r1")
    assert not (workspace / "ran.txt").exists() and not (workspace / "other.txt").exists()
    assert editor.decisions() == ["denied-by-default"]


async def test_old_style_arguments_answers_still_work(editor: Editor, workspace: Path) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    editor.approve = lambda params: {
        "decision": "allow",
        "arguments": {**params["arguments"], "new_text": "'howdy '"},
    }
    await editor.run(prompt="go", runId="r1")
    assert "'howdy ' + name" in (workspace / "src" / "app.py").read_text()
    assert "the user changed this call" in editor.tool_results()[0].output


async def test_an_edited_window_is_rebased_when_the_user_typed_meanwhile(
    editor: Editor, workspace: Path
) -> None:
    await editor.open_session(workspace, script=one_call_a_turn(edit("'hello '", "'hi '")))
    app = "def greet(name):\n" + HELLO
    uri = editor.open_document(workspace / "src" / "app.py", app)
    mine = "    return 'howdy ' + name\n"

    def user_types_and_edits(params: Any) -> Any:  # typing elsewhere while the approval shows
        editor.replace_buffer(uri, "# typed by the user\n" + app)
        return {"decision": "allow", "editedText": mine}

    editor.approve = user_types_and_edits
    result = await editor.run(prompt="go", runId="r1")
    assert result["outcome"] == "done"
    assert editor.docs[uri][0] == "# typed by the user\ndef greet(name):\n" + mine
    [tool_result] = editor.tool_results()
    assert tool_result.ok and "the user changed this call" in tool_result.output
