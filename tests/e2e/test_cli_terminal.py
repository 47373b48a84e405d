"""`tether run` and `tether demo` as a terminal user meets them: a closed pipe, Ctrl-C,
Ctrl-D, bad settings. Real subprocesses (a pipe or a pseudo-terminal), bounded waits, and
a check that no `tether serve` is left behind."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import uuid
from pathlib import Path
from typing import Any

import pytest

from tether.client.approver import ASKED

from .cli import home_beside

TETHER = [sys.executable, "-m", "tether"]
BASH_CALL = {"name": "bash", "arguments": {"command": "touch ran.txt"}}


def environment(tmp_path: Path, **settings: str) -> dict[str, str]:
    """A clean environment with a marker, so the test can find its own processes later."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "XDG_"))}
    env |= home_beside(tmp_path)  # the config file under tmp_path, the home folder beside it
    env["TETHER_TEST_MARK"] = uuid.uuid4().hex
    env["TETHER_STATE_DIR"] = str(tmp_path / "state")
    env["TETHER_DAEMON"] = "0"  # in-process: no daemon outlives the test (tests/conftest.py)
    return env | settings


def scripted(tmp_path: Path, script: dict[str, Any]) -> dict[str, str]:
    return environment(tmp_path, TETHER_PROVIDER="scripted", TETHER_SCRIPT=json.dumps(script))


def processes_marked(env: dict[str, str]) -> list[int]:
    """Live processes started with this test's environment (the CLI and its server)."""
    mark = f"TETHER_TEST_MARK={env['TETHER_TEST_MARK']}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if mark in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def assert_nothing_left(env: dict[str, str]) -> None:
    """No process of this test survives (the server gets the exit's grace period)."""
    left = processes_marked(env)
    for pid in left:  # end them so one failure does not leak into other tests
        os.kill(pid, 9)
    assert left == [], "a `tether serve` outlived its client"


# --- a closed output pipe ------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["demo"],
        ["run", "go", "--yes"],
        ["run", "go", "--yes", "--json"],
    ],
)
def test_a_closed_pipe_ends_the_cli_quietly(tmp_path: Path, argv: list[str]) -> None:
    turns = [{"text": "working\n" * 5, "toolCalls": [BASH_CALL]}] * 5 + [{"text": "done"}]
    env = scripted(tmp_path, {"turns": turns, "delaySeconds": 0.2})
    proc = subprocess.Popen(
        [*TETHER, *argv],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline()  # like `| head -1`: one line, then the reader leaves
        proc.stdout.close()
        status = proc.wait(timeout=30)
        errors = proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert status == 141, errors
    assert "Traceback" not in errors and "BrokenPipe" not in errors
    assert_nothing_left(env)


# --- a pseudo-terminal ---------------------------------------------------------------------


class Terminal:
    """The CLI running on a pseudo-terminal, as when a person types at it: ``size``
    columns by rows, as a terminal window says it has (a bare pty says 0×0)."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        cwd: Path,
        size: tuple[int, int] = (100, 40),
        *,
        shell: str | None = None,
    ) -> None:
        self.env = env
        pid, fd = pty.fork()
        if pid == 0:  # the child: the pty is its controlling terminal, so ^C is SIGINT
            columns, rows = size
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
            os.chdir(cwd)
            if shell is not None:  # a pipeline: `shell` names the CLI as $TETHER
                os.execve("/bin/sh", ["sh", "-c", shell], env | {"TETHER": " ".join(TETHER)})
            os.execve(TETHER[0], [*TETHER, *argv], env)
        self.pid, self.fd = pid, fd
        self.text = ""
        self.mark = 0
        """Where the text stood when keys were last typed."""
        self.status: int | None = None

    def _read(self, timeout: float) -> bool:
        """Read what is there (waiting at most ``timeout``); False once the CLI has gone."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.fd, 4096)
        except OSError:  # EIO: the other side closed
            return False
        self.text += data.decode(errors="replace")
        return bool(data)

    def expect(self, needle: str, timeout: float = 30, *, fresh: bool = False) -> None:
        """Wait until ``needle`` was printed (``fresh``: since the last keys were typed,
        as an approval must be before its key is typed: keys typed ahead are dropped)."""
        deadline = _deadline(timeout)
        start = self.mark if fresh else 0
        while needle not in self.text[start:]:
            assert _left(deadline) > 0, f"{needle!r} not shown; the terminal shows:\n{self.text}"
            if not self._read(_left(deadline)):
                assert needle in self.text[start:], f"exited without {needle!r}:\n{self.text}"

    def send(self, keys: str) -> None:
        """Type ``keys``."""
        self.mark = len(self.text)
        os.write(self.fd, keys.encode())

    def wait(self, timeout: float = 30) -> int:
        """The exit status, reading the output meanwhile (killed if it takes too long)."""
        deadline = _deadline(timeout)
        while _left(deadline) > 0:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                while self._read(0.2):  # what is still buffered in the pty
                    pass
                os.close(self.fd)
                self.status = os.waitstatus_to_exitcode(status)
                return self.status
            self._read(min(0.2, _left(deadline)))
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        raise AssertionError(f"still running after {timeout} s:\n{self.text}")


def _deadline(timeout: float) -> float:
    import time

    return time.monotonic() + timeout


def _left(deadline: float) -> float:
    import time

    return deadline - time.monotonic()


def test_ctrl_c_at_an_approval_prompt_cancels_at_once(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [{"toolCalls": [BASH_CALL]}, {"text": "ran it"}]})
    term = Terminal(["run", "go"], env, tmp_path)
    term.expect(ASKED.strip())
    term.send("\x03")  # no Enter: the prompt must not hold the interrupt back
    status = term.wait(timeout=15)
    assert status == 130, term.text
    assert "cancelling the run" in term.text and "outcome cancelled" in term.text
    assert "Traceback" not in term.text and "ExceptionGroup" not in term.text
    assert not (tmp_path / "ran.txt").exists()
    assert_nothing_left(env)


