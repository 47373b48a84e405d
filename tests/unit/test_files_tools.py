"""read_file, list_files and search: exact outputs, buffers first, rg and Python agreeing."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.files import write
from tether.errors import ToolError
from tether.host import Buffer, MemoryBuffers
from tether.tools import search as search_module
from tether.tools.base import Tool, ToolDeps
from tether.tools.files import READ_TOOLS, ListFiles, ReadFile, Search
from tether.workspace.folders import Workspace

RG = shutil.which("rg", path=str(Path(sys.executable).parent)) or shutil.which("rg")


def require_rg() -> str:
    """The rg binary; its absence is a failure, since the test extra installs it."""
    if RG is None:
        pytest.fail("ripgrep (rg) is not installed: `pip install ripgrep` (the test extra has it)")
    return RG


def buffer(path: Path, text: str, version: int = 1) -> Buffer:
    return Buffer(path=path, uri=path.as_uri(), text=text, version=version)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return (tmp_path / "ws").resolve()


def context(root: Path, buffers: Sequence[Buffer] = ()) -> ToolDeps:
    return ToolDeps(workspace=Workspace([root], MemoryBuffers(buffers)), run_id="run-1")


async def call(tool: Tool[Any], ctx: ToolDeps, **arguments: Any) -> str:
    result = await tool.run(tool.args_model.model_validate(arguments), ctx)
    assert result.ok, result
    return result.output


async def fails(tool: Tool[Any], ctx: ToolDeps, **arguments: Any) -> str:
    with pytest.raises(ToolError) as err:
        await tool.run(tool.args_model.model_validate(arguments), ctx)
    return str(err.value)


# -- the tool set --------------------------------------------------------------------------


def test_read_tools_and_schemas() -> None:
    assert [t.name for t in READ_TOOLS] == ["read_file", "list_files", "search"]
    for tool in READ_TOOLS:
        schema = tool.parameters_schema()
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert all(p.get("description") for p in schema["properties"].values()), tool.name
        assert tool.description.endswith(".")
    assert ReadFile().parameters_schema()["required"] == ["path"]
    assert Search().parameters_schema()["required"] == ["pattern"]
    assert "required" not in ListFiles().parameters_schema()


@pytest.mark.parametrize("bad", [{"path": "a", "offset": 0}, {"path": "a", "limit": 0}, {}])
def test_read_file_argument_checks(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ReadFile.args_model.model_validate(bad)


# -- read_file -----------------------------------------------------------------------------


async def test_read_file_numbers_lines(root: Path) -> None:
    write(root, "src/a.py", "import os\r\n\n    return 1\n")
    out = await call(ReadFile(), context(root), path="src/a.py")
    assert out == "     1\timport os\n     2\t\n     3\t    return 1"


async def test_read_file_prefers_unsaved_buffer(root: Path) -> None:
    path = write(root, "a.py", "on disk\n")
    out = await call(ReadFile(), context(root, [buffer(path, "unsaved\nedit")]), path="a.py")
    assert out == "     1\tunsaved\n     2\tedit"


async def test_read_file_offset_and_limit(root: Path) -> None:
    write(root, "ten.txt", "".join(f"line {n}\n" for n in range(1, 11)))
    ctx = context(root)
    assert await call(ReadFile(), ctx, path="ten.txt", offset=3, limit=2) == (
        "     3\tline 3\n     4\tline 4\n[showing lines 3-4 of 10; use offset=5 to read more]"
    )
    assert await call(ReadFile(), ctx, path="ten.txt", offset=9) == (
        "     9\tline 9\n    10\tline 10\n[showing lines 9-10 of 10]"
    )
    assert (await call(ReadFile(), ctx, path="ten.txt", limit=10)).endswith("    10\tline 10")
    message = await fails(ReadFile(), ctx, path="ten.txt", offset=11)
    assert message == "offset 11 is past the end of ten.txt, which has 10 lines"


async def test_read_file_default_limit(root: Path) -> None:
    write(root, "long.txt", "".join(f"{n}\n" for n in range(1, 2501)))
    lines = (await call(ReadFile(), context(root), path="long.txt")).split("\n")
    assert len(lines) == 2001
    assert lines[0] == "     1\t1"
    assert lines[1999] == "  2000\t2000"
    assert lines[2000] == "[showing lines 1-2000 of 2500; use offset=2001 to read more]"


async def test_read_file_cuts_long_lines(root: Path) -> None:
    write(root, "min.js", "a" * 2000 + "\n" + "b" * 2100 + "\n")
    out = await call(ReadFile(), context(root), path="min.js")
    assert out == (f"     1\t{'a' * 2000}\n     2\t{'b' * 2000}… [line truncated, 100 more chars]")


async def test_read_file_empty(root: Path) -> None:
    write(root, "empty.txt", "")
    assert await call(ReadFile(), context(root), path="empty.txt") == "[empty.txt is empty]"


async def test_read_file_failures(root: Path, tmp_path: Path) -> None:
    write(root, "img.png", b"\x89PNG\r\n\x1a\n\0\0")
    write(tmp_path, "secret.txt", "secret\n")
    (root / "dir").mkdir()
    ctx = context(root)
    assert await fails(ReadFile(), ctx, path="img.png") == (
        "img.png is a binary file and is not shown"
    )
    assert await fails(ReadFile(), ctx, path="src/x.py") == "file not found: src/x.py"
    assert await fails(ReadFile(), ctx, path="../secret.txt") == (
        f"path '../secret.txt' is outside the workspace ({root}); use a path inside it"
    )
    assert "is a directory" in await fails(ReadFile(), ctx, path="dir")


# -- list_files ----------------------------------------------------------------------------


@pytest.fixture
def project(root: Path) -> Path:
    write(root, ".gitignore", "*.log\nbuild/\n")
    for rel in [
        "README.md",
        "app.log",
        "build/out.js",
        "docs/guide.md",
        "docs/notes.txt",
        "src/a.py",
        "src/deep/b.py",
        "src/deep/c.ts",
        "src/web/App.tsx",
        ".git/HEAD",
        ".github/ci.yml",
    ]:
        write(root, rel)
    return root


async def test_list_files(project: Path) -> None:
    out = await call(ListFiles(), context(project))
    assert out.split("\n") == [
        ".github/ci.yml",
        ".gitignore",
        "README.md",
        "docs/guide.md",
        "docs/notes.txt",
        "src/a.py",
        "src/deep/b.py",
        "src/deep/c.ts",
        "src/web/App.tsx",
    ]
    assert await call(ListFiles(), context(project), path="src/deep") == (
        "src/deep/b.py\nsrc/deep/c.ts"
    )


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        (None, "*.py", ["src/a.py", "src/deep/b.py"]),
        (None, "*.{md,txt}", ["README.md", "docs/guide.md", "docs/notes.txt"]),
        (None, "src/**/*.py", ["src/a.py", "src/deep/b.py"]),
        (None, "src/*.py", ["src/a.py"]),
        ("src", "deep/*", ["src/deep/b.py", "src/deep/c.ts"]),  # relative to the folder
        ("src", "src/web/*", ["src/web/App.tsx"]),  # or to the root
        (None, "**/*.ts*", ["src/deep/c.ts", "src/web/App.tsx"]),
    ],
)
async def test_list_files_pattern(
    project: Path, path: str | None, pattern: str, expected: list[str]
) -> None:
    out = await call(ListFiles(), context(project), path=path, pattern=pattern)
    assert out.split("\n") == expected


async def test_list_files_nothing_found(project: Path, root: Path) -> None:
    ctx = context(project)
    assert await call(ListFiles(), ctx, path="src", pattern="*.rs") == (
        "No files found in src matching '*.rs'."
    )
    (root / "empty").mkdir()
    assert await call(ListFiles(), ctx, path="empty") == "No files found in empty."


async def test_list_files_failures(project: Path) -> None:
    ctx = context(project)
    assert await fails(ListFiles(), ctx, path="README.md") == (
        "README.md is a file, not a folder; use read_file to read it"
    )
    assert await fails(ListFiles(), ctx, path="nope") == "folder not found: nope"
    assert await fails(ListFiles(), ctx, path="build") == (
        "build is ignored by .gitignore, so its files are not listed"
    )
    assert "outside the workspace" in await fails(ListFiles(), ctx, path="..")


async def test_list_files_cap(root: Path) -> None:
    for n in range(1005):
        write(root, f"many/f{n:04}.txt")
    lines = (await call(ListFiles(), context(root))).split("\n")
    assert len(lines) == 1001
    assert lines[0] == "many/f0000.txt"
    assert lines[999] == "many/f0999.txt"
    assert lines[1000] == "[1000 of 1005 files shown; narrow with path or pattern]"


# -- search (every test runs with both engines) --------------------------------------------


@pytest.fixture(params=["python", "rg"])
def engine(request: pytest.FixtureRequest) -> Search:
    if request.param == "rg":
        return Search(rg_path=require_rg())
    return Search(use_rg=False)


async def test_search_output(engine: Search, project: Path) -> None:
    write(project, "src/a.py", "def main():\n    return helper()\n\ndef helper():\n    pass\n")
    write(project, "src/deep/b.py", "from a import helper\n")
    write(project, "app.log", "helper in an ignored file\n")
    out = await call(engine, context(project), pattern=r"helper\(|import helper")
    assert out.split("\n") == [
        "src/a.py:2:     return helper()",
        "src/a.py:4: def helper():",
        "src/deep/b.py:1: from a import helper",
    ]


async def test_search_buffers_as_the_user_sees_them(engine: Search, project: Path) -> None:
    disk = write(project, "src/a.py", "stale_name = 1\n")
    new = project / "src" / "new.py"  # open in the editor, never saved
    ignored = write(project, "build/gen.py", "fresh_name\n")
    other = write(project, "docs/guide.md", "fresh_name\n")
    buffers = [
        buffer(disk, "fresh_name = 1\n"),
        buffer(new, "x = 2\nprint(fresh_name)\n"),
        buffer(ignored, "fresh_name = 3\n"),
        buffer(other, "fresh_name\n"),
    ]
    ctx = context(project, buffers)
    assert await call(engine, ctx, pattern="fresh_name", glob="*.py") == (
        "src/a.py:1: fresh_name = 1\nsrc/new.py:2: print(fresh_name)"
    )
    assert await call(engine, ctx, pattern="stale_name") == (
        "No matches for 'stale_name' in the workspace."
    )
    assert (
        await call(engine, ctx, pattern="fresh_name", path="docs") == "docs/guide.md:1: fresh_name"
    )
    assert await call(engine, ctx, pattern="print", path="src/new.py") == (
        "src/new.py:2: print(fresh_name)"
    )


async def test_search_path_and_glob(engine: Search, project: Path) -> None:
    for rel in ["src/a.py", "src/deep/b.py", "src/deep/c.ts", "src/web/App.tsx", "README.md"]:
        write(project, rel, "needle\n")
    ctx = context(project)
    assert await call(engine, ctx, pattern="needle", glob="*.{ts,tsx}") == (
        "src/deep/c.ts:1: needle\nsrc/web/App.tsx:1: needle"
    )
    assert await call(engine, ctx, pattern="needle", path="src/deep") == (
        "src/deep/b.py:1: needle\nsrc/deep/c.ts:1: needle"
    )
    assert await call(engine, ctx, pattern="needle", path="src", glob="deep/*.py") == (
        "src/deep/b.py:1: needle"
    )
    assert await call(engine, ctx, pattern="needle", glob="src/**/*.py") == (
        "src/a.py:1: needle\nsrc/deep/b.py:1: needle"
    )
    assert await call(engine, ctx, pattern="needle", path="README.md") == "README.md:1: needle"
    assert await call(engine, ctx, pattern="needle", glob="*.rs") == (
        "No matches for 'needle' in the workspace (files matching '*.rs')."
    )


async def test_search_caps_and_cuts(engine: Search, root: Path) -> None:
    write(root, "a.txt", "".join(f"hit {n}\n" for n in range(1, 151)))
    write(root, "b.txt", "".join(f"hit {n}\n" for n in range(1, 101)))
    write(root, "wide.txt", "hit " + "w" * 400 + "\n")
    lines = (await call(engine, context(root), pattern="^hit")).split("\n")
    assert len(lines) == 201
    assert lines[0] == "a.txt:1: hit 1"
    assert lines[150] == "b.txt:1: hit 1"
    assert lines[199] == "b.txt:50: hit 50"
    assert lines[200] == "[200 of 251 matches shown; narrow with path or glob]"
    out = await call(engine, context(root), pattern="w+", path="wide.txt")
    assert out == f"wide.txt:1: hit {'w' * 296}… [104 more chars]"


async def test_search_failures(engine: Search, project: Path) -> None:
    ctx = context(project)
    assert await fails(engine, ctx, pattern="(unclosed") == (
        "invalid regex '(unclosed': missing ): (unclosed"
    )
    assert await fails(engine, ctx, pattern="a{1001}") == (
        "invalid regex 'a{1001}': invalid repetition size: {1001}"
    )
    assert await fails(engine, ctx, pattern="x", path="nope") == "path not found: nope"
    assert await fails(engine, ctx, pattern="x", path="build") == (
        "build is ignored by .gitignore, so it is not searched"
    )
    assert "outside the workspace" in await fails(engine, ctx, pattern="x", path="/etc")
    os.mkfifo(project / "pipe")
    assert await fails(engine, ctx, pattern="x", path="pipe") == (
        "pipe is neither a regular file nor a folder"
    )
    write(project, "blob.bin", b"needle\0")
    assert "binary" in await fails(engine, ctx, pattern="needle", path="blob.bin")


@pytest.mark.parametrize(
    ("pattern", "hint"),
    [
        ("foo_(?=baz)", "look-ahead is not supported"),
        ("foo(?!_bar)", "look-ahead is not supported"),
        ("(?<=foo)_baz", "look-behind is not supported"),
        ("(?<!x)foo", "look-behind is not supported"),
        (r"(ab)\1", "backreferences are not supported"),
        (r"foo\Z", "use \\z for the end of the line"),
        ("a++b", "possessive quantifiers are not supported"),
    ],
)
async def test_search_refuses_backtracking_syntax(
    engine: Search, root: Path, pattern: str, hint: str
) -> None:
    # Those need a backtracking engine, which a hostile pattern can stall: a clear error.
    write(root, "a.py", "foo_bar\nfoo_baz\nabab\n")
    message = await fails(engine, context(root), pattern=pattern)
    assert message.startswith(f"invalid regex {pattern!r}: ")
    assert f"({hint}: the regex syntax is RE2's, as in ripgrep)" in message


async def test_search_rg_only_preselects(engine: Search, root: Path) -> None:
    # RE2 syntax Rust refuses (\Q...\E, octal escapes): rg mode falls back to the walk.
    write(root, "a.py", "a.b\naxb\nabab\n")
    ctx = context(root)
    assert await call(engine, ctx, pattern=r"\Qa.b\E") == "a.py:1: a.b"
    assert await call(engine, ctx, pattern=r"\141\142\141") == "a.py:3: abab"


# -- rg and the Python walk agree ----------------------------------------------------------


def parity_tree(root: Path, outside: Path) -> list[Buffer]:
    """A workspace full of the cases where ripgrep and Python could disagree; and buffers."""
    # ripgrep reads [[:alpha:]] otherwise than git (it lists a.txt, a/b.txt): Python decides.
    write(
        root, ".gitignore", "*.log\nbuild/\n!keep.log\n/only-root.txt\nsecret*\n[[:alpha:]].txt\n"
    )
    files: dict[str, str | bytes] = {
        "keep.log": "needle kept by a negation\n",
        "app.log": "needle in an ignored file\n",
        "build/out.txt": "needle in an ignored folder\n",
        "only-root.txt": "needle ignored at the root only\n",
        "sub/only-root.txt": "needle: the anchored rule does not reach here\n",
        "secret.env": "needle\n",
        "src/main.py": "def needle():\n    return 'needle'\n",
        "src/crlf.py": "first needle\r\nneedle_end\r\nlast\r\n",
        "src/bom.py": "\ufeffneedle after a BOM\n",
        "src/.gitignore": "*.gen.py\n!important.log\n",
        "src/important.log": "needle re-included by a nested negation\n",
        "src/other.log": "needle still ignored by the root rule\n",
        "src/x.gen.py": "needle generated\n",
        "src/deep/nested/file.ts": "const needle = 1;\n",
        "src/deep/nested/view.tsx": "<Needle needle />\n",
        "src/with space.py": "needle in a spaced name\n",
        "src/ünï.py": "ünïcode needle\n",
        "a/b.txt": "needle in a/b.txt\n",
        "a.txt": "needle in a.txt\n",
        ".hidden/conf": "needle hidden\n",
        ".env": "NEEDLE=1\n",
        ".git/config": "needle in .git\n",
        "vendor/.git/HEAD": "needle in a nested .git\n",
        "vendor/lib.py": "needle vendored\n",
        "vendor/lib.log": "needle vendored but ignored\n",
        "bin.dat": b"needle\0binary",
        "late-nul.txt": b"needle\n" * 20000 + b"\0needle\n",
        "latin1.txt": "needle café\n".encode("latin-1"),
        "utf16.txt": "needle utf16\n".encode("utf-16"),
        "big.txt": "needle\n" * 40000,
        "empty.txt": "",
        "no-newline.txt": "needle at the end",
        "form\ffeed.txt": "needle\fx\u2028needle\n",
    }
    for rel, content in files.items():
        write(root, rel, content)
    os.mkfifo(root / "src" / "fifo")  # never opened: it would block
    (root / "link.py").symlink_to(root / "src" / "main.py")
    (root / "out").symlink_to(outside, target_is_directory=True)
    write(outside, "o.txt", "needle outside\n")
    return [
        buffer(root / "src" / "main.py", "def renamed():\n    return 'needle, unsaved'\n"),
        buffer(root / "src" / "unsaved.py", "needle in a new buffer\n"),
        buffer(root / "app.log", "needle in an ignored buffer\n"),
    ]


PARITY_QUERIES = [
    ("needle", None, None),
    ("needle", "src", None),
    ("needle", "src/deep", None),
    ("needle", None, "*.py"),
    ("needle", None, "*.{ts,tsx}"),
    ("needle", "src", "deep/**/*.ts"),
    ("needle", None, "src/**/*.ts"),
    ("needle", None, "*.log"),
    ("needle", None, "[ab].txt"),
    ("needle", None, "!*.py"),
    ("needle", None, "**.py"),
    ("needle", None, "*.{py,txt"),
    ("needle", None, "{a,{b,c}}.txt"),
    ("needle$", None, None),
    ("^needle", None, None),
    ("(?i)NEEDLE", None, None),
    (r"ne+dle\b", None, None),
    (r"\bneedle_end$", "src", None),
    (r"\bcode", None, None),  # RE2's \b is ASCII: "ünïcode" has one before "code"
    (r"\Wcode|caf\w", None, None),
    (r"[\w]+dle\B|[^\s\d]\S*_end", None, None),
    (r"\Qneedle_\E", None, None),  # Rust refuses \Q: the walk decides
    ("café|utf16", None, None),
    (r"\d+", None, None),
    ("needle", ".hidden", None),
    ("needle", "vendor", None),
    ("x", None, None),
    ("nothing matches this", None, None),
]


@pytest.mark.parametrize("with_buffers", [False, True], ids=["disk", "buffers"])
@pytest.mark.parametrize(("pattern", "path", "glob"), PARITY_QUERIES)
async def test_rg_and_python_agree(
    root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    with_buffers: bool,
    pattern: str,
    path: str | None,
    glob: str | None,
) -> None:
    rg = require_rg()
    monkeypatch.setattr(search_module, "MAX_SEARCH_BYTES", 200_000)  # big.txt is larger
    buffers = parity_tree(root, tmp_path / "outside")
    ctx = context(root, buffers if with_buffers else [])
    arguments = {"pattern": pattern, "path": path, "glob": glob}
    by_python = await call(Search(use_rg=False), ctx, **arguments)

    answers: list[list[Path] | None] = []  # what rg said, to be sure it was asked
    original = Search._rg_candidates

    async def spy(self: Search, *args: Any) -> list[Path] | None:
        answers.append(await original(self, *args))
        return answers[-1]

    monkeypatch.setattr(Search, "_rg_candidates", spy)
    by_rg = await call(Search(rg_path=rg), ctx, **arguments)
    assert by_rg == by_python
    rust_regex = r"\Q" not in pattern
    assert len(answers) == 1
    assert (answers[0] is not None) == rust_regex  # else the walk decided, as it must


async def test_parity_tree_results(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What both engines find in the parity tree, spelled out (so they cannot agree on junk)."""
    monkeypatch.setattr(search_module, "MAX_SEARCH_BYTES", 200_000)
    buffers = parity_tree(root, tmp_path / "outside")
    expected = [
        ".hidden/conf:1: needle hidden",
        "form\ffeed.txt:1: needle\fx\u2028needle",  # only \n ends a line, in both engines
        "keep.log:1: needle kept by a negation",
        "no-newline.txt:1: needle at the end",
        "src/bom.py:1: needle after a BOM",
        "src/crlf.py:1: first needle",
        "src/crlf.py:2: needle_end",
        "src/deep/nested/file.ts:1: const needle = 1;",
        "src/deep/nested/view.tsx:1: <Needle needle />",
        "src/important.log:1: needle re-included by a nested negation",
        "src/main.py:1: def needle():",
        "src/main.py:2:     return 'needle'",
        "src/with space.py:1: needle in a spaced name",
        "src/ünï.py:1: ünïcode needle",
        "sub/only-root.txt:1: needle: the anchored rule does not reach here",
        "vendor/lib.py:1: needle vendored",
    ]
    for engine in (Search(use_rg=False), Search(rg_path=require_rg())):
        assert (await call(engine, context(root), pattern="needle")).split("\n") == expected
    with_buffers = await call(
        Search(use_rg=False), context(root, buffers), pattern="needle", path="src"
    )
    assert "src/main.py:2:     return 'needle, unsaved'" in with_buffers.split("\n")
    assert "src/main.py:1: def needle():" not in with_buffers
    assert "src/unsaved.py:1: needle in a new buffer" in with_buffers.split("\n")


