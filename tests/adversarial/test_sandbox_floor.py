"""The floor holds inside the sandbox (issue 44, "the floor is absolute"), on every backend,
around the real ``run_command``: with the home folder as the workspace (what
``allowBroadWorkspace = true`` lets a user open), a sandboxed command writes none of the
user's own places that the floor always asks about (``personal.WRITES``: shell start-up
files, ``~/.config`` with Tether's own settings first, login services, ``~/.local/bin``,
``~/bin``, credentials, …, and every dot file or folder at the top of the home folder) —
neither one that is there nor a new one, whatever the way in (a write, an append, a
removal, a rename, a move onto it, a link in the workspace, a hard link) — and the
command is stopped the way the walls stop one, so it is asked again outside. Ordinary
files of the workspace are still written.

Before, the walls kept only the project's own sensitive names read-only: a sandboxed
command could write ``~/.bashrc``, ``~/.local/bin/ls`` or Tether's config file unasked.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from tether.sandbox import Backend, Sandbox, Walls, blocked_reason, walls_for
from tether.tools.shell import command_environment, run_command
from tether.workspace.personal import BROAD_WRITES, WRITES, Place

from ..sandboxes import BACKENDS, sandbox_in
from .probes import OUTSIDE, shlex_quote

BASES = {"home": "", "config": ".config", "data": ".local/share", "state": ".local/state"}
"""Where each kind of place is under a home folder with no ``XDG_*`` variable set."""
DOT_NAMES = (".newdot", ".dotrc", ".dotdir")
"""Stand-ins for "any dot name at the top of the home folder" (``BROAD_WRITES``)."""


def place_paths(table: tuple[Place, ...]) -> list[str]:
    """The home-relative path of every place of ``table`` under the home folder (the
    system's own places, under ``/``, are not the home folder's)."""
    found: list[str] = []
    for place in table:
        if place.under == "root":
            continue
        if "*" in place.pattern:
            assert place.pattern == ".*", place  # the one wildcard place: stand-ins for it
            found += DOT_NAMES
            continue
        found.append("/".join(p for p in (BASES[place.under], place.pattern) if p))
    return list(dict.fromkeys(found))


PLACES = place_paths(WRITES + BROAD_WRITES)
FOLDERS_ON_THE_WAY = {str(Path(p).parent) for p in PLACES} - {"."}
"""Folders holding places that are not places themselves (``.local``, ``.local/share``)."""
ORDINARY = ("proj/notes.txt", "notes.txt")
"""Files of the workspace that are no place of the floor: written as ever."""


def test_the_places_cover_the_brief() -> None:
    # The generator reads the table itself: these are a sample, not the list.
    for named in (".bashrc", ".profile", ".config", ".config/tether", ".local/bin", "bin"):
        assert named in PLACES
    for named in (".config/systemd", ".config/autostart", ".ssh", ".netrc", ".newdot"):
        assert named in PLACES


def is_ancestor(path: str) -> bool:
    return any(other.startswith(path + "/") for other in PLACES)


def build(home: Path, layout: str) -> list[tuple[str, str]]:
    """Lay out ``home`` and say what to try: (operation, home-relative place).

    ``files``: every place there, a file (a folder holding ``inner`` when it holds other
    places); ``folders``: every place there, a folder holding ``inner``; ``new``: no place
    there, the folders on the way to them (and an empty ``~/.config``) there; ``bare``:
    nothing but the workspace's own files.
    """
    (home / "proj").mkdir(parents=True)
    for name in ORDINARY:
        (home / name).write_text("ordinary\n")
    tries: list[tuple[str, str]] = []
    if layout in ("files", "folders"):
        for place in sorted(PLACES):
            path = home / place
            if layout == "files" and not is_ancestor(place):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"original {place}\n")
                ops = ["write", "append", "remove", "rename", "move-in", "link-in", "hard-link"]
            else:
                path.mkdir(parents=True, exist_ok=True)
                (path / "inner").write_text(f"original {place}/inner\n")
                ops = ["write-inner", "create-inside", "remove-inner", "rename", "link-in"]
            tries += [(op, place) for op in ops]
        return tries
    if layout == "new":
        for folder in FOLDERS_ON_THE_WAY - set(PLACES):
            (home / folder).mkdir(parents=True, exist_ok=True)
        (home / ".config").mkdir()
    for place in PLACES:
        if not (home / place).exists():
            tries += [(op, place) for op in ("write", "create-inside", "move-in", "link-in")]
    return tries


TRY = r"""
import errno, json, os, sys
home, tries = sys.argv[1], json.loads(sys.argv[2])
proj = os.path.join(home, "proj")
out = []
for n, (op, place) in enumerate(tries):
    path = os.path.join(home, place)
    try:
        if op == "write":
            open(path, "w").write("evil\n")
        elif op == "append":
            open(path, "a").write("evil\n")
        elif op == "remove":
            os.unlink(path)
        elif op == "rename":
            os.rename(path, path + ".moved")
        elif op == "move-in":
            stage = os.path.join(proj, f".stage-{n}")
            open(stage, "w").write("evil\n")
            os.rename(stage, path)
        elif op == "link-in":
            link = os.path.join(proj, f"link-{n}")
            os.symlink(path, link)
            open(link, "a").write("evil\n")
        elif op == "hard-link":
            link = os.path.join(proj, f"hard-{n}")
            os.link(path, link)
            open(link, "a").write("evil\n")
        elif op == "write-inner":
            open(os.path.join(path, "inner"), "w").write("evil\n")
        elif op == "create-inside":
            os.makedirs(path, exist_ok=True)
            open(os.path.join(path, "ls"), "w").write("#!/bin/sh\necho evil\n")
        elif op == "remove-inner":
            os.unlink(os.path.join(path, "inner"))
        out.append("written")
    except OSError as exc:
        out.append(errno.errorcode.get(exc.errno, str(exc.errno)))
