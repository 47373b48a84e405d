"""The floor over the user's own files, whatever the workspace root.

The project floor (``sensitive.RULES``) judges a path by its place in the project. These
tables judge it by its place on the machine: under the home folder, the config, data and
state folders (``places.UserPlaces``) or ``/``. ``WRITES`` are the places whose change is
always asked (a shell start-up file, Tether's own settings, a login service, a folder on the
``PATH``, credentials, anything under ``~/.config``); ``SECRETS`` are the places the built-in
read-only commands never read unasked (keys, credentials, shell histories, another
process's memory or environment).

A pattern is ``/``-separated names under its folder, compared folded (``places.normalized``),
with shell wildcards (``*``, ``[0-9]``) inside a name; it covers the file or folder it names
and everything in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Literal

from .places import UserPlaces, folded, normalized

Under = Literal["home", "config", "data", "state", "root"]


@dataclass(frozen=True, slots=True)
class Place:
    """One of the user's places and why it is sensitive."""

    under: Under
    pattern: str
    reason: str

    def names(self) -> tuple[str, ...]:
        return tuple(normalized(n) for n in self.pattern.split("/"))


SHELL = "a shell start-up file of yours: runs in your next shell"
TETHER = "Tether's own settings and rules: they decide what runs unasked"
LOGIN = "a service of your login: runs at your next login"
ON_PATH = "a folder on your PATH: a program there runs in place of the one you meant"
SETTINGS = "your programs' settings: many run code from them"
CREDENTIALS = "credentials of yours"
KEYS = "your keys"
EDITOR = "your editor's own settings: run code when it starts"
SYSTEM = "the system's files"
HOME_DOT = "a settings file or folder of yours in your home folder"

