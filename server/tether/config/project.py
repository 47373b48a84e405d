"""A project's ``.tether/config.toml``: everything when the user trusts the project, else an
allow-list.

A cloned repository writes this file. It is read through the settings model, so a key
means what the model takes it to mean (the field name, the camelCase alias, whatever the
model accepts); then only the fields of ``PROJECT_FIELDS`` are kept. Every other key —
another field under any spelling, a name the model does not know, a table — is dropped,
and the dropped keys are named in one warning. A list of what to refuse would miss the
next spelling; a list of what to keep cannot.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tether_protocol import TetherSettings

from .files import DAEMON_KEY, MAX_TOML_BYTES, PROJECT_CONFIG, TRUST_KEY
from .layers import (
    DEFAULT_MAX_STEPS,
    DEFAULT_TIMEOUT_SECONDS,
    PROJECT_MCP,
    ConfigError,
    parse_settings,
    read_toml,
)

PROJECT_FIELDS: Mapping[str, str] = {
    "diagnostics_settle_ms": "how long the editor's problems take to settle after an edit "
    "is the project's language servers' pace; it only delays (at most 60 s) or skips a "
    "check whose result the model reads",
    "diagnostics_max_wait_ms": "the same check's longest wait (at most 60 s)",
    "max_steps": "only lower than your own limit or the default: a project may end runs "
    "sooner, never make them cost more",
    "timeout_seconds": "only lower, as maxSteps",
    "command_input": 'only "end", the default: a command that stops to ask is ended, '
    "never its question put to you",
}
"""The fields an untrusted project may set, and why each is harmless. Not the others: the
provider, model, ``baseUrl`` and script choose where code and your key go and what a run
costs; ``autoApprove`` and ``sandbox`` what runs unasked; ``approvalTimeoutSeconds`` could
deny every question before you answer; ``stateDir`` where logs go; ``maxMessageBytes``
what your editor may send; the context sizes and prices describe your model and account,
not the project."""
LOWER_ONLY = frozenset({"max_steps", "timeout_seconds"})
STRICT_ONLY: Mapping[str, object] = {"command_input": "end"}
"""The one value each of these fields may take in an untrusted project: the strictest."""
LIMIT_DEFAULTS: Mapping[str, float] = {
    "max_steps": DEFAULT_MAX_STEPS,
    "timeout_seconds": DEFAULT_TIMEOUT_SECONDS,
}

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_.-]{1,60}")
MAX_NAMED = 20
"""Keys named in the warning; a file with more gets "and N more"."""


@dataclass(frozen=True, slots=True)
class ProjectFile:
    """The settings a project file gives, and its keys that were not applied."""

    settings: TetherSettings
    dropped: tuple[str, ...] = ()
    """As written in the file."""


def field_named(key: str) -> str | None:
    """The settings field ``key`` names, as the settings model reads keys; None for none.

    The value is left out (every field may be unset), so a bad value cannot hide a name.
    """
    try:
        named = TetherSettings.model_validate({key: None}).model_fields_set
    except ValidationError:
        return None
    return next(iter(named), None)


def read_project_file(root: Path, trusted: Sequence[Path], below: TetherSettings) -> ProjectFile:
    """``root``'s ``.tether/config.toml``: all of it for a project in ``trusted``, else what
    ``PROJECT_FIELDS`` allows (limits only below ``below``, the layers under this one);
    ``ConfigError`` for a file that is not TOML or an allowed key with a bad value."""
    path = root / PROJECT_CONFIG
    data = read_toml(path)
    if data is None:
        return ProjectFile(TetherSettings())
    if root.resolve() in trusted:
        for key in sorted({TRUST_KEY, DAEMON_KEY} & set(data)):  # the user's file's keys alone
            raise ConfigError(f"{path}: {key}: only your own config.toml may set it")
        return ProjectFile(in_project(parse_settings(data, str(path)), root))
    return _allowed_part(data, str(path), below)


def in_project(settings: TetherSettings, root: Path) -> TetherSettings:
    """A trusted project's settings with the folder of each of its stdio MCP servers made
    explicit: its ``cwd`` taken from the project folder ``root``, which it is when unset. A
    trusted project's servers run in the project; every other server runs in its own
    ``cwd`` or the home folder, never the workspace (``mcp.stdio.neutral_folder``)."""
    placed = {}
    for name, server in (settings.mcp_servers or {}).items():
        if server.command is not None and not (server.cwd or "").startswith("~"):
            server = server.model_copy(update={"cwd": str(root / (server.cwd or "."))})
        placed[name] = server
    return settings.model_copy(update={"mcp_servers": placed}) if placed else settings


def _allowed_part(data: dict[str, Any], source: str, below: TetherSettings) -> ProjectFile:
    fields = {key: field_named(key) for key in data}
    kept = {key: value for key, value in data.items() if fields[key] in PROJECT_FIELDS}
    settings = parse_settings(kept, source)
    raised = {
        name
        for name in LOWER_ONLY
        if (value := getattr(settings, name)) is not None
        and value > (getattr(below, name) or LIMIT_DEFAULTS[name])
    }
    raised |= {
        name
        for name, strict in STRICT_ONLY.items()
        if (value := getattr(settings, name)) is not None and value != strict
    }
    if raised:
        settings = settings.model_copy(update=dict.fromkeys(raised))
    dropped = [key for key, name in fields.items() if name not in PROJECT_FIELDS or name in raised]
    return ProjectFile(settings, tuple(sorted(dropped, key=shown_key)))


def shown_key(key: str) -> str:
    """A key as the warning names it: quoted (escapes shown) unless plain, and short."""
    return key if _PLAIN_KEY.fullmatch(key) else json.dumps(key[:60])


def allowed_keys() -> str:
    """The keys an untrusted project may set, as its file spells them."""
    names = [TetherSettings.model_fields[f].alias or f for f in PROJECT_FIELDS]
    return ", ".join(names)


def dropped_warning(dropped: Sequence[str], root: Path, user_config: Path) -> str:
    """The one warning naming a project file's keys that were not applied, and how to
    trust the project instead."""
    named = [shown_key(k) for k in dropped[:MAX_NAMED]]
    if len(dropped) > MAX_NAMED:
        named.append(f"and {len(dropped) - MAX_NAMED} more")
    return (
        f"ignoring {', '.join(named)} in {root / PROJECT_CONFIG}: a project you have not "
        f"trusted may set only {allowed_keys()} (the limits only lower); to let it set "
        f"everything, add {str(root)!r} to {TRUST_KEY} in {user_config}"
    )


@dataclass(frozen=True, slots=True)
class McpFile:
    """What a project's ``.mcp.json`` gives: its servers (a trusted project), or the names
    of the servers it would have started (an untrusted one: none is)."""

    settings: TetherSettings
    ignored: tuple[str, ...] = ()


def read_mcp_file(root: Path, trusted: Sequence[Path]) -> McpFile:
    """``root``'s ``.mcp.json`` (Claude Code's project file: ``{"mcpServers": {...}}``): its
    servers for a trusted project; for another, none, and their names for the warning
    (servers run code: a cloned repository must not start one). ``ConfigError`` for a
    trusted file that cannot be used; an untrusted one is never an error."""
    path = root / PROJECT_MCP
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_TOML_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return McpFile(TetherSettings())
    except OSError as exc:
        if root.resolve() not in trusted:
            return McpFile(TetherSettings())
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if root.resolve() not in trusted:
        return McpFile(TetherSettings(), _server_names(data) or ("(unreadable)",))
    if len(data) > MAX_TOML_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_TOML_BYTES} bytes")
    try:
        parsed = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ConfigError(f"{path}: expected an object")
    servers = parse_settings({"mcpServers": parsed.get("mcpServers", {})}, str(path))
    return McpFile(in_project(servers, root))


def _server_names(data: bytes) -> tuple[str, ...]:
    try:
        parsed = json.loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return ()
    servers = parsed.get("mcpServers") if isinstance(parsed, dict) else None
    if not isinstance(servers, dict):
        return ()
    return tuple(sorted(shown_key(str(name)) for name in servers))


def mcp_warning(ignored: Sequence[str], root: Path, user_config: Path) -> str:
    """The one warning naming the servers an untrusted project's ``.mcp.json`` would have
    started."""
    named = list(ignored[:MAX_NAMED])
    if len(ignored) > MAX_NAMED:
        named.append(f"and {len(ignored) - MAX_NAMED} more")
    return (
        f"not starting the MCP servers {', '.join(named)} of {root / PROJECT_MCP}: a project "
        f"you have not trusted starts no server (a server runs code); to let it, add "
        f"{str(root)!r} to {TRUST_KEY} in {user_config}"
    )
