"""Credentials taken out of what Tether shows: a URL's user and password, token-like query
values, a ``Bearer`` token, a secret flag's value on a command line.

For the places that show a server's address or command line to a person or the model
(``tether config``, an approval's "in MCP server …", an error naming a URL). Each secret
becomes ``***``; what identifies the thing (scheme, host, port, path, the other query
values, the flags) stays.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import urlsplit, urlunsplit

HIDDEN = "***"
_SECRET_NAME = re.compile(
    r"token|secret|passw|pwd|passphrase|api[-_]?key|apikey|access[-_]?key|private[-_]?key"
    r"|auth(?!or)|credential|signature|^sig$|session|cookie|^key$|^code$|jwt|bearer",
    re.IGNORECASE,
)
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_BEARER = re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
_FLAG = re.compile(r"(-{1,2}[A-Za-z0-9][A-Za-z0-9_.-]*)(=)(.*)", re.DOTALL)


def secret_name(name: str) -> bool:
    """Whether a parameter, header, variable or flag called ``name`` holds a secret."""
    return bool(_SECRET_NAME.search(name.lstrip("-")))


def redact_url(url: str) -> str:
    """``url`` without its user and password and with the values of token-like query (and
    fragment) parameters hidden; a text that is not a URL is returned as it is."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = HIDDEN + "@" + netloc.rsplit("@", 1)[1]
    return urlunsplit(
        (parts.scheme, netloc, parts.path, _pairs(parts.query), _pairs(parts.fragment))
    )


def _pairs(text: str) -> str:
    """``a=1&token=x`` with the secret values hidden (as written otherwise)."""
    if "=" not in text:
        return text
    out = []
    for pair in re.split(r"([&;])", text):
        name, sign, _ = pair.partition("=")
        out.append(f"{name}={HIDDEN}" if sign and secret_name(name) else pair)
    return "".join(out)


def redact_text(text: str) -> str:
    """``text`` (an error message, a log line) with every URL in it redacted and every
    ``Bearer``/``Basic``/``Token`` credential hidden."""
    text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    return _BEARER.sub(lambda m: f"{m.group(1)} {HIDDEN}", text)


def redact_args(args: Sequence[str]) -> list[str]:
    """A command line with the value of each secret flag hidden (``--token X``,
    ``--api-key=X``) and each URL redacted."""
    out: list[str] = []
    hide_next = False
    for arg in args:
        if hide_next:
            out.append(HIDDEN)
            hide_next = False
            continue
        flag = _FLAG.fullmatch(arg)
        if flag is not None and secret_name(flag.group(1)):
            out.append(flag.group(1) + "=" + HIDDEN)
        elif arg.startswith("-") and len(arg) > 2 and secret_name(arg):
            out.append(arg)
            hide_next = True
        else:
            out.append(redact_text(arg) if "://" in arg else arg)
    return out
