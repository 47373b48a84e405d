"""The front's choice when no daemon listens (``daemon.front``): none starting → ``Cold``
(the run goes in-process and leaves one starting behind it, once); one starting (its start
lock held) → wait for it and hand the run over. Real sockets and locks; no daemon process
(``spawn`` is recorded instead)."""

from __future__ import annotations

import fcntl
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tether.daemon import front, wire


@pytest.fixture
def environ() -> Iterator[dict[str, str]]:
    # A short folder of its own, not tmp_path: a socket path is at most 100 bytes here, and
    # pytest-xdist's tmp_path (.../popen-gw1/test_.../) leaves too few for the socket's name.
    base = Path(tempfile.mkdtemp(prefix="tf-", dir="/tmp"))
    runtime = base / "rt"
    runtime.mkdir(mode=0o700)
    try:
        yield {"XDG_RUNTIME_DIR": str(runtime), "HOME": str(base)}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def socket_of(environ: dict[str, str]) -> Path:
    return wire.socket_path(wire.socket_dir(environ), wire.fingerprint())


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Path, str, bool]]:
    """What ``spawn`` was asked (path, provider, whether the caller held the lock)."""
    calls: list[tuple[Path, str, bool]] = []

    def record(path: Path, environ: Any, provider: str, lock: IO[str]) -> None:
        calls.append((path, provider, front.starting(path.parent)))

    monkeypatch.setattr(front, "spawn", record)
    return calls


def held(folder: Path) -> IO[str]:
    lock = front.start_lock(folder)
    fcntl.flock(lock, fcntl.LOCK_EX)
    return lock


def test_no_daemon_and_none_starting_is_cold_and_starts_one_behind_once(
    environ: dict[str, str], spawned: list[tuple[Path, str, bool]]
) -> None:
    cold = front.forward(["run", "--provider", "openai", "go"], environ)
    assert isinstance(cold, front.Cold) and spawned == []  # nothing started before the run
    cold.start()
    assert spawned == [(socket_of(environ), "openai", True)]  # under the start lock
    # One starting already (its lock held): no second.
    with held(socket_of(environ).parent):
        cold.start()
    assert len(spawned) == 1


def test_a_listening_daemon_gets_no_second_behind_it(
    environ: dict[str, str], spawned: list[tuple[Path, str, bool]]
) -> None:
    path = socket_of(environ)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(str(path))
        listener.listen()
        front.Cold(path, environ, "").start()
    assert spawned == []


def fake_daemon(listener: socket.socket, status: int) -> None:
    """Accept one run, say it started, and end it with ``status``."""
    conn, _ = listener.accept()
    with conn:
        header = conn.recv(wire.HEADER.size, socket.MSG_WAITALL)
        (size,) = wire.HEADER.unpack(header)
        body = b""
        while len(body) < size:
            body += conn.recv(size - len(body))
        assert wire.decode_body(body)["op"] == "run"
        wire.send(conn, {"started": 1})
        wire.send(conn, {"exit": status})


def test_a_daemon_starting_is_waited_for_and_gets_the_run(
    environ: dict[str, str],
    spawned: list[tuple[Path, str, bool]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = socket_of(environ)
    polled = threading.Event()
    real_connect = front.connect

    def connect(target: Path) -> socket.socket | None:
        sock = real_connect(target)
        if sock is None:
            polled.set()  # the front has looked and found no socket yet
        return sock

    monkeypatch.setattr(front, "connect", connect)

    def daemon() -> None:  # comes up once the front has found no socket
        assert polled.wait(30)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            # As the real daemon does (``Daemon.bind``): listening before the socket is in
            # place, since a front that finds it refusing removes it as a dead daemon's.
            temporary = path.with_name(f".{path.name}.test")
            listener.bind(str(temporary))
            listener.listen()
            temporary.rename(path)
            fake_daemon(listener, 7)

    with held(path.parent):  # a daemon starting: it holds the lock until it listens
        server = threading.Thread(target=daemon)
        server.start()
        status = front.forward(["run", "x"], environ)  # relays signals: the main thread
        server.join(30)
    assert status == 7 and spawned == []


def test_a_daemon_that_dies_while_starting_sends_the_run_in_process_with_its_reason(
    environ: dict[str, str],
    spawned: list[tuple[Path, str, bool]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = socket_of(environ)
    (path.parent / "daemon.log").write_text("tether: daemon: no such provider\n")
    lock = held(path.parent)
    real_connect = front.connect
    calls: list[Path] = []

    def connect(target: Path) -> socket.socket | None:
        calls.append(target)
        if len(calls) == 2:  # the front is waiting for it: it exits without listening
            lock.close()
        return real_connect(target)

    monkeypatch.setattr(front, "connect", connect)
    assert front.forward(["run", "x"], environ) is None
    err = capsys.readouterr().err
    assert "no such provider" in err and "running in-process" in err
    assert spawned == []
