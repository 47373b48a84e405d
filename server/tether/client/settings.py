"""The terminal's settings: the one assembly (``config.assemble``) with the command's
flags on top, and ``tether config`` to show where each value came from."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tether_protocol import TetherSettings

from ..config.assemble import Assembly, Layer, assemble
from ..config.files import DAEMON_VARIABLE, daemon_choice
from ..config.layers import (
    DEFAULT_APPROVAL_TIMEOUT_SECONDS,
    DEFAULT_DIAGNOSTICS_MAX_WAIT_MS,
    DEFAULT_DIAGNOSTICS_SETTLE_MS,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MAX_STEPS,
    DEFAULT_TIMEOUT_SECONDS,
    default_state_dir,
    parse_settings,
)
from ..config.project import shown_key
from ..prompt.instructions import MAX_INSTRUCTIONS_BYTES, Found, find_instructions, home_folder
from ..text.redact import redact_args, redact_url
from ..workspace.places import broad_root_refusal

SECRETS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
FLAGS = "flags"


def terminal_settings(root: Path, flags: dict[str, Any], environ: Mapping[str, str]) -> Assembly:
    """The settings of a command in ``root``: what its server will assemble with ``flags`` as
    ``initializationOptions`` (the top layer); ``ConfigError`` for a bad file or variable."""
    return assemble(root, environ, Layer(FLAGS, parse_settings(flags, FLAGS)))


def refused_workspace(root: Path, settings: Assembly, environ: Mapping[str, str]) -> str | None:
    """Why a command may not run in ``root`` (``/``, the home folder or a folder above it,
    unless the user's file allows it: ``workspace.places``); None when it may."""
    return broad_root_refusal([root], environ, settings.allow_broad_workspace)


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _shown(key: str, value: Any) -> str:
    if key == "script" and not isinstance(value, str):
        return "(an inline script)"
    if key == "baseUrl" and isinstance(value, str):
        return repr(redact_url(value))
    return repr(value)


def _mask(secret: str) -> str:
    return "set (…" + secret[-4:] + ")" if len(secret) > 12 else "set"


def describe(settings: Assembly, environ: Mapping[str, str] | None = None) -> str:
    """The effective settings, each with the source it came from; secrets masked."""
    env = os.environ if environ is None else environ
    effective: dict[str, tuple[Any, str]] = {
        "maxSteps": (DEFAULT_MAX_STEPS, "default"),
        "timeoutSeconds": (DEFAULT_TIMEOUT_SECONDS, "default"),
        "stateDir": (str(default_state_dir(dict(env))), "default"),
        "approvalTimeoutSeconds": (DEFAULT_APPROVAL_TIMEOUT_SECONDS, "default"),
        "maxMessageBytes": (DEFAULT_MAX_MESSAGE_BYTES, "default"),
        "diagnosticsSettleMs": (DEFAULT_DIAGNOSTICS_SETTLE_MS, "default"),
        "diagnosticsMaxWaitMs": (DEFAULT_DIAGNOSTICS_MAX_WAIT_MS, "default"),
        "sandbox": ("off", "default"),
    }
    for layer in settings.layers:
        for key, value in layer.settings.to_wire().items():
            effective[key] = (value, layer.source)
    keys = [
        TetherSettings.model_fields[f].alias or f
        for f in TetherSettings.model_fields
        if f != "mcp_servers"  # listed below, without the values of env and headers
    ]
    lines = []
    for key in keys:
        value, source = effective.get(key, (None, ""))
        if value is not None:
            lines.append(f"{key:22} {_shown(key, value):40} {source}")
    for name in SECRETS:
        lines.append(f"{name:22} {_mask(env[name]) if env.get(name) else 'not set':40} environment")
    on, said = daemon_choice(env)
    shown = "on (tether run through the shared warm server)" if on else "off"
    lines.append(f"{'daemon':22} {shown:40} {'environment' if said == DAEMON_VARIABLE else said}")
    lines.append("")
    root = settings.project_root
    found = Found() if root is None else find_instructions(root, home_folder(env), warn=False)
    instructions = [(path, _file_size(path)) for path in found.paths]
    if instructions:
        total = sum(size for _, size in instructions)
        over = total > MAX_INSTRUCTIONS_BYTES
        cut = f", cut to {MAX_INSTRUCTIONS_BYTES} in the prompt" if over else ""
        lines.append(f"project instructions ({total} bytes{cut}):")
        lines.extend(f"  {path}  {size} bytes" for path, size in instructions)
    else:
        lines.append("project instructions: no AGENTS.md here or above, up to the repository")
    lines.extend(f"  skipped {item.path}: {item.reason}" for item in found.skipped)
    lines.append("")
    lines.extend(_mcp_lines(settings))
    lines.append("")
    lines.extend(_language_server_lines(settings, env))
    if settings.dropped:
        lines.append("")
        ignored = ", ".join(shown_key(key) for key in settings.dropped)
        lines.append(f"ignored: {ignored} (the project is not trusted)")
    if settings.ignored_mcp:
        lines.append(
            f"not started: {', '.join(settings.ignored_mcp)} of .mcp.json (the project is not "
            "trusted)"
        )
    return "\n".join(lines)


def _language_server_lines(settings: Assembly, env: Mapping[str, str]) -> list[str]:
    """The language servers of the code tools as they would start here: configured, found
    on ``PATH``, turned off, or not started because the project is not trusted."""
    from ..langserver.catalog import DEFAULTS, commands  # looks at PATH: only here

    configured = settings.config.language_servers
    trusted = settings.trusted_project
    found = commands(configured, env, settings.project_root, trusted=trusted)
    lines = ["language servers:"]
    for language in sorted({*found, *configured}):
        command = found.get(language)
        if command is None:
            lines.append(f"  {language:11} off (languageServers)")
            continue
        where = "languageServers" if command.configured else "found on PATH"
        lines.append(f"  {language:11} {shlex.join(command.argv)}  ({where})")
    if len(lines) == 1:
        lines[0] += " none found (set languageServers)"
    if not trusted:
        skipped = [
            d.program
            for lang, defaults in DEFAULTS.items()
            if lang not in configured
            for d in defaults
            if d.runs_project_code
        ]
        if skipped:
            lines.append(
                f"  not started here: {', '.join(dict.fromkeys(skipped))} (they run the "
                "project's code; the project is not trusted)"
            )
    return lines


def _mcp_lines(settings: Assembly) -> list[str]:
    """The MCP servers, each with where it came from; variables and headers by name only
    (their values are often tokens), URLs and command lines without their credentials."""
    servers = settings.settings.mcp_servers or {}
    if not servers:
        return ["MCP servers: none"]
    sources = settings.mcp_sources()
    lines = ["MCP servers:"]
    for name, server in servers.items():
        if server.command is not None:
            what = shlex.join([server.command, *redact_args(server.args or [])])
        else:
            what = f"{redact_url(str(server.url))} (HTTP)"
        extra = []
        if server.enabled is False:
            extra.append("disabled")
        if server.env:
            extra.append("env " + ", ".join(sorted(server.env)))
        if server.headers:
            extra.append("headers " + ", ".join(sorted(server.headers)))
        if server.enabled_tools is not None:
            extra.append("only " + ", ".join(server.enabled_tools))
        if server.disabled_tools:
            extra.append("not " + ", ".join(server.disabled_tools))
        if server.cwd:
            extra.append(f"in {server.cwd}")
        if server.trust_read_only_hints:
            extra.append("readOnlyHint trusted")
        shown = f"  {name:20} {what}"
        if extra:
            shown += f"  [{'; '.join(extra)}]"
        lines.append(f"{shown}  {sources.get(name, '')}")
    return lines
