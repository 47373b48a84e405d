"""How a reader sees Tether's frame tags, written apart from the server's own neutraliser.

A model reads ``</tооl_output>`` (Cyrillic ``о``), ``</TOOL_OUTPUT >``, ``<\u200b/tool_output>``
and ``＜／ｔｏｏｌ＿ｏｕｔｐｕｔ＞`` as the same closing tag. The oracle folds text the way such a
reader would — compatibility forms, case, the lookalikes listed here, invisible characters and
spacing dropped — and counts the tags it then spells. It keeps its own list of lookalikes, so a
lookalike the server forgot makes a property fail instead of passing on a shared table.
"""

from __future__ import annotations

import html
import re
import unicodedata

FRAME_TAGS = (
    "tool_output",
    "attached-file",
    "editor-selection",
    "project-instructions",
    "mcp-description",
)

LOOKALIKES: dict[str, str] = {
    "<": "\u2039\u27e8\u3008\u02c2\u1438\ufe64\uff1c",
    "/": "\u2215\u2044\u29f8\uff0f",
    "-": "\u2010\u2011\u2013\u2212\ufe63\uff0d",
    "_": "\uff3f",
    "a": "\u0430\u0410\u03b1\u0391",
    "c": "\u0441\u0421\u03f2",
    "d": "\u0501",
    "e": "\u0435\u0415\u0395",
    "h": "\u04bb\u041d\u0397",
    "i": "\u0456\u0406\u03b9\u0399",
    "j": "\u0458\u0408\u03f3",
    "l": "\u04cf\u04c0",
    "n": "\u03b7",
    "o": "\u043e\u041e\u03bf\u039f\u0585",
    "p": "\u0440\u0420\u03c1\u03a1",
    "r": "\u0433",
    "s": "\u0455\u0405",
    "t": "\u0442\u0422\u03c4\u03a4",
    "u": "\u03c5\u057d",
}
"""Characters that read as the key (Cyrillic, Greek, Armenian letters; dashes; brackets)."""

_FOLD = {char: ascii_ for ascii_, chars in LOOKALIKES.items() for char in chars}


def _hidden(char: str) -> bool:
    return char.isspace() or unicodedata.category(char) in (
        "Cc",
        "Cf",
        "Mn",
        "Me",
        "Zs",
        "Zl",
        "Zp",
    )


def read_as(text: str) -> str:
    """``text`` as a reader takes it in: lookalikes and compatibility forms folded, case
    ignored, invisible characters and spacing gone."""
    out = []
    for char in text:
        if char in _FOLD:
            out.append(_FOLD[char])
            continue
        for c in unicodedata.normalize("NFKC", char).casefold():
            if not _hidden(c):
                out.append(_FOLD.get(c, c))
    return "".join(out)


def read_words(text: str) -> str:
    """``text`` as ``read_as`` reads it, but with its spacing kept (one space for any)."""
    out = []
    for char in text:
        if char in _FOLD:
            out.append(_FOLD[char])
            continue
        for c in unicodedata.normalize("NFKC", char).casefold():
            if c.isspace():
                out.append(" ")
            elif not _hidden(c):
                out.append(_FOLD.get(c, c))
    return "".join(out)


def says(text: str, phrase: str) -> bool:
    """Whether a reader finds ``phrase`` in ``text`` as words of their own (not glued to
    others), whatever letters spell them."""
    words = re.escape(read_words(phrase))
    return re.search(f"(?<![a-z0-9]){words}(?![a-z0-9])", read_words(text)) is not None


def _name(tag: str) -> str:
    return "[_-]?".join(re.escape(word) for word in re.split(r"[_-]", tag))


def closing_tags(text: str, tag: str) -> int:
    """How many ``</tag`` a reader sees in ``text`` (any spelling of the tag's separator)."""
    return len(re.findall("</" + _name(tag), read_as(text)))


def any_tags(text: str, tags: tuple[str, ...] = FRAME_TAGS) -> list[str]:
    """Every ``<tag`` or ``</tag`` of ``tags`` a reader sees in ``text``."""
    return re.findall("</?(?:" + "|".join(_name(t) for t in tags) + ")", read_as(text))


def readable(body: str) -> str:
    """What the framed body says once its escapes are read (``&lt;`` as ``<``)."""
    return html.unescape(body)
