"""Which language a file is in, and which language server answers for it.

A language's server is the command the ``languageServers`` setting names for it (a list:
the program and its arguments; an empty list turns the language off), else the first
default found on ``PATH`` — its absolute entries only and none inside the workspace
(``mcp.stdio.outside_path``), so that nothing a repository puts on a relative or in-project
``PATH`` entry (``node_modules/.bin``, ``.venv/bin``) is started.

Some defaults run the project's own code as part of their work (rust-analyzer builds
``build.rs`` and procedural macros, typescript-language-server loads the project's
``typescript`` package, gopls runs the ``go`` command, which may fetch and run the toolchain a
``go.mod`` asks for): they are started by default only in a project the user trusts. A
server the user names in their own settings is theirs to choose.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from ..mcp.stdio import outside_path

LANGUAGE_OF_SUFFIX: Mapping[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".go": "go",
    ".rs": "rust",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
}
"""A file's language by its suffix (lower-cased)."""

LANGUAGE_ID: Mapping[str, str] = {
    ".tsx": "typescriptreact",
    ".jsx": "javascriptreact",
}
"""The LSP ``languageId`` where it is not the language's name."""


@dataclass(frozen=True, slots=True)
class Default:
    """A language server looked for on ``PATH``."""

    program: str
    args: tuple[str, ...] = ()
    runs_project_code: bool = False
    """It runs code of the project it analyses: started by default only when trusted."""


DEFAULTS: Mapping[str, tuple[Default, ...]] = {
    "python": (
        Default("basedpyright-langserver", ("--stdio",)),
        Default("pyright-langserver", ("--stdio",)),
    ),
    "typescript": (Default("typescript-language-server", ("--stdio",), runs_project_code=True),),
    "javascript": (Default("typescript-language-server", ("--stdio",), runs_project_code=True),),
    "go": (Default("gopls", (), runs_project_code=True),),
    "rust": (Default("rust-analyzer", (), runs_project_code=True),),
    "c": (Default("clangd", ()),),
    "cpp": (Default("clangd", ()),),
}
"""The servers looked up on ``PATH`` for each language, in order of preference."""

INITIALIZATION_OPTIONS: Mapping[str, Mapping[str, object]] = {
    "typescript-language-server": {
        # One tsserver, answering once it has loaded the project. By default a second,
        # syntax-only tsserver answers while the project loads: a definition at the import,
        # the references of one file, a hover without the type — partial answers the model
        # would take for the whole truth.
        "tsserver": {"useSyntaxServer": "never"},
        # A rename changes every occurrence: never ``import { greet as salute }``, which
        # renames one file's name for the symbol and leaves the symbol as it was.
        "preferences": {"providePrefixAndSuffixTextForRename": False},
        # No typings fetched from npm into the user's cache because a tool looked at code.
        "disableAutomaticTypingAcquisition": True,
    },
}
"""What a server is told in ``initialize`` (its ``initializationOptions``), by program name:
for the answers the code tools need, whoever named the server."""


@dataclass(frozen=True, slots=True)
class ServerCommand:
    """How one language's server is started."""

    language: str
    argv: tuple[str, ...]
    """The program (an absolute path, or a name looked up on the server's ``PATH``) and
    its arguments."""
    configured: bool
    """Named by the ``languageServers`` setting (else a default found on ``PATH``)."""

    @property
    def name(self) -> str:
        """The server as the results name it: its program's file name."""
        return PurePath(self.argv[0]).name

    @property
    def initialization_options(self) -> Mapping[str, object] | None:
        """The ``initializationOptions`` this server is started with (None: none)."""
        return INITIALIZATION_OPTIONS.get(self.name)


def language_of(path: PurePath) -> str | None:
    """The language of a file by its suffix; None for one no server here knows."""
    return LANGUAGE_OF_SUFFIX.get(path.suffix.lower())


def language_id(path: PurePath) -> str:
    """The ``languageId`` of a file for ``didOpen``."""
    suffix = path.suffix.lower()
    return LANGUAGE_ID.get(suffix) or LANGUAGE_OF_SUFFIX.get(suffix) or "plaintext"


def commands(
    configured: Mapping[str, Sequence[str]],
    environ: Mapping[str, str],
    workspace: Path | None,
    *,
    trusted: bool,
) -> dict[str, ServerCommand]:
    """Every language some server can answer for: the configured ones (an empty command
    turns a language off) and the defaults found on ``PATH`` (those that run the project's
    code only when ``trusted``). Blocking: looks at the disk."""
    found: dict[str, ServerCommand] = {}
    for language, argv in configured.items():
        if argv:
            found[language] = ServerCommand(language, tuple(argv), configured=True)
    path = outside_path(environ.get("PATH", os.defpath), workspace)
    for language, defaults in DEFAULTS.items():
        if language in configured:
            continue
        for default in defaults:
            if default.runs_project_code and not trusted:
                continue
            program = shutil.which(default.program, path=path)
            if program is not None:
                found[language] = ServerCommand(
                    language, (program, *default.args), configured=False
                )
                break
    return found


def untrusted_defaults(language: str) -> list[str]:
    """The defaults of ``language`` not started because the project is not trusted."""
    return [d.program for d in DEFAULTS.get(language, ()) if d.runs_project_code]
