"""``commandInput = "ask"`` in the terminal chat: a command's password prompt is asked at the
terminal with nothing typed shown, and the command gets the answer; Enter alone answers a
``[Y/n]`` with its default."""

from __future__ import annotations

import hashlib
from pathlib import Path

from .test_cli_chat import _at_prompt, ask, chat
from .test_cli_terminal import assert_nothing_left, scripted

SECRET = "hunter2-s3cr3t-Zq"


def _asking(tmp_path: Path, command: str) -> dict[str, str]:
    """The chat's environment: the model runs ``command`` (allowed), then says "it went on";
    the user's config asks them a command's questions."""
    call = {"name": "bash", "arguments": {"command": command}}
    env = scripted(tmp_path, {"turns": [{"toolCalls": [call]}, {"text": "it went on"}]})
    config = tmp_path / ".config" / "tether"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('commandInput = "ask"\nautoApprove = ["bash"]\n')
    return env


async def test_the_chat_asks_a_commands_password_without_showing_it(tmp_path: Path) -> None:
    digest = hashlib.sha256(SECRET.encode()).hexdigest()  # the command holds no secret
    program = (
        "import getpass, hashlib; "
        "typed = hashlib.sha256(getpass.getpass('Password: ').encode()).hexdigest(); "
        f"print('matched' if typed == {digest!r} else 'wrong')"
    )
    env = _asking(tmp_path, f'python3 -c "{program}"')
    async with chat(env, tmp_path) as ui:
        await ask(ui, "log in")
        await ui.wait_for(r"is waiting for input")
        await ui.wait_for(r"your answer \(hidden as you type\) >")
        ui.type(SECRET)
        ui.press("enter")
        await ui.wait_for("matched")  # the command got the answer
        await ui.wait_for("it went on")
        assert SECRET not in ui.text()
        await ui.wait_until(lambda: _at_prompt(ui), "the prompt after the turn")
        ui.press("ctrl-d")
        assert await ui.wait_for_exit() == 0, ui.text()
    assert_nothing_left(env)
    logs = [p for p in (tmp_path / "state").rglob("*") if p.is_file()]
    assert logs and not [p for p in logs if SECRET.encode() in p.read_bytes()]


async def test_enter_alone_takes_a_commands_default(tmp_path: Path) -> None:
    command = 'read -p "Install? [Y/n] " x; echo "got=[${x:-Y}]"'
    env = _asking(tmp_path, command)
    async with chat(env, tmp_path) as ui:
        await ask(ui, "install it")
        await ui.wait_for(r"your answer \(Enter alone: its default\) >")
        ui.press("enter")
        await ui.wait_for(r"got=\[Y\]")
        await ui.wait_for("it went on")
        await ui.wait_until(lambda: _at_prompt(ui), "the prompt after the turn")
        ui.press("ctrl-d")
        assert await ui.wait_for_exit() == 0, ui.text()
    assert_nothing_left(env)
