"""Debian packages a suite needs, installed with apt when missing: one installer at a time.

Under pytest-xdist several workers find Emacs or bubblewrap missing at once; two ``apt-get``
at the same time fail on dpkg's lock. Each installs under a lock file shared by every test
run on the machine and looks again once it holds it (another worker may have installed the
packages meanwhile); apt itself waits for a lock held by anything else.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

LOCK = Path(tempfile.gettempdir()) / "tether-tests-apt.lock"
WAIT_FOR_DPKG = ("-o", "DPkg::Lock::Timeout=240")


def can_install() -> bool:
    """apt is here and we are root."""
    return shutil.which("apt-get") is not None and os.geteuid() == 0


def apt_install(packages: Sequence[str], missing: Callable[[], bool]) -> None:
    """``apt-get install packages`` if ``missing()`` still says so once the lock is held;
    nothing when apt cannot be used here (the caller then fails saying what to install)."""
    if not can_install():
        return
    with open(LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not missing():
            return
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        apt = ["apt-get", *WAIT_FOR_DPKG]
        subprocess.run([*apt, "update"], env=env, capture_output=True, timeout=300)
        install = [*apt, "install", "-y", "--no-install-recommends", *packages]
        subprocess.run(install, env=env, capture_output=True, timeout=300)
