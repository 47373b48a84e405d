"""``tether run`` through the shared warm daemon (on by default; these tests set
``TETHER_DAEMON=1`` where the rest of the suite has it off), and the red team's
view of its socket. Real processes: the front, the daemon it starts, the runs it forks;
every daemon a test starts is stopped (and waited for) at the end."""

from __future__ import annotations

import json
import os
import pwd
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cli_terminal import Terminal
from tests.processes import daemons_listening_in
from tests.waiting import wait_until_sync
from tether.client.approver import ASKED
from tether.daemon import wire

TETHER = [sys.executable, "-m", "tether"]
IN_PROCESS_NOTE = "running in-process"


class World:
    """A user's world for one test: a short runtime folder (a socket path is at most 108
    bytes), a home, and the environment ``tether`` runs with."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.runtime = base / "rt"
        self.runtime.mkdir(mode=0o700)
        self.home = base / "home"
        self.home.mkdir()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "XDG_"))}
        self.env |= {
            "HOME": str(self.home),
            "XDG_RUNTIME_DIR": str(self.runtime),
            "TETHER_STATE_DIR": str(base / "state"),
            "TETHER_DAEMON": "1",
            "TETHER_PROVIDER": "scripted",
        }

    @property
    def folder(self) -> Path:
        return self.runtime / "tether"

    def sockets(self) -> list[Path]:
        return sorted(self.folder.glob("d-*.sock")) if self.folder.is_dir() else []

    def project(self, name: str) -> Path:
        root = self.base / name
        root.mkdir()
        return root

    def run_env(self, script: dict[str, Any], **extra: str) -> dict[str, str]:
        return self.env | {"TETHER_SCRIPT": json.dumps(script)} | extra

    def start(self, argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [*TETHER, *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def tether(
        self, argv: list[str], cwd: Path, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*TETHER, *argv],
            cwd=cwd,
            env=env or self.env,
            capture_output=True,
            text=True,
            timeout=90,
            stdin=subprocess.DEVNULL,
        )

    def status(self, path: Path | None = None) -> dict[str, Any] | None:
        """The daemon's answer to ``status`` (None: nobody listens)."""
        target = path or (self.sockets() or [None])[0]
        if target is None:
            return None
        return ask(target, {"op": "status"})

    def daemon_pids(self) -> list[int]:
        """Live daemons of this test: those listening in its runtime folder (not the run
        processes forked from them, which look the same)."""
        return daemons_listening_in(self.runtime)


def ask(path: Path, message: dict[str, Any]) -> dict[str, Any] | None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(str(path))
        wire.send(sock, message)
        return wire.receive(sock)


@pytest.fixture
def world() -> Iterator[World]:
    base = Path(tempfile.mkdtemp(prefix="td-", dir="/tmp"))
    made = World(base)
    try:
        yield made
    finally:
        for pid in made.daemon_pids():
            os.kill(pid, signal.SIGTERM)
        wait_until_sync(lambda: not made.daemon_pids(), "the test's daemons to exit", 30)
        shutil.rmtree(base, ignore_errors=True)


def bash(command: str) -> dict[str, Any]:
    return {
        "turns": [
            {"toolCalls": [{"name": "bash", "arguments": {"command": command}}]},
            {"text": "ran it"},
        ]
    }


def started(world: World) -> Path:
    out = world.tether(["daemon", "start"], world.base)
    assert out.returncode == 0, out.stderr
    [path] = world.sockets()
    return path


def served(world: World) -> int:
    """How many runs the daemon has forked (-1: none listens)."""
    found = world.status()
    return int(found["served"]) if found else -1


def test_a_run_that_finds_no_daemon_runs_in_process_and_leaves_one_for_the_next(
    world: World,
) -> None:
    root = world.project("p")
    first = world.tether(["run", "--yes", "go"], root, world.run_env(bash("true")))
    assert first.returncode == 0 and "outcome done" in first.stdout, first.stderr
    assert IN_PROCESS_NOTE not in first.stderr  # the usual way of a first run: no note
    assert len(world.daemon_pids()) == 1  # left starting as the run ended
    path = started(world)  # waits for the one starting: no second daemon
    assert len(world.daemon_pids()) == 1 and served(world) == 0
    second = world.tether(["run", "--yes", "go"], root, world.run_env(bash("true")))
    assert second.returncode == 0 and IN_PROCESS_NOTE not in second.stderr, second.stderr
    assert served(world) == 1 and world.sockets() == [path]
    status = world.tether(["daemon", "status"], root)
    assert status.returncode == 0 and "1 served" in status.stdout, status.stdout


