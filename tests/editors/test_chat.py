""":TetherChat in a real Neovim, used with keys: a conversation in a Markdown buffer."""

from __future__ import annotations

import json

from tests.providers.fakes import FakeApi, Sse, openai_stream

from .conftest import Nvim, app_project, decisions, env
from .test_emacs_chat import messages_of

EDIT = json.dumps({"path": "src/app.py", "old_text": "'hello '", "new_text": "'hi '"})


def test_a_chat_streams_notes_the_approval_and_continues_the_session(nvim: Nvim) -> None:
    app_project(nvim)
    with FakeApi() as fake:
        fake.queue(
            Sse(
                openai_stream(
                    "It greets ",
                    "people. ",
                    "I will shorten it.",
                    calls=[("call_1", "edit_file", [EDIT])],
                )
            ),  # fmt: skip
            Sse(openai_stream("Done: it says hi now.")),
            Sse(openai_stream("It is called greet.")),
            Sse(openai_stream("A fresh start.")),
        )
        settings = {"provider": "openai", "model": "gpt-5.4", "baseUrl": fake.url + "/v1"}
        r = nvim.run("chat", env=env(OPEN="src/app.py", SETTINGS=settings), timeout=90)
        requests = [request.body for request in fake.requests]
    opened = r["opened"]
    assert opened["name"] == "tether://chat" and opened["filetype"] == "markdown"
    assert opened["lines"][-2:] == ["## You", ""]
    assert opened["cursor"] == [len(opened["lines"]), 0]  # where the message goes
    assert opened["file_visible"] is True  # a split: the file stays on screen

    # The answer streamed: the last line grew a word at a time.
    streamed = r["streamed"]
    assert "It greets people. I will shorten it." in streamed
    assert any(s and s != streamed[-1] and "It greets people.".startswith(s) for s in streamed)

    # The approval: inline in the file, noted on its call in the chat (focus left alone).
    [shown] = r["shown"]
    assert shown["view"] == "inline" and shown["in_file"] is True
    assert shown["current_is_chat"] is True and shown["chat_modifiable"] is False
    chat = shown["chat"]
    you = chat.index("## You")
    assert chat[you : you + 5] == ["## You", "", "what does app.py do?", "", "## Tether"]
    assert chat[-2] == "→ edit_file src/app.py"
    assert chat[-1] == (
        "  ⚠ waiting for you: Edit src/app.py (shown in src/app.py; "
        "<leader>ta or :TetherApprove to decide)"
    )

    first, second, third = r["runs"]
    assert first["result"]["outcome"] == "done" and decisions(first) == ["allow"]
    assert r["file_after"][1] == "    return 'hi ' + name"
    lines = first["chat"]
    assert first["chat_name"] == "tether://chat" and first["modifiable"] is True
    tether = lines.index("## Tether")
    call_line = lines.index("✓ edit_file src/app.py")
    assert lines[tether:call_line] == [
        "## Tether",
        "",
        "It greets people. I will shorten it.",
        "",
    ]
    assert lines[call_line + 1] == "  approval: allow"  # the waiting note, replaced
    assert lines[call_line + 2].startswith("  ")  # the tool's output, in the fold
    assert lines[-7:] == ["", "Done: it says hi now.", "", "■ done · 2 steps", "", "## You", ""]
    assert lines[-8].startswith("  ")  # the fold's last line
    # The call is one closed fold that still says what was decided.
    [fold] = first["folds"]
    assert fold["line"] == call_line + 1 and fold["closed"] == call_line + 1
    assert fold["closed_end"] == len(lines) - 7
    assert fold["text"].startswith("✓ edit_file src/app.py  · approval: allow  [")
    assert first["current_is_chat"] is True and first["cursor"] == [len(lines), 0]

    # The follow-up, sent with <C-s> from Insert mode: the same session.
    session = first["result"]["sessionId"]
    assert "sessionId" not in first["params"]
    assert second["params"]["sessionId"] == session and second["params"]["prompt"] == (
        "and what was it called?"
    )
    assert second["chat"][: len(lines) - 1] == lines[:-1]  # the conversation goes on
    assert second["chat"][-12:] == [
        "## You",
        "",
        "and what was it called?",
        "",
        "## Tether",
        "",
        "It is called greet.",
        "",
        "■ done · 1 step",
        "",
        "## You",
        "",
    ]
    # The model saw the first turn with the follow-up: the conversation goes on.
    assert len(requests) == 4
    said = messages_of(requests[2])
    assert said[0] == ("user", "what does app.py do?")
    assert ("assistant", "Done: it says hi now.") in said
    assert said[-1] == ("user", "and what was it called?")
    assert messages_of(requests[3]) == [("user", "a new topic")]
    # The context is the file the user came from, not the chat.
    assert second["params"]["context"]["uri"].endswith("/src/app.py")

    # :TetherChat! opened a second chat: its message starts a new session.
    assert third["chat_name"] == "tether://chat-2"
    assert "sessionId" not in third["params"]
    assert third["result"]["sessionId"] != session
    assert "A fresh start." in third["chat"] and "what does app.py do?" not in third["chat"]
    assert third["chat"][4:] == [
        "## You", "", "a new topic", "", "## Tether", "", "A fresh start.", "",
        "■ done · 1 step", "", "## You", "",
    ]  # fmt: skip
    assert r["chats"] == ["tether://chat", "tether://chat-2"]
