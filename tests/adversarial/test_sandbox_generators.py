"""Generated probes of the sandbox, on every backend (issue 24): each property states a
promise of the walls, and hypothesis looks for a probe that breaks it — environment
variables of any name and value, sockets of any family and type, processes started in
any way, writes through any path form."""

from __future__ import annotations

import json
import os
import socket
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.sandbox import Backend, Sandbox
from tether.sandbox.walls import passed
from tether.tools.shell import command_environment, run_command

from ..sandboxes import BACKENDS, sandbox_in
from .probes import OUTSIDE, kill_all_with, mark, processes_with, shlex_quote

SLOW = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

SET_BY_TETHER_OR_BASH = {"PATH", "HOME", "TMPDIR", "TMP", "TEMP", "PWD", "OLDPWD", "SHLVL", "_"}


@pytest.fixture(scope="module")
def place() -> Iterator[tuple[Path, Path]]:
    """A workspace and a home outside ``/tmp`` shared by a property's examples."""
    with tempfile.TemporaryDirectory(dir=OUTSIDE, prefix="tether-gen-") as made:
        ws, home = Path(made) / "ws", Path(made) / "home"
        ws.mkdir()
        home.mkdir()
        yield ws, home


def box(backend: Backend, place: tuple[Path, Path], env_names: tuple[str, ...] = ()) -> Sandbox:
    ws, home = place
    made = sandbox_in(backend, [ws], home, home / "state")
    return Sandbox(
        made.backend,
        made.roots,
        made.environ,
        made.config_dir,
        made.state_dir,
        made.bwrap,
        made.landlock_abi,
        env_names,
    )


def run(
    sandbox: Sandbox, command: str, env: dict[str, str] | None = None
) -> tuple[int | None, str]:
    async def go() -> tuple[int | None, str]:
        out = await run_command(command, sandbox.roots[0], 60.0, env=env, sandbox=sandbox)
        return out.exit_code, out.output

    return anyio.run(go)


names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True).filter(
    lambda n: n not in SET_BY_TETHER_OR_BASH and not n.startswith("BASH")
)
values = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=40
)
secret_like = st.sampled_from(
    ["OPENAI_KEY", "STRIPE_KEY", "GH_PAT", "AWS_ACCESS_KEY_ID", "DATABASE_URL", "SSH_AUTH_SOCK"]
)


@pytest.mark.parametrize("backend", BACKENDS)
@SLOW
@given(
    variables=st.dictionaries(st.one_of(names, secret_like), values, min_size=1, max_size=8),
    configured=st.lists(names, max_size=3),
)
def test_a_variable_reaches_a_sandboxed_command_only_when_allow_listed_or_configured(
    backend: Backend,
    place: tuple[Path, Path],
    variables: dict[str, str],
    configured: list[str],
) -> None:
    sandbox = box(backend, place, tuple(configured))
    env = {**command_environment(), **variables}
    code, output = run(sandbox, "env -0", env)
    assert code == 0, output
    seen = dict(item.split("=", 1) for item in output.split("\0") if "=" in item)
    for name, value in variables.items():
        if passed(name, configured):
            assert seen.get(name) == value, name
        else:
            assert name not in seen, name


FAMILIES = {
    "unix": socket.AF_UNIX,
    "inet": socket.AF_INET,
    "inet6": socket.AF_INET6,
    "netlink": socket.AF_NETLINK,
    "packet": 17,
    "vsock": 40,
    "alg": 38,
}
TYPES = {"stream": 1, "dgram": 2, "raw": 3, "seqpacket": 5}
FLAGS = [0, socket.SOCK_NONBLOCK, socket.SOCK_CLOEXEC]
PROBE = """
import errno, json, socket, sys
out = []
for family, kind, proto, pair in json.loads(sys.argv[1]):
    try:
        if pair:
            socket.socketpair(family, kind, proto)
        else:
            socket.socket(family, kind, proto).close()
        out.append("created")
    except OSError as exc:
        out.append(errno.errorcode.get(exc.errno, str(exc.errno)))
print(json.dumps(out))
"""


def refused_by_the_walls(backend: Backend, family: int, kind: int, proto: int, pair: bool) -> bool:
    """The oracle: which sockets the filter refuses (stated independently of it)."""
    base = kind & 0xF
    if pair:
        return base != 1  # only stream pairs: a datagram pair can sendto a path
    if family in (socket.AF_INET, socket.AF_INET6):
        return backend == "landlock" and base != 1  # Landlock cannot refuse UDP itself
    if family == socket.AF_NETLINK:
        return proto != 0  # the routing family only
    return True