def test_two_clients_at_once_keep_their_environment_folder_and_settings(world: World) -> None:
    started(world)
    one, two = world.project("one"), world.project("two")
    script = bash('echo "$WHO $(pwd) $TETHER_MODEL" > seen.txt') | {"delaySeconds": 1.0}
    first = world.start(
        ["run", "--yes", "go"], one, world.run_env(script, WHO="alice", TETHER_MODEL="m-one")
    )
    second = world.start(
        ["run", "--yes", "go"], two, world.run_env(script, WHO="bob", TETHER_MODEL="m-two")
    )
    # Both runs in flight in one daemon at the same time.
    wait_until_sync(lambda: (world.status() or {}).get("runs") == 2, "two runs at once", 60)
    outs = [p.communicate(timeout=90) for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], outs
    for out, err in outs:
        assert "outcome done" in out and IN_PROCESS_NOTE not in err, (out, err)
    assert (one / "seen.txt").read_text().split() == ["alice", str(one), "m-one"]
    assert (two / "seen.txt").read_text().split() == ["bob", str(two), "m-two"]
    assert len(world.daemon_pids()) == 1 and len(world.sockets()) == 1
    # A later run finds the same warm daemon.
    pid = world.status()["pid"]  # type: ignore[index]
    third = world.tether(["run", "--yes", "go"], one, world.run_env(bash("true")))
    assert third.returncode == 0, third.stderr
    assert world.status()["pid"] == pid  # type: ignore[index]


def test_an_approval_is_asked_and_answered_on_the_fronts_terminal(world: World) -> None:
    started(world)
    root = world.project("p")
    term = Terminal(["run", "go"], world.run_env(bash("touch ran.txt")), root)
    term.expect(ASKED.strip())
    term.send("a\n")
    assert term.wait(timeout=60) == 0, term.text
    assert (root / "ran.txt").exists()
    assert IN_PROCESS_NOTE not in term.text and served(world) == 1


def test_ctrl_c_at_the_front_cancels_the_run_in_the_daemon(world: World) -> None:
    started(world)
    root = world.project("p")
    term = Terminal(
        ["run", "go"], world.run_env({"turns": [{"text": "late"}], "delaySeconds": 60}), root
    )
    term.expect("▶ go")
    term.send("\x03")
    assert term.wait(timeout=30) == 130, term.text
    assert "Traceback" not in term.text
    assert served(world) == 1
    wait_until_sync(lambda: (world.status() or {}).get("runs") == 0, "the run's process gone")


PIPED = "echo 'write it' | $TETHER run -"
"""A prompt piped in at a terminal: the run's standard input is the pipe, the terminal is
only the front's controlling one (as in a shell)."""


def writes(path: str) -> dict[str, Any]:
    call = {"name": "write_file", "arguments": {"path": path, "content": "fixed\n"}}
    return {"turns": [{"toolCalls": [call]}, {"text": "wrote it"}]}


@pytest.mark.parametrize("key", ["a", "d"])
def test_a_piped_prompt_is_asked_on_the_fronts_controlling_terminal(world: World, key: str) -> None:
    started(world)
    root = world.project("p")
    term = Terminal([], world.run_env(writes("out.txt")), root, shell=PIPED)
    term.expect(ASKED.strip())  # asked, not denied for want of a terminal
    term.send(key)
    if key == "d":
        term.expect("why? (Enter skips)", fresh=True)
        term.send("\r")
    assert term.wait(timeout=60) == 0, term.text
    assert "▶ write it" in term.text and "no terminal to ask" not in term.text
    assert "approval: allow" in term.text if key == "a" else "approval: deny" in term.text
    assert (root / "out.txt").exists() == (key == "a"), term.text
    assert "outcome done" in term.text, term.text
    assert IN_PROCESS_NOTE not in term.text and served(world) == 1
    wait_until_sync(lambda: (world.status() or {}).get("runs") == 0, "the run's process gone")