_SHELL_FILES = (
    *(".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".bashrc.d"),
    *(".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".zsh", ".oh-my-zsh"),
    *(".profile", ".inputrc", ".cshrc", ".tcshrc", ".login", ".logout", ".kshrc", ".mkshrc"),
    *(".xprofile", ".xinitrc", ".xsession", ".xsessionrc", ".xserverrc", ".pam_environment"),
    ".envrc",
)
_CREDENTIALS = (
    *(".netrc", ".git-credentials", ".aws", ".azure", ".kube", ".docker", ".npmrc", ".yarnrc"),
    *(".yarnrc.yml", ".pypirc", ".pip", ".gem", ".m2", ".gradle", ".terraform.d"),
    *(".terraformrc", ".pgpass", ".my.cnf", ".vault-token", ".password-store"),
)

WRITES: tuple[Place, ...] = (
    # Most specific first: the first matching place gives the reason shown.
    Place("config", "tether", TETHER),
    Place("state", "tether", "Tether's own session logs: read back into later sessions"),
    *(Place("home", name, SHELL) for name in _SHELL_FILES),
    Place("config", "fish", SHELL),
    Place("config", "environment.d", LOGIN),
    Place("config", "systemd", LOGIN),
    Place("config", "autostart", LOGIN),
    Place("data", "systemd", LOGIN),
    Place("data", "dbus-1", LOGIN),
    Place("data", "applications", "a desktop entry: runs when it is opened from a menu"),
    Place("data", "keyrings", KEYS),
    Place("home", ".local/bin", ON_PATH),
    Place("home", "bin", ON_PATH),
    Place("home", ".cargo", "Rust's settings, credentials and the programs on your PATH"),
    Place("home", ".local/lib", "your own Python packages: a .pth file there runs at every start"),
    Place("home", ".ssh", "SSH keys and settings"),
    Place("home", ".gnupg", "GnuPG keys"),
    Place("home", ".pki", KEYS),
    Place("home", ".gitconfig", "your git settings: hooks, aliases and filters run code"),
    *(Place("home", name, CREDENTIALS) for name in _CREDENTIALS),
    *(Place("home", name, EDITOR) for name in (".vimrc", ".gvimrc", ".exrc", ".vim")),
    *(Place("home", name, EDITOR) for name in (".emacs", ".emacs.d", ".ipython", ".jupyter")),
    Place("config", "", SETTINGS),
    *(Place("root", name, SYSTEM) for name in ("etc", "proc", "sys", "dev", "boot")),
)
"""Places whose change is always asked, with the reason the question shows."""

BROAD_WRITES: tuple[Place, ...] = (Place("home", ".*", HOME_DOT),)
"""Asked as well when the workspace folder holds the home folder (it is ``/``, the home
folder or above it): every dot file and folder of the home folder. A project opened inside
one of them (``~/.dotfiles``) edits its own files."""

SECRETS: tuple[Place, ...] = (
    Place("home", ".ssh", "SSH keys"),
    Place("home", ".gnupg", "GnuPG keys"),
    Place("home", ".pki", KEYS),
    *(Place("home", name, CREDENTIALS) for name in _CREDENTIALS if name != ".gradle"),
    Place("home", ".gradle/gradle.properties", CREDENTIALS),
    Place("home", ".cargo/credentials*", CREDENTIALS),
    *(Place("home", name, "a browser profile: cookies and passwords") for name in (".mozilla",)),
    Place("home", ".thunderbird", "a mail profile"),
    Place("home", "*history", "a history: what you typed, passwords included"),
    *(Place("home", name, "a history: what you typed") for name in (".lesshst", ".viminfo")),
    Place("config", "tether", "Tether's own settings: tokens of your MCP servers"),
    *(
        Place("config", name, CREDENTIALS)
        for name in ("gh", "hub", "gcloud", "op", "rclone", "doctl", "containers", "git")
    ),
    *(
        Place("config", name, "a browser profile: cookies and passwords")
        for name in ("google-chrome", "chromium", "BraveSoftware")
    ),
    Place("data", "keyrings", KEYS),
    *(
        Place("root", f"proc/{name}", "a process's memory, environment or open files")
        for name in ("[0-9]*", "self", "thread-self")
    ),
    Place("root", "dev", "a device: a disk's whole content, or output that never ends"),
    *(Place("root", f"etc/{n}", "the system's secrets") for n in ("shadow", "gshadow", "ssh")),
)
"""Places the built-in read-only commands never read unasked."""

HARMLESS = frozenset({("dev", "null")})
"""Under a secret place, but empty (``grep x file /dev/null``)."""
SECRET_NAMES = frozenset({".ssh", ".gnupg"})
"""Folders of keys wherever they are (another user's home under a root of ``/``)."""


def _bases(under: Under, places: UserPlaces) -> tuple[Path, ...]:
    if under == "root":
        return (Path("/"),)
    return {
        "home": places.homes,
        "config": places.config,
        "data": places.data,
        "state": places.state,
    }[under]


Entry = tuple[int, tuple[str, ...], str]
"""A place as (its rank in the table, its names folded, its reason)."""
Group = tuple[tuple[str, ...], dict[str, list[Entry]], list[Entry]]
"""The places under one folder (folded): by their first name, and those whose first name is
a wildcard (or none: the folder itself)."""
WILD = frozenset("*?[")


@lru_cache(maxsize=32)
def _compiled(table: tuple[Place, ...], places: UserPlaces) -> tuple[Group, ...]:
    groups: dict[tuple[str, ...], Group] = {}
    for rank, place in enumerate(table):
        names = place.names()
        for base in _bases(place.under, places):
            key = folded(base)
            _, named, wild = groups.setdefault(key, (key, {}, []))
            entry = (rank, names, place.reason)
            if names[0] and WILD.isdisjoint(names[0]):
                named.setdefault(names[0], []).append(entry)
            else:
                wild.append(entry)
    return tuple(groups.values())


def prepare(places: UserPlaces) -> None:
    """Fold the tables of places for ``places`` now (about a millisecond, once per
    process): at a front's start, rather than inside the first step that writes or reads."""
    _compiled(WRITES, places)
    _compiled(SECRETS, places)
    _secret_tops(places)


def _matches(names: tuple[str, ...], inside: tuple[str, ...]) -> bool:
    if names == ("",):
        return True  # the folder itself and everything in it
    if len(inside) < len(names):
        return False
    return all(
        have == want if WILD.isdisjoint(want) else fnmatchcase(have, want)
        for have, want in zip(inside, names, strict=False)
    )


def _readings(path: Path) -> list[tuple[str, ...]]:
    """``path`` folded, and as NTFS reads it when a name has a colon (a stream)."""
    plain = folded(path)
    if not any(":" in part for part in path.parts):
        return [plain]
    return [plain, folded(path, streams=True)]


def _found(path: Path, table: tuple[Place, ...], places: UserPlaces) -> str | None:
    """The reason of the first place of ``table`` (in its order) holding ``path``."""
    best: Entry | None = None
    for parts in _readings(path):  # a name never escapes by taking NTFS's reading
        for base, named, wild in _compiled(table, places):
            if parts[: len(base)] != base:
                continue
            inside = parts[len(base) :]
            candidates = [*named.get(inside[0], ()), *wild] if inside else wild
            for entry in candidates:
                if (best is None or entry[0] < best[0]) and _matches(entry[1], inside):
                    best = entry
    return None if best is None else best[2]


def write_reason(path: Path, places: UserPlaces, *, broad: bool) -> str | None:
    """Why changing the absolute ``path`` is always asked, by its place on the machine;
    ``broad``: the workspace folder holding it also holds the home folder."""
    return _found(path, WRITES + (BROAD_WRITES if broad else ()), places)


def secret_reason(path: Path, places: UserPlaces) -> str | None:
    """Why the absolute ``path`` holds secrets the built-in read rules never read; None:
    not one of the places known to."""
    if any(normalized(p, streams=s) in SECRET_NAMES for p in path.parts for s in (False, True)):
        return "keys"
    if folded(path) in HARMLESS:
        return None
    return _found(path, SECRETS, places)


@lru_cache(maxsize=32)
def _secret_tops(places: UserPlaces) -> frozenset[tuple[str, ...]]:
    """The top folder of every secret place (up to its first wildcard), folded."""
    tops: set[tuple[str, ...]] = set()
    for base, named, wild in _compiled(SECRETS, places):
        for _, names, _ in [*(e for entries in named.values() for e in entries), *wild]:
            literal: list[str] = []
            for name in names:
                if not name or not WILD.isdisjoint(name):
                    break
                literal.append(name)
            tops.add(base + tuple(literal))
    return frozenset(tops)


def holds_secrets(folder: Path, places: UserPlaces) -> bool:
    """A walk from ``folder`` (``grep -r``, ``rg``) can read a secret place: ``folder`` is
    one, or one is inside it."""
    if secret_reason(folder, places) is not None:
        return True
    mine = folded(folder)
    return any(top[: len(mine)] == mine for top in _secret_tops(places))
