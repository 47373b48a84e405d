"""Which sandbox this machine has: bubblewrap that really starts, or Landlock ≥ ABI 4.

Detected once per process (blocking: it runs ``bwrap`` once; call it from a worker
thread). A ``bwrap`` that is installed may still fail (no user namespaces, a container
without the capability), so it is tried with a trivial command inside the very walls it
would use. Landlock is usable from ABI 4 on, the first that can refuse TCP.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from tether_protocol import SandboxBackend

from . import landlock
from .walls import Walls, bwrap_mounts

Backend = SandboxBackend
BACKENDS: tuple[Backend, ...] = ("bwrap", "landlock")
"""In the order ``auto`` prefers them: bubblewrap's walls are the stronger (no UDP or unix
sockets, its own process and IPC namespaces, a real private ``/tmp``)."""

PROBE_TIMEOUT_SECONDS = 10.0

BWRAP_NAMESPACES = ["--die-with-parent", "--unshare-net", "--unshare-pid", "--unshare-ipc"]
"""No network (only a loopback of its own), its own process and IPC namespaces, and gone
when Tether kills it."""


@dataclass(frozen=True, slots=True)
class Availability:
    """What each backend can do here."""

    bwrap: str | None
    """The path of a ``bwrap`` that works, or None."""
    bwrap_note: str
    """What was found: ``/usr/bin/bwrap``, or why not."""
    landlock_abi: int
    landlock_note: str

    def usable(self, backend: Backend) -> bool:
        """The backend can enforce every wall here."""
        if backend == "bwrap":
            return self.bwrap is not None
        return self.landlock_abi >= landlock.NETWORK_ABI


@lru_cache(maxsize=1)
def availability() -> Availability:
    """Probe both backends, once per process."""
    bwrap, bwrap_note = _probe_bwrap()
    abi = landlock.abi_version()
    if abi == 0:
        note = "not available (kernel without Landlock, or it is turned off)"
    elif abi < landlock.NETWORK_ABI:
        note = f"ABI {abi}: cannot refuse the network (needs ABI {landlock.NETWORK_ABI}, Linux 6.7)"
    else:
        note = f"ABI {abi}"
    return Availability(bwrap, bwrap_note, abi, note)


def _probe_bwrap() -> tuple[str | None, str]:
    path = shutil.which("bwrap")
    if path is None:
        return None, "not installed (Debian/Ubuntu package bubblewrap)"
    walls = Walls(writable=(), hidden=())
    try:
        probe = subprocess.run(
            [path, *BWRAP_NAMESPACES, *bwrap_mounts(walls), "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} does not start: {exc}"
    if probe.returncode != 0:
        why = probe.stderr.decode(errors="replace").strip().splitlines()
        return None, f"{path} fails here: {why[-1] if why else f'exit {probe.returncode}'}"
    return path, path


SandboxChoice = Literal["auto", "bwrap", "landlock", "off"]


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """The backend the setting picks here, or why there is none."""

    choice: SandboxChoice
    backend: Backend | None
    reason: str
    """Which backend and where, or why none is used."""


def status_for(choice: SandboxChoice, found: Availability | None = None) -> SandboxStatus:
    """What the ``sandbox`` setting gives on this machine (probing on first use)."""
    if choice == "off":
        return SandboxStatus(choice, None, "off (the sandbox setting)")
    found = availability() if found is None else found
    wanted = BACKENDS if choice == "auto" else (choice,)
    for backend in wanted:
        if found.usable(backend):
            note = found.bwrap_note if backend == "bwrap" else found.landlock_note
            return SandboxStatus(choice, backend, f"{backend} ({note})")
    notes = [f"bwrap: {found.bwrap_note}", f"Landlock: {found.landlock_note}"]
    if choice != "auto":
        notes = [n for n in notes if n.lower().startswith(choice)]
    return SandboxStatus(choice, None, "none usable — " + "; ".join(notes))


def describe_sandbox(choice: SandboxChoice, found: Availability | None = None) -> str:
    """One line for ``tether config``: what the setting uses here, and what there is."""
    found = availability() if found is None else found
    here = [
        f"bwrap {found.bwrap_note}" if found.bwrap else f"bwrap: {found.bwrap_note}",
        f"Landlock {found.landlock_note}"
        if found.usable("landlock")
        else f"Landlock: {found.landlock_note}",
    ]
    if choice == "off":
        usable = [b for b in BACKENDS if found.usable(b)]
        offer = f' (could use {" or ".join(usable)}: set sandbox = "auto")' if usable else ""
        return f"sandbox: off — commands are asked{offer}; here: {'; '.join(here)}"
    status = status_for(choice, found)
    if status.backend is None:
        return f"sandbox: {choice} → {status.reason}; commands are asked"
    return f"sandbox: {choice} → {status.reason}; here: {'; '.join(here)}"
