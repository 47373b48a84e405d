"""The promise of every frame, over generated text: whatever the text from outside holds —
closing or opening tags of any frame in any disguise (case, spacing, line breaks, invisible
characters, full-width forms, Cyrillic, Greek and Armenian lookalikes) — the framed result
has exactly one closing tag of its frame, at its end, no other frame tag inside, and the
text still reads the same once its character references are read."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.prompt.frames import neutralise, quote
from tether.prompt.tags import tag_starts, walked_starts
from tether.workspace.folders import Workspace

from .frames_built import FRAMES, Frame
from .frames_oracle import FRAME_TAGS, LOOKALIKES, any_tags, closing_tags, readable

INVISIBLE = ["", "", "", " ", "\n", "\t", "\r\n", "\u200b", "\u200d", "\u2060", "\ufeff",
             "\u00ad", "\u0301", "\u180e", "\u2028", "\u3000"]  # fmt: skip


def _forms(char: str) -> list[str]:
    forms = [char, char.upper()]
    if char.isascii() and char.isprintable() and char != " ":
        forms.append(chr(ord(char) + 0xFEE0))  # its full-width form
    forms.extend(LOOKALIKES.get(char, ""))
    return forms


@st.composite
def disguised_tags(draw: st.DrawFn) -> str:
    """A ``<tag`` or ``</tag>`` of some frame, each character in a random disguise."""
    tag = draw(st.sampled_from(FRAME_TAGS))
    words = re.split(r"[_-]", tag)
    separator = draw(st.sampled_from(["_", "-", "", "\u2010", "\uff3f"]))
    letters = ["<", *draw(st.sampled_from([["/"], []])), *separator.join(words), ">"]
    return "".join(
        draw(st.sampled_from(_forms(c))) + draw(st.sampled_from(INVISIBLE)) for c in letters
    )


PIECES = st.sampled_from(
    ["<", "</", "/", ">", "&lt;", "&", "&#x3c;", "&lt", "\u2039", "\uff1c", "tool", "output",
     "attached", "file", "editor", "selection", "project", "instructions", "_", "-", "\n",
     '"', "\u200b", "\u0301"]
)  # fmt: skip
TEXTS = st.lists(
    st.one_of(disguised_tags(), PIECES, st.text(max_size=4)), min_size=1, max_size=24
).map("".join)


def _body(framed: str, tag: str) -> str:
    """What stands between the frame's head line and its closing tag."""
    head = framed.index(f"<{tag} ")
    start = framed.index("\n", head) + 1
    return framed[start : framed.rindex(f"\n</{tag}>")]


def _expected_in(frame: Frame, workspace: Workspace, text: str) -> str:
    # What the frame shows of the text: the body of the same frame around an inert text.
    marker = "\ue000"
    around = _body(frame.build(workspace, marker), frame.tag)
    return around.replace(marker, frame.kept(text))


@pytest.mark.parametrize("frame", FRAMES, ids=lambda f: f.name)
@settings(max_examples=150, deadline=None)
@given(text=TEXTS.filter(bool))
def test_every_frame_has_one_closing_tag_at_its_end_and_reads_the_same(
    workspace: Workspace, frame: Frame, text: str
) -> None:
    framed = frame.build(workspace, text)
    tag = frame.tag
    assert closing_tags(framed, tag) == 1, framed
    assert framed.count(f"<{tag} ") == 1 and framed.rstrip().endswith(f"</{tag}>"), framed
    body = _body(framed, tag)
    assert any_tags(body) == [], body
    assert readable(body) == readable(_expected_in(frame, workspace, text)), body


@settings(max_examples=300, deadline=None)
@given(text=TEXTS, tags=st.sets(st.sampled_from(FRAME_TAGS), min_size=1))
def test_the_neutraliser_defuses_exactly_the_tags_it_is_given(text: str, tags: set[str]) -> None:
    defused = neutralise(text, sorted(tags))
    assert any_tags(defused, tuple(sorted(tags))) == []
    assert readable(defused) == readable(text)
    others = tuple(t for t in FRAME_TAGS if t not in tags)
    if others:  # a tag not asked for is left as it was
        assert len(any_tags(defused, others)) == len(any_tags(text, others))


@st.composite
def ascii_tags(draw: st.DrawFn) -> str:
    """A ``<tag`` or ``</tag>`` of some frame in ASCII: case, separators, spacing, controls."""
    tag = draw(st.sampled_from(FRAME_TAGS))
    separator = draw(st.sampled_from(["_", "-", ""]))
    letters = ["<", *draw(st.sampled_from([["/"], []])), *separator.join(re.split(r"[_-]", tag))]
    fillers = st.sampled_from(["", "", "", " ", "\n", "\t", "\x00", "\x7f", "\x0b", "  "])
    return "".join(draw(st.sampled_from([c, c.upper()])) + draw(fillers) for c in letters)


ASCII_TEXTS = st.lists(
    st.one_of(
        ascii_tags(),
        PIECES.filter(str.isascii),
        st.text(st.characters(max_codepoint=0x7F), max_size=4),
    ),
    max_size=24,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=ASCII_TEXTS)
def test_the_ascii_regex_finds_what_the_character_walk_finds(text: str) -> None:
    assert tag_starts(text) == walked_starts(text)


NAMES = st.text(
    alphabet=st.one_of(
        st.characters(),
        st.sampled_from(["\n", "\r", "\u2028", "\u2029", "\x85", '"', "\\", "`", "<", ">",
                         "\u202e", "\u200b", "\U000e0041", "\udc80", "\uff1c", "\u2039"]),
    ),
    max_size=30,
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(NAMES)
def test_a_quoted_name_is_one_json_string_with_no_tag_in_it(name: str) -> None:
    quoted = quote(name)
    assert json.loads(quoted) == name
    assert len(quoted.splitlines()) == 1
    assert re.fullmatch(r'"(?:[^"\\]|\\.)*"', quoted) is not None
    assert any_tags(quoted) == [] and "<" not in quoted and ">" not in quoted
