"""The user's own places — the home folder, the config, data and state folders — and the
workspace roots that would take them in.

A workspace folder is a project. The home folder, one above it or the file system's root
is not: opened as one, the user's start-up files, keys and Tether's own settings would be
project files to the edit tools and to the built-in read rules. Such a root is refused
(``broad_root_refusal``) unless the user's own config file says ``allowBroadWorkspace =
true``, and the sensitive floor (``sensitive.py``) knows these places whatever the root.

Paths are compared as a case-insensitive, Unicode-folding file system would compare them
(``normalized``): ``/home/u/.SSH`` is ``~/.ssh`` there, so it counts as ``~/.ssh`` here.
"""

from __future__ import annotations

import os
import pwd
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

BROAD_KEY = "allowBroadWorkspace"
"""The user's own config file's switch that lets a workspace be ``/``, the home folder or a
folder above it (``config.files`` reads it; no project, editor or variable can set it)."""
TETHER_CONFIG = "tether/config.toml"
"""Tether's config file under the config folder (as ``config.files.user_config_path``)."""

_IGNORED = frozenset("\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u00ad\u034f")
"""Characters some file systems (HFS+) ignore in names: ``.g\u200cit`` is ``.git`` there."""


def normalized(component: str, *, streams: bool = False) -> str:
    """A path component as a case-insensitive, Unicode-folding file system sees it; with
    ``streams``, as NTFS does, which reads ``.git::$INDEX_ALLOCATION`` as ``.git``."""
    text = unicodedata.normalize("NFC", component).casefold()
    text = "".join(c for c in text if c not in _IGNORED)
    if streams:
        text = text.split(":", 1)[0]
    return text.rstrip(" .") or text  # Windows drops trailing dots and spaces


def folded(path: Path, *, streams: bool = False) -> tuple[str, ...]:
    """The components of an absolute ``path`` below ``/``, each ``normalized``."""
    return tuple(normalized(p, streams=streams) for p in path.parts[1:] if p not in ("", "."))


def below(path: Path, base: Path, *, streams: bool = False) -> tuple[str, ...] | None:
    """``path``'s folded components under ``base`` (empty: ``base`` itself); None when
    ``path`` is not inside ``base``, compared folded."""
    mine, theirs = folded(path, streams=streams), folded(base, streams=streams)
    if mine[: len(theirs)] != theirs:
        return None
    return mine[len(theirs) :]


@dataclass(frozen=True, slots=True)
class UserPlaces:
    """Where the user's own files are, each folder resolved (duplicates left out)."""

    homes: tuple[Path, ...]
    """``$HOME`` and the account's home folder (they differ when ``HOME`` was changed)."""
    config: tuple[Path, ...]
    """``$XDG_CONFIG_HOME`` (Tether's config folder's parent) and ``~/.config``."""
    data: tuple[Path, ...]
    """``$XDG_DATA_HOME`` and ``~/.local/share``."""
    state: tuple[Path, ...]
    """``$XDG_STATE_HOME`` and ``~/.local/state`` (Tether's session logs: ``tether/``)."""


@lru_cache(maxsize=4)
def _account_home(uid: int) -> str | None:
    try:
        return pwd.getpwuid(uid).pw_dir or None
    except (KeyError, OSError):
        return None


def _both(path: Path) -> list[Path]:
    """``path`` as given and resolved: a folder reached through a link counts either way."""
    try:
        return [path, path.resolve()]
    except (OSError, RuntimeError):
        return [path]


def _unique(paths: Sequence[Path]) -> tuple[Path, ...]:
    seen: dict[tuple[str, ...], Path] = {}
    for path in paths:
        if path.is_absolute():
            seen.setdefault(folded(path), path)
    return tuple(seen.values())


@lru_cache(maxsize=16)
def _places(
    home: str | None, account: str | None, config: str | None, data: str | None, state: str | None
) -> UserPlaces:
    homes = _unique([p for h in (home, account) if h for p in _both(Path(h))])

    def xdg(given: str | None, default: str) -> tuple[Path, ...]:
        named = _both(Path(given)) if given else []
        return _unique([*named, *(p for h in homes for p in _both(h / default))])

    return UserPlaces(
        homes=homes,
        config=xdg(config, ".config"),
        data=xdg(data, ".local/share"),
        state=xdg(state, ".local/state"),
    )


def user_places(environ: Mapping[str, str] | None = None) -> UserPlaces:
    """The user's places under ``environ`` (the server's own environment by default)."""
    env = os.environ if environ is None else environ
    return _places(
        env.get("HOME") or None,
        _account_home(os.getuid()),
        env.get("XDG_CONFIG_HOME") or None,
        env.get("XDG_DATA_HOME") or None,
        env.get("XDG_STATE_HOME") or None,
    )


def tether_config_file(environ: Mapping[str, str]) -> Path:
    """Tether's config file, found as ``config.files.user_config_path`` finds it:
    ``$XDG_CONFIG_HOME/tether/config.toml``, else ``~/.config/tether/config.toml``."""
    base = environ.get("XDG_CONFIG_HOME") or str(
        Path(environ.get("HOME") or Path.home()) / ".config"
    )
    return Path(base) / TETHER_CONFIG


def broad_root(root: Path, places: UserPlaces) -> str | None:
    """What ``root`` (resolved) is when it takes in the user's own files: the file system's
    root, the home folder, or a folder above it; None for any other folder."""
    if not folded(root):
        return "the file system's root"
    for home in places.homes:
        inside = below(home, root)
        if inside == ():
            return "your home folder"
        if inside is not None:
            return f"a folder above your home folder ({home})"
    return None


def broad_root_refusal(
    roots: Sequence[Path], environ: Mapping[str, str], allowed: bool
) -> str | None:
    """Why a workspace of ``roots`` (resolved) is refused, naming the fix; None when it is
    not: no root is ``/``, the home folder or above it, or the user's config file allows it
    (``allowBroadWorkspace``, given here as ``allowed``)."""
    if allowed:
        return None
    places = user_places(environ)
    for root in roots:
        what = broad_root(root, places)
        if what is not None:
            return (
                f"the workspace folder {root} is {what}: opened as a project, your own "
                "start-up files, keys and settings would be its files. Open a project "
                f"folder inside it instead, or, to work there anyway, set {BROAD_KEY} = true "
                f"in {tether_config_file(environ)}"
            )
    return None