def test_ctrl_c_while_the_model_thinks_cancels_the_run(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [{"text": "late"}], "delaySeconds": 60})
    term = Terminal(["run", "go"], env, tmp_path)
    term.expect("── step 1")
    term.send("\x03")
    status = term.wait(timeout=15)
    assert status == 130, term.text
    assert "outcome cancelled" in term.text and "Traceback" not in term.text
    assert_nothing_left(env)


def test_ctrl_c_twice_leaves_at_once(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [{"text": "late"}], "delaySeconds": 60})
    term = Terminal(["run", "go"], env, tmp_path)
    term.expect("── step 1")
    term.send("\x03")
    term.expect("Ctrl-C again to quit")
    term.send("\x03")
    assert term.wait(timeout=15) == 130, term.text
    assert "Traceback" not in term.text
    assert_nothing_left(env)


def test_ctrl_d_at_an_approval_prompt_denies(tmp_path: Path) -> None:
    env = scripted(tmp_path, {"turns": [{"toolCalls": [BASH_CALL]}, {"text": "ok"}]})
    term = Terminal(["run", "go"], env, tmp_path)
    term.expect(ASKED.strip())
    term.send("\x04")
    status = term.wait(timeout=30)
    assert status == 0, term.text
    assert "denied (ended the input)" in term.text
    assert "Traceback" not in term.text and "EOFError" not in term.text
    assert not (tmp_path / "ran.txt").exists()
    assert_nothing_left(env)


def test_denying_the_demo_fix_is_not_reported_as_fixed(tmp_path: Path) -> None:
    env = environment(tmp_path)
    term = Terminal(["demo", "--interactive", "--keep", str(tmp_path)], env, tmp_path)
    term.expect(ASKED.strip())  # run the tests: allow
    term.send("y")
    term.expect("Edit inventory/stock.py")
    term.expect(ASKED.strip(), fresh=True)
    term.send("n")
    term.expect("why? (Enter skips)")
    term.send("\r")
    term.expect("Run python3 -m unittest", fresh=True)
    term.expect(ASKED.strip(), fresh=True)
    term.send("y")
    status = term.wait(timeout=60)
    assert status == 1, term.text
    assert "the fix was denied" in term.text
    stock = tmp_path / "inventory-demo" / "inventory" / "stock.py"
    assert "count + price" in stock.read_text()
    assert_nothing_left(env)


# --- start-up errors and arguments -------------------------------------------------------


