"""Configuration sources and what fills in after them: reading the user's file and the
``TETHER_*`` variables, validating a settings object, merging layers, the defaults.

Every source is a ``TetherSettings`` (all fields optional). The user's config file
(``$XDG_CONFIG_HOME/tether/config.toml``) uses the keys of ``initializationOptions``. The
order of the layers is ``config.assemble``'s; what a project's file may set is
``config.project``'s.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from tether_protocol import McpServerSettings, Script, TetherSettings
from tether_protocol.config import ModelPrice, OpenAIApi, ReasoningEffort

from ..sandbox.detect import SandboxChoice
from .files import (
    BROAD_KEY,
    DAEMON_KEY,
    ENVIRONMENT,
    INTEGER_SETTINGS,
    MAX_TOML_BYTES,
    NUMBER_SETTINGS,
    TRUST_KEY,
    USER_ONLY_KEYS,
    user_config_path,
)

DEFAULT_MAX_STEPS = 40
DEFAULT_TIMEOUT_SECONDS = 900.0
DEFAULT_APPROVAL_TIMEOUT_SECONDS = 300.0
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_BACKGROUND_JOBS = 4
"""A 10 MB buffer in ``didOpen`` fits with room for JSON escaping."""
DEFAULT_CHECKPOINT_MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files past this are not kept by a checkpoint (``checkpointMaxFileBytes``)."""
DEFAULT_CHECKPOINT_STORE_MAX_BYTES = 2 * 1024 * 1024 * 1024
"""The checkpoint store's size limit (``checkpointStoreMaxBytes``)."""
DEFAULT_DIAGNOSTICS_SETTLE_MS = 300
"""After an edit, the editor's problems count as settled once unchanged this long."""
DEFAULT_DIAGNOSTICS_MAX_WAIT_MS = 3000
"""The longest an edit's result waits for the editor's problems."""
DEFAULT_LANGUAGE_SERVER_TIMEOUT_SECONDS = 30.0
"""How long a language server Tether started may take to answer one request."""


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names it."""


def default_state_dir(environ: dict[str, str] | None = None) -> Path:
    """``$XDG_STATE_HOME/tether``, else ``~/.local/state/tether``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "tether"


PROJECT_MCP = ".mcp.json"
"""Claude Code's project file of MCP servers, read for a trusted project."""


def read_toml(path: Path) -> dict[str, Any] | None:
    """A TOML file's table (settings, rules); None when there is no such file;
    ``ConfigError`` when it cannot be read, is too large or is not TOML."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_TOML_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):  # no such file (a parent is not a folder)
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    return parse_toml(data, path)


def parse_toml(data: bytes, path: Path) -> dict[str, Any]:
    """The table of a TOML file's bytes; ``ConfigError`` naming ``path`` when too large or
    not TOML."""
    if len(data) > MAX_TOML_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_TOML_BYTES} bytes")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


@dataclass(frozen=True, slots=True)
class UserConfig:
    """The user's own config file: its settings and the keys only it may hold."""

    settings: TetherSettings
    trusted: list[Path] = field(default_factory=list)
    """The projects it trusts (``trustedProjects``), resolved."""
    allow_broad_workspace: bool = False
    """``allowBroadWorkspace``: a workspace may be ``/``, the home folder or above it."""


def user_file(environ: Mapping[str, str]) -> UserConfig:
    """The user's config file: its settings, the projects it trusts, its permissions."""
    path = user_config_path(environ)
    data = read_toml(path)
    if data is None:
        return UserConfig(TetherSettings())
    trusted = data.pop(TRUST_KEY, [])
    if not isinstance(trusted, list) or not all(isinstance(t, str) for t in trusted):
        raise ConfigError(f"{path}: {TRUST_KEY}: expected a list of folders")
    if not isinstance(data.pop(DAEMON_KEY, True), bool):  # read by the front (daemon.wire)
        raise ConfigError(f"{path}: {DAEMON_KEY}: expected true or false")
    broad = data.pop(BROAD_KEY, False)
    if not isinstance(broad, bool):
        raise ConfigError(f"{path}: {BROAD_KEY}: expected true or false")
    folders = [Path(t).expanduser().resolve() for t in trusted]
    return UserConfig(parse_settings(data, str(path)), folders, broad)


