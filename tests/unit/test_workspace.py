"""Workspace: path confinement, buffer-first reads, .gitignore-aware walks, URIs, globs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import hypothesis
import pytest
from hypothesis import strategies as st

from tests.files import write
from tether.errors import ToolError
from tether.host import Buffer, MemoryBuffers, NoBuffers
from tether.tools.search import PathGlob
from tether.workspace.folders import (
    TextSnapshot,
    Workspace,
    decode_text,
    line_count,
    line_slice,
    path_from_uri,
    split_lines,
    uri_for,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return (tmp_path / "ws").resolve()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    out = tmp_path / "outside"
    write(out, "secret.txt", "top secret\n")
    return out.resolve()


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace([root], NoBuffers())


def rel_walk(ws: Workspace, base: Path | None = None) -> list[str]:
    return [ws.display(p) for p in ws.walk_files(base or ws.root)]


# -- resolve: confinement ------------------------------------------------------------------


@pytest.mark.parametrize("given", [None, "", "."])
def test_resolve_defaults_to_root(ws: Workspace, given: str | None) -> None:
    assert ws.resolve(given) == ws.root


def test_resolve_relative_and_absolute_inside(ws: Workspace, root: Path) -> None:
    write(root, "src/a.py")
    assert ws.resolve("src/a.py") == root / "src" / "a.py"
    assert ws.resolve(str(root / "src" / "a.py")) == root / "src" / "a.py"
    assert ws.resolve("src/new_file.py") == root / "src" / "new_file.py"  # need not exist
    assert ws.resolve("./src//a.py") == root / "src" / "a.py"


def test_resolve_refuses_dotdot_with_clear_message(ws: Workspace, root: Path) -> None:
    with pytest.raises(ToolError) as err:
        ws.resolve("../etc/passwd")
    assert str(err.value) == (
        f"path '../etc/passwd' is outside the workspace ({root}); use a path inside it"
    )


@pytest.mark.parametrize(
    "given", ["..", "../../etc/passwd", "src/../../x", "/etc/passwd", "/", "../ws2/a.py"]
)
def test_resolve_refuses_paths_outside(ws: Workspace, given: str) -> None:
    with pytest.raises(ToolError, match="is outside the workspace"):
        ws.resolve(given)


def test_resolve_refuses_absolute_sibling_with_common_prefix(ws: Workspace, root: Path) -> None:
    sibling = root.parent / (root.name + "-other")  # /tmp/ws-other is not inside /tmp/ws
    write(sibling, "a.py")
    with pytest.raises(ToolError, match="outside the workspace"):
        ws.resolve(str(sibling / "a.py"))


def test_resolve_refuses_symlink_to_file_outside(ws: Workspace, root: Path, outside: Path) -> None:
    (root / "link.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="'link.txt' is outside the workspace"):
        ws.resolve("link.txt")


def test_resolve_refuses_through_symlinked_dir_outside(
    ws: Workspace, root: Path, outside: Path
) -> None:
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    for given in ("linkdir", "linkdir/secret.txt", "linkdir/not-yet.txt"):
        with pytest.raises(ToolError, match="outside the workspace"):
            ws.resolve(given)


def test_resolve_allows_out_and_back_in(ws: Workspace, root: Path) -> None:
    write(root, "src/a.py")
    assert ws.resolve(f"../{root.name}/src/a.py") == root / "src" / "a.py"
    assert ws.resolve("src/../src/a.py") == root / "src" / "a.py"


def test_resolve_follows_symlinks_inside(ws: Workspace, root: Path) -> None:
    write(root, "src/a.py")
    (root / "alias.py").symlink_to(root / "src" / "a.py")
    assert ws.resolve("alias.py") == root / "src" / "a.py"


def test_resolve_refuses_nul(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="NUL"):
        ws.resolve("a\0b")


def test_resolve_symlink_loop_is_a_tool_error_or_inside(ws: Workspace, root: Path) -> None:
    (root / "loop").symlink_to(root / "loop")
    try:
        resolved = ws.resolve("loop")
    except ToolError:
        return
    assert resolved.is_relative_to(root)


def test_multiple_roots(tmp_path: Path) -> None:
    first, second = write(tmp_path, "one/a.py").parent, write(tmp_path, "two/b.py").parent
    ws = Workspace([first, second], NoBuffers())
    assert ws.roots == (first.resolve(), second.resolve())
    assert ws.root == first.resolve()
    assert ws.resolve("b.py") == first.resolve() / "b.py"  # relative: first root
    assert ws.resolve(str(second / "b.py")) == second.resolve() / "b.py"
    assert ws.display(first.resolve() / "a.py") == "a.py"
    assert ws.display(second.resolve() / "b.py") == (second.resolve() / "b.py").as_posix()
    with pytest.raises(ToolError, match=f"outside the workspace \\({first}, {second}\\)"):
        ws.resolve(str(tmp_path / "three"))


def test_roots_are_resolved(tmp_path: Path) -> None:
    real = write(tmp_path, "real/a.py").parent
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    ws = Workspace([tmp_path / "alias"], NoBuffers())
    assert ws.root == real.resolve()
    assert ws.resolve("a.py") == real.resolve() / "a.py"


def test_display(ws: Workspace, root: Path) -> None:
    assert ws.display(root / "src" / "a.py") == "src/a.py"
    assert ws.display(root) == "."
    assert ws.display(Path("/elsewhere/x.py")) == "/elsewhere/x.py"


# -- read_text ----------------------------------------------------------------------------


async def test_read_text_prefers_the_open_buffer(root: Path) -> None:
    path = write(root, "src/a.py", "on disk\n")
    buffers = MemoryBuffers([Buffer(path, path.as_uri(), "unsaved edit\n", 7)])
    ws = Workspace([root], buffers)
    assert await ws.read_text(path) == TextSnapshot(path, "unsaved edit\n", 7, from_buffer=True)


async def test_read_text_from_disk(ws: Workspace, root: Path) -> None:
    path = write(root, "a.txt", "héllo\r\nworld")
    assert await ws.read_text(path) == TextSnapshot(path, "héllo\r\nworld", None, False)


async def test_read_text_buffer_of_unsaved_new_file(root: Path) -> None:
    path = root / "new.py"
    ws = Workspace([root], MemoryBuffers([Buffer(path, path.as_uri(), "fresh", 1)]))
    assert (await ws.read_text(path)).text == "fresh"


async def test_read_text_drops_utf8_bom(ws: Workspace, root: Path) -> None:
    path = write(root, "bom.txt", "\ufeffhello\n".encode())
    assert (await ws.read_text(path)).text == "hello\n"


async def test_read_text_missing_file(ws: Workspace, root: Path) -> None:
    with pytest.raises(ToolError) as err:
        await ws.read_text(root / "src" / "x.py")
    assert str(err.value) == "file not found: src/x.py"


async def test_read_text_directory(ws: Workspace, root: Path) -> None:
    (root / "src").mkdir()
    with pytest.raises(ToolError, match="src is a directory, not a file"):
        await ws.read_text(root / "src")


@pytest.mark.parametrize(
    "data",
    [b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", b"text\n" * 3000 + b"\0late", "café".encode("latin-1")],
    ids=["nul-early", "nul-late", "not-utf8"],
)
async def test_read_text_refuses_binary(ws: Workspace, root: Path, data: bytes) -> None:
    path = write(root, "blob.bin", data)
    with pytest.raises(ToolError) as err:
        await ws.read_text(path)
    assert str(err.value) == "blob.bin is a binary file and is not shown"


async def test_read_text_refuses_fifo(ws: Workspace, root: Path) -> None:
    os.mkfifo(root / "pipe")
    with pytest.raises(ToolError, match="not a regular file"):
        await ws.read_text(root / "pipe")


def test_decode_and_split() -> None:
    assert decode_text(b"a\0b") is None
    assert decode_text(b"\xff") is None
    assert decode_text(b"\xef\xbb\xbfok") == "ok"
    assert split_lines("") == []
    assert split_lines("\n") == [""]
    assert split_lines("a\r\nb\n\nc") == ["a", "b", "", "c"]
    assert split_lines("a\fb\u2028c\n") == ["a\fb\u2028c"]  # only \n ends a line


# -- walk_files and .gitignore -------------------------------------------------------------


def test_walk_sorted_with_hidden_files_and_without_dot_git(ws: Workspace, root: Path) -> None:
    for rel in ["b.txt", "a.txt", "a/z.txt", "a/b/c.txt", ".env", ".github/ci.yml"]:
        write(root, rel)
    write(root, ".git/config")
    write(root, ".git/objects/ab/cdef")
    write(root, "sub/.git", "gitdir: ../.git/modules/sub\n")  # a submodule's .git file
    write(root, "sub/m.txt")
    assert rel_walk(ws) == [
        ".env",
        ".github/ci.yml",
        "a/b/c.txt",
        "a/z.txt",
        "a.txt",
        "b.txt",
        "sub/m.txt",
    ]


def test_gitignore_root_nested_and_negation(ws: Workspace, root: Path) -> None:
    write(root, ".gitignore", "*.log\nbuild/\n!keep.log\n/top-only.txt\n# comment\n")
    write(root, "src/.gitignore", "*.tmp\n!important.log\n/local.txt\n")
    files = [
        "app.log",
        "keep.log",
        "build/out.js",
        "top-only.txt",
        "src/top-only.txt",
        "src/a.py",
        "src/b.tmp",
        "src/important.log",
        "src/other.log",
        "src/local.txt",
        "src/deep/local.txt",
        "src/deep/c.tmp",
        "lib/build/gen.js",
        "lib/build.txt",
    ]
    for rel in files:
        write(root, rel)
    assert rel_walk(ws) == [
        ".gitignore",
        "keep.log",
        "lib/build.txt",
        "src/.gitignore",
        "src/a.py",
        "src/deep/local.txt",
        "src/important.log",
        "src/top-only.txt",
    ]
    # Walking a sub-folder still applies the rules of the folders above it.
    assert rel_walk(ws, root / "src") == [
        "src/.gitignore",
        "src/a.py",
        "src/deep/local.txt",
        "src/important.log",
        "src/top-only.txt",
    ]


def test_ignored_folder_cannot_be_reincluded(ws: Workspace, root: Path) -> None:
    write(root, ".gitignore", "build/\n!build/keep.txt\ndist\n")
    write(root, "build/keep.txt")
    write(root, "dist/x.js")
    write(root, "a.txt")
    assert rel_walk(ws) == [".gitignore", "a.txt"]
    assert ws.is_ignored(root / "build" / "keep.txt")
    assert ws.is_ignored(root / "dist")
    assert list(ws.walk_files(root / "build")) == []


def test_only_some_files_idiom(ws: Workspace, root: Path) -> None:
    write(root, ".gitignore", "*\n!*/\n!*.py\n")
    for rel in ["a.py", "a.txt", "pkg/b.py", "pkg/b.md"]:
        write(root, rel)
    assert rel_walk(ws) == ["a.py", "pkg/b.py"]


def test_nested_repository_keeps_parent_rules(ws: Workspace, root: Path) -> None:
    # ripgrep applies the outer rules inside a nested repository too; search must agree.
    write(root, ".gitignore", "*.log\n")
    write(root, "vendor/.git/HEAD", "ref: refs/heads/main\n")
    write(root, "vendor/.gitignore", "*.tmp\n")
    for rel in ["a.log", "vendor/lib.log", "vendor/x.tmp", "vendor/ok.txt"]:
        write(root, rel)
    assert rel_walk(ws) == [".gitignore", "vendor/.gitignore", "vendor/ok.txt"]
    assert ws.is_ignored(root / "vendor" / "lib.log")
    assert ws.is_ignored(root / "vendor" / "x.tmp")


def test_symlinks_are_skipped(ws: Workspace, root: Path, outside: Path) -> None:
    write(root, "src/a.py")
    (root / "alias.py").symlink_to(root / "src" / "a.py")
    (root / "out").symlink_to(outside, target_is_directory=True)
    (root / "src" / "loop").symlink_to(root, target_is_directory=True)
    (root / "secret.txt").symlink_to(outside / "secret.txt")
    assert rel_walk(ws) == ["src/a.py"]


def test_gitignore_changes_are_picked_up(ws: Workspace, root: Path) -> None:
    write(root, "a.log")
    write(root, "b.txt")
    assert rel_walk(ws) == ["a.log", "b.txt"]
    write(root, ".gitignore", "*.log\n")
    assert rel_walk(ws) == [".gitignore", "b.txt"]
    write(root, ".gitignore", "*.txt\n")
    assert rel_walk(ws) == [".gitignore", "a.log"]


def test_walk_outside_is_an_error(ws: Workspace, outside: Path) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        list(ws.walk_files(outside))


def test_is_ignored_agrees_with_walk(ws: Workspace, root: Path) -> None:
    write(root, ".gitignore", "*.log\nbuild/\n!keep.log\nnode_modules\n")
    write(root, "pkg/.gitignore", "!*.log\ngen/\n")
    every = [
        "a.log",
        "keep.log",
        "x.py",
        "build/a.py",
        "node_modules/m/index.js",
        "pkg/b.log",
        "pkg/gen/c.py",
        "pkg/src/d.py",
        "pkg/build/e.py",
        ".hidden/f",
    ]
    for rel in every:
        write(root, rel)
    write(root, ".git/HEAD")
    walked = set(ws.walk_files(root))
    checker = ws.ignore_checker()
    for dirpath, folders, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            assert ws.is_ignored(path) == (path not in walked), path
            assert checker(path) == ws.is_ignored(path), path
        for name in folders:
            path = Path(dirpath) / name
            assert checker(path) == ws.is_ignored(path), path
    assert not ws.is_ignored(root) and not checker(root)
    assert checker(root / "fresh.log") and not checker(Path("/elsewhere/a.log"))
    assert not ws.is_ignored(root / "pkg" / "new.log")  # not on disk yet: still answered
    assert ws.is_ignored(root / "fresh.log")
    assert not ws.is_ignored(Path("/elsewhere/a.log"))


# -- URIs and globs -----------------------------------------------------------------------


def test_uris(root: Path) -> None:
    path = root / "a b" / "ü.py"
    assert uri_for(path) == path.as_uri()
    assert Workspace.uri_for(path) == path.as_uri()
    assert path_from_uri(uri_for(path)) == path
    assert path_from_uri("file:///tmp/a%20b/%C3%BC.py") == Path("/tmp/a b/ü.py")
    assert path_from_uri("file://localhost/tmp/x") == Path("/tmp/x")
    assert path_from_uri("FILE:///tmp/x") == Path("/tmp/x")
    for other in ["untitled:Untitled-1", "https://example.com/a.py", "file://host/x", "a.py"]:
        assert path_from_uri(other) is None


@pytest.mark.parametrize(
    ("pattern", "rel", "expected"),
    [
        ("*.py", "src/a.py", True),
        ("*.py", "src/a.pyc", False),
        ("*.{ts,tsx}", "web/App.tsx", True),
        ("*.{ts,tsx}", "web/App.js", False),
        ("src/**/*.ts", "src/a.ts", True),
        ("src/**/*.ts", "src/x/y/a.ts", True),
        ("src/**/*.ts", "lib/src/a.ts", False),
        ("src/*.ts", "src/x/a.ts", False),
        ("**/test_*.py", "test_a.py", True),
        ("**/test_*.py", "t/u/test_a.py", True),
        ("src/**", "src/x/y", True),
        ("?.py", "a.py", True),
        ("?.py", "ab.py", False),
        ("[ab].py", "b.py", True),
        ("[!ab].py", "c.py", True),
        ("[!ab].py", "a.py", False),
        ("{a.py", "{a.py", True),  # an unclosed brace is literal
        ("a+b(c).py", "a+b(c).py", True),  # regex characters are literal
        ("./src/*.py", "src/a.py", True),
    ],
)
def test_path_glob(root: Path, pattern: str, rel: str, expected: bool) -> None:
    path = root / rel
    assert PathGlob.parse(pattern).matches(path, root, root) is expected


def test_path_glob_relative_to_base_or_root(root: Path) -> None:
    glob = PathGlob.parse("deep/*.ts")
    path = root / "src" / "deep" / "a.ts"
    assert glob.matches(path, root / "src", root)
    assert not glob.matches(path, root, root)
    assert PathGlob.parse("src/deep/*.ts").matches(path, root / "src", root)


def test_path_glob_ripgrep_prefilter() -> None:
    for pattern in ["*.{ts,tsx}", "**.py", "a?.py", "*.{,py}"]:
        assert PathGlob.parse(pattern).basename_only()
    for pattern in ["src/*.py", "[ab].py", "!*.py", "a\\*.py", "{a,b", "{a,{b,c}}", "a}b"]:
        assert not PathGlob.parse(pattern).basename_only()


# -- .gitignore syntax, checked against git itself ----------------------------------------

GITIGNORE_TREE = [
    "a.txt",
    "b.py",
    "x.pyc",
    "#hash",
    "!bang",
    "sp ace.txt",
    "trail ",
    "abc/keep",
    "abc/y",
    "build/keep.txt",
    "build/x.js",
    "doc/api/x.md",
    "doc/guide.md",
    "foo/bar/baz.txt",
    "src/a.py",
    "src/deep/c.py",
]

# rules -> the files of GITIGNORE_TREE they leave out (checked against git below, too)
GITIGNORE_CASES = {
    "abc/** can re-include": ("abc/**\n!abc/keep\n", {"abc/y"}),
    "dir/ cannot re-include": ("build/\n!build/keep.txt\n", {"build/keep.txt", "build/x.js"}),
    "dir/** can re-include": ("build/**\n!build/keep.txt\n", {"build/x.js"}),
    "**/ in the middle": ("doc/**/*.md\n", {"doc/api/x.md", "doc/guide.md"}),
    "folders only": ("foo/**/\n", {"foo/bar/baz.txt"}),
    "escapes": ("\\#hash\n\\!bang\n", {"#hash", "!bang"}),
    "trailing spaces dropped": ("sp ace.txt   \n", {"sp ace.txt"}),
    "escaped trailing space kept": ("trail\\ \n", {"trail "}),
    "class": ("*.py[co]\n", {"x.pyc"}),
    # Several stars: matched by RE2 (linear time), not Python's re.
    "stars around": ("*a*.t*\n", {"a.txt", "sp ace.txt", "foo/bar/baz.txt"}),
    "anchored stars": ("/*/*/*.md\n", {"doc/api/x.md"}),
    "posix class": ("[[:alpha:]].txt\n", {"a.txt"}),
    "crlf lines": ("*.txt\r\n!a.txt\r\n", {"sp ace.txt", "build/keep.txt", "foo/bar/baz.txt"}),
    # Lines end where git (and LSP) end them, not where str.splitlines does.
    "form feed and U+2028 end no line": ("x.pyc\u2028b.py\nb.py\f\n", set()),
    "malformed line skipped": ("[\n*.py\n", {"b.py", "src/a.py", "src/deep/c.py"}),
    "anchored": ("/*\n!/src\n", {*GITIGNORE_TREE, ".gitignore"} - {"src/a.py", "src/deep/c.py"}),
    "everything but folders and .py": (
        "*\n!*/\n!*.py\n",
        {*GITIGNORE_TREE, ".gitignore"} - {"b.py", "src/a.py", "src/deep/c.py"},
    ),
}


def _tree_with(root: Path, rules: str) -> None:
    for rel in GITIGNORE_TREE:
        write(root, rel)
    write(root, ".gitignore", rules)


@pytest.mark.parametrize("case", list(GITIGNORE_CASES))
def test_gitignore_syntax(ws: Workspace, root: Path, case: str) -> None:
    rules, ignored = GITIGNORE_CASES[case]
    _tree_with(root, rules)
    kept = [r for r in [*GITIGNORE_TREE, ".gitignore"] if r not in ignored]
    assert rel_walk(ws) == sorted(kept, key=lambda r: r.split("/"))


@pytest.mark.parametrize("case", list(GITIGNORE_CASES))
def test_gitignore_agrees_with_git(ws: Workspace, root: Path, case: str) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    _tree_with(root, GITIGNORE_CASES[case][0])
    subprocess.run([git, "init", "-q"], cwd=root, check=True)
    listed = subprocess.run(
        [
            git,
            "-c",
            "core.excludesFile=/dev/null",
            "ls-files",
            "--others",
            "--exclude-standard",
            "-z",
        ],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    by_git = sorted(os.fsdecode(f) for f in listed.split(b"\0") if f)
    assert sorted(rel_walk(ws)) == by_git


@hypothesis.given(
    st.lists(st.sampled_from(["a", "é", "\n", "\r\n", "\r", ""]), max_size=30), st.data()
)
def test_line_windows_match_split_lines(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces)
    lines = split_lines(text)
    assert line_count(text) == len(lines)
    start = data.draw(st.integers(0, len(lines) + 2))
    stop = data.draw(st.integers(0, len(lines) + 3))
    assert line_slice(text, start, stop) == lines[start:stop]
    assert line_slice(text, start, stop, len(lines)) == lines[start:stop]
