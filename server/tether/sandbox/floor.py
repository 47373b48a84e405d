"""The floor inside the walls: the user's own places a sandboxed command may not write,
whatever the workspace.

The approval floor (``workspace/personal.py``'s ``WRITES``: shell start-up files,
``~/.config`` with Tether's own settings first, login services, ``~/.local/bin``, ``~/bin``,
credentials, …; and every dot file or folder at the top of the home folder when a workspace
folder holds it) asks before any change to these places, whatever allowed it. A command the
sandbox runs unasked must not make that change either, so where a writable folder holds
one of them the walls keep it from being written:

- a place that is there is kept read-only (``kept``);
- a place that is not there yet cannot be made: the folder it would be made in is
  ``closed`` — nothing can be created, removed or renamed in it, while what is already in
  it keeps its own walls (a wildcard place, ``~/.*``, closes the folder it is in);
- a writable folder inside a place is kept read-only whole.

Places are found as the floor finds them (both spellings of each of the user's folders,
``places.UserPlaces``) and followed through links to what a write would change. Blocking:
it looks at the disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from ..workspace.personal import BROAD_WRITES, WILD, WRITES, Place
from ..workspace.places import UserPlaces, broad_root, normalized


@dataclass(frozen=True, slots=True)
class Floor:
    """The places of the floor inside the writable folders (resolved, absolute)."""

    kept: tuple[Path, ...] = ()
    """There: read-only (files and folders; a writable folder inside a place, whole)."""
    closed: tuple[Path, ...] = ()
    """Folders where a place could be made: no entry created, removed or renamed in them."""


def inside(path: Path, folder: Path) -> bool:
    """``path`` is ``folder`` or inside it (both absolute, compared as spelled)."""
    parts = folder.parts
    return path.parts[: len(parts)] == parts


def _bases(place: Place, places: UserPlaces) -> tuple[Path, ...]:
    if place.under == "root":
        return (Path("/"),)
    return {
        "home": places.homes,
        "config": places.config,
        "data": places.data,
        "state": places.state,
    }[place.under]


def _named(base: Path, pattern: str) -> tuple[list[Path], list[Path]]:
    """The paths ``pattern`` names under ``base`` (a wildcard name matched, folded, against
    what is there), and the folders where a name a wildcard matches could be made."""
    paths = [base]
    opened: list[Path] = []
    for name in (n for n in pattern.split("/") if n):
        if WILD.isdisjoint(name):
            paths = [p / name for p in paths]
            continue
        wanted = normalized(name)
        matched: list[Path] = []
        for folder in paths:
            opened.append(folder)
            try:
                entries = os.listdir(folder)
            except OSError:
                continue
            matched += [folder / e for e in entries if fnmatchcase(normalized(e), wanted)]
        paths = matched
    return paths, opened


def _places_in(root: Path, places: UserPlaces) -> Iterable[tuple[str, Path]]:
    """(``kept`` or ``closed``, path) for the places of the floor inside the writable
    folder ``root`` (resolved)."""
    table = WRITES + (BROAD_WRITES if broad_root(root, places) is not None else ())
    for place in table:
        for base in _bases(place, places):
            if not (inside(base, root) or inside(root, base)):
                continue  # neither holds the other: no place of it is in the root
            paths, opened = _named(base, place.pattern)
            yield from (("closed", f) for f in opened if f.is_dir() and inside(f, root))
            for path in paths:
                if inside(root, path):
                    yield "kept", root  # the whole writable folder is a place
                elif inside(path, root):
                    yield from _kept_or_closed(path, root)


def _kept_or_closed(path: Path, root: Path) -> Iterable[tuple[str, Path]]:
    """For a place at ``path`` (as spelled, inside ``root``): what a write to it would
    change, kept if it is there, else the folder it would be made in, closed; and a
    folder holding a link on the way, closed (what is put in the link's place would be
    the place)."""
    step = root
    names = path.relative_to(root).parts
    for n, name in enumerate(names, 1):
        folder, step = step, step / name
        if step.is_symlink():
            yield "closed", folder
            break  # the rest is judged where the link leads
        if not step.exists() or (n < len(names) and not step.is_dir()):
            yield "closed", folder  # a real folder (no link on the way) it would be made in
            return
    else:
        yield "kept", path  # there, and no link on the way: as spelled is as resolved
        return
    real = Path(os.path.realpath(path))
    if inside(root, real):
        yield "kept", root
    elif os.path.lexists(real):
        yield "kept", real
    else:
        yield "closed", next(p for p in real.parents if p.is_dir())


def hidden_over(path: Path, writable: Sequence[Path], hidden: Sequence[Path]) -> bool:
    """``path`` lies in a ``hidden`` path inside the ``writable`` folder holding it (a
    hidden path around that folder, such as the home folder around a project, is under
    the folder's own bind and hides nothing of it); True when no folder holds it."""
    holders = [w for w in writable if inside(path, w)]
    if not holders:
        return True
    root = max(holders, key=lambda w: len(w.parts))
    return any(inside(path, h) and not inside(root, h) for h in hidden)


def floor_in(writable: Sequence[Path], places: UserPlaces, hidden: Sequence[Path]) -> Floor:
    """The floor inside the ``writable`` folders (resolved); what lies in a ``hidden``
    path inside one is left to it (nothing of it is written either)."""
    kept: set[Path] = set()
    closed: set[Path] = set()
    for root in writable:
        for kind, path in _places_in(root, places):
            if not hidden_over(path, writable, hidden):
                (kept if kind == "kept" else closed).add(path)
    shown: list[Path] = []
    for path in sorted(kept, key=lambda p: len(p.parts)):  # one inside another: covered
        if not any(inside(path, k) for k in shown):
            shown.append(path)
    folders = [c for c in sorted(closed) if not any(inside(c, k) for k in shown)]
    return Floor(tuple(shown), tuple(folders))
