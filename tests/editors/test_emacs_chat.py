"""``M-x tether-chat`` in a real ``emacs -nw`` (in tmux), used as a user does: a prompt
typed and sent with RET, the answer streaming in with Markdown's faces, a tool call as a
line, an approval answered inline, and a follow-up the model sees with the first turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.providers.fakes import FakeApi, Sse, anthropic_stream, openai_stream

from .emacs_harness import STORIES, emacs_batch, markdown_dirs, require_emacs, story_env
from .emacs_tmux import wait_for_report
from .screens import keep_screen
from .test_emacs_keys import emacs_with_keys, wire_of

CHAT_SCREEN = "TETHER_CHAT_SCREEN"
"""Names the file for the screen with the approval waiting (and the one after): screens.py."""

NOTE_ARGUMENTS = json.dumps({"path": "notes/chat.txt", "content": "from the chat\n"})


def markdown_dir() -> Path:
    """Debian's elpa-markdown-mode (installed with Emacs by ``require_emacs``)."""
    require_emacs()
    found = markdown_dirs()
    assert found, "elpa-markdown-mode is missing: `sudo apt-get install elpa-markdown-mode`"
    return found[-1]


def messages_of(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, text) of a recorded chat request's user and assistant messages."""
    said = []
    for message in body["messages"]:
        if message["role"] in ("user", "assistant") and message.get("content"):
            content = message["content"]
            text = content if isinstance(content, str) else "".join(p["text"] for p in content)
            said.append((message["role"], text))
    return said


def test_a_chat_streams_asks_inline_and_continues_the_session(tmp_path: Path) -> None:
    with FakeApi() as fake:
        chat_with(tmp_path, fake)


def chat_with(tmp_path: Path, fake: FakeApi) -> None:
    """The chat story against ``fake``."""
    fake.queue(
        # Slow pieces, so the screen can be seen with part of the answer.
        Sse(
            openai_stream(
                "It **greets** people. ",
                "I will ",
                "write a note.",
                calls=[("call_1", "write_file", [NOTE_ARGUMENTS])],
            ),
            delay=0.5,
        ),
        Sse(openai_stream("Wrote the note.")),
        Sse(openai_stream("Yes: notes/chat.txt.")),
    )
    extra = {
        "TETHER_FAKE_URL": fake.url,
        "TETHER_MARKDOWN_DIR": str(markdown_dir()),
        "TETHER_APPROVAL_TIMEOUT": "30",
    }
    with emacs_with_keys(tmp_path, {"turns": []}, extra) as (emacs, folder):
        emacs.command("tether-chat")
        emacs.wait_for("tether>")
        emacs.type("what does app.py do?")
        emacs.keys("Enter")
        # Streaming: part of the answer is on the screen before the rest.
        emacs.wait_until(
            lambda s: "It **greets** people." in s and "write a note." not in s,
            "the first piece of the answer alone",
        )
        screen = emacs.wait_for("[Allow] [Allow always] [Deny]")
        keep_screen(CHAT_SCREEN, "approval", screen)
        assert "→ write_file notes/chat.txt" in screen
        assert "⚠ Tether wants to: Create notes/chat.txt" in screen
        assert "+from the chat" in screen
        # The user waited at an empty prompt, so point went to the approval: `a' there.
        emacs.keys("a")
        screen = emacs.wait_for("■ done · 2 steps")
        keep_screen(CHAT_SCREEN, "after", screen)
        # The follow-up, typed at the prompt: its `a's are text, not answers.
        emacs.type("and what was it called?")
        emacs.keys("Enter")
        screen = emacs.wait_for("Yes: notes/chat.txt.")
        screen = emacs.wait_for("■ done · 1 step\n")  # not "1 steps"
        report = wait_for_report(folder / "result.json", runs=2)
    assert (folder / "ws" / "notes" / "chat.txt").read_text() == "from the chat\n"
    first, _, follow_up = fake.requests
    assert messages_of(first.body)[-1] == ("user", "what does app.py do?")
    # The follow-up carries the first turn: the model sees the conversation so far.
    said = messages_of(follow_up.body)
    assert said[0] == ("user", "what does app.py do?")
    assert ("assistant", "Wrote the note.") in said
    assert said[-1] == ("user", "and what was it called?")
    runs = [
        entry["message"]["params"]
        for entry in wire_of(folder)
        if entry["from"] == "editor" and entry["message"].get("method") == "agent/run"
    ]
    assert "sessionId" not in runs[0] and runs[1]["sessionId"] == report["sessionId"]
    chat = report["chat"]
    assert "  ✓ allow\n" in chat and "[Allow]" not in chat  # the buttons are gone
    assert "tether> and what was it called?" in chat
    assert report["typed"] and all(buffer == "*tether-chat*" for buffer, _ in report["typed"])
    assert report["chatMode"] == ["tether-chat-mode", True, True]  # markdown-mode loaded
    faces = dict(report["chatFaces"])
    assert "markdown-bold-face" in faces["greets"], faces  # Markdown's faces on the answer
    assert faces["→ write_file"] == "tether-tool-face"
    assert faces["✓ allow"] == "tether-ok-face"
    assert report["transcriptMode"] == "tether-transcript-mode"
    assert dict(report["transcriptFaces"])["→ write_file"] == "tether-tool-face"


