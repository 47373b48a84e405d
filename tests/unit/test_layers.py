"""The server's packages depend on each other in one order, and nothing imports back up.

Every import of ``server/tether`` counts — at the top, inside a function, under
``TYPE_CHECKING``, and a module imported by its name as a string
(``importlib.import_module("...")``, relative names with their package included, and
``__import__("...")``) — read from the source (no module is run). A string import whose
name is not written out (a variable, an expression) cannot be checked, so it fails too.
``ORDER`` is the order of docs/architecture.md as a table: a package (or top-level module)
and what it may import. A new import outside the table fails here; the table itself must
stay free of cycles, and so must the modules.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "server"
PACKAGE = ROOT / "tether"
SKIPPED = PACKAGE / "demo" / "workspace"
"""The demo's sample project: data, not server code."""

ORDER = """
tether       -                                  (the package itself: its version)
errors       -
host         -
framing      -
text         host
events       host text
workspace    errors host text
writes       host workspace
sandbox      workspace
config       sandbox
diagnostics  host workspace
prompt       errors host text workspace
providers    config errors prompt
policy       config errors events host sandbox text workspace writes
session      errors events host providers text workspace writes
tools        diagnostics errors host policy providers sandbox text workspace writes
mcp          tether errors prompt providers sandbox text tools
langserver   tether errors mcp sandbox text tools workspace
run          config diagnostics errors events host mcp policy prompt providers sandbox
             session text tools workspace
lsp          tether config events framing host langserver mcp policy providers run sandbox
             session text tools workspace writes
acp          tether config errors events host langserver mcp policy prompt providers run
             sandbox session text tools workspace writes
client       config framing langserver policy prompt providers session text workspace writes
demo         client
daemon       tether client config providers
cli          tether acp client config daemon demo lsp providers sandbox session tools
__main__     cli
"""
"""Each package (or top-level module) and the packages it may import, lowest first; a
line that starts with a space goes on with the row above, ``-`` is nothing."""


def allowed() -> dict[str, set[str]]:
    rows: dict[str, set[str]] = {}
    last = ""
    for line in ORDER.strip("\n").splitlines():
        words = line.split("(")[0].split()
        if not line[0].isspace():
            last, *words = words
            rows[last] = set()
        rows[last] |= {w for w in words if w != "-"}
    return rows


ALLOWED = allowed()

THIRD_PARTY_OWNERS = {
    "pygls": ("lsp", "langserver.client"),
    # the language servers Tether starts: the client, and the pool's conversions (inside
    # the functions that answer, once a server runs)
    "lsprotocol": ("lsp", "langserver.client", "langserver.pool"),
    "openai": ("providers.openai", "providers.openai_responses"),
    "anthropic": ("providers.anthropic",),
    # the SDKs' HTTP client; retry.py asks it for the TLS context only when an SDK is made,
    # sdk.py for the in-process transport of the prime's canned request (``providers.prime``)
    "httpx": ("providers.openai", "providers.anthropic", "providers.retry"),
    "httpx2": (
        "providers.openai",
        "providers.openai_responses",
        "providers.anthropic",
        "providers.retry",
        "providers.sdk",
    ),
    # the MCP SDK, imported only inside the functions that start or call a server
    "mcp": ("mcp",),
    "mcp_types": ("mcp",),
    "rich": ("client.rich_render", "client.streamed_text"),
    "prompt_toolkit": ("client.chat_input",),
}
"""Libraries only these modules (or packages) may import: the transport and the SDKs stay
at the edges (``test_seams.py`` checks the same by importing every other module)."""


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {
        module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if not p.is_relative_to(SKIPPED)
    }


