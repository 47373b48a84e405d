"""TOML text for generated config files (the standard library reads TOML, it does not write it)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def key(name: str) -> str:
    """A TOML key: bare when it may be, else a quoted string."""
    return name if _BARE_KEY.fullmatch(name) else value(name)


def value(item: Any) -> str:
    """A TOML value, tables inline."""
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, (int, float)):
        return repr(item)
    if isinstance(item, str):
        # JSON's escapes are TOML's, but for DEL, which TOML wants escaped.
        return json.dumps(item, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(item, list):
        return "[" + ", ".join(value(i) for i in item) + "]"
    if isinstance(item, Mapping):
        return "{ " + ", ".join(f"{key(k)} = {value(v)}" for k, v in item.items()) + " }"
    raise TypeError(f"no TOML for {item!r}")


def document(table: Mapping[str, Any]) -> str:
    """A TOML document holding ``table`` (one line per top-level key)."""
    return "".join(f"{key(k)} = {value(v)}\n" for k, v in table.items())
