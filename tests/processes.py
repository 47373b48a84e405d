"""Finding a test's own processes in ``/proc`` by a mark in their environment."""

from __future__ import annotations

from pathlib import Path


def live_daemons(mark: bytes) -> list[tuple[int, int]]:
    """``(pid, parent pid)`` of each live ``tether daemon serve`` (and each run forked from
    one, which looks the same) whose environment holds ``mark`` (``NAME=value``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            if b"daemon" not in cmdline or b"serve" not in cmdline:
                continue
            state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            if state != "Z" and mark in (entry / "environ").read_bytes().split(b"\0"):
                found.append((int(entry.name), int(parent)))
        except OSError:
            continue
    return found


def daemons_listening_in(folder: Path) -> list[int]:
    """Live ``tether daemon serve`` processes whose socket is in ``folder`` (a daemon's
    environment is its own, not its starter's: its socket says whose it is); the runs forked
    from one look the same and are left out."""
    prefix = str(folder).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            if b"daemon" not in argv or b"serve" not in argv or b"--socket" not in argv:
                continue
            socket = argv[argv.index(b"--socket") + 1]
            state, parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            if state != "Z" and socket.startswith(prefix + b"/"):
                found.append((int(entry.name), int(parent)))
        except (OSError, IndexError):
            continue
    pids = {pid for pid, _ in found}
    return [pid for pid, parent in found if parent not in pids]