for name in sys.argv[3:]:
    try:
        open(os.path.join(home, name), "a").write("more\n")
        out.append("written")
    except OSError as exc:
        out.append(errno.errorcode.get(exc.errno, str(exc.errno)))
try:
    os.makedirs(os.path.join(proj, "sub"), exist_ok=True)
    open(os.path.join(proj, "sub", "new.txt"), "w").write("new\n")
    out.append("written")
except OSError as exc:
    out.append(errno.errorcode.get(exc.errno, str(exc.errno)))
print(json.dumps(out))
"""


def snapshot(home: Path) -> dict[str, str]:
    """Everything under ``home`` but the workspace's ordinary files: kind and content."""
    seen: dict[str, str] = {}
    for folder, dirs, files in os.walk(home):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            relative = path.relative_to(home).as_posix()
            if relative == "proj" or relative.startswith("proj/") or relative in ORDINARY:
                continue
            if path.is_symlink():
                seen[relative] = f"link {os.readlink(path)}"
            elif path.is_dir():
                seen[relative] = "folder"
            else:
                seen[relative] = f"file {path.read_text()}"
    return seen


@pytest.fixture
def home() -> Iterator[Path]:
    """A home folder outside ``/tmp`` (private in the sandbox)."""
    with tempfile.TemporaryDirectory(dir=OUTSIDE, prefix="tether-floor-home-") as made:
        yield Path(made) / "home"


def broad_sandbox(backend: Backend, home: Path) -> Sandbox:
    """The sandbox of a workspace that is the home folder itself, Tether's config folder
    inside it (as ``allowBroadWorkspace = true`` in the user's config lets it be)."""
    return sandbox_in(backend, [home], home, home.parent / "state")


def run(sandbox: Sandbox, command: str, cwd: Path) -> tuple[int | None, str]:
    """``command`` run in ``sandbox`` from ``cwd``, with ``$HOME`` the sandbox's (``~``)."""
    env = command_environment({**os.environ, "HOME": sandbox.environ["HOME"]})

    async def go() -> tuple[int | None, str]:
        out = await run_command(command, cwd, 60.0, env=env, sandbox=sandbox)
        return out.exit_code, out.output

    return anyio.run(go)