def _text(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _importers(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names this module calls ``importlib.import_module`` by, and ``importlib`` by."""
    functions = {"import_module"}  # ``from importlib import import_module`` (and aliases)
    modules = {"importlib"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "importlib":
            functions |= {a.asname or a.name for a in node.names if a.name == "import_module"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "importlib"}
    return functions, modules


def string_import(
    call: ast.Call, name: str, package: str, importers: tuple[set[str], set[str]]
) -> str | None:
    """The module ``call`` imports by name, if it is a string import: its absolute name, or
    ``?`` and the call's source when the name cannot be read from it."""
    functions, modules = importers
    func = call.func
    via_importlib = (isinstance(func, ast.Name) and func.id in functions) or (
        isinstance(func, ast.Attribute)
        and func.attr == "import_module"
        and isinstance(func.value, ast.Name)
        and func.value.id in modules
    )
    via_dunder = (isinstance(func, ast.Name) and func.id == "__import__") or (
        isinstance(func, ast.Attribute)
        and func.attr == "__import__"
        and isinstance(func.value, ast.Name)
        and func.value.id in modules | {"builtins"}
    )
    if not via_importlib and not via_dunder:
        return None
    target = _text(_argument(call, 0, "name"))
    unreadable = f"? {ast.unparse(call)}"
    if target is None:
        return unreadable
    if via_dunder:  # ``__import__(name, globals, locals, fromlist, level)``: absolute only
        level = _argument(call, 4, "level")
        absolute = level is None or (isinstance(level, ast.Constant) and level.value == 0)
        return target if absolute else unreadable
    dots = len(target) - len(target.lstrip("."))
    if not dots:
        return target
    anchor = _argument(call, 1, "package")  # importlib resolves ``.x`` against it
    base = (
        _text(anchor)
        if not isinstance(anchor, ast.Name)
        else {"__name__": name, "__package__": package}.get(anchor.id)
    )
    if base is None or len(base.split(".")) < dots:
        return unreadable
    parts = base.split(".")[: len(base.split(".")) - dots + 1]
    return ".".join([*parts, *([target[dots:]] if target[dots:] else [])])


def imported(name: str, path: Path, known: dict[str, Path]) -> tuple[set[str], set[str]]:
    """The server modules ``name`` imports, and the third-party top-level names; a string
    import whose name cannot be read is among the third-party names as ``? <the call>``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    ours: set[str] = set()
    others: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    importers = _importers(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            target = string_import(node, name, package, importers)
            if target is None:
                continue
            if target.startswith("?"):
                others.add(target)
            elif target == "tether" or target.startswith("tether."):
                ours.add(target)
            else:
                others.add(target.split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "tether" or alias.name.startswith("tether."):
                    ours.add(alias.name)
                else:
                    others.add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target == "tether" or target.startswith("tether."):
                for alias in node.names:  # ``from . import landlock`` imports a module
                    candidate = f"{target}.{alias.name}"
                    ours.add(candidate if candidate in known else target)
            else:
                others.add(target.split(".")[0])
    return ours - {name}, others


def layer(module: str) -> str:
    """``tether.run.loop`` → ``run``; ``tether.cli`` → ``cli``; ``tether`` → ``tether``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(name, path, known)[0] for name, path in known.items()}


def test_the_table_is_an_order() -> None:
    try:
        order = list(TopologicalSorter(ALLOWED).static_order())
    except CycleError as exc:
        raise AssertionError(f"the table allows a cycle: {exc.args[1]}") from None
    assert set(order) == set(ALLOWED)


def test_every_package_is_in_the_table() -> None:
    found = {layer(name) for name in modules()}
    assert {"run", "lsp", "tools", "session", "cli"} <= found  # the scan found the code
    assert found - set(ALLOWED) == set(), "a new package: give it a row in ALLOWED"


def test_no_import_runs_back_up() -> None:
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in graph().items()
        for target in targets
        if layer(target) != layer(name) and layer(target) not in ALLOWED[layer(name)]
    )
    assert wrong == [], "imports outside the order of docs/architecture.md:\n" + "\n".join(wrong)


def test_no_modules_import_each_other() -> None:
    edges = graph()
    try:
        TopologicalSorter(edges).prepare()
    except CycleError as exc:
        raise AssertionError(f"an import cycle: {' -> '.join(exc.args[1])}") from None


def test_a_module_imported_by_a_string_is_named_in_it() -> None:
    """``importlib.import_module(name)`` with ``name`` computed hides what is imported from
    every check here: import the module as usual (inside the function, to keep it lazy)."""
    known = modules()
    hidden = sorted(
        f"{name}: {other[2:]}"
        for name, path in known.items()
        for other in imported(name, path, known)[1]
        if other.startswith("?")
    )
    assert hidden == [], "string imports whose module cannot be read:\n" + "\n".join(hidden)


def test_string_imports_are_read() -> None:
    """The reader of string imports itself, on the forms it must understand."""
    source = """
import importlib
import importlib as il
from importlib import import_module as load
importlib.import_module("tether.run.loop")
il.import_module(".gate", "tether.policy")
load("..text.model", __name__)
importlib.import_module(".landlock", package=__package__)
importlib.import_module("..", __package__)
__import__("tether.lsp.server")
__import__("rich.console")
importlib.import_module(NAME)
importlib.import_module(".x", PACKAGE)
__import__("x", globals(), None, [], 1)
"""
    tree = ast.parse(source)
    importers = _importers(tree)
    found = [
        string_import(node, "tether.sandbox.walls", "tether.sandbox", importers)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    ]
    assert [f for f in found if f is not None] == [
        "tether.run.loop",
        "tether.policy.gate",
        "tether.sandbox.text.model",
        "tether.sandbox.landlock",
        "tether",
        "tether.lsp.server",
        "rich.console",
        "? importlib.import_module(NAME)",
        "? importlib.import_module('.x', PACKAGE)",
        "? __import__('x', globals(), None, [], 1)",
    ]


def test_the_transport_and_the_sdks_stay_at_the_edges() -> None:
    known = modules()
    wrong = []
    for name, path in known.items():
        _, others = imported(name, path, known)
        short = name.removeprefix("tether.")
        for library, owners in THIRD_PARTY_OWNERS.items():
            inside = any(short == o or short.startswith(o + ".") for o in owners)
            if library in others and not inside:
                wrong.append(f"{name} imports {library}")
    assert wrong == []