def test_a_piped_prompt_with_no_terminal_anywhere_is_denied_as_in_process(world: World) -> None:
    started(world)
    root = world.project("p")
    outs = []
    for flags in ([], ["--no-daemon"]):
        out = subprocess.run(
            [*TETHER, "run", *flags, "-"],
            cwd=root,
            env=world.run_env(writes("out.txt")),
            input="write it",
            capture_output=True,
            text=True,
            timeout=90,
            start_new_session=True,  # no controlling terminal: nothing to hand the daemon
        )
        outs.append((out.returncode, out.stdout.split("outcome")[0], out.stderr))
    assert outs[0] == outs[1], outs  # the same run, asked nowhere, either way
    assert "denied (no terminal to ask; use --yes to allow)" in outs[0][1], outs
    assert not (root / "out.txt").exists() and served(world) == 1


PIPED_IN = (
    "import os, sys; r, w = os.pipe(); os.write(w, b'write it'); os.close(w); "
    "os.dup2(r, 0); os.close(r); os.execv(sys.argv[1], sys.argv[1:])"
)
"""``tether ARGV`` with its stdin a pipe carrying the prompt, exec'd in place of the shell
(a shell's pipeline would be killed by the Ctrl-C itself, hiding the run's status)."""


def test_ctrl_c_at_a_piped_prompts_approval_cancels_the_run_in_the_daemon(world: World) -> None:
    started(world)
    root = world.project("p")
    piped = f"exec {shlex.quote(sys.executable)} -c {shlex.quote(PIPED_IN)} $TETHER run -"
    term = Terminal([], world.run_env(writes("out.txt")), root, shell=piped)
    term.expect(ASKED.strip())
    term.send("\x03")  # SIGINT to the front (the terminal's foreground), passed on
    assert term.wait(timeout=30) == 130, term.text
    assert not (root / "out.txt").exists() and "Traceback" not in term.text
    assert IN_PROCESS_NOTE not in term.text and served(world) == 1
    wait_until_sync(lambda: (world.status() or {}).get("runs") == 0, "the run's process gone")


def test_a_run_handed_a_fourth_descriptor_that_is_no_terminal_or_a_fifth_is_refused(
    world: World,
) -> None:
    path = started(world)
    root = world.project("p")
    message = {
        "op": "run",
        "argv": ["run", "--yes", "go"],
        "cwd": str(root),
        "env": world.run_env(bash("touch ran.txt")),
        "streams": [["utf-8", "strict"]] * 3,
    }
    for count, why in ((4, "not a terminal"), (5, "too many file descriptors"), (2, "stdin")):
        answer = send_run(path, message, count)
        assert answer is not None and why in answer.get("error", ""), (count, answer)
    assert not (root / "ran.txt").exists()
    answer = send_run(path, message, 3, to_the_end=True)  # the usual three: it serves on
    assert answer == {"exit": 0} and (root / "ran.txt").exists(), answer
    wait_until_sync(lambda: (world.status() or {}).get("runs") == 0, "the run's process gone")


def stop_daemons(world: World) -> None:
    for pid in world.daemon_pids():
        os.kill(pid, signal.SIGTERM)
    wait_until_sync(lambda: not world.daemon_pids(), "the daemon to exit", 30)
    for path in world.sockets():
        path.unlink()


def user_config(world: World, text: str) -> None:
    """The user's own ``config.toml`` (``XDG_*`` is not set: under ``HOME``)."""
    folder = world.home / ".config" / "tether"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


def in_process(world: World, root: Path, env: dict[str, str], *flags: str) -> bool:
    """Whether ``tether run`` with ``env`` ran in-process: with no daemon, it left none
    starting; with one running (started by the user), it did not go through it."""
    out = world.tether(["run", *flags, "--yes", "go"], root, env)
    assert out.returncode == 0 and "outcome done" in out.stdout, out.stderr
    left = bool(world.daemon_pids())
    stop_daemons(world)
    started(world)
    out = world.tether(["run", *flags, "--yes", "go"], root, env)
    assert out.returncode == 0 and "outcome done" in out.stdout, out.stderr
    through = served(world) == 1
    stop_daemons(world)
    assert left == through, (left, through)
    return not through


