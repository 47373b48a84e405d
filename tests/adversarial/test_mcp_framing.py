"""What an MCP server says of its tools, as the model reads it, over generated servers: each
description in one frame (no frame tag of any kind, in any disguise, inside it or in its
schema), capped per tool and per server, flagged when a description or a schema text reads
like instructions (lookalike letters too), and a schema that fits kept as it was."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tether.prompt.server_text import (
    DESCRIPTION_CHARS,
    SCHEMA_CHARS,
    SCHEMA_DEPTH,
    SERVER_CHARS,
    server_definitions,
)

from .frames_oracle import any_tags, closing_tags, says
from .hostile_text import HOMOGLYPHS, HOSTILE, INJECTIONS

TAG = "mcp-description"
OVERHEAD = 1_200
"""What Tether adds to one description at most: its sentence, the frame, its notes, a flag."""

WORDS = st.one_of(HOSTILE, HOMOGLYPHS, st.sampled_from(INJECTIONS), st.text(max_size=30))
LONG = st.builds(lambda word, times: word * times, WORDS, st.integers(1, 200))


@st.composite
def schemas(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    """An input schema with texts from outside in its descriptions, titles, enums and names."""
    properties: dict[str, Any] = {}
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["string", "object"] if depth < 2 else ["string"]))
        node: dict[str, Any] = {"type": kind, "description": draw(st.one_of(WORDS, LONG))}
        if kind == "object":
            node = {**draw(schemas(depth + 1)), **node}
        else:
            node["enum"] = draw(st.lists(WORDS, max_size=3))
        properties[draw(WORDS)] = node
    return {"type": "object", "title": draw(WORDS), "properties": properties}


def _injected(*texts: str) -> bool:
    """Whether a reader finds one of the injection phrases in ``texts``."""
    return any(says(text, phrase) for text in texts for phrase in INJECTIONS)


def _texts(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [t for k, v in node.items() for t in [k, *_texts(v)]]
    if isinstance(node, list):
        return [t for item in node for t in _texts(item)]
    return []


@settings(max_examples=30, deadline=None)
@given(tools=st.lists(st.tuples(WORDS, st.one_of(WORDS, LONG), schemas()), min_size=1, max_size=8))
def test_every_description_is_framed_defused_capped_and_flagged(
    tools: list[tuple[str, str, dict[str, Any]]],
) -> None:
    made = server_definitions("notes", tools)
    assert len(made) == len(tools)  # no tool is lost, whatever its server says
    total = 0
    for (_, description, schema), definition in zip(tools, made, strict=True):
        text, shown = definition.description, definition.schema
        schema_text = json.dumps(shown, ensure_ascii=False)
        total += len(text) + len(schema_text)
        assert closing_tags(text, TAG) == 1, text
        head, close = text.index(f"<{TAG} "), text.rindex(f"</{TAG}>")
        assert any_tags(text[text.index("\n", head) : close]) == [], text
        assert any_tags(text[:head]) == [] and any_tags(text[close + len(TAG) + 3 :]) == []
        assert any_tags(schema_text) == [], schema_text
        assert len(text) <= DESCRIPTION_CHARS + OVERHEAD and len(schema_text) <= SCHEMA_CHARS
        assert shown.get("type") == "object"
        left_out = "not shown: the server's pass" in text
        if not left_out:
            assert "[Tether: the description is" in text or len(description) <= DESCRIPTION_CHARS
            cut = description.strip("\n").rstrip()[:DESCRIPTION_CHARS]
            if _injected(cut, *_texts(shown)):
                assert "looks like instructions" in text and definition.markers, text
        plain = all(t.isascii() and "<" not in t and len(t) <= 1_000 for t in _texts(schema))
        if plain and not left_out and len(json.dumps(schema, ensure_ascii=False)) <= SCHEMA_CHARS:
            assert shown == schema  # a schema with nothing to defuse or cut is as listed
    assert total <= SERVER_CHARS + len(tools) * OVERHEAD


def test_a_schema_nested_too_deep_is_an_open_object() -> None:
    schema: dict[str, Any] = {"type": "string", "description": "leaf"}
    for _ in range(SCHEMA_DEPTH + 5):
        schema = {"type": "object", "properties": {"x": schema}}
    [made] = server_definitions("notes", [("deep", "a deep one", schema)])
    assert made.schema == {"type": "object"}
    assert "too large or too deep" in made.description


def test_a_property_called_description_is_a_name_not_a_text() -> None:
    schema = {
        "type": "object",
        "description": "d" * 900,
        "properties": {
            f"description{i}": {"type": "string", "description": "e" * 900} for i in range(9)
        },
    }
    [made] = server_definitions("notes", [("t", "x", schema)])
    assert list(made.schema["properties"]) == [f"description{i}" for i in range(9)]
    assert "description" not in made.schema  # the texts are what was left out
    assert "descriptions, titles and examples are left out" in made.description
