"""``ask_user`` in the terminal: the chat on a pseudo-terminal shows the model's question
and its choices numbered (escaped), and a number picks one; ``tether run`` with no
terminal declares no questions, so the model is told at once that no one can be asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .cli import tether
from .test_cli_chat import _at_prompt, ask, chat
from .test_cli_terminal import assert_nothing_left, scripted


def _ask(**arguments: Any) -> dict[str, Any]:
    return {"toolCalls": [{"name": "ask_user", "arguments": arguments}]}


async def test_the_chat_shows_the_question_and_a_number_picks_a_choice(tmp_path: Path) -> None:
    question = _ask(question="Which database?\x1b[2J", choices=["sqlite", "postgres"])
    env = scripted(tmp_path, {"turns": [question, {"text": "postgres it is"}]})
    async with chat(env, tmp_path) as ui:
        await ask(ui, "set it up")
        await ui.wait_for(r"\? Which database\?\\x1b\[2J")  # escaped, not acted on
        await ui.wait_for(r"1\. sqlite")
        await ui.wait_for(r"2\. postgres")
        await ui.wait_for(r"1–2 or your answer >")
        ui.type("2")
        ui.press("enter")
        await ui.wait_for(r"ask_user: The user chose: postgres")
        await ui.wait_for("postgres it is")
        await ui.wait_until(lambda: _at_prompt(ui), "the prompt after the turn")
        ui.press("ctrl-d")
        assert await ui.wait_for_exit() == 0, ui.text()
    assert_nothing_left(env)


async def test_a_question_withdrawn_at_the_timeout_stops_asking_and_the_chat_goes_on(
    tmp_path: Path,
) -> None:
    question = _ask(question="Which database?")
    env = scripted(tmp_path, {"turns": [question, {"text": "went on"}]})
    env["TETHER_APPROVAL_TIMEOUT_SECONDS"] = "1"
    async with chat(env, tmp_path) as ui:
        await ask(ui, "set it up")
        await ui.wait_for(r"your answer >")
        await ui.wait_for(r"→ withdrawn")  # nobody answered: the server gave up on it
        await ui.wait_for(r"ask_user: No answer came within 1 s")
        await ui.wait_for("went on")
        await ask(ui, "/exit")  # the prompt reads the keys again, not the question
        assert await ui.wait_for_exit() == 0, ui.text()
    assert_nothing_left(env)


def test_tether_run_without_a_terminal_answers_no_one_to_ask(tmp_path: Path) -> None:
    question = _ask(question="Which one?", choices=["a", "b"])
    env = scripted(tmp_path, {"turns": [question, {"text": "I chose a"}]})
    out = tether(["run", "pick one"], tmp_path, env)  # stdin /dev/null, no terminal
    assert out.returncode == 0, out.stderr
    assert "ask_user: No one to ask" in out.stdout, out.stdout
    assert "I chose a" in out.stdout
    assert "? Which one?" not in out.stdout and "or your answer" not in out.stdout  # not asked
    assert_nothing_left(env)