# How a user turns the daemon on or off: (their own config file, the variable, a flag),
# and whether ``tether run`` then goes in-process. One case each, so that they run side by
# side (each starts and stops a daemon twice).
SWITCHES = [
    pytest.param(None, None, (), False, id="nothing said: through the daemon"),
    pytest.param(None, None, ("--no-daemon",), True, id="the flag"),
    *(
        pytest.param(None, word, (), True, id=f"the variable {word!r}")
        for word in ("0", "off", " No ", "FALSE")
    ),
    pytest.param("daemon = false\n", None, (), True, id="the user's file"),
    pytest.param("daemon = false\n", "1", (), False, id="the variable wins over the file"),
    pytest.param("daemon = true\n", None, (), False, id="the user's file on"),
]


@pytest.mark.parametrize(("config", "variable", "flags", "expected"), SWITCHES)
def test_on_by_default_and_off_by_the_flag_the_variable_or_the_users_file(
    world: World, config: str | None, variable: str | None, flags: tuple[str, ...], expected: bool
) -> None:
    root = world.project("p")
    env = world.run_env(bash("true"))
    del env["TETHER_DAEMON"]
    if variable is not None:
        env["TETHER_DAEMON"] = variable
    if config is not None:
        user_config(world, config)
    assert in_process(world, root, env, *flags) is expected


def test_a_users_file_that_says_neither_true_nor_false_turns_it_off_and_says_so(
    world: World,
) -> None:
    root = world.project("p")
    unset = world.run_env(bash("true"))
    del unset["TETHER_DAEMON"]
    user_config(world, 'daemon = "sometimes"\n')
    out = world.tether(["run", "--yes", "go"], root, unset)
    assert out.returncode != 0 and "daemon: expected true or false" in out.stderr, out.stderr
    assert not world.sockets() and not world.daemon_pids()


HOSTILE = (
    'daemon = true\nTETHER_DAEMON = "1"\nsocket = "/tmp/evil.sock"\n'
    'daemonSocket = "/tmp/evil.sock"\n[tether_daemon]\nenabled = true\n'
)


def test_a_hostile_repository_config_cannot_turn_the_daemon_on_or_off_or_move_it(
    world: World,
) -> None:
    root = world.project("evil")
    (root / ".tether").mkdir()
    (root / ".tether" / "config.toml").write_text(HOSTILE)
    (root / ".mcp.json").write_text('{"daemon": true, "mcpServers": {}}')
    unset = world.run_env(bash("true"))
    del unset["TETHER_DAEMON"]
    # Off by the user (variable, or their own file): the project cannot turn it on.
    assert in_process(world, root, unset | {"TETHER_DAEMON": "0"})
    user_config(world, "daemon = false\n")
    assert in_process(world, root, unset)
    # On (the default): the project cannot turn it off, nor move its socket.
    (root / ".tether" / "config.toml").write_text(HOSTILE.replace("true", "false"))
    user_config(world, "")
    assert not in_process(world, root, unset)
    out = world.tether(["run", "--yes", "go"], root, unset)  # no daemon: it leaves one
    assert out.returncode == 0, out.stderr
    started(world)
    assert [p.parent for p in world.sockets()] == [world.folder]
    assert not Path("/tmp/evil.sock").exists()


def test_a_socket_folder_others_may_open_is_refused_and_the_run_goes_in_process(
    world: World,
) -> None:
    world.folder.mkdir(mode=0o700)
    world.folder.chmod(0o750)
    root = world.project("p")
    out = world.tether(["run", "--yes", "go"], root, world.run_env(bash("true")))
    assert out.returncode == 0, out.stderr
    assert out.stderr.count(IN_PROCESS_NOTE) == 1 and "expected 700" in out.stderr
    assert not world.sockets() and not world.daemon_pids()


