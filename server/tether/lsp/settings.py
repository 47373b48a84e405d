"""The settings of one ``tether serve``, layer by layer, lowest first: the user file, the
project file (bound by the trust rule), ``TETHER_*`` variables, then the editor's
``initializationOptions`` and ``workspace/didChangeConfiguration`` (see configuration.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tether_protocol import TetherSettings

from ..config.layers import (
    Config,
    ignored_warning,
    merge,
    parse_settings,
    project_settings,
    resolve,
    user_file,
    variables_settings,
)


class ServerSettings:
    """Every layer a server was given; ``resolve`` merges them (``ConfigError`` naming the
    field when a layer cannot be used)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self._user, _ = user_file(environ)
        self._project = TetherSettings()
        self._env = variables_settings(environ)
        self._init = TetherSettings()
        self._client = TetherSettings()

    def initial(self) -> Config:
        """The settings before ``initialize``: the user file and the environment."""
        return resolve(merge(self._user, self._env), self.environ)

    def read_initialize(self, initialization_options: object, root: Path | None) -> str | None:
        """``initializationOptions`` and the first folder's ``.tether/config.toml`` (read
        once, at ``initialize``: a few hundred bytes); the warning about the project's
        settings an untrusted project may not choose, if it tried."""
        self._init = parse_settings(initialization_options, "initializationOptions")
        if root is None:
            return None
        self._project, ignored = project_settings(root.resolve(), self.environ)
        return ignored_warning(ignored, root.resolve(), self.environ) if ignored else None

    def read_client_settings(self, settings: object) -> bool:
        """``workspace/didChangeConfiguration``'s ``settings.tether``; whether it had one."""
        if isinstance(settings, dict) and "tether" in settings:
            self._client = parse_settings(settings["tether"], "settings.tether")
            return True
        return False

    def resolve(self) -> Config:
        """Every layer merged, later layers winning, and the defaults filled in."""
        merged = merge(self._user, self._project, self._env, self._init, self._client)
        return resolve(merged, self.environ)
