"""A prompt the settings cannot run, typed in ``*tether-chat*`` in a real ``emacs -nw`` (in
tmux): the chat says why, with the fix, where it was typed, and takes the next prompt."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_emacs_chat import markdown_dir
from .test_emacs_keys import emacs_with_keys


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("none", "set OPENAI_API_KEY"),
        ("http://127.0.0.1:9", "http://127.0.0.1:9/v1 failed"),
    ],
    ids=["no key", "no server at the URL"],
)
def test_a_run_the_settings_cannot_make_says_why_in_the_chat(
    tmp_path: Path, url: str, says: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    extra = {"TETHER_FAKE_URL": url, "TETHER_MARKDOWN_DIR": str(markdown_dir())}
    with emacs_with_keys(tmp_path, {"turns": []}, extra) as (emacs, _):
        emacs.command("tether-chat")
        emacs.wait_for("tether>")
        emacs.type("hello there")
        emacs.keys("Enter")
        # In the chat, not only in the echo area, which the next message replaces.
        chat = "*tether-chat*"
        screen = emacs.wait_until(
            lambda s: "✗" in s and says in s[: s.index(chat)] if chat in s else False,
            f"✗ … {says} in the chat",
            timeout=60,
        )
        assert "tether> hello there" in screen, screen  # what was typed is still there
        # The chat takes the next prompt: a prompt line after the message.
        assert "tether>" in screen[screen.index("✗") :], screen
