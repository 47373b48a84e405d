"""Where the settings come from — the files, their keys, the ``TETHER_*`` variables — and
the switch of the shared warm server, with the standard library only (the daemon's front
reads it before anything else is imported)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

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
    "TETHER_ACP_FILES": "acp_files",
    "TETHER_CHECKPOINT_MAX_FILE_BYTES": "checkpoint_max_file_bytes",
    "TETHER_CHECKPOINT_STORE_MAX_BYTES": "checkpoint_store_max_bytes",
    "TETHER_REASONING_EFFORT": "reasoning_effort",
    "TETHER_OPENAI_API": "openai_api",
}
"""The ``TETHER_*`` variables and the setting each one sets (read by ``config.layers``)."""
INTEGER_SETTINGS = frozenset(
    {
        "context_window_tokens",
        "max_message_bytes",
        "checkpoint_max_file_bytes",
        "checkpoint_store_max_bytes",
    }
)
NUMBER_SETTINGS = frozenset({"approval_timeout_seconds"})

USER_CONFIG = "tether/config.toml"
PROJECT_CONFIG = ".tether/config.toml"
TRUST_KEY = "trustedProjects"
DAEMON_KEY = "daemon"
"""The user's own file's switch of the shared warm server (``daemon_choice``): a key of that
file alone, like ``trustedProjects``, not a setting a project or editor gives."""
BROAD_KEY = "allowBroadWorkspace"
"""The user's own file's permission to open ``/``, the home folder or a folder above it as a
workspace (``workspace.places``): a key of that file alone, like ``trustedProjects``; no
project file, editor setting, flag or variable sets it (a repository's ``.envrc`` can set a
variable)."""
USER_ONLY_KEYS = (TRUST_KEY, DAEMON_KEY, BROAD_KEY)
"""The keys only the user's own config file may hold."""
DAEMON_VARIABLE = "TETHER_DAEMON"
DAEMON_ON = frozenset({"1", "true", "yes", "on"})
DAEMON_OFF = frozenset({"0", "false", "no", "off"})
DAEMON_DEFAULT = True
MAX_TOML_BYTES = 1 << 20


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
