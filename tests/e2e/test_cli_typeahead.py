"""Keys typed into the terminal chat while a turn runs wait for the next prompt, as they
are: the real binary on a pseudo-terminal (pyte), typed at as a person would."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from .test_cli_chat import PROMPT_MARK, Gated, _at_prompt, ask, chat
from .test_cli_terminal import assert_nothing_left, environment


@pytest.mark.parametrize(
    ("typed", "shown"),
    [("\x04", None), ("ab\x7fc", "ac")],
    ids=["ctrl-d leaves once the turn ends", "a backspace edits what was typed ahead"],
)
async def test_keys_typed_during_a_turn_reach_the_next_prompt_as_typed(
    tmp_path: Path, typed: str, shown: str | None
) -> None:
    from tests.providers.fakes import FakeApi, Sse, openai_stream

    gate = threading.Event()
    env = environment(tmp_path)
    env.pop("TETHER_PROVIDER", None)
    with FakeApi() as fake:
        fake.queue(Sse(frames=Gated(openai_stream("first ", "answer."), 2, gate)))
        argv = ("--provider", "openai", "--base-url", fake.url + "/v1", "--model", "m")
        try:
            async with chat(env, tmp_path, *argv) as ui:
                await ask(ui, "hello")
                await ui.wait_for("first")  # the turn streams; the model waits on the gate
                ui.type(typed)
                gate.set()
                await ui.wait_for("answer.")
                if shown is None:  # Ctrl-D at the start of the prompt: the chat ends
                    assert await ui.wait_for_exit() == 0, ui.text()
                else:
                    await ui.wait_for(PROMPT_MARK + shown + "$")
                    ui.press("backspace", "backspace")
                    await ui.wait_until(lambda: _at_prompt(ui), "an empty prompt")
                    ui.press("ctrl-d")
                    assert await ui.wait_for_exit() == 0, ui.text()
        finally:
            gate.set()
    assert_nothing_left(env)
