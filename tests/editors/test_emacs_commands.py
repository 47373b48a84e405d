"""The session commands in ``*tether-chat*``, in a real ``emacs -nw`` (in tmux) typed as a
user types them: ``/`` lists them (the server's, from ``agent/commands``, and the chat's
own ``/resume`` and ``/rules``), TAB completes one, RET runs it — the server's through
``agent/command``, never as a prompt for the model — and the chat shows what it said."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.providers.fakes import FakeApi, Sse, openai_stream

from .emacs_tmux import EmacsInTmux
from .test_emacs_chat import markdown_dir, messages_of
from .test_emacs_keys import emacs_with_keys, wire_of

NOTE = json.dumps({"path": "notes/one.txt", "content": "one\n"})
RULES = '[[rules]]\ntool = "bash"\npattern = "echo *"\ndecision = "allow"\n'


def sent(emacs: EmacsInTmux, text: str, then: str) -> str:
    """Type ``text`` at the prompt, RET, and the screen once it shows ``then``."""
    emacs.type(text)
    emacs.keys("Enter")
    return emacs.wait_for(then)


def requests(wire: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    """The params of the editor's ``method`` requests, in order."""
    return [
        entry["message"].get("params") or {}
        for entry in wire
        if entry["from"] == "editor" and entry["message"].get("method") == method
    ]


def test_slash_lists_completes_and_runs_the_session_commands_in_the_chat(
    tmp_path: Path,
) -> None:
    rules = tmp_path / "home" / ".config" / "tether" / "rules.toml"
    rules.parent.mkdir(parents=True)
    rules.write_text(RULES)
    with FakeApi() as fake:
        fake.queue(
            Sse(openai_stream(calls=[("call_1", "write_file", [NOTE])])),
            Sse(openai_stream("Wrote the note.")),
            Sse(openai_stream("Back in the first session.")),
        )
        commands_in_a_chat(tmp_path, fake, rules)


def commands_in_a_chat(tmp_path: Path, fake: FakeApi, rules: Path) -> None:
    """The story against ``fake``, with ``rules`` the user's rules file."""
    # markdown-mode: its keys are under the chat's
    extra = {"TETHER_FAKE_URL": fake.url, "TETHER_MARKDOWN_DIR": str(markdown_dir())}
    with emacs_with_keys(tmp_path, {"turns": []}, extra) as (emacs, folder):
        emacs.command("tether-chat")
        emacs.wait_for("tether>")
        emacs.keys("C-x", "1")  # the chat alone: the longer lists fit
        # `/' at the empty prompt lists the commands, with what each does.
        emacs.type("/")
        listed = emacs.wait_for("/rules")
        for command in (
            "/undo",
            "/new",
            "/model",
            "/effort",
            "/compact",
            "/cost",
            "/resume",
            "/rules",
        ):
            assert command in listed, listed
        assert "put back the last run's edits" in listed, listed
        emacs.type("un")
        emacs.keys("Tab")  # completes the only match
        emacs.wait_for("tether> /undo")
        emacs.keys("Enter")
        emacs.wait_for("nothing to undo: no run yet")
        sent(emacs, "/compact", "nothing to compact: no session yet")
        # A run that writes a file, allowed inline; then /undo puts it back.
        sent(emacs, "write a note", "[Allow] [Allow always] [Deny]")
        emacs.keys("a")
        emacs.wait_for("■ done · 2 steps")
        assert (folder / "ws" / "notes" / "one.txt").read_text() == "one\n"
        sent(emacs, "/undo", "undid run")
        sent(emacs, "/cost", "1 run ·")
        sent(emacs, "/model gpt-x", "model: gpt-x from the next message on")
        sent(emacs, "/new", "a new session starts with the next message")
        # /resume lists the project's sessions; /resume 1 goes on with the first.
        sent(emacs, "/resume", "/resume N continues one")
        # The list and its hint may reach the screen in separate redisplays: wait for the row.
        screen = emacs.wait_until(
            lambda shown: any(
                "write a note" in line and "run" in line for line in shown.splitlines()
            ),
            "the session's row",
            30,
        )
        [row] = [line for line in screen.splitlines() if "write a note" in line and "run" in line]
        assert re.match(r"^\s*1\s", row), row
        sent(emacs, "/resume 1", "resumed session")
        sent(emacs, "and now?", "Back in the first session.")
        emacs.wait_for("■ done · 1 step\n")
        # /rules lists the rules in force, numbered; /rules remove N revokes one.
        screen = sent(emacs, "/rules", "built-in read-only commands:")
        [row] = [line for line in screen.splitlines() if "echo *" in line]
        number = row.split()[0]
        sent(emacs, f"/rules remove {number}", "removed allow bash `echo *`")
        last_screen = emacs.screen()
    assert not (folder / "ws" / "notes" / "one.txt").exists()  # /undo deleted what it wrote
    assert "echo *" not in rules.read_text()
    wire = wire_of(folder)
    commands = [(p["name"], p.get("argument")) for p in requests(wire, "agent/command")]
    assert commands == [
        ("undo", None),
        ("compact", None),
        ("undo", None),
        ("cost", None),
        ("model", "gpt-x"),
        ("new", None),
    ]
    assert requests(wire, "agent/commands") != []  # the list came from the server
    runs = requests(wire, "agent/run")
    # No command went to the model: two prompts ran, and the second continued the first
    # run's session, which /resume picked after /new.
    assert [r["prompt"] for r in runs] == ["write a note", "and now?"]
    first_session = requests(wire, "agent/command")[2]["sessionId"]
    assert "sessionId" not in runs[0] and runs[1]["sessionId"] == first_session
    # The model saw the first session's conversation, with the model /model picked.
    resumed = fake.requests[-1].body
    assert messages_of(resumed)[0] == ("user", "write a note") and resumed["model"] == "gpt-x"
    assert requests(wire, "agent/sessions") and requests(wire, "agent/rules/remove")
    assert "tether> /rules remove" in last_screen
