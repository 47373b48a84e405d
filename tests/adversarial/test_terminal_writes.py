"""``tether run`` at a terminal: what is on disk changes while the user reads the diff.

The edit was computed (and shown) on one file; before the user allows it, a folder on its
path becomes a link out of the workspace, the file becomes a link to a file outside, or
the user changes the file. Promises: nothing is written through a link, and an edit never
lands on text other than the text it was computed on.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.test_cli_terminal import Terminal, assert_nothing_left, environment
from tether.client.approver import ASKED

ORIGINAL = "one\ntwo\nthree\n"


def edit_then_answer(path: str) -> dict[str, Any]:
    call = {"name": "edit_file", "arguments": {"path": path, "old_text": "one", "new_text": "ONE"}}
    return {"turns": [{"toolCalls": [call]}, {"text": "edited"}]}


def run_and_allow_after(tmp_path: Path, root: Path, script: dict[str, Any], change: Any) -> str:
    """``tether run`` in ``root``; at the edit's question ``change()`` runs, then allow.
    What the terminal showed."""
    env = environment(tmp_path, TETHER_PROVIDER="scripted", TETHER_SCRIPT=json.dumps(script))
    term = Terminal(["run", "go"], env, root)
    term.expect(ASKED.strip())
    change()
    term.send("y")
    assert term.wait(timeout=60) == 0, term.text
    assert_nothing_left(env)
    return term.text


def test_a_folder_swapped_for_a_link_out_is_not_written_through(tmp_path: Path) -> None:
    root, outside = tmp_path / "p", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    for folder in (root / "src", outside):
        (folder / "app.py").write_text(ORIGINAL)

    def swap() -> None:
        (root / "src").rename(root / "src.old")
        (root / "src").symlink_to(outside, target_is_directory=True)

    shown = run_and_allow_after(tmp_path, root, edit_then_answer("src/app.py"), swap)
    assert (outside / "app.py").read_text() == ORIGINAL
    assert "symbolic link" in shown


def test_a_file_swapped_for_a_link_out_is_not_written_through(tmp_path: Path) -> None:
    root, secret = tmp_path / "p", tmp_path / "secret.txt"
    root.mkdir()
    (root / "a.py").write_text(ORIGINAL)
    secret.write_text("one: the user's secret\n")

    def swap() -> None:
        (root / "a.py").unlink()
        (root / "a.py").symlink_to(secret)

    run_and_allow_after(tmp_path, root, edit_then_answer("a.py"), swap)
    assert secret.read_text() == "one: the user's secret\n"
    assert (root / "a.py").is_symlink()  # neither followed nor replaced by the secret's text


def test_a_whole_file_write_never_lands_on_text_it_was_not_computed_on(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "a.py").write_text(ORIGINAL)
    write = {"name": "write_file", "arguments": {"path": "a.py", "content": "ONE\ntwo\nthree\n"}}
    typed = "zero\none\ntwo\nthree\n"

    def the_user_types() -> None:
        (root / "a.py").write_text(typed)

    shown = run_and_allow_after(
        tmp_path, root, {"turns": [{"toolCalls": [write]}, {"text": "ok"}]}, the_user_types
    )
    assert (root / "a.py").read_text() == typed
    assert "changed" in shown