def test_without_markdown_mode_the_chat_is_text_mode_and_works(tmp_path: Path) -> None:
    require_emacs()
    root = tmp_path / "ws"
    root.mkdir()
    env = story_env(tmp_path, root, {"turns": [{"text": "Hello **there**."}]})
    emacs_batch(STORIES / "chat-story.el", env, "")
    report = json.loads((tmp_path / "result.json").read_text())
    assert report["markdown"] is False and report["mode"] == "tether-chat-mode"
    assert report["textMode"] is True
    assert "tether> hi\n" in report["chat"] and "Hello **there**." in report["chat"]
    assert report["chat"].endswith("tether> ")


THOUGHT = ["Let me look at app.py ", "and see what greet\nreturns\x1b[31m first."]


def test_the_models_thinking_streams_hidden_under_its_summary_before_the_answer(
    tmp_path: Path,
) -> None:
    """A model that thinks (Anthropic's extended thinking, through the real server and its
    SDK against a fake API): the chat shows a summary line that grows as the thinking
    streams, the thinking itself hidden, the answer after it; RET on the summary shows the
    thinking (escaped), RET again hides it."""
    with FakeApi() as fake:
        fake.queue(Sse(anthropic_stream("It greets people.", thinking=THOUGHT), delay=0.5))
        extra = {
            "TETHER_FAKE_ANTHROPIC_URL": fake.url,
            "ANTHROPIC_API_KEY": "test-key",
            "TETHER_MARKDOWN_DIR": str(markdown_dir()),
        }
        with emacs_with_keys(tmp_path, {"turns": []}, extra) as (emacs, folder):
            emacs.command("tether-chat")
            emacs.wait_for("tether>")
            emacs.type("what does app.py do?")
            emacs.keys("Enter")
            # While it thinks: the summary, its words so far; no thinking, no answer.
            screen = emacs.wait_until(
                lambda s: "▸ thinking (5 words)" in s and "It greets" not in s,
                "the thinking's summary alone",
            )
            assert "Let me look" not in screen
            screen = emacs.wait_for("■ done · 1 step")
            assert "▸ thinking (11 words)\nIt greets people." in screen, screen
            assert "Let me look" not in screen and "greet\n" not in screen
            report = wait_for_report(folder / "result.json", runs=1)
            # C-c C-t at the prompt shows the latest thinking, escaped.
            emacs.keys("C-c", "C-t")
            screen = emacs.wait_for("returns\\x1b[31m first.")
            assert (
                "▸ thinking (11 words)\n  Let me look at app.py and see what greet\n"
                "  returns\\x1b[31m first.\nIt greets people." in screen
            ), screen
            # The user goes to the summary (a button) and presses RET: it hides again.
            rows = screen.splitlines()
            line = rows.index("▸ thinking (11 words)") - rows.index("tether> what does app.py do?")
            emacs.command("backward-button")
            emacs.wait_until(lambda s: f"*tether-chat*   All L{line + 4} " in s, "the summary")
            emacs.keys("Enter")
            emacs.wait_until(lambda s: "Let me look" not in s, "the thinking hidden again")
        [request] = [request.body for request in fake.requests]
    assert request["thinking"]["type"] == "enabled", request  # the model was asked to think
    thought = "  Let me look at app.py and see what greet\n  returns\\x1b[31m first.\n"
    assert f"▸ thinking (11 words)\n{thought}It greets people." in report["chat"]
    assert f"▸ thinking (11 words)\n{thought}It greets people." in report["transcript"]


ANSWER = "It greets \u202eexe.txt people.\r\nThen \x1b[31mred\x1b[0m, zero\u200bwidth, \\x1b kept."


def test_the_answer_shows_what_a_screen_would_obey_escaped(tmp_path: Path) -> None:
    """The model's answer in a real chat (markdown-mode on): its bidi override does not
    reorder the line, its escape sequence and zero-width space are written out, its own
    ``\\x1b`` text is shown once, and its ``\\r\\n`` is a line break."""
    extra = {"TETHER_MARKDOWN_DIR": str(markdown_dir())}
    with emacs_with_keys(tmp_path, {"turns": [{"text": ANSWER}]}, extra) as (emacs, folder):
        emacs.command("tether-chat")
        emacs.wait_for("tether>")
        emacs.type("who do you greet?")
        emacs.keys("Enter")
        screen = emacs.wait_for("■ done · 1 step")
        shown = "It greets \\u202eexe.txt people.\nThen \\x1b[31mred\\x1b[0m, zero\\u200bwidth,"
        assert shown in screen, screen
        assert "\\x1b kept." in screen and "\\\\x1b" not in screen, screen
        assert "txt.exe" not in screen and "^[" not in screen and "^M" not in screen, screen
        report = wait_for_report(folder / "result.json", runs=1)
    assert "It greets \\u202eexe.txt people.\nThen \\x1b[31mred" in report["chat"]