@pytest.mark.parametrize("backend", BACKENDS)
@SLOW
@given(
    probes=st.lists(
        st.tuples(
            st.sampled_from(sorted(FAMILIES)),
            st.sampled_from(sorted(TYPES)),
            st.sampled_from(FLAGS),
            st.sampled_from([0, 0, 1, 15, 17]),
            st.booleans(),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_no_socket_the_walls_refuse_can_be_created(
    backend: Backend, place: tuple[Path, Path], probes: list[tuple[str, str, int, int, bool]]
) -> None:
    sandbox = box(backend, place)
    calls = [(FAMILIES[f], TYPES[t] | flag, proto, pair) for f, t, flag, proto, pair in probes]
    code, output = run(sandbox, f"python3 -c {shlex_quote(PROBE)} {shlex_quote(json.dumps(calls))}")
    assert code == 0, output
    results = json.loads(output.splitlines()[-1])
    for (family, kind, proto, pair), result in zip(calls, results, strict=True):
        if refused_by_the_walls(backend, family, kind, proto, pair):
            assert result == "EAFNOSUPPORT", (family, kind, proto, pair, result)
        elif (
            kind & 0xF == 1
            and proto == 0
            and family in (socket.AF_UNIX, socket.AF_INET)
            and (family == socket.AF_UNIX) == pair
        ):
            # What the walls allow and every kernel supports: a unix stream pair, a TCP socket.
            assert result == "created", (family, kind, proto, pair, result)


STARTS = {
    "setsid": "setsid sh -c '{body}' > /dev/null 2>&1 < /dev/null &",
    "nohup-setsid": "nohup setsid sh -c '{body}' > /dev/null 2>&1 < /dev/null &",
    "background": "sh -c '{body}' > /dev/null 2>&1 &",
    "subshell": "( sh -c '{body}' > /dev/null 2>&1 & )",
    "disowned": "sh -c '{body}' > /dev/null 2>&1 & disown",
}
TRAPS = ["", "trap '' TERM; ", "trap '' HUP; ", "trap '' TERM HUP INT; "]


@pytest.mark.parametrize("backend", [*BACKENDS, None], ids=[*BACKENDS, "none"])
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    starts=st.lists(
        st.tuples(st.sampled_from(sorted(STARTS)), st.sampled_from(TRAPS)), min_size=1, max_size=3
    )
)
def test_no_process_outlives_its_call_however_it_was_started(
    backend: Backend | None, place: tuple[Path, Path], starts: list[tuple[str, str]]
) -> None:
    marker = mark()
    ws = place[0]
    folder = ws / uuid.uuid4().hex
    folder.mkdir()
    lines = [f"cd {folder}"]
    for n, (start, trap) in enumerate(starts):
        body = f"{trap}echo $$ > started.{n}; exec sleep {marker}{n}"
        lines.append(STARTS[start].format(body=body))
    waits = " ".join(f"[ -s started.{n} ] &&" for n in range(len(starts)))
    lines.append(f"until {waits} true; do :; done; echo started")
    sandbox = None if backend is None else box(backend, place)

    async def go() -> str:
        out = await run_command("\n".join(lines), ws, 60.0, sandbox=sandbox)
        return out.output

    try:
        assert anyio.run(go).endswith("started\n")
        assert processes_with(marker) == []  # gone when the call returned, not later
    finally:
        kill_all_with(marker)


TARGETS = st.sampled_from(["outside", "home", "link", "climb", "link-folder"])


@pytest.mark.parametrize("backend", BACKENDS)
@SLOW
@given(forms=st.lists(TARGETS, min_size=1, max_size=4), name=st.uuids())
def test_no_write_lands_outside_the_workspace_whatever_the_path_form(
    backend: Backend, place: tuple[Path, Path], forms: list[str], name: uuid.UUID
) -> None:
    ws, home = place
    outside = Path(OUTSIDE) / f"tether-gen-out-{name.hex}"
    in_home = home / f"tether-gen-{name.hex}"
    depth = len(ws.parts) - 1
    spelled = {
        "outside": str(outside),
        "home": str(in_home),
        "link": f"link-{name.hex}",  # a link made in the sandbox, pointing outside
        "climb": "/".join([".."] * depth) + str(outside),
        "link-folder": f"dir-{name.hex}/{outside.name}",
    }
    command = "; ".join(
        [
            f"ln -sf {outside} link-{name.hex}",
            f"ln -sfn {OUTSIDE} dir-{name.hex}",
            *(f"echo x > {spelled[f]}" for f in forms),
            "true",
        ]
    )
    sandbox = box(backend, place)
    try:
        run(sandbox, command)
        assert not outside.exists() and not in_home.exists()
    finally:
        outside.unlink(missing_ok=True)
        in_home.unlink(missing_ok=True)
        for leftover in (ws / f"link-{name.hex}", ws / f"dir-{name.hex}"):
            if leftover.is_symlink():
                leftover.unlink()


def test_the_environment_oracle_knows_the_standard_names() -> None:
    for name in ("PATH", "HOME", "LANG", "LC_ALL", "TERM", "TZ", "USER"):
        assert passed(name)
    for name in ("OPENAI_KEY", "DATABASE_URL", "SSH_AUTH_SOCK", "XDG_RUNTIME_DIR", "DISPLAY"):
        assert not passed(name) and passed(name, [name])
    assert os.environ.get("PATH")  # the probes need one
