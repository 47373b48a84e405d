"""The shared warm server's switch (``config.files.daemon_choice``): on unless the user's
environment or own config file turns it off, with generated spellings; and the front that
reads it stays lean (no pydantic, no protocol models, no SDK)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.config.assemble import assemble
from tether.config.files import DAEMON_OFF, DAEMON_ON, daemon_choice
from tether.config.layers import ConfigError, user_file

WORDS = st.sampled_from(sorted(DAEMON_ON | DAEMON_OFF))
CASED = st.tuples(
    WORDS, st.lists(st.booleans(), min_size=5, max_size=5), st.text(" \t", max_size=2)
)


def spelled(word: str, upper: list[bool], pad: str) -> str:
    return pad + "".join(c.upper() if u else c for c, u in zip(word, upper * 2, strict=False)) + pad


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def write_user(home: Path, text: str) -> None:
    folder = home / ".config" / "tether"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


@settings(max_examples=200, deadline=None)
@given(CASED, st.sampled_from(["", "daemon = true\n", "daemon = false\n"]))
def test_the_variable_in_any_case_or_padding_wins_over_the_users_file(
    cased: tuple[str, list[bool], str], file: str
) -> None:
    import tempfile

    home = Path(tempfile.mkdtemp())
    write_user(home, file)
    word, upper, pad = cased
    on, said = daemon_choice(env_for(home, TETHER_DAEMON=spelled(word, upper, pad)))
    assert on is (word in DAEMON_ON) and said == "TETHER_DAEMON"


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(
        st.booleans(),
        st.integers(-2, 2),
        st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=5),
        st.lists(st.booleans(), max_size=2),
    ),
    st.sampled_from(["", "x", "maybe", "2"]),
)
def test_the_users_file_says_true_or_false_else_off_and_the_assembly_names_it(
    value: object, variable: str
) -> None:
    import tempfile

    home = Path(tempfile.mkdtemp())
    write_user(home, f"daemon = {json.dumps(value)}\n")
    on, said = daemon_choice(env_for(home, TETHER_DAEMON=variable))
    path = home / ".config" / "tether" / "config.toml"
    assert (on, said) == ((value, str(path)) if isinstance(value, bool) else (False, str(path)))
    if isinstance(value, bool):
        user_file(env_for(home))  # the full assembly takes the key (and drops it)
    else:
        try:
            user_file(env_for(home))
        except ConfigError as exc:
            assert "daemon: expected true or false" in str(exc)
        else:
            raise AssertionError(f"daemon = {value!r} was accepted")


def test_no_file_or_no_key_is_on_and_a_broken_file_is_off(tmp_path: Path) -> None:
    assert daemon_choice(env_for(tmp_path)) == (True, "default")
    write_user(tmp_path, "maxSteps = 3\n")
    assert daemon_choice(env_for(tmp_path)) == (True, "default")
    write_user(tmp_path, "daemon = \n")
    assert daemon_choice(env_for(tmp_path))[0] is False


def test_keys_that_only_look_like_the_switch_are_not_it(tmp_path: Path) -> None:
    # TOML keys are exact: none of these is the user's `daemon` key (the assembly refuses
    # them as unknown keys, so the run says so).
    for text in (
        "Daemon = false\n",
        "DAEMON = false\n",
        '"daemon " = false\n',
        "tether.daemon = false\n",
    ):
        write_user(tmp_path, text)
        assert daemon_choice(env_for(tmp_path)) == (True, "default"), text
    write_user(tmp_path, '"daemon" = false\n')  # a quoted key is the same key
    assert daemon_choice(env_for(tmp_path))[0] is False
    write_user(tmp_path, "[daemon]\nenabled = true\n")  # a table is not true or false: off
    assert daemon_choice(env_for(tmp_path))[0] is False


LEAN = """
import sys
import tether.daemon.front as front
def forward(argv, environ):
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {HEAVY})
    print("heavy:", heavy)
    return 0
front.forward = forward
from tether.cli import main
sys.exit(main(["run", "go"]))
"""


def test_the_front_imports_nothing_heavy_before_it_hands_the_run_over(tmp_path: Path) -> None:
    heavy = {"pydantic", "tether_protocol", "pygls", "lsprotocol", "openai", "anthropic", "rich"}
    done = subprocess.run(
        [sys.executable, "-c", LEAN.replace("{HEAVY}", repr(heavy))],
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "heavy: []" in done.stdout, done.stdout


@pytest.mark.parametrize("key", ["daemon", "trustedProjects"])
def test_a_trusted_projects_file_that_sets_a_key_of_the_users_file_alone_is_refused(
    tmp_path: Path, key: str
) -> None:
    root = tmp_path / "p"
    (root / ".tether").mkdir(parents=True)
    (root / ".tether" / "config.toml").write_text(f"{key} = true\n")
    write_user(tmp_path, f"trustedProjects = [{str(root.resolve())!r}]\n")
    with pytest.raises(ConfigError, match=f"{key}: only your own config.toml may set it"):
        assemble(root, env_for(tmp_path))
