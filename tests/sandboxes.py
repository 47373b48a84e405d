"""The sandbox backends the tests run on: each one must be usable here, never skipped.

bubblewrap is installed with apt when missing (as root, like the editor suites install
Emacs); Landlock needs a kernel with ABI 4 or later. A backend that cannot be had fails
the test with the reason, so a machine that lost one shows it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tether.sandbox import Backend, Sandbox, availability

from .apt import apt_install

BACKENDS: list[Backend] = ["bwrap", "landlock"]


def require_backend(backend: Backend) -> None:
    """Make ``backend`` usable (installing bubblewrap if need be) or fail saying why."""
    if backend == "bwrap" and shutil.which("bwrap") is None:
        apt_install(["bubblewrap"], lambda: shutil.which("bwrap") is None)
        availability.cache_clear()
    found = availability()
    if not found.usable(backend):
        note = found.bwrap_note if backend == "bwrap" else found.landlock_note
        pytest.fail(
            f"the {backend} sandbox cannot be tested here: {note} (bubblewrap: `apt-get "
            "install bubblewrap` as root; Landlock: Linux 6.7+ with Landlock enabled)",
            pytrace=False,
        )


def sandbox_in(backend: Backend, roots: list[Path], home: Path, state: Path) -> Sandbox:
    """A sandbox for ``roots`` with ``home`` as ``$HOME`` (its config folder inside)."""
    require_backend(backend)
    found = availability()
    return Sandbox(
        backend,
        tuple(roots),
        {"HOME": str(home)},
        home / ".config" / "tether",
        state,
        bwrap=found.bwrap or "bwrap",
        landlock_abi=found.landlock_abi,
    )
