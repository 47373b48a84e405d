"""How a reader takes in a character: what it looks like, not which code point it is.

A model (or a person) reads ``</tооl_output>`` with Cyrillic ``о``, ``＜／ｔｏｏｌ＿ｏｕｔｐｕｔ＞``
and ``<\u200b/tool_output>`` as the closing tag they imitate. ``readings`` maps a character to
the ASCII it passes for: its compatibility form (NFKC: full-width and mathematical letters), case
ignored, and the Cyrillic, Greek and Armenian letters, dashes, slashes and angle brackets of
Unicode's confusables that look like the ASCII one. ``invisible`` says which characters a
reader does not see at all (spacing, zero-width and format characters, combining marks,
fillers), so that they can be skipped between the letters of a tag. ``spellings`` is a whole
text as such a reader takes it in, for the injection markers (``untrusted.find_markers``).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

_LOOKALIKES: dict[str, str] = {
    "<": "\u2039\u27e8\u3008\u2329\u02c2\u1438\u276c\u276e\u29fc\ufe64\uff1c",
    ">": "\u203a\u27e9\u3009\u232a\u02c3\u1433\u276d\u276f\u29fd\ufe65\uff1e",
    "/": "\u2215\u2044\u29f8\u2571\u30ce\u31d3\u4e3f\uff0f",
    "-": "\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u02d7\u06d4\u2796\ufe63\uff0d",
    "_": "\u02cd\uff3f",
    "a": "\u0430\u0410\u03b1\u0391\u0251\u237a\u1d00",
    "b": "\u0412\u0432\u0392\u042c\u0184\u13cf",
    "c": "\u0441\u0421\u03f2\u03f9\u1d04\u217d",
    "d": "\u0501\u13e7\u217e",
    "e": "\u0435\u0415\u0395\u04bd\u212e\u1d07",
    "f": "\u03dc\u0192",
    "g": "\u0261\u0581",
    "h": "\u04bb\u04ba\u041d\u043d\u0397\u0570\u13bb",
    "i": "\u0456\u0406\u03b9\u0399\u0269\u0131\u04c0\u04cf\u01c0\u2170",
    "j": "\u0458\u0408\u03f3\u037f",
    "k": "\u043a\u041a\u03ba\u039a\u1d0b",
    "l": "\u04cf\u04c0\u01c0\u05c0\u0399\u0406\u2113\u217c",
    "m": "\u041c\u043c\u039c\u1d0d",
    "n": "\u03b7\u039d\u0578\u057c",
    "o": "\u043e\u041e\u03bf\u039f\u03c3\u0585\u0555\u1d0f\u0d20",
    "p": "\u0440\u0420\u03c1\u03a1\u2374",
    "q": "\u051b\u0563",
    "r": "\u0433\u1d26\u0280",
    "s": "\u0455\u0405\ua731\u01bd",
    "t": "\u0442\u0422\u03c4\u03a4\u1d1b",
    "u": "\u03c5\u057d\u1d1c\u028b",
    "v": "\u03bd\u0475\u0474\u1d20",
    "w": "\u051d\u0461\u1d21\u0270",
    "x": "\u0445\u0425\u03c7\u03a7\u2179",
    "y": "\u0443\u0423\u03a5\u04af\u04ae\u03b3",
    "z": "\u0396\u1d22",
}
"""ASCII characters and the characters that pass for them (Unicode's confusables, the common
ones: a reader tells them apart from the ASCII letter only by its code point). A character may
pass for more than one (``Ӏ`` for ``I`` and ``l``)."""

FOLDED: dict[str, tuple[str, ...]] = {}
for _plain, _chars in _LOOKALIKES.items():
    for _char in _chars:
        FOLDED[_char] = (*FOLDED.get(_char, ()), _plain)

_FIRST = str.maketrans({char: plain[0] for char, plain in FOLDED.items()})
_LAST = str.maketrans({char: plain[-1] for char, plain in FOLDED.items()})
_TWOFOLD = frozenset(char for char, plain in FOLDED.items() if len(plain) > 1)


def spellings(text: str) -> tuple[str, ...]:
    """How a reader may take ``text`` in, letter by letter: compatibility forms (NFKC:
    full-width, mathematical letters) and the lookalikes above read as the ASCII they pass
    for, case kept where it was ASCII — ``Іgnоrе`` (Cyrillic) reads ``ignore``. A letter
    that passes for two (``Ӏ``: ``i`` or ``l``) gives a second spelling with the other."""
    # Lookalikes before and after NFKC: it maps some of them to others (``ϲ`` to ``ς``).
    first = unicodedata.normalize("NFKC", text.translate(_FIRST)).translate(_FIRST)
    if _TWOFOLD.isdisjoint(text):
        return (first,)
    return first, unicodedata.normalize("NFKC", text.translate(_LAST)).translate(_LAST)


_FILLERS = frozenset("\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
"""Letters (by category) that show nothing: Hangul and Khmer fillers, the blank braille cell."""


def invisible(char: str) -> bool:
    """Whether a reader sees nothing of ``char`` between two letters."""
    if char.isascii():
        return char.isspace() or not char.isprintable()
    return (
        char.isspace()
        or char in _FILLERS
        or unicodedata.category(char) in ("Cc", "Cf", "Mn", "Me", "Zs", "Zl", "Zp")
    )


@lru_cache(maxsize=8192)
def readings(char: str) -> tuple[str, ...]:
    """What ``char`` reads as, lower-cased ASCII where it passes for ASCII (more than one
    reading for a character that passes for several letters); ``("",)`` when invisible."""
    if char.isascii():
        return ("" if invisible(char) else char.lower(),)
    if char in FOLDED:
        return FOLDED[char]
    if invisible(char):
        return ("",)
    compatible = unicodedata.normalize("NFKC", char).casefold()
    return ("".join(FOLDED.get(c, (c,))[0] for c in compatible if not invisible(c)),)
