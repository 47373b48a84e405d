"""The code tools' pieces that need no language server: the symbol found on its line, the
system prompt's advice, and the tools offered only when a server can answer."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tether.host import NoBuffers
from tether.prompt.system import CODE_TOOLS_ADVICE, system_prompt
from tether.tools import build_tools
from tether.tools.lsp_tools import column_of, names_on, with_code_tools
from tether.workspace.folders import Workspace


@pytest.mark.parametrize(
    ("line", "symbol", "column"),
    [
        ("print(greet(greeting))", "greet", 6),  # the whole word, not inside greeting
        ("x = greeting + greet", "greet", 15),
        ("self.value = value", "self.value", 5),  # a.b: its last part
        ("std::vector<int> v", "std::vector", 5),
        ("α = βeta", "βeta", 4),
        ("nothing here", "greet", None),
    ],
)
def test_the_symbol_is_found_on_its_line(line: str, symbol: str, column: int | None) -> None:
    assert column_of(line, symbol) == column


def test_the_names_on_a_line_are_listed_once_in_order() -> None:
    assert names_on('print(greet("you"), greet, 3)') == ["print", "greet", "you"]


class Answers:
    """A ``CodeIntel`` that can answer for the languages it is given (nothing else used)."""

    def __init__(self, languages: Mapping[str, str]) -> None:
        self.languages = languages

    async def available(self, workspace: Workspace) -> Mapping[str, str]:
        return self.languages


class ShowsAll:
    """An editor whose approvals show a change of several files."""

    def shows_change_sets(self) -> bool:
        return True


async def test_the_tools_are_offered_only_when_a_server_can_answer(tmp_path: Path) -> None:
    ws = Workspace([tmp_path], NoBuffers())
    base = build_tools()
    none = await with_code_tools(base, Answers({}), ws)  # type: ignore[arg-type]
    assert none is base and "definition" not in none.names
    answers = Answers({"python": "pyright-langserver"})
    some = await with_code_tools(base, answers, ws, ShowsAll())  # type: ignore[arg-type]
    assert some.names[-5:] == ["definition", "references", "hover", "symbols", "rename"]
    unshown = await with_code_tools(base, answers, ws, object())  # type: ignore[arg-type]
    assert unshown.names[-4:] == ["definition", "references", "hover", "symbols"]
    spec = next(s for s in some.specs() if s.name == "definition")
    assert spec.description.endswith("Languages: python (pyright-langserver).")
    assert CODE_TOOLS_ADVICE in system_prompt(ws, some.names)
    assert CODE_TOOLS_ADVICE not in system_prompt(ws, base.names)


_IDENT = st.from_regex(r"[^\W\d]\w{0,12}", fullmatch=True)
_FILLER = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


@given(before=_FILLER, name=_IDENT, after=_FILLER)
def test_a_name_written_on_a_line_is_always_found_at_a_place_that_spells_it(
    before: str, name: str, after: str
) -> None:
    line = f"{before} {name} {after}"
    column = column_of(line, name)
    assert column is not None and line[column:].startswith(name)
    assert column <= len(before) + 1  # the first occurrence, never one after it
