"""Where the daemon's socket lives, what it is called, and the frames on it.

Standard library only: the front (``tether run`` with the daemon on) imports this and
nothing heavier. A frame is a 4-byte big-endian length and that many bytes of a JSON object.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import struct
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import __version__
from ..config.files import daemon_choice

MAX_FRAME_BYTES = 1 << 20
"""The largest frame either side accepts (a run request carries the whole environment)."""
HEADER = struct.Struct(">I")
STREAMS = 3
"""The file descriptors a run request hands over: stdin, stdout, stderr."""
MAX_DESCRIPTORS = STREAMS + 1
"""With the streams, optionally, the front's controlling terminal, for a run whose stdin is
not a terminal (a piped prompt): the run asks its approvals there, as in-process it opens
``/dev/tty`` (``client.terminal.open_terminal``). A run request hands over 3 or 4, no other
count."""
SOCKET_PREFIX = "d-"
DEFAULT_IDLE_SECONDS = 600.0
IDLE_VARIABLE = "TETHER_DAEMON_IDLE_SECONDS"
MAX_SOCKET_PATH = 100
"""``sun_path`` holds 108 bytes; a longer path cannot be bound."""


class DaemonError(Exception):
    """The daemon cannot be used (the message says why)."""


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether ``tether run`` and ``tether chat`` go through the daemon
    (``config.files.daemon_choice``: on unless the user's environment or own config file
    turns it off)."""
    return daemon_choice(environ)[0]


def idle_seconds(environ: Mapping[str, str]) -> float:
    """How long an idle daemon waits for a connection before it exits."""
    text = environ.get(IDLE_VARIABLE, "").strip()
    if not text:
        return DEFAULT_IDLE_SECONDS
    try:
        value = float(text)
    except ValueError:
        raise DaemonError(
            f"{IDLE_VARIABLE}: expected a number of seconds, got {text[:50]!r}"
        ) from None
    if not value > 0:
        raise DaemonError(
            f"{IDLE_VARIABLE}: expected a number above 0, got {text[:50]!r}"
        ) from None
    return value


def socket_dir(environ: Mapping[str, str]) -> Path:
    """The user's private folder for the socket, made if absent: ``$XDG_RUNTIME_DIR/tether``,
    else ``<state dir>/daemon`` (``$XDG_STATE_HOME/tether`` or ``~/.local/state/tether``).
    ``DaemonError`` unless it is a real folder (no link) owned by this user that nobody else
    may open (mode 0700)."""
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime and Path(runtime).is_absolute() and Path(runtime).is_dir():
        folder = Path(runtime) / "tether"
    else:
        base = environ.get("XDG_STATE_HOME") or str(
            Path(environ.get("HOME") or Path.home()) / ".local" / "state"
        )
        folder = Path(base) / "tether" / "daemon"
    try:
        for level in [*reversed(folder.parents), folder]:  # each level made is 0700
            if not os.path.lexists(level):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(level, 0o700)
        info = os.lstat(folder)
    except OSError as exc:
        raise DaemonError(f"{folder}: cannot be made: {exc.strerror or exc}") from None
    check_private(folder, info)
    return folder


def check_private(folder: Path, info: os.stat_result) -> None:
    """``DaemonError`` unless ``info`` is of a folder of ours that only we may open."""
    if not stat.S_ISDIR(info.st_mode):
        raise DaemonError(f"{folder}: not a folder (a link or a file): not used for the socket")
    if info.st_uid != os.getuid():
        raise DaemonError(f"{folder}: owned by uid {info.st_uid}, not you: not used")
    if info.st_mode & 0o077:
        raise DaemonError(
            f"{folder}: others may open it (mode {stat.S_IMODE(info.st_mode):o}, "
            "expected 700): not used"
        )


def fingerprint() -> str:
    """This installation: the version, the interpreter and every source file's size and
    time (an upgrade or an edited checkout changes it, so a new daemon is started)."""
    digest = hashlib.sha256(f"{__version__}\0{sys.executable}".encode())
    here = Path(__file__).resolve().parents[1]
    roots = [here]
    protocol = sys.modules.get("tether_protocol")
    spec_root = here.parent / "tether_protocol"
    if protocol is not None and getattr(protocol, "__file__", None):
        spec_root = Path(protocol.__file__ or "").parent
    if spec_root.is_dir():
        roots.append(spec_root)
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    info = os.stat(os.path.join(folder, name))
                    digest.update(f"{folder}/{name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


def socket_path(folder: Path, print_: str) -> Path:
    """The socket of the daemon of this installation."""
    path = folder / f"{SOCKET_PREFIX}{print_}.sock"
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise DaemonError(f"{path}: too long for a unix socket ({MAX_SOCKET_PATH} bytes at most)")
    return path


def encode(message: Mapping[str, Any]) -> bytes:
    """A frame."""
    body = json.dumps(message, separators=(",", ":")).encode()
    if len(body) > MAX_FRAME_BYTES:
        raise DaemonError(f"a message of {len(body)} bytes is over {MAX_FRAME_BYTES}")
    return HEADER.pack(len(body)) + body


def send(sock: socket.socket, message: Mapping[str, Any]) -> None:
    """Send one frame."""
    sock.sendall(encode(message))


def receive_exactly(sock: socket.socket, size: int) -> bytes | None:
    """``size`` bytes, or None at end of input before the first; ``DaemonError`` when it
    ends inside them."""
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), 1 << 16))
        if not chunk:
            if chunks:
                raise DaemonError("the connection ended inside a message")
            return None
        chunks += chunk
    return bytes(chunks)


def decode_body(body: bytes) -> dict[str, Any]:
    """A frame's object; ``DaemonError`` when it is not a JSON object."""
    try:
        message = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        raise DaemonError("a message that is not JSON") from None
    if not isinstance(message, dict):
        raise DaemonError("a message that is not a JSON object")
    return message


def receive(sock: socket.socket) -> dict[str, Any] | None:
    """One frame's object; None at end of input; ``DaemonError`` for a bad one."""
    header = receive_exactly(sock, HEADER.size)
    if header is None:
        return None
    (size,) = HEADER.unpack(header)
    if size > MAX_FRAME_BYTES:
        raise DaemonError(f"a message of {size} bytes is over {MAX_FRAME_BYTES}")
    body = receive_exactly(sock, size)
    if body is None:
        raise DaemonError("the connection ended inside a message")
    return decode_body(body)


def provider_of(argv: list[str], environ: Mapping[str, str]) -> str:
    """The provider a ``tether run`` ``argv`` names (its flag, else ``TETHER_PROVIDER``), so
    the daemon can have its SDK imported; "" when neither says."""
    for index, word in enumerate(argv):
        if word == "--provider" and index + 1 < len(argv):
            return argv[index + 1]
        if word.startswith("--provider="):
            return word.partition("=")[2]
    return environ.get("TETHER_PROVIDER", "")
