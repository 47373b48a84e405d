""":TetherChat in a real Neovim, used with keys: a conversation in a Markdown buffer."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.providers.fakes import FakeApi, Sse, anthropic_stream, openai_stream

from ..waiting import wait_until_sync
from .conftest import Nvim, app_project, decisions, env, script
from .screens import keep_screen
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
        "  ⚠ waiting for your approval (inline in src/app.py; "
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


class NvimInTmux:
    """A scenario's Neovim on a real terminal: tmux on a private socket, WIDTH × HEIGHT
    (or ``size``)."""

    WIDTH, HEIGHT = 200, 30

    def __init__(
        self,
        folder: Path,
        command: list[str],
        env: dict[str, str],
        cwd: Path,
        size: tuple[int, int] | None = None,
    ) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            pytest.fail("tmux is missing: `apt-get install tmux` to run this test", pytrace=False)
        config = folder / "tmux.conf"
        config.write_text('set -g default-terminal "screen-256color"\nset -sg escape-time 0\n')
        self._tmux = [tmux, "-f", str(config), "-S", str(folder / "tmux.sock")]
        width, height = size or (self.WIDTH, self.HEIGHT)
        where = ["-s", "user", "-c", str(cwd)]
        self._run(
            "new-session", "-d", "-x", str(width), "-y", str(height), *where,
            shlex.join(command), env=env,
        )  # fmt: skip

    def _run(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            [*self._tmux, *args], env=env, capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, f"tmux {args[0]}: {done.stderr}"
        return done.stdout

    def keys(self, *keys: str) -> None:
        """Press keys by tmux name (``Enter``, ``Escape``, ``C-s``)."""
        self._run("send-keys", "-t", "user", *keys)

    def type(self, text: str) -> None:
        """Type ``text`` literally."""
        self._run("send-keys", "-t", "user", "-l", text)

    def screen(self) -> str:
        return self._run("capture-pane", "-p", "-t", "user")

    def wait_for(self, text: str, timeout: float = 30) -> str:
        """The screen once it shows ``text``; fails with the last screen."""
        seen = [""]

        def shown() -> str | None:
            seen[0] = self.screen()
            return seen[0] if text in seen[0] else None

        try:
            return wait_until_sync(shown, f"{text!r} on the screen", timeout)
        except AssertionError as failed:
            raise AssertionError(f"{failed}; the screen:\n{seen[0]}") from None

    def close(self) -> None:
        subprocess.run([*self._tmux, "kill-server"], capture_output=True, timeout=30)


CHAT_SCREEN = "TETHER_NVIM_CHAT_SCREEN"
"""Names the file for the screen with the approval waiting (and the one after): screens.py."""


def test_the_chat_on_a_terminal_with_an_approval_inline_in_the_file(nvim: Nvim) -> None:
    app_project(nvim)
    with FakeApi() as fake:
        fake.queue(
            Sse(
                openai_stream(
                    "It **greets** people. ",
                    "I will shorten it.",
                    calls=[("call_1", "edit_file", [EDIT])],
                )
            ),
            Sse(openai_stream("Done: it says hi now.")),
        )
        settings = {"provider": "openai", "model": "gpt-5.4", "baseUrl": fake.url + "/v1"}
        scenario = env(OPEN="src/app.py", SETTINGS=settings, WATCHDOG_MS="60000")
        command, full_env, out, marker = nvim.prepare("chat_screen", env=scenario)
        command.remove("--headless")
        started = time.monotonic()
        term = NvimInTmux(nvim.tmp_path, command, full_env, nvim.workspace)
        try:
            term.wait_for("chat-screen: ready")
            term.type(":TetherChat")
            term.keys("Enter")
            term.wait_for("<CR> sends (Normal mode)")
            term.type("iwhat does app.py do?")
            term.keys("Escape", "Enter")
            screen = term.wait_for("⚠ waiting for your approval")
            keep_screen(CHAT_SCREEN, "approval", screen)
            # The waiting call is not folded away: its line and the whole note are readable.
            assert "· ⚠ waiting" not in screen, screen
            rows = [row.rstrip() for row in screen.splitlines()]
            assert any(row.endswith("│→ edit_file src/app.py") for row in rows), screen
            assert "│  ⚠ waiting for your approval (inline in src/app.py;" in screen, screen
            # Side by side: the file with the change inline, the chat noting the approval.
            assert " Tether: Edit src/app.py   <leader>ta or :TetherApprove to decide" in screen
            assert "    return 'hi ' + name" in screen and "## Tether" in screen
            assert "It **greets** people. I will shorten it." in screen
            assert "→ edit_file src/app.py" in screen
            term.type("\\ta")  # <leader>ta: into the approval's float
            term.wait_for("a allow · A always")
            term.type("a")
            screen = term.wait_for("■ done · 2 steps")
            keep_screen(CHAT_SCREEN, "after", screen)
            assert "✓ edit_file src/app.py  · approval: allow" in screen  # the closed fold
            report = wait_until_sync(lambda: out.exists() or None, "the scenario's report")
            assert report
        finally:
            term.close()
    r = nvim.outcome("chat_screen", out, marker, None, "", "", time.monotonic() - started)
    assert decisions(r["run"]) == ["allow"]
    assert (nvim.workspace / "src" / "app.py").read_text().splitlines()[1] == (
        "    return 'hi ' + name"
    )


def test_a_message_that_cannot_be_sent_stays_to_be_sent_again(nvim: Nvim) -> None:
    r = nvim.run("chat_unsent")
    assert r["lines"][-3:] == ["## You", "", "hello there"] and r["modifiable"] is True
    assert "## Tether" not in r["lines"]
    note = r["notes"][-1]  # after Neovim's own message
    assert note.startswith("Tether: cannot start `") and "no-such-tether serve`: " in note


def test_the_servers_session_commands_complete_and_run_in_the_chat(nvim: Nvim) -> None:
    r = nvim.run("chat_commands")
    assert r["omnifunc"] == "v:lua.require'tether.chat'.complete"
    server = ["/undo", "/rewind", "/new", "/model", "/effort", "/compact", "/cost", "/jobs"]
    assert [item["word"] for item in r["items"]] == [*server, "/resume", "/rules"]
    lines = r["after_undo"]
    you = len(lines) - 1 - lines[::-1].index("/undo")  # completed from "/un"
    assert lines[you - 2 : you + 1] == ["## You", "", "/undo"]
    assert "nothing to undo: no run yet" in lines[you + 1 :]
    assert lines[-2:] == ["## You", ""] and r["modifiable"] is True  # ready for the next
    assert "no run yet: nothing spent" in r["after_cost"]


def test_the_chats_resume_and_rules_commands_list_continue_and_revoke(nvim: Nvim) -> None:
    rules = nvim.tmp_path / "xdg" / "config" / "tether" / "rules.toml"
    rules.parent.mkdir(parents=True)
    rules.write_text('[[rules]]\ntool = "bash"\npattern = "echo *"\ndecision = "allow"\n')
    r = nvim.run("chat_own_commands", script({"text": "Hello there."}), timeout=90)
    assert r["items"][-2:] == ["/resume", "/rules"]
    # /resume: the session of the first message, numbered, marked as the chat's own.
    [row] = [line for line in r["listed"] if line.startswith("* 1  ")]
    assert row.endswith("1 run · done  hello"), row
    # No command reached the model: two runs, the second in the first one's session.
    first, again = r["runs"]
    assert [first["prompt"], again["prompt"]] == ["hello", "again"]
    assert "sessionId" not in first and again["sessionId"]
    lines = r["lines"]
    assert f"resumed session {again['sessionId']}: hello" in lines
    assert r["rule_number"] is not None and "removed allow bash `echo *`" in lines
    assert "echo *" not in rules.read_text()


@pytest.mark.parametrize(
    ("settings", "key", "says"),
    [
        ({"provider": "openai", "model": "gpt-5.4"}, "", "needs an API key: set OPENAI_API_KEY"),
        (
            {"provider": "openai", "model": "m", "baseUrl": "http://127.0.0.1:9/v1"},
            "k",
            "http://127.0.0.1:9/v1 failed",
        ),
    ],
    ids=["no key", "no server at the URL"],
)
def test_a_run_the_settings_cannot_make_says_why_in_the_chat(
    nvim: Nvim, settings: dict[str, str], key: str, says: str
) -> None:
    r = nvim.run("chat_refused", env=env(SETTINGS=settings, OPENAI_API_KEY=key), timeout=90)
    text = "\n".join(r["lines"])  # said in the chat, where the message was typed
    assert says in text, (text, r["notes"])
    assert r["lines"][-2:] == ["## You", ""], r["lines"]  # the chat is ready again


THOUGHT = ["Let me look at app.py ", "and see what greet\nreturns\x1b[31m first."]


def test_the_models_thinking_streams_into_a_closed_fold_before_the_answer(nvim: Nvim) -> None:
    """A model that thinks (Anthropic's extended thinking, through the real server and its
    SDK against a fake API): the chat shows the thinking as it streams in a closed fold
    whose summary counts its words, the answer after it; `zo` opens it, escaped."""
    app_project(nvim)
    with FakeApi() as fake:
        fake.queue(Sse(anthropic_stream("It greets people.", thinking=THOUGHT), delay=0.05))
        settings = {
            "provider": "anthropic",
            "model": "claude-sonnet-5-5",
            "baseUrl": fake.url,
            "reasoningEffort": "medium",
        }
        r = nvim.run(
            "chat_thinking",
            env=env(OPEN="src/app.py", SETTINGS=settings, ANTHROPIC_API_KEY="test-key"),
            timeout=90,
        )
        [request] = [request.body for request in fake.requests]
    assert request["thinking"]["type"] == "enabled", request  # the model was asked to think
    assert r["run"]["result"]["outcome"] == "done", r["run"]

    # As it streams: one block, closed, its summary growing, the answer not there yet.
    growing = r["growing"]
    assert [g["block"]["summary"] for g in growing] == [
        "▸ thinking (5 words)",
        "▸ thinking (11 words)",
    ]
    for g in growing:
        assert g["block"]["closed"] == g["block"]["line"], g
        assert "It greets" not in g["last"], g

    shown = "  and see what greet"
    escaped = "  returns\\x1b[31m first."
    chat = r["chat"]
    at = chat.index("▸ thinking (11 words)")
    assert chat[chat.index("## Tether") : at + 6] == [
        "## Tether",
        "",
        "▸ thinking (11 words)",
        "  Let me look at app.py and see what greet",
        escaped,
        "",
        "It greets people.",
        "",
    ]
    assert shown.strip() not in "\n".join(chat[at + 3 :])  # never part of the answer
    closed = r["closed"]
    assert (closed["closed"], closed["closed_end"]) == (at + 1, at + 3), closed
    assert closed["text"] == "▸ thinking (11 words)"
    assert r["opened"]["closed"] == -1  # `zo` shows the thinking

    transcript = r["transcript"]
    at = transcript.index("▸ thinking (11 words)")
    assert transcript[at - 1 : at + 4] == [
        "── step 1 ──",
        "▸ thinking (11 words)",
        "  Let me look at app.py and see what greet",
        escaped,
        "It greets people.",
    ]
    block = r["transcript_block"]
    assert (block["closed"], block["closed_end"]) == (at + 1, at + 3), block
    assert block["text"] == "▸ thinking (11 words)"
