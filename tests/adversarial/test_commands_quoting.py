"""Promise: a word the rules read as literal is the very word bash runs (issue 24). Rules match
words, so a word read wrong is a rule walked around: bashlex's own value of ``""'rm'`` is
``'rm'``, and ``""'rm' -rf x`` went past a deny ``rm *`` (and ran unasked in the sandbox).

Words are generated from quoted pieces (single, double, backslashes, escapes inside double
quotes, line continuations) and compared with what real bash passes to a program.
"""

from __future__ import annotations

import subprocess

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tether.policy.match import judge
from tether.policy.shellparse import WILD, parse_command
from tether_protocol import CommandPreview, Rule

PLAIN = st.text(alphabet="abrm-_.x/=", min_size=1, max_size=4)
SINGLE_INSIDE = st.text(alphabet='ab "\\$*;|`x', max_size=4)
DOUBLE_INSIDE = st.lists(
    st.sampled_from(["a", " ", "'", '\\"', "\\\\", "\\$", "\\`", "\\a", "\\\n", ";", "*"]),
    max_size=4,
).map("".join)
PIECE = st.one_of(
    PLAIN,
    SINGLE_INSIDE.map(lambda s: f"'{s}'"),
    DOUBLE_INSIDE.map(lambda s: f'"{s}"'),
    st.sampled_from(["\\ ", "\\'", '\\"', "\\a", "\\\\", "\\;", "''", '""', "\\\n"]),
)
WORDS = st.lists(st.lists(PIECE, min_size=1, max_size=4).map("".join), min_size=1, max_size=3)


def bash_argv(words: list[str]) -> list[str]:
    """The arguments real bash gives ``printf`` for ``words``."""
    done = subprocess.run(
        ["bash", "-c", "printf '%s\\0' " + " ".join(words)],
        capture_output=True,
        timeout=10,
        check=True,
    )
    return done.stdout.decode().split("\0")[:-1]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(WORDS)
def test_a_literal_word_is_read_as_bash_reads_it(words: list[str]) -> None:
    parsed = parse_command("printf '%s\\0' " + " ".join(words))
    if parsed is None:
        return  # unreadable: asked, whatever the rules say
    # bashlex may see a substitution where bash sees none (a backtick inside single quotes):
    # that part is unreadable, so the command is asked; the printf's own words still count.
    [cmd] = [c for c in parsed.commands if c.argv[:1] == ("printf",)]
    real = bash_argv(words)
    read = cmd.argv[2:]
    if len(read) != len(real):  # a word bash splits or drops (`""` stays, a glob may go)
        assert WILD in read or "" in real, (words, read, real)
        return
    for ours, theirs in zip(read, real, strict=True):
        assert ours is WILD or ours == theirs, (words, ours, theirs)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(["r", "m", "'r'", "'m'", '"r"', '"m"', "''", '""', "\\r"]), max_size=5)
)
def test_rm_spelled_with_any_quotes_is_denied(pieces: list[str]) -> None:
    program = "".join(pieces)
    command = f"{program} -rf x"
    parsed = parse_command(command)
    if parsed is None or bash_argv([program]) != ["rm"]:
        return
    deny = Rule(tool="bash", pattern="rm *", decision="deny", scope="user")
    judged = judge("bash", CommandPreview(command=command, cwd="/w"), [deny], [])
    assert judged.outcome == "deny", command