@pytest.mark.parametrize("layout", ["files", "folders", "new", "bare"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_no_place_of_the_floor_is_written_from_the_sandbox_and_ordinary_files_are(
    backend: Backend, home: Path, layout: str
) -> None:
    tries = build(home, layout)
    before = snapshot(home)
    sandbox = broad_sandbox(backend, home)
    command = f"python3 -c {shlex_quote(TRY)} {home} {shlex_quote(json.dumps(tries))}"
    code, output = run(sandbox, f"{command} {' '.join(ORDINARY)}", home / "proj")
    assert code == 0, output
    results = json.loads(output.splitlines()[-1])
    written = [t for t, r in zip(tries, results, strict=False) if r == "written"]
    assert written == []
    assert snapshot(home) == before
    # The workspace's ordinary files: an existing one at the top of the home folder and
    # in a folder of it, a new one in a new folder.
    assert results[len(tries) :] == ["written"] * (len(ORDINARY) + 1), results
    for name in ORDINARY:
        assert (home / name).read_text() == "ordinary\nmore\n"
    assert (home / "proj" / "sub" / "new.txt").read_text() == "new\n"


STOPPED = [
    "echo evil >> ~/.bashrc",
    "echo evil > ~/.zshrc",
    "mkdir -p ~/.local/bin && printf '#!/bin/sh\\necho evil\\n' > ~/.local/bin/ls",
    "echo evil > ~/bin/ls",
    "echo 'autoApprove = [\"bash\"]' >> ~/.config/tether/config.toml",
    "mkdir -p ~/.config/systemd/user && echo '[Service]' > ~/.config/systemd/user/evil.service",
    "rm -f ~/.profile",
    "mv ~/.profile ~/proj/profile",
    "echo evil > ~/.newdotfile",
]


@pytest.mark.parametrize("command", STOPPED)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_command_writing_a_place_of_the_floor_is_stopped_by_the_walls(
    backend: Backend, home: Path, command: str
) -> None:
    """Stopped as the walls stop a command, so it is asked again outside, saying why."""
    (home / "proj").mkdir(parents=True)
    (home / "bin").mkdir()
    (home / ".local").mkdir()
    (home / ".config" / "tether").mkdir(parents=True)
    (home / ".config" / "tether" / "config.toml").write_text("allowBroadWorkspace = true\n")
    for name in (".bashrc", ".profile"):
        (home / name).write_text(f"original {name}\n")
    before = snapshot(home)
    code, output = run(broad_sandbox(backend, home), command, home / "proj")
    assert code != 0, output
    assert blocked_reason(backend, code, output) is not None, output
    assert snapshot(home) == before


def floor_walls(roots: list[Path], home: Path) -> Walls:
    return walls_for(roots, {"HOME": str(home)}, home / ".config" / "tether", home / "state")


def test_the_walls_keep_what_is_there_and_close_where_a_place_could_be_made(home: Path) -> None:
    (home / "proj").mkdir(parents=True)
    (home / ".config" / "nvim").mkdir(parents=True)
    (home / ".local").mkdir()
    (home / "dotfiles").mkdir()
    (home / "dotfiles" / "bashrc").write_text("# mine\n")
    (home / ".bashrc").symlink_to(home / "dotfiles" / "bashrc")
    (home / ".zshrc").symlink_to(home / "dotfiles" / "zshrc")  # not there yet
    whole = floor_walls([home], home)
    # There: read-only (every dot name at the top of the home folder; a link's target,
    # which is what a write changes).
    assert {home / ".config", home / ".local", home / "dotfiles" / "bashrc"} <= set(whole.kept)
    # Not there: nothing made where it would be (the top of the home folder holds every
    # dot name; the link's target folder would get zshrc).
    assert {home, home / "dotfiles"} <= set(whole.closed)
    assert home / "proj" not in [*whole.kept, *whole.closed]
    # A project inside the home folder is no place: its walls are as before.
    project = floor_walls([home / "proj"], home)
    assert (project.kept, project.closed) == ((), ())
    # A workspace inside a place is read-only whole.
    inside = floor_walls([home / ".config" / "nvim"], home)
    assert inside.kept == (home / ".config" / "nvim",)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_workspace_of_the_root_keeps_the_systems_and_every_homes_places(
    backend: Backend, home: Path
) -> None:
    """``/`` as the workspace: no new file in ``/etc`` or at the top of the account's home
    folder, no write to the fake home's start-up file, no other process's environment;
    ``/tmp`` is still the sandbox's own; a project file is written."""
    (home / "proj").mkdir(parents=True)
    (home / ".bashrc").write_text("# mine\n")
    name = f"tether-floor-probe-{uuid.uuid4().hex}"
    account = Path(pwd.getpwuid(os.getuid()).pw_dir)
    probes = [Path("/etc") / name, account / f".{name}", Path("/tmp") / name]
    secret = f"sk-{uuid.uuid4().hex}"
    sandbox = sandbox_in(backend, [Path("/")], home, home.parent / "state")
    template = "; ".join(
        [
            *(f"echo evil > {p}" for p in probes),
            f"echo evil >> {home / '.bashrc'}",
            "cat /proc/{keeper}/environ",
            f"echo ok > {home / 'proj' / 'notes.txt'}",
        ]
    )
    env = command_environment({**os.environ, "HOME": str(home)})
    with subprocess.Popen(["sleep", "60"], env={**os.environ, "OPENAI_API_KEY": secret}) as keeper:
        command = template.format(keeper=keeper.pid)

        async def go() -> str:
            out = await run_command(command, home, 60.0, env=env, sandbox=sandbox)
            return out.output

        try:
            output = anyio.run(go)
        finally:
            keeper.kill()
            made = [p for p in probes if p.exists()]
            for probe in made:
                probe.unlink()
    assert made == [], output
    assert "environ: Permission denied" in output or "environ: No such file" in output, output
    assert secret not in output
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert (home / "proj" / "notes.txt").read_text() == "ok\n"