# -- the rg engine itself ------------------------------------------------------------------


async def test_rg_engine_lists_candidates(root: Path) -> None:
    rg = require_rg()
    write(root, "a.py", "needle\n")
    write(root, "b.py", "nothing\n")
    found = await Search(rg_path=rg)._rg_candidates(rg, root, "needle", None)
    assert found == [root / "a.py"]
    assert await Search(rg_path=rg)._rg_candidates(rg, root, "absent", None) == []
    assert await Search(rg_path=rg)._rg_candidates(rg, root, "(?=x)", None) is None


def fake_rg(tmp_path: Path, stderr: str, code: int) -> str:
    script = tmp_path / "fake-rg"
    script.write_text(f"#!/bin/sh\necho '{stderr}' >&2\nexit {code}\n")
    script.chmod(0o755)
    return str(script)


async def test_rg_errors(root: Path, tmp_path: Path) -> None:
    write(root, "a.py", "needle\n")
    ctx = context(root)
    broken = Search(rg_path=fake_rg(tmp_path, "boom", 2))
    assert await fails(broken, ctx, pattern="needle") == "search failed (rg exit 2): boom"
    regex_error = Search(rg_path=fake_rg(tmp_path, "regex parse error: nope", 2))
    assert await call(regex_error, ctx, pattern="needle") == "a.py:1: needle"  # Python decides
    missing = Search(rg_path=str(tmp_path / "no-such-rg"))
    assert await call(missing, ctx, pattern="needle") == "a.py:1: needle"


def test_engine_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Search(use_rg=False).rg_path is None
    assert Search(rg_path="/opt/rg").rg_path == "/opt/rg"
    monkeypatch.setenv("PATH", "")  # then rg is looked for next to the running Python
    assert search_module.find_rg() == shutil.which("rg", path=str(Path(sys.executable).parent))