def raw(path: Path, data: bytes) -> bytes:
    """Send ``data`` as it is and read the answer to its end."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(15)
        sock.connect(str(path))
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


def error_of(answer: bytes) -> str:
    return str(wire.decode_body(answer[wire.HEADER.size :])["error"])


def test_malformed_huge_and_unknown_messages_are_refused_and_it_serves_on(world: World) -> None:
    path = started(world)
    pid = world.status()["pid"]  # type: ignore[index]
    huge = struct.pack(">I", wire.MAX_FRAME_BYTES + 1) + b"{" * 1000
    assert "over" in error_of(raw(path, huge))
    assert "not JSON" in error_of(raw(path, struct.pack(">I", 5) + b"{oops"))
    assert "not a JSON object" in error_of(raw(path, struct.pack(">I", 9) + b"[1, 2, 3]"))
    assert "unknown op" in error_of(raw(path, wire.encode({"op": "shell"})))
    assert "stdin, stdout and stderr" in error_of(raw(path, wire.encode({"op": "run"})))
    assert "inside a message" in error_of(raw(path, struct.pack(">I", 100) + b"{}"))
    assert "before a message" in error_of(raw(path, b"\x00\x00"))
    # Oversized but valid JSON: refused before it is read.
    big = {"op": "status", "pad": "x" * (wire.MAX_FRAME_BYTES + 10)}
    body = json.dumps(big).encode()
    assert "over" in error_of(raw(path, struct.pack(">I", len(body)) + body[:1000]))
    assert world.status() is not None and world.status()["pid"] == pid  # type: ignore[index]
    root = world.project("p")
    out = world.tether(["run", "--yes", "go"], root, world.run_env(bash("true")))
    assert out.returncode == 0 and IN_PROCESS_NOTE not in out.stderr, out.stderr


def send_run(
    path: Path, message: dict[str, Any], fds: int = 3, *, to_the_end: bool = False
) -> dict[str, Any] | None:
    """A run request with ``fds`` file descriptors (/dev/null) and ``message``'s fields: the
    first answer, or (``to_the_end``) the last, the connection held open until then (its
    end would cancel the run)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock, open(os.devnull, "r+b") as null:
        sock.settimeout(60)
        sock.connect(str(path))
        frame = wire.encode(message)
        socket.send_fds(sock, [frame[:4]], [null.fileno()] * fds)
        sock.sendall(frame[4:])
        answer = wire.receive(sock)
        while to_the_end and answer is not None and "started" in answer:
            answer = wire.receive(sock)
        return answer


def test_a_connection_cannot_name_another_runs_session_or_process(world: World) -> None:
    path = started(world)
    root = world.project("p")
    slow = world.start(
        ["run", "--yes", "go"], root, world.run_env(bash("touch ran.txt") | {"delaySeconds": 1.5})
    )
    wait_until_sync(lambda: (world.status() or {}).get("runs") == 1, "the first run in flight")
    base = {
        "op": "run",
        "argv": ["run", "x"],
        "cwd": str(root),
        "env": {},
        "streams": [["utf-8", "strict"]] * 3,
    }
    for field in ({"runId": "r-1"}, {"sessionId": "s-1"}, {"pid": slow.pid}, {"session": "x"}):
        answer = send_run(path, base | field)
        assert answer is not None and "unknown field" in answer["error"], answer
    for message in (
        {"signal": "INT"},
        {"op": "signal", "pid": slow.pid},
        {"op": "status", "runs": 1},
    ):
        answer = ask(path, message)
        assert answer is not None and "error" in answer, answer
    out, err = slow.communicate(timeout=60)
    assert slow.returncode == 0 and "outcome done" in out, (out, err)
    assert (root / "ran.txt").exists()
    # The daemon runs only `tether run`: no other command through its socket.
    answer = send_run(path, base | {"argv": ["daemon", "stop"]})
    assert answer is not None and "started" in answer  # forked, then refused in the fork
    assert world.status() is not None