def variables_settings(environ: Mapping[str, str]) -> TetherSettings:
    """The settings given by ``TETHER_*`` variables (a script may be a path or inline JSON)."""
    values: dict[str, Any] = {}
    for variable, name in ENVIRONMENT.items():
        value = environ.get(variable)
        if not value:
            continue
        if name == "script" and value.lstrip().startswith("{"):
            try:
                values[name] = Script.model_validate_json(value)
            except ValidationError as exc:
                raise ConfigError(f"{variable}: not a valid script: {first_error(exc)}") from None
        elif name in INTEGER_SETTINGS:
            try:
                values[name] = int(value)
            except ValueError:
                raise ConfigError(
                    f"{variable}: expected a whole number, got {value[:200]!r}"
                ) from None
        elif name in NUMBER_SETTINGS:
            try:
                values[name] = float(value)
            except ValueError:
                raise ConfigError(f"{variable}: expected a number, got {value[:200]!r}") from None
        else:
            values[name] = value
    try:
        return TetherSettings(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        variable = next(v for v, n in ENVIRONMENT.items() if n == first["loc"][0])
        raise ConfigError(f"{variable}: {first['msg']}") from exc


def first_error(exc: ValidationError) -> str:
    """The first problem pydantic found, in one line (where it is, then what)."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def parse_settings(data: object, source: str) -> TetherSettings:
    """Validate a settings object from the client; ``ConfigError`` names the bad field."""
    if data is None:
        return TetherSettings()
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected an object")
    for key in USER_ONLY_KEYS:
        if key in data:
            raise ConfigError(f"{source}.{key}: only your own config.toml may set it")
    try:
        # JSON has no tuples or floats-vs-ints subtleties worth being strict about here.
        return TetherSettings.model_validate_json(json.dumps(data))
    except ValidationError as exc:
        first = exc.errors()[0]
        # Keys come from the client: quote at most a line of each.
        where = ".".join(str(p)[:200] for p in first["loc"])
        raise ConfigError(f"{source}.{where}: {first['msg']}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{source}: nested too deeply") from exc


def merge(*layers: TetherSettings) -> TetherSettings:
    """Later layers win wherever they set a field; ``mcpServers`` merge by server name (a
    later layer's server replaces an earlier one of the same name), ``languageServers`` by
    language."""
    merged: dict[str, Any] = {}
    servers: dict[str, McpServerSettings] = {}
    languages: dict[str, list[str]] = {}
    for layer in layers:
        for name in TetherSettings.model_fields:
            value = getattr(layer, name)
            if value is not None:
                merged[name] = value
        servers.update(layer.mcp_servers or {})
        languages.update(layer.language_servers or {})
    if servers:
        merged["mcp_servers"] = servers
    if languages:
        merged["language_servers"] = languages
    return TetherSettings(**merged)


@dataclass(frozen=True, slots=True)
class Config:
    """Settings with every default filled in."""

    provider: str | None
    model: str | None
    base_url: str | None
    script: str | Script | None
    max_steps: int
    timeout_seconds: float
    context_budget_tokens: int | None
    context_window_tokens: int | None
    """The window of a model the built-in table does not know (None: a default)."""
    auto_approve: tuple[str, ...]
    state_dir: Path
    approval_timeout_seconds: float = DEFAULT_APPROVAL_TIMEOUT_SECONDS
    """An approval unanswered this long is denied (and withdrawn from the client)."""
    max_background_jobs: int = DEFAULT_MAX_BACKGROUND_JOBS
    """Background jobs that may run at once in a session (``tools/jobs.py``)."""
    command_input: Literal["end", "ask"] = "end"
    """A command that stops to ask: ended, or its question put to the user."""
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    """Largest message body the transport reads."""
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)
    """Configured prices by model; the providers add them to their built-in table."""
    sandbox: SandboxChoice = "off"
    """Whether commands that would be asked run unasked in a sandbox (and which)."""
    sandbox_env: tuple[str, ...] = ()
    """Variables a sandboxed command gets besides the standard ones."""
    diagnostics_settle_ms: int = DEFAULT_DIAGNOSTICS_SETTLE_MS
    """0: no check of the editor's problems after edits."""
    diagnostics_max_wait_ms: int = DEFAULT_DIAGNOSTICS_MAX_WAIT_MS
    mcp_servers: Mapping[str, McpServerSettings] = field(default_factory=dict)
    """The MCP servers configured (the enabled ones are started), by name."""
    language_servers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The language servers configured, by language (an empty command: turned off)."""
    language_server_timeout_seconds: float = DEFAULT_LANGUAGE_SERVER_TIMEOUT_SECONDS
    acp_files: Literal["editor", "disk"] = "editor"
    checkpoint_max_file_bytes: int = DEFAULT_CHECKPOINT_MAX_FILE_BYTES
    """Files larger than this are recorded by a checkpoint as not restorable."""
    checkpoint_store_max_bytes: int = DEFAULT_CHECKPOINT_STORE_MAX_BYTES
    """The checkpoint store's size limit (``session/prune.py``)."""
    """``tether acp``: files through the client's ``fs`` methods when offered, or the disk."""
    reasoning_effort: ReasoningEffort = "off"
    """How hard a reasoning model thinks (``providers.anthropic`` maps it to a budget)."""
    openai_api: OpenAIApi | None = None
    """The ``openai`` provider's API; None: Responses for OpenAI's own endpoint, Chat
    Completions behind any other ``baseUrl`` (``providers.make_provider``)."""


def resolve(settings: TetherSettings, environ: Mapping[str, str]) -> Config:
    """Fill in defaults."""
    state_dir = (
        Path(settings.state_dir).expanduser()
        if settings.state_dir
        else default_state_dir(dict(environ))
    )
    return Config(
        provider=settings.provider,
        model=settings.model,
        base_url=settings.base_url,
        script=settings.script,
        max_steps=settings.max_steps or DEFAULT_MAX_STEPS,
        timeout_seconds=settings.timeout_seconds or DEFAULT_TIMEOUT_SECONDS,
        context_budget_tokens=settings.context_budget_tokens,
        context_window_tokens=settings.context_window_tokens,
        auto_approve=tuple(settings.auto_approve or ()),
        state_dir=state_dir,
        approval_timeout_seconds=(
            settings.approval_timeout_seconds or DEFAULT_APPROVAL_TIMEOUT_SECONDS
        ),
        max_message_bytes=settings.max_message_bytes or DEFAULT_MAX_MESSAGE_BYTES,
        max_background_jobs=_or_default(settings.max_background_jobs, DEFAULT_MAX_BACKGROUND_JOBS),
        command_input=settings.command_input or "end",
        prices=dict(settings.prices or {}),
        sandbox=settings.sandbox or "off",
        sandbox_env=tuple(settings.sandbox_env or ()),
        diagnostics_settle_ms=_or_default(
            settings.diagnostics_settle_ms, DEFAULT_DIAGNOSTICS_SETTLE_MS
        ),
        diagnostics_max_wait_ms=_or_default(
            settings.diagnostics_max_wait_ms, DEFAULT_DIAGNOSTICS_MAX_WAIT_MS
        ),
        mcp_servers=dict(settings.mcp_servers or {}),
        language_servers={k: tuple(v) for k, v in (settings.language_servers or {}).items()},
        language_server_timeout_seconds=(
            settings.language_server_timeout_seconds or DEFAULT_LANGUAGE_SERVER_TIMEOUT_SECONDS
        ),
        acp_files=settings.acp_files or "editor",
        checkpoint_max_file_bytes=(
            settings.checkpoint_max_file_bytes or DEFAULT_CHECKPOINT_MAX_FILE_BYTES
        ),
        checkpoint_store_max_bytes=(
            settings.checkpoint_store_max_bytes or DEFAULT_CHECKPOINT_STORE_MAX_BYTES
        ),
        reasoning_effort=settings.reasoning_effort or "off",
        openai_api=settings.openai_api,
    )


def _or_default(value: int | None, default: int) -> int:
    # 0 is a choice (off), not a missing value.
    return default if value is None else value
