"""Globs, .gitignore rules and search patterns match in bounded time, with the same results.

``compile_glob`` hands Python's ``re`` only star-light regexes and RE2 the rest; both must
agree with what ``re`` (the reference before RE2) and ``fnmatch`` say on generated inputs.
The hostile cases end (a backtracking matcher would run for hours; the thread timeout
method ends the test run instead, since ``re`` holds the GIL and ignores signals).
"""

from __future__ import annotations

import fnmatch
import re
import threading
from pathlib import Path

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.host import NoBuffers
from tether.text.linear_regex import LinearRegex, LinearRegexError, backtracking_free
from tether.tools.search import PathGlob
from tether.tools.search_engine import LineMatcher, rg_pattern, run_stoppable
from tether.workspace.folders import Workspace, split_lines
from tether.workspace.ignore import compile_glob, parse_gitignore, wildmatch_regex

HOSTILE_GLOB = "*a" * 14 + "*!"
HOSTILE_REGEX = r"^(\w+\s?)*$"

# Glob pieces: literals (regex-special ones included), wildcards, classes, braces, escapes.
GLOB_PIECES = ["a", "b", ".", "/", "*", "**", "?", "[ab]", "[!a]", "[a-c]", "{a,b}", "\\*"]
GLOB_PIECES += ["-", "#", " ", "~", "&", "+", "(", ")", "é", "[[:space:]]", "**/", "/**"]
PATH_CHARS = "ab./-#~&+() é*\t"


@settings(max_examples=400, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(GLOB_PIECES), max_size=8),
    gitignore=st.booleans(),
    paths=st.lists(st.text(PATH_CHARS, max_size=10), min_size=1, max_size=5),
)
def test_both_glob_engines_agree_with_re(
    pieces: list[str], gitignore: bool, paths: list[str]
) -> None:
    regex = wildmatch_regex("".join(pieces), gitignore=gitignore)
    if regex is None:
        return  # malformed for git: never compiled into a rule
    reference = re.compile(regex, re.S)  # short inputs: backtracking is harmless here
    linear = LinearRegex("(?s)" + regex)
    chosen = compile_glob(regex)
    for path in paths:
        expected = reference.fullmatch(path) is not None
        assert linear.fullmatch(path) is expected, (regex, path)
        assert chosen(path) is expected, (regex, path)


@settings(max_examples=300, deadline=None)
@given(
    glob=st.lists(st.sampled_from(["a", "b", ".", "*", "?", "[ab]", "[!a]", "-"]), max_size=7),
    names=st.lists(st.text("ab.-", max_size=8), min_size=1, max_size=5),
)
def test_name_globs_agree_with_fnmatch(glob: list[str], names: list[str]) -> None:
    pattern = "".join(glob)
    matcher = PathGlob.parse(pattern)
    for name in names:  # names hold no "/": fnmatch's "*" crossing folders does not matter
        assert matcher.fullmatch(name) is fnmatch.fnmatchcase(name, pattern), (pattern, name)


@pytest.mark.parametrize(
    ("regex", "free"),
    [
        ("[^/]*\\.py", True),
        ("(?:.*/)?node_modules", True),
        ("build", True),
        ("[^/]*a[^/]*b", False),
        ("(?:a|b)", False),
        ("a\\*b\\*c[^/]*", True),  # escaped stars are literals
    ],
)
def test_backtracking_free(regex: str, free: bool) -> None:
    assert backtracking_free(regex) is free


@pytest.mark.timeout(60, method="thread")
def test_hostile_globs_and_ignore_rules_end(tmp_path: Path) -> None:
    name = "a" * 200
    assert not PathGlob.parse(HOSTILE_GLOB).matches(tmp_path / name, tmp_path, tmp_path)
    (rule,) = parse_gitignore(HOSTILE_GLOB + "\n" + "\n")
    assert not rule.matches(name, name, is_dir=False)
    assert rule.matches("a" * 30 + "!", "a" * 30 + "!", is_dir=False)  # still a real rule
    (tmp_path / ".gitignore").write_text(HOSTILE_GLOB + "\n")
    (tmp_path / name).write_text("x\n")
    (tmp_path / ("a" * 14 + "!")).write_text("ignored\n")
    ws = Workspace([tmp_path], NoBuffers())
    assert [p.name for p in ws.walk_files(tmp_path)] == [".gitignore", name]


