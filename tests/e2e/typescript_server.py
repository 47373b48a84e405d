"""typescript-language-server and typescript (npm) for the tests: installed on first use into a
cache folder outside the repository and reused, as acpx (``tests/acp/acpx.py``) and the VS
Code suite's code-server are.

The cache is ``TETHER_TS_SERVER_CACHE`` (default ``~/.cache/tether-typescript-language-server``),
one pair of versions marked done once installed; xdist workers install one at a time (a lock
file), each looking again once it holds the lock. Without npm, or when the install fails,
the test fails saying how to install it. typescript-language-server finds its ``tsserver`` in
the project's ``node_modules`` first, else in the ``typescript`` installed beside it here.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

SERVER_VERSION = "5.3.0"
"""typescript-language-server: 5.x runs on Node 20 (6.x asks for Node 22.22)."""
TYPESCRIPT_VERSION = "5.9.3"
"""typescript: 5.x still has ``tsserver`` (7.x is the native compiler, without it)."""
INSTALL_SECONDS = 300
PACKAGES = (f"typescript-language-server@{SERVER_VERSION}", f"typescript@{TYPESCRIPT_VERSION}")


def cache_folder() -> Path:
    default = Path.home() / ".cache" / "tether-typescript-language-server"
    return Path(os.environ.get("TETHER_TS_SERVER_CACHE") or default)


def installed_bin() -> Path:
    """The folder holding ``typescript-language-server``, installed with npm when it is not in
    the cache yet (to put on the ``PATH`` Tether looks its default servers up on)."""
    cache = cache_folder()
    bin_folder = cache / "node_modules" / ".bin"
    binary = bin_folder / "typescript-language-server"
    done = cache / f".done-{SERVER_VERSION}-{TYPESCRIPT_VERSION}"
    if binary.exists() and done.exists():
        return bin_folder
    npm = shutil.which("npm")
    how = f"npm install --prefix {cache} {' '.join(PACKAGES)}"
    if npm is None:
        pytest.fail(
            f"typescript-language-server is not installed and there is no npm: {how}", pytrace=False
        )
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (binary.exists() and done.exists()):
            install = [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund"]
            out = subprocess.run(
                [*install, "--loglevel=error", *PACKAGES],
                capture_output=True,
                text=True,
                timeout=INSTALL_SECONDS,
                check=False,
            )
            if out.returncode != 0 or not binary.exists():
                pytest.fail(f"{how} failed:\n{out.stderr}", pytrace=False)
            done.touch()
    return bin_folder