def run_cli(argv: list[str], env: dict[str, str], cwd: Path, stdin: str = "") -> Any:
    return subprocess.run(
        [*TETHER, *argv], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=60
    )


def test_a_broken_script_setting_is_one_clear_line(tmp_path: Path) -> None:
    env = environment(tmp_path, TETHER_PROVIDER="scripted", TETHER_SCRIPT='{"turns": [')
    out = run_cli(["run", "hi"], env, tmp_path)
    assert out.returncode == 2
    assert out.stderr.startswith("tether: TETHER_SCRIPT: not a valid script")
    assert len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr
    assert_nothing_left(env)


STOPS_ANSWERING = """
import sys, anyio
from pathlib import Path
from tether.client.connection import ServerError, TetherClient
from tether.client.headless import connect

dying = [sys.executable, "-c", "import os, time; os.close(1); time.sleep(60)"]
TetherClient.command = classmethod(lambda cls: dying)

async def main() -> None:
    try:
        async with connect(Path(sys.argv[1]), {}):
            pass
    except* ServerError as group:
        print("ServerError:", group.exceptions[0].message)

anyio.run(main)
"""


def test_a_server_that_stops_answering_at_start_ends_the_client(tmp_path: Path) -> None:
    """A server that closed its output but has not exited yet (slow to die under load)."""
    env = environment(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", STOPS_ANSWERING, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,  # the client used to wait for the answer to `shutdown` forever
    )
    assert out.stdout.strip() == "ServerError: the server exited", out.stderr
    assert_nothing_left(env)


def test_keeping_the_demo_twice_in_one_folder_is_a_clear_error(tmp_path: Path) -> None:
    env = environment(tmp_path)
    (tmp_path / "inventory-demo").mkdir()
    out = run_cli(["demo", "--keep", str(tmp_path)], env, tmp_path)
    assert out.returncode == 2
    assert "inventory-demo already exists" in out.stderr and "Traceback" not in out.stderr


def test_flags_set_the_provider_and_dash_reads_the_prompt(tmp_path: Path) -> None:
    env = environment(tmp_path, TETHER_SCRIPT=json.dumps({"turns": [{"text": "hello"}]}))
    out = run_cli(["run", "-", "--provider", "scripted", "--max-steps", "3"], env, tmp_path, "hi\n")
    assert out.returncode == 0, out.stderr
    assert "▶ hi" in out.stdout and "outcome done" in out.stdout
    assert "session s-" in out.stdout  # the id `tether replay` needs


def test_a_blank_prompt_is_refused(tmp_path: Path) -> None:
    env = environment(tmp_path, TETHER_PROVIDER="scripted", TETHER_SCRIPT='{"turns": []}')
    out = run_cli(["run", "   "], env, tmp_path)
    assert out.returncode == 2 and "the prompt is empty" in out.stderr


def test_run_help_lists_the_environment(tmp_path: Path) -> None:
    out = run_cli(["run", "--help"], environment(tmp_path), tmp_path)
    for name in ("TETHER_PROVIDER", "TETHER_BASE_URL", "--provider", "--max-steps"):
        assert name in out.stdout


def test_allow_always_stores_the_exact_command_the_server_offers(tmp_path: Path) -> None:
    def touch(name: str) -> dict[str, Any]:
        return {"toolCalls": [{"name": "bash", "arguments": {"command": f"touch {name}"}}]}

    script = {"turns": [touch("a.txt"), touch("a.txt"), touch("b.txt"), {"text": "done"}]}
    env = scripted(tmp_path, script)
    term = Terminal(["run", "touch them"], env, tmp_path)
    # `touch` writes: no wider rule is offered for it (issue 24), only the exact command
    term.expect("[y] allow  [A] always this exact command  [e] edit  [n] deny")
    term.send("A")
    term.expect("$ touch b.txt")  # the same command again ran unasked; another one is asked
    term.expect(ASKED.strip(), fresh=True)
    term.send("y")
    assert term.wait(timeout=60) == 0, term.text
    # the server's exact suggestion, stored as a session rule, decided the second call
    assert "approval: auto (session rule `touch a.txt`)" in term.text
    assert term.text.count("[A] always this exact command") == 2
    assert (tmp_path / "a.txt").exists() and (tmp_path / "b.txt").exists()
    assert_nothing_left(env)