@pytest.mark.timeout(60, method="thread")
def test_hostile_search_pattern_ends() -> None:
    matcher = LineMatcher(HOSTILE_REGEX)
    assert matcher.lines("a" * 34 + "!\nok\n" + "b " * 10_000 + "\n") == [
        (2, "ok"),
        (3, "b " * 10_000),
    ]


@pytest.mark.parametrize(
    "pattern",
    ["(?=a)", "(?!a)", "(?<=a)b", "(?<!a)b", r"(a)\1", r"a\Z", "a++", "a{1001}", "(", "[a"],
)
def test_unsupported_patterns_are_refused(pattern: str) -> None:
    with pytest.raises(LinearRegexError) as refused:
        LineMatcher(pattern)
    assert str(refused.value)  # says why


def test_surrogates_match_as_one_character() -> None:
    assert LinearRegex("a.b").search("a\udcffb")
    assert not LinearRegex("a..b").fullmatch("a\udcffb")
    assert compile_glob(wildmatch_regex("*x*y*z") or "")("\udcffxyz")


# Pattern pieces for the whole-text search: it may never hide a line's own match (matches
# across lines, empty ones, anchors, boundaries, CRLF, a missing final newline).
PATTERN_PIECES = ["a", "b", "^", "$", r"\b", r"\B", r"\s", r"\S", ".", "a*", "[^a]", "(?i)B"]
PATTERN_PIECES += [r"\A", r"\z", "(?-m)", "|", r"\w+", r"\n", "a[^b]*b", "é?", "(?s)."]


@settings(max_examples=600, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(PATTERN_PIECES), min_size=1, max_size=5),
    text=st.text("ab \n\r\t.Bé", max_size=30),
)
def test_whole_text_search_finds_every_matching_line(pieces: list[str], text: str) -> None:
    pattern = "".join(pieces)
    try:
        matcher = LineMatcher(pattern)
    except LinearRegexError:
        return
    per_line = [
        (n, line) for n, line in enumerate(split_lines(text), 1) if matcher.regex.search(line)
    ]
    assert matcher.lines(text) == per_line


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"\w+", "[0-9A-Za-z_]+"),
        (r"\bfoo\B", "(?-u:\\b)foo(?-u:\\B)"),
        (r"[\w-]\d", "[[0-9A-Za-z_]-][0-9]"),
        (r"[^\s]\S", "[^[\\t\\n\\f\\r ]][^\\t\\n\\f\\r ]"),
        (r"[]a]\\w", "[]a]\\\\w"),  # a leading ] is a member; \\ is a literal backslash
        (r"[[:alpha:]]x", "[[:alpha:]]x"),
        (r"\p{Greek}", r"\p{Greek}"),
        ("[a[b]]", None),  # a nested class to Rust, a literal [ to RE2
        ("[a&&b]", None),
        ("[a--b]", None),
    ],
)
def test_rg_pattern(pattern: str, expected: str | None) -> None:
    assert rg_pattern(pattern) == expected


async def test_cancel_leaves_a_stoppable_worker_behind() -> None:
    started = threading.Event()
    finished = threading.Event()

    def work(stop: threading.Event) -> None:
        started.set()
        stop.wait(30)  # a long walk, checking its stop flag
        finished.set()

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_stoppable, work)
            await anyio.to_thread.run_sync(started.wait, 5)
            scope.cancel()  # as agent/cancel or timeoutSeconds does
    assert scope.cancelled_caught
    # The worker was told to stop, and does, long before its 30 s.
    assert await anyio.to_thread.run_sync(finished.wait, 5)


def test_walk_stops_when_told(tmp_path: Path) -> None:
    for n in range(5):
        (tmp_path / f"f{n}").write_text("x\n")
    ws = Workspace([tmp_path], NoBuffers())
    stop = threading.Event()
    walked = []
    for path in ws.walk_files(tmp_path, stop):
        walked.append(path.name)
        stop.set()
    assert walked == ["f0"]
