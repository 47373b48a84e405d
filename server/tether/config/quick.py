"""A quick, conservative check of the settings, with no pydantic: the lean start's.

``tether serve`` answers ``initialize`` before it imports the settings model (pydantic and
``tether_protocol``: about 40% of the start-up; see docs/performance.md). It may do so only
when the full assembly (``config.assemble``) will accept the same settings, since a refused
setting must refuse ``initialize`` (``-32602`` naming the field). This module says
**"certainly valid"** or **"not sure"**, never "invalid": every value it accepts is one the
settings model accepts (``tests/unit/test_quick_config.py`` checks that property against
the model on generated settings), and anything else — an object-valued ``script``, prices, a
key spelled in an unusual way, a value near a limit's edge — is "not sure", and the server
then imports everything and answers through the one assembly as before.

Nothing here decides what a setting *is*: the server still runs the full assembly right
after answering, and every value the runs use comes from it. The one thing read from here
is the provider's name, to start importing its SDK early.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = [
    "DAEMON_KEY",
    "ENVIRONMENT",
    "INTEGER_SETTINGS",
    "NUMBER_SETTINGS",
    "QuickSettings",
    "daemon_choice",
    "quick_settings",
    "user_config_path",
]

ENVIRONMENT = {
    "TETHER_PROVIDER": "provider",
    "TETHER_MODEL": "model",
    "TETHER_BASE_URL": "base_url",
    "TETHER_SCRIPT": "script",
    "TETHER_STATE_DIR": "state_dir",
    "TETHER_CONTEXT_WINDOW_TOKENS": "context_window_tokens",
    "TETHER_APPROVAL_TIMEOUT_SECONDS": "approval_timeout_seconds",
    "TETHER_MAX_MESSAGE_BYTES": "max_message_bytes",
    "TETHER_SANDBOX": "sandbox",
}
"""The ``TETHER_*`` variables and the setting each one sets (read by ``config.layers``)."""
INTEGER_SETTINGS = frozenset({"context_window_tokens", "max_message_bytes"})
NUMBER_SETTINGS = frozenset({"approval_timeout_seconds"})

USER_CONFIG = "tether/config.toml"
PROJECT_CONFIG = ".tether/config.toml"
TRUST_KEY = "trustedProjects"
DAEMON_KEY = "daemon"
"""The user's own file's switch of the shared warm server (``daemon_choice``): a key of that
file alone, like ``trustedProjects``, not a setting a project or editor gives."""
DAEMON_VARIABLE = "TETHER_DAEMON"
DAEMON_ON = frozenset({"1", "true", "yes", "on"})
DAEMON_OFF = frozenset({"0", "false", "no", "off"})
DAEMON_DEFAULT = True
MAX_TOML_BYTES = 1 << 20

_BIG = 1 << 53
"""Integers beyond this are "not sure" (the model's integers are 64-bit)."""
_WEEK = 7 * 24 * 3600.0
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SANDBOXES = frozenset({"auto", "bwrap", "landlock", "off"})


def user_config_path(environ: Mapping[str, str]) -> Path:
    """``$XDG_CONFIG_HOME/tether/config.toml``, else ``~/.config/tether/config.toml``."""
    base = environ.get("XDG_CONFIG_HOME") or str(
        Path(environ.get("HOME") or Path.home()) / ".config"
    )
    return Path(base) / USER_CONFIG


def daemon_choice(environ: Mapping[str, str]) -> tuple[bool, str]:
    """Whether ``tether run`` and ``tether chat`` go through the shared warm server, and who
    said so.

    On unless the user turns it off: ``TETHER_DAEMON`` (an on or off word) in their
    environment, else ``daemon = false`` in their own config file. Nothing a repository
    writes is read here (its ``.tether/config.toml`` cannot hold the key: see
    ``config.project``). Standard library only: the daemon's front reads it. A config file
    that cannot be read, or a ``daemon`` that is not true or false, turns it off, so the
    in-process run reports the file's error as it always has.
    """
    word = environ.get(DAEMON_VARIABLE, "").strip().lower()
    if word in DAEMON_ON:
        return True, DAEMON_VARIABLE
    if word in DAEMON_OFF:
        return False, DAEMON_VARIABLE
    path = user_config_path(environ)
    try:
        with path.open("rb") as handle:
            import tomllib

            data = tomllib.load(handle)
    except FileNotFoundError:
        return DAEMON_DEFAULT, "default"
    except (OSError, ValueError):
        return False, str(path)
    if DAEMON_KEY not in data:
        return DAEMON_DEFAULT, "default"
    value = data[DAEMON_KEY]
    return (value, str(path)) if isinstance(value, bool) else (False, str(path))


def _string(value: object) -> bool:
    return isinstance(value, str) and "\0" not in value and len(value) < 100_000


def _integer(low: int, high: int = _BIG) -> Callable[[object], bool]:
    def check(value: object) -> bool:
        return type(value) is int and low <= value <= high

    return check


def _number(low: float, high: float, *, low_open: bool) -> Callable[[object], bool]:
    def check(value: object) -> bool:
        if type(value) not in (int, float):
            return False
        number = float(value)  # type: ignore[arg-type]
        if not math.isfinite(number) or abs(number) > _BIG:
            return False
        above = number > low if low_open else number >= low
        return above and number <= high

    return check


def _strings(value: object, each: Callable[[str], bool] = lambda _: True) -> bool:
    return (
        isinstance(value, list)
        and len(value) < 1000
        and all(_string(item) and each(item) for item in value)
    )


def _keys(value: dict[str, Any], *spellings: tuple[str, str]) -> bool:
    """Only known keys, each field spelled once (its name or its camelCase alias)."""
    known = {key for pair in spellings for key in pair}
    twice = any(a != b and a in value and b in value for a, b in spellings)
    return not set(value) - known and not twice


def _script(value: object) -> bool:
    """A script path, or a script object (``tether_protocol.Script``) of plain turns."""
    if _string(value):
        return True
    if not isinstance(value, dict) or not _keys(
        value, ("turns", "turns"), ("repeat_last", "repeatLast"), ("delay_seconds", "delaySeconds")
    ):
        return False
    repeat = value.get("repeat_last", value.get("repeatLast", False))
    delay = value.get("delay_seconds", value.get("delaySeconds", 0.0))
    turns = value.get("turns", [])
    if type(repeat) is not bool or not _number(0, 3600, low_open=False)(delay):
        return False
    return isinstance(turns, list) and all(_turn(turn) for turn in turns)


def _plain_json(value: object) -> bool:
    """Nothing but JSON's own values (a TOML date or a NaN: not sure), not deep."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > 32:
            return False
        if isinstance(item, dict):
            if not all(_string(k) for k in item):
                return False
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif not (item is None or isinstance(item, (bool, int)) or _string(item)):
            return False
    return True


def _turn(turn: object) -> bool:
    if not isinstance(turn, dict) or not _keys(turn, ("text", "text"), ("tool_calls", "toolCalls")):
        return False
    calls = turn.get("tool_calls", turn.get("toolCalls", []))
    return (
        _string(turn.get("text", ""))
        and isinstance(calls, list)
        and all(
            isinstance(call, dict)
            and _keys(call, ("name", "name"), ("arguments", "arguments"))
            and _string(call.get("name"))
            and call.get("name") != ""
            and isinstance(call.get("arguments", {}), dict)
            and _plain_json(call.get("arguments", {}))
            for call in calls
        )
    )


FIELDS: Mapping[str, tuple[str, Callable[[object], bool]]] = {
    "provider": ("provider", _string),
    "model": ("model", _string),
    "base_url": ("baseUrl", _string),
    "script": ("script", _script),
    "max_steps": ("maxSteps", _integer(1, 10_000)),
    "timeout_seconds": ("timeoutSeconds", _number(0, _WEEK, low_open=True)),
    "context_budget_tokens": ("contextBudgetTokens", _integer(1)),
    "context_window_tokens": ("contextWindowTokens", _integer(1024)),
    "auto_approve": ("autoApprove", _strings),
    "sandbox": ("sandbox", lambda v: isinstance(v, str) and v in _SANDBOXES),
    "sandbox_env": ("sandboxEnv", lambda v: _strings(v, lambda s: bool(_NAME.fullmatch(s)))),
    "approval_timeout_seconds": (
        "approvalTimeoutSeconds",
        _number(0, float(_BIG), low_open=True),
    ),
    "diagnostics_settle_ms": ("diagnosticsSettleMs", _integer(0, 60_000)),
    "diagnostics_max_wait_ms": ("diagnosticsMaxWaitMs", _integer(0, 60_000)),
    "state_dir": ("stateDir", _string),
    "max_message_bytes": ("maxMessageBytes", _integer(64 * 1024, 1024 * 1024 * 1024)),
    # prices: not sure (a table of models)
}
"""Each settings field the quick check knows: its wire name and a check that accepts only
values the settings model accepts."""
_BY_KEY = {key: name for name, (alias, _) in FIELDS.items() for key in (name, alias)}
PROJECT_FIELDS = frozenset(
    {"diagnostics_settle_ms", "diagnostics_max_wait_ms", "max_steps", "timeout_seconds"}
)
"""What an untrusted project's file may set (``config.project.PROJECT_FIELDS``)."""


def settings_values(data: object) -> dict[str, Any] | None:
    """A settings object's values by field name, when every one is certainly valid."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        return None
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = _BY_KEY.get(key) if isinstance(key, str) else None
        if name is None or name in values:  # unknown, prices, or given twice
            return None
        if value is not None and not FIELDS[name][1](value):
            return None
        values[name] = value
    return values


def _environment(environ: Mapping[str, str]) -> dict[str, Any] | None:
    values: dict[str, Any] = {}
    for variable, name in ENVIRONMENT.items():
        raw = environ.get(variable)
        if not raw:
            continue
        value: Any = raw
        if name == "script" and raw.lstrip().startswith("{"):
            return None
        if name in INTEGER_SETTINGS:
            if not re.fullmatch(r"[0-9]{1,15}", raw):
                return None
            value = int(raw)
        elif name in NUMBER_SETTINGS:
            if not re.fullmatch(r"[0-9]{1,15}(\.[0-9]{1,15})?", raw):
                return None
            value = float(raw)
        if not FIELDS[name][1](value):
            return None
        values[name] = value
    return values


def _toml(path: Path) -> dict[str, Any] | None | bool:
    """The file's table; False when there is none; None when it is not certainly fine."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_TOML_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return None
    if len(data) > MAX_TOML_BYTES:
        return None
    import tomllib  # only when there is a file

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None


def folder_of(uri: object) -> Path | None | bool:
    """The folder a ``file:`` URI names; False for no URI; None when not certainly one."""
    if uri is None:
        return False
    if not isinstance(uri, str):
        return None
    parts = urlsplit(uri)
    path = unquote(parts.path)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    if not path.startswith("/") or "\0" in path:
        return None
    return Path(path)


class QuickSettings:
    """What the quick check found: the settings before ``initialize`` and after it."""

    def __init__(self, before: dict[str, Any], merged: dict[str, Any]) -> None:
        self.before = before
        """User file < environment: what the server runs with until ``initialize``."""
        self.merged = merged
        """Every layer, as the full assembly will merge them."""

    @property
    def provider(self) -> str | None:
        value = self.merged.get("provider")
        return value if isinstance(value, str) else None


def quick_settings(
    environ: Mapping[str, str], root: Path | None, options: object
) -> QuickSettings | None:
    """The settings of every layer (``config.assemble``'s order) when each is certainly
    valid, else None; ``root`` is the workspace's first folder (None: no project file)."""
    env = _environment(environ)
    if env is None:
        return None
    user = _toml(user_config_path(environ))
    if user is None:
        return None
    trusted: list[Path] = []
    user_values: dict[str, Any] = {}
    if isinstance(user, dict):
        folders = user.pop(TRUST_KEY, [])
        if not isinstance(folders, list) or not all(_string(f) for f in folders):
            return None
        if not isinstance(user.pop(DAEMON_KEY, True), bool):
            return None
        trusted = [Path(os.path.expanduser(f)).resolve() for f in folders]
        found = settings_values(user)
        if found is None:
            return None
        user_values = found
    project_values: dict[str, Any] = {}
    if root is not None:
        project = _toml(root / PROJECT_CONFIG)
        if project is None:
            return None
        if isinstance(project, dict):
            if root.resolve() in trusted:
                found = settings_values(project)
            else:  # only the allowed fields are read (and validated); the rest is dropped
                kept = {k: v for k, v in project.items() if _BY_KEY.get(k) in PROJECT_FIELDS}
                found = settings_values(kept)
            if found is None:
                return None
            project_values = found
    init = settings_values(options)
    if init is None:
        return None
    before = _merged(user_values, env)
    return QuickSettings(before, _merged(user_values, project_values, env, init))


def _merged(*layers: Mapping[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for layer in layers:
        merged.update((k, v) for k, v in layer.items() if v is not None)
    return merged
