"""The editors' own escaping of text from outside (Neovim's ``render.lua``, Emacs's
``tether-render.el``) against the server's one sanitiser (``tether.text.display.shown``):
generated spellings of every kind a screen would obey or hide — controls, carriage returns
and ``\\r\\n``, line separators, bidi controls, joiners between letters and next to hidden
characters, tag characters, backslashes — read the same in both, with line breaks kept
and on one line."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.text.display import shown

from .conftest import Nvim, env
from .emacs_harness import STORIES, emacs_batch, story_env

ALPHABET = [
    *"ab \\x1ue",
    *"\n\r\t\x00\x07\x1b\x7f\x80\x85\x9f\xa0\xad",
    *"é漢👨\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u2028\u2029\u202a\u202e\u202f",
    *"\u2060\u2066\u2069\u206f\u2070\ufeff\ufff9\ufffb\ufffc",
    *"\U000e0000\U000e0041\U000e007f\U000e0080",
]
"""Each hidden range's ends and the characters just past them, letters ASCII or not, an
emoji, and the backslash of an escape already written."""

TEXTS = st.lists(st.text(alphabet=ALPHABET, max_size=12), min_size=150, max_size=150)
SETTINGS = settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(texts=TEXTS)
def test_neovim_escapes_as_the_server_does(nvim: Nvim, tmp_path: Path, texts: list[str]) -> None:
    file = tmp_path / "texts.json"
    file.write_text(json.dumps(texts))
    r = nvim.run("shown", env=env(TEXTS=str(file)))
    assert r["lines"] == [shown(text, lines=True) for text in texts]
    assert r["one_line"] == [shown(text) for text in texts]


@SETTINGS
@given(texts=TEXTS)
def test_emacs_escapes_as_the_server_does(tmp_path: Path, texts: list[str]) -> None:
    file = tmp_path / "texts.json"
    file.write_text(json.dumps(texts))
    story = story_env(tmp_path, tmp_path, {"turns": []})
    story.update(TETHER_TEXTS=str(file))
    emacs_batch(STORIES / "shown-story.el", story, "")
    r = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert r["lines"] == [shown(text, lines=True) for text in texts]
    assert r["oneLine"] == [shown(text) for text in texts]