def test_a_dead_daemon_is_replaced_and_an_idle_one_exits(world: World) -> None:
    path = started(world)
    [pid] = world.daemon_pids()
    os.kill(pid, signal.SIGKILL)
    wait_until_sync(lambda: not world.daemon_pids(), "the daemon killed")
    assert path.exists()  # its socket is left behind
    root = world.project("p")
    env = world.run_env(bash("true"), TETHER_DAEMON_IDLE_SECONDS="1")
    out = world.tether(["run", "--yes", "go"], root, env)
    assert out.returncode == 0 and IN_PROCESS_NOTE not in out.stderr, out.stderr
    [new] = world.daemon_pids() or [0]
    assert new not in (0, pid)
    wait_until_sync(lambda: not world.daemon_pids(), "the idle daemon to exit", 30)
    assert not world.sockets()


def test_a_new_version_replaces_the_daemon_without_breaking_a_run_in_flight(world: World) -> None:
    root = world.project("p")
    old_front = (
        "import sys, tether.daemon.wire as w; w.fingerprint = lambda: 'old0000000000000';"
        "from tether.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    env = world.run_env(bash("touch ran.txt") | {"delaySeconds": 2.0})
    start_old = subprocess.run(
        [sys.executable, "-c", old_front, "daemon", "start"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert start_old.returncode == 0, start_old.stderr
    old = subprocess.Popen(
        [sys.executable, "-c", old_front, "run", "--yes", "go"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    old_sock = world.folder / "d-old0000000000000.sock"
    wait_until_sync(
        lambda: old_sock.exists() and (world.status(old_sock) or {}).get("runs") == 1,
        "the old daemon's run in flight",
        60,
    )
    [old_pid] = world.daemon_pids()
    new_path = started(world)  # this version's daemon, listening: the old one is retired
    assert not old_sock.exists()  # no new connection reaches it
    new = world.tether(["run", "--yes", "now"], world.project("q"), world.run_env(bash("true")))
    assert new.returncode == 0 and IN_PROCESS_NOTE not in new.stderr, new.stderr
    assert world.sockets() == [new_path] and served(world) == 1
    out, err = old.communicate(timeout=60)
    assert old.returncode == 0 and "outcome done" in out, (out, err)
    assert (root / "ran.txt").exists()
    wait_until_sync(lambda: old_pid not in world.daemon_pids(), "the old daemon to exit")
    assert len(world.daemon_pids()) == 1


def other_user() -> str:
    """A throwaway user (made with useradd; the test runs as root)."""
    name = "tdx" + uuid.uuid4().hex[:8]
    subprocess.run(
        ["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        timeout=30,
        capture_output=True,
    )
    return name


def test_a_second_uid_is_refused_even_where_it_can_reach_the_socket(world: World) -> None:
    assert os.getuid() == 0, "this test makes a second user: it must run as root"
    path = started(world)
    # Open the folder and the socket to everyone (a mistake): only SO_PEERCRED is left.
    world.base.chmod(0o711)
    world.runtime.chmod(0o711)
    world.folder.chmod(0o711)
    path.chmod(0o666)
    name = other_user()
    try:
        uid = pwd.getpwnam(name).pw_uid
        probe = (
            "import os, socket, sys\n"
            f"os.setgid({pwd.getpwnam(name).pw_gid}); os.setgroups([]); os.setuid({uid})\n"
            "s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])\n"
            "try:\n"
            '    s.sendall(bytes([0, 0, 0, 15]) + b\'{"op":"status"}\')\n'
            "    print(repr(s.recv(100)), os.getuid())\n"
            "except (ConnectionResetError, BrokenPipeError):\n"
            "    print('closed', os.getuid())\n"
        )
        out = subprocess.run(
            [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=30
        )
        assert out.returncode == 0, out.stderr
        # Connected, then closed unanswered (a reset: its request was left unread).
        assert out.stdout.split() in (["b''", str(uid)], ["closed", str(uid)]), out.stdout
        log = (world.folder / "daemon.log").read_text()
        assert f"refused a connection from uid {uid}" in log
    finally:
        subprocess.run(["userdel", name], timeout=30, capture_output=True)
    assert world.status(path) is not None  # ours is still served


async def test_a_chat_goes_through_the_daemon_asked_and_interrupted_on_the_fronts_terminal(
    world: World,
) -> None:
    from tests.e2e.test_cli_chat import _at_prompt, ask, chat

    root = world.project("p")
    cold = world.run_env({"turns": [{"text": "hello"}]})
    del cold["TETHER_DAEMON"]
    # None runs: this chat is in-process, and starts one.
    async with chat(cold, root, command=TETHER) as ui:
        await ui.wait_until(lambda: _at_prompt(ui), "the prompt")
        assert len(world.daemon_pids()) == 1
        await ask(ui, "/exit")
        assert await ui.wait_for_exit() == 0, ui.text()
    assert IN_PROCESS_NOTE not in ui.text()
    started(world)
    assert served(world) == 0
    turns = [
        {"toolCalls": [{"name": "bash", "arguments": {"command": "touch ran.txt"}}]},
        {"text": "touched it"},
    ]
    env = world.run_env({"turns": turns})
    del env["TETHER_DAEMON"]  # on by default, for the chat too
    async with chat(env, root, command=TETHER) as ui:
        await ui.wait_until(lambda: _at_prompt(ui), "the prompt")
        # The chat runs in a process the daemon forked, not in the front.
        assert (world.status() or {}).get("runs") == 1
        await ask(ui, "touch it")
        await ui.wait_for(r"\[n\] deny  \[\?\] more")
        ui.type("y")  # answered on the front's terminal
        await ui.wait_for("touched it")
        assert (root / "ran.txt").exists()
        await ask(ui, "/exit")
        assert await ui.wait_for_exit() == 0, ui.text()
    assert IN_PROCESS_NOTE not in ui.text()
    slow = world.run_env({"turns": [{"text": "late"}], "delaySeconds": 30})
    del slow["TETHER_DAEMON"]
    async with chat(slow, root, command=TETHER) as ui:
        await ask(ui, "slow one")
        await ui.wait_for("── step 1")
        ui.press("ctrl-c")  # SIGINT to the front, passed on to the chat in the daemon
        await ui.wait_for(r"interrupted · 1 step")
        await ui.wait_until(lambda: _at_prompt(ui), "a next prompt")
        await ask(ui, "/exit")
        assert await ui.wait_for_exit() == 0, ui.text()
    assert IN_PROCESS_NOTE not in ui.text()
    wait_until_sync(lambda: (world.status() or {}).get("runs") == 0, "the chat's process gone")


def shadow(name: str, marks: Path) -> str:
    """A module that, imported, leaves a mark: the importing process's arguments."""
    return (
        "import os, sys\n"
        f"with open(os.path.join({str(marks)!r}, {name!r} + '-' + str(os.getpid())), 'w') as f:\n"
        "    f.write(' '.join(sys.orig_argv))\n"
    )


def daemon_environment(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


ALLOWED = {"HOME", "PATH", "LANG", "LANGUAGE", "TMPDIR", "TZ", "USER", "LOGNAME"}


def test_a_run_that_starts_the_daemon_gives_it_nothing_of_its_own(world: World) -> None:
    """The daemon is started from a fixed context (``-I``, cwd ``/``, an allow-listed
    environment), whichever run starts it: a first run's ``PYTHONPATH`` (a
    ``sitecustomize``), its ``PATH`` (an ``rg`` of its own) and its variables reach neither
    the daemon nor a later run, which sees its own environment and folder only."""
    evil, marks = world.base / "evil", world.base / "marks"
    (evil / "bin").mkdir(parents=True)
    marks.mkdir()
    for name in ("sitecustomize", "usercustomize"):  # marks, and breaks nothing
        (evil / f"{name}.py").write_text(shadow(name, marks))
    fake_rg = evil / "bin" / "rg"
    fake_rg.write_text(f'#!/bin/sh\necho "$*" > {marks}/rg-$$\nexit 2\n')
    fake_rg.chmod(0o755)
    first = world.project("first")
    starter = world.run_env(
        bash("true"),
        PYTHONPATH=str(evil),
        PATH=f"{evil / 'bin'}{os.pathsep}{os.environ['PATH']}",
        FIRST_ONLY="from-the-first-run",
    )
    out = world.tether(["run", "--yes", "go"], first, starter)  # no daemon: in-process
    assert out.returncode == 0 and "outcome done" in out.stdout, out.stderr
    started(world)  # the daemon the first run left starting
    [pid] = world.daemon_pids()
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert b"-I" in argv[: argv.index(b"tether")], argv
    environment = daemon_environment(pid)
    unexpected = {
        k for k in environment if k not in ALLOWED and not k.startswith(("LC_", "XDG_", "TETHER_"))
    }
    assert unexpected == set(), environment
    assert str(evil) not in json.dumps(environment) and "FIRST_ONLY" not in environment
    second = world.project("second")
    (second / "notes.txt").write_text("a needle\n")
    turns = [
        {"toolCalls": [{"name": "search", "arguments": {"pattern": "needle"}}]},
        {"toolCalls": [{"name": "bash", "arguments": {"command": SEEN}}]},
        {"text": "looked"},
    ]
    out = world.tether(["run", "--yes", "look"], second, world.run_env({"turns": turns}))
    assert out.returncode == 0 and "notes.txt:1: a needle" in out.stdout, out.stdout + out.stderr
    assert IN_PROCESS_NOTE not in out.stderr and served(world) == 1
    assert (second / "seen.txt").read_text().split() == ["[]", "[]", str(second)]
    # The first run's own front imported its PYTHONPATH (the user's shell gave it): nothing
    # else did — no server, no daemon, no run forked from it — and no run ran its rg.
    others = {p.name: p.read_text() for p in marks.iterdir() if "serve" in p.read_text()}
    assert others == {}, others
    assert not list(marks.glob("rg-*"))


SEEN = 'echo "[$PYTHONPATH]" "[$FIRST_ONLY]" "$(pwd)" > seen.txt'


def test_a_silent_or_trickling_client_holds_up_no_other_run(world: World) -> None:
    """Connections are read side by side, each whole request within the deadline: a client
    that sends nothing, or one byte at a time, does not keep another's run waiting, and is
    refused once its whole message is late (not a read at a time)."""
    path = started(world)
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    trickler = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    message = struct.pack(">I", 1000) + b" " * 1000
    stop = threading.Event()

    def trickle() -> None:
        for byte in message[1:]:
            if stop.wait(0.5):  # models the client's pace: a byte every half second
                return
            try:
                trickler.send(bytes([byte]))
            except OSError:  # refused and closed
                return

    silent.connect(str(path))
    trickler.connect(str(path))
    trickler.send(message[:1])
    pacer = threading.Thread(target=trickle, daemon=True)
    pacer.start()
    try:
        root = world.project("p")
        out = world.tether(["run", "--yes", "go"], root, world.run_env(bash("touch ran.txt")))
        assert out.returncode == 0 and "outcome done" in out.stdout, out.stderr
        assert IN_PROCESS_NOTE not in out.stderr and (root / "ran.txt").exists()
        for slow in (silent, trickler):
            slow.settimeout(30)
            answer = wire.receive(slow)
            assert answer is not None and "within" in answer["error"], answer
        assert world.status() is not None  # still serving
    finally:
        stop.set()
        pacer.join(timeout=10)
        silent.close()
        trickler.close()


def test_the_certificates_a_run_trusts_are_those_its_own_environment_names(
    world: World,
) -> None:
    """The TLS trust of a run's SDK comes from that run's ``SSL_CERT_FILE``, as in-process —
    not from what the daemon had loaded for the runs before it."""
    from tests.providers.fakes import FakeApi, Sse, openai_stream

    started(world)
    root = world.project("p")
    bogus = world.base / "not-a-bundle.pem"
    bogus.write_text("not a certificate\n")
    env = world.run_env({}, TETHER_PROVIDER="openai", OPENAI_API_KEY="k")
    with FakeApi() as fake:
        argv = ["run", "--yes", "--base-url", fake.url + "/v1", "--model", "m", "hi"]
        fake.queue(Sse(openai_stream("hello")))
        first = world.tether(argv, root, env)  # the daemon loads the SDK after this one
        assert first.returncode == 0 and "hello" in first.stdout, first.stderr
        fake.queue(Sse(openai_stream("hello again")))
        second = world.tether(argv, root, env | {"SSL_CERT_FILE": str(bogus)})
    assert served(world) == 2
    assert second.returncode == 1 and "no certificate" in second.stdout, second.stdout
