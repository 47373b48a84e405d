"""Approvals take one key, no Enter (issue 27), in `tether run` on a pseudo-terminal:
`y`/`a` allow, `n`/`d` deny with a one-line reason, `A` always this exact call, `e` edits
the call in $EDITOR, any other key shows the legend; a piped prompt is answered from the
terminal (/dev/tty), as git and ssh do."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from tether.client.approver import ASKED

from .test_cli_terminal import Terminal, assert_nothing_left, scripted


def bash(command: str) -> dict[str, Any]:
    return {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]}


def test_y_allows_with_no_enter_and_other_keys_show_the_legend(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [bash("touch ran.txt"), {"text": "ran it"}]})
    term = Terminal(["run", "go"], env, tmp_path)
    term.expect(ASKED.strip())
    term.send("\r")  # a bare Enter is not an answer: the legend, and the question again
    term.expect("n or d  deny it", fresh=True)
    term.expect(ASKED.strip(), fresh=True)
    term.send("?")
    term.expect("A       always allow this exact call", fresh=True)
    term.expect(ASKED.strip(), fresh=True)
    term.send("y")  # one key: no Enter follows
    assert term.wait(timeout=60) == 0, term.text
    assert (tmp_path / "ran.txt").exists()
    assert "approval: allow" in term.text
    assert_nothing_left(env)


def test_n_then_a_reason_denies_and_tells_the_model(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [bash("touch ran.txt"), {"text": "ok"}]})
    term = Terminal(["run", "go"], env, tmp_path)
    term.expect(ASKED.strip())
    term.send("n")
    term.expect("why? (Enter skips)", fresh=True)
    term.send("use make instead\r")
    assert term.wait(timeout=60) == 0, term.text
    assert not (tmp_path / "ran.txt").exists()
    assert "approval: deny" in term.text
    assert "The user said: use make instead" in term.text
    assert_nothing_left(env)


def test_capital_a_always_allows_this_exact_call(tmp_path: Path) -> None:
    env = scripted(
        tmp_path, {"turns": [bash("touch a.txt"), bash("touch a.txt"), {"text": "done"}]}
    )
    term = Terminal(["run", "go"], env, tmp_path)
    term.expect(ASKED.strip())
    term.send("A")
    assert term.wait(timeout=60) == 0, term.text
    assert term.text.count(ASKED.strip()) == 1  # the second call ran unasked
    assert "approval: auto (session rule `touch a.txt`)" in term.text
    assert_nothing_left(env)


def test_e_edits_the_command_in_the_editor_before_it_is_allowed(tmp_path: Path) -> None:
    editor = f"{shlex.quote(sys.executable)} -c " + shlex.quote(
        "import sys; open(sys.argv[1], 'w').write('touch edited.txt\\n')"
    )
    env = scripted(tmp_path, {"turns": [bash("touch ran.txt"), {"text": "ok"}]})
    env |= {"EDITOR": editor, "VISUAL": ""}
    term = Terminal(["run", "go"], env, tmp_path)
    term.expect(ASKED.strip())
    term.send("e")
    term.expect("$ touch edited.txt", fresh=True)
    term.expect("[y] allow the edited version", fresh=True)
    term.send("y")
    assert term.wait(timeout=60) == 0, term.text
    assert (tmp_path / "edited.txt").exists() and not (tmp_path / "ran.txt").exists()
    assert_nothing_left(env)


def test_a_piped_prompt_is_answered_from_the_terminal(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [bash("touch ran.txt"), {"text": "ran it"}]})
    term = Terminal([], env, tmp_path, shell="echo 'run it' | $TETHER run -")
    term.expect(ASKED.strip())  # asked, not denied for want of a terminal
    term.send("y")
    assert term.wait(timeout=60) == 0, term.text
    assert "▶ run it" in term.text and "no terminal to ask" not in term.text
    assert (tmp_path / "ran.txt").exists()
    assert_nothing_left(env)
