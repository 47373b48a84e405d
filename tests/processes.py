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
