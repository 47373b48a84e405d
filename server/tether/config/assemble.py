"""The one settings assembly, used by ``tether serve`` and by every terminal command.

The order (docs/configuration.md), lowest first: defaults < the user's config file < the
project's ``.mcp.json`` (its MCP servers, a trusted project only) < its
``.tether/config.toml`` (all of it when the user trusts the project, else the
allow-list of ``config.project``) < the ``TETHER_*`` variables < the layers above the
files: an editor's ``initializationOptions`` then its ``workspace/didChangeConfiguration``
settings, or the CLI's flags. Nothing else merges settings files, so the server and the
terminal cannot disagree about a value (where the session logs are, say).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tether_protocol import TetherSettings

from .files import PROJECT_CONFIG, user_config_path
from .layers import (
    PROJECT_MCP,
    Config,
    merge,
    resolve,
    user_file,
    variables_settings,
)
from .project import dropped_warning, mcp_warning, read_mcp_file, read_project_file

ENVIRONMENT_SOURCE = "environment"


@dataclass(frozen=True, slots=True)
class Layer:
    """One source of settings and what it sets."""

    source: str
    """A file's path, ``environment``, ``initializationOptions``, ``flags``, …"""
    settings: TetherSettings


@dataclass(frozen=True, slots=True)
class Assembly:
    """Every layer, lowest first, and what they give."""

    files: tuple[Layer, ...]
    """The user's file, the project's (when a folder was given), the environment."""
    above: tuple[Layer, ...] = ()
    """The editor's layers or the CLI's flags, lowest first."""
    dropped: tuple[str, ...] = ()
    """Keys of an untrusted project's file that were not applied, as written."""
    project_root: Path | None = None
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)
    """For the defaults that depend on it (the state folder); never shown (API keys)."""
    ignored_mcp: tuple[str, ...] = ()
    """The MCP servers of an untrusted project's ``.mcp.json`` (none is started)."""
    allow_broad_workspace: bool = False
    """The user's own file allows a workspace of ``/``, the home folder or above it
    (``allowBroadWorkspace``; ``workspace.places.broad_root_refusal``)."""
    trusted_project: bool = False
    """The user's own file trusts the project (``trustedProjects``): language servers that
    run the project's code may start by default (``langserver/catalog.py``)."""

    @property
    def layers(self) -> tuple[Layer, ...]:
        return self.files + self.above

    @property
    def settings(self) -> TetherSettings:
        """The layers merged: a higher layer wins wherever it sets a field."""
        return merge(*(layer.settings for layer in self.layers))

    @property
    def config(self) -> Config:
        """The merged settings with every default filled in."""
        return resolve(self.settings, self.environ)

    def warning(self) -> str | None:
        """The one warning naming the project file's keys that were not applied."""
        if not self.dropped or self.project_root is None:
            return None
        return dropped_warning(self.dropped, self.project_root, user_config_path(self.environ))

    def mcp_warning(self) -> str | None:
        """The one warning naming the servers of an untrusted ``.mcp.json`` (not started)."""
        if not self.ignored_mcp or self.project_root is None:
            return None
        return mcp_warning(self.ignored_mcp, self.project_root, user_config_path(self.environ))

    def warnings(self) -> tuple[str, ...]:
        """Every warning about the project's files, one per file."""
        return tuple(w for w in (self.warning(), self.mcp_warning()) if w is not None)

    def mcp_sources(self) -> dict[str, str]:
        """Each configured MCP server's name and the layer its settings came from."""
        sources: dict[str, str] = {}
        for layer in self.layers:
            for name in layer.settings.mcp_servers or {}:
                sources[name] = layer.source
        return sources


def assemble(root: Path | None, environ: Mapping[str, str], *above: Layer) -> Assembly:
    """The settings of a workspace at ``root`` (None: no project file) under ``environ``,
    with ``above`` on top; ``ConfigError`` names a file or variable that cannot be used."""
    mine = user_file(environ)
    user, trusted = mine.settings, mine.trusted
    files = [Layer(str(user_config_path(environ)), user)]
    dropped: tuple[str, ...] = ()
    ignored_mcp: tuple[str, ...] = ()
    if root is not None:
        mcp = read_mcp_file(root, trusted)
        if mcp.settings.mcp_servers:
            files.append(Layer(str(root / PROJECT_MCP), mcp.settings))
        ignored_mcp = mcp.ignored
        project = read_project_file(root, trusted, below=user)
        files.append(Layer(str(root / PROJECT_CONFIG), project.settings))
        dropped = project.dropped
    files.append(Layer(ENVIRONMENT_SOURCE, variables_settings(environ)))
    return Assembly(
        tuple(files),
        tuple(above),
        dropped,
        root,
        dict(environ),
        ignored_mcp,
        mine.allow_broad_workspace,
        root is not None and root.resolve() in trusted,
    )
