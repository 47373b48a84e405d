"""``tether ARGS`` forked by this test worker's fork server (``forkserver.py``), standing in
for the process a test starts: ``python -I -S forklaunch.py SOCKET ARGS...``.

It hands the fork server its stdin, stdout and stderr, arguments, environment, folder and
process group (or that it leads a session of its own), forwards the signals it gets to the
fork, and exits as the fork did. When it is killed, the fork server kills the fork.
Standard library only, nothing heavy imported: its start is the only interpreter start a
test pays for.
"""

import json
import os
import signal
import socket
import struct
import sys

HEADER = struct.Struct("!I")
FORWARDED = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGWINCH,
)


def read_exactly(sock: socket.socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        more = sock.recv(size - len(data))
        if not more:
            return None
        data += more
    return data


def main() -> int:
    path, args = sys.argv[1], sys.argv[2:]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)  # it listens from its start: answered once its imports are done
    except OSError as exc:
        print(f"forklaunch: no fork server at {path}: {exc.strerror}", file=sys.stderr)
        return 127
    request = json.dumps(
        {
            "args": args,
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "pgid": os.getpgrp(),
            "leader": os.getsid(0) == os.getpid(),
        }
    ).encode()
    data = HEADER.pack(len(request)) + request
    sent = socket.send_fds(sock, [data], [0, 1, 2])
    sock.sendall(data[sent:])
    answer = read_exactly(sock, HEADER.size)
    if answer is None:
        print("forklaunch: the fork server refused the request", file=sys.stderr)
        return 127
    (pid,) = HEADER.unpack(answer)
    for number in FORWARDED:
        signal.signal(number, lambda signum, _frame: os.kill(pid, signum))
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)  # the fork's pipes end with the fork
    os.dup2(null, 1)
    status = read_exactly(sock, HEADER.size)
    if status is None:
        print(f"forklaunch: the fork server lost fork {pid}", file=sys.stderr)
        return 127
    code = os.waitstatus_to_exitcode(HEADER.unpack(status)[0])
    if code < 0:  # ended by a signal: so is this process
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main())
