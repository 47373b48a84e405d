"""``acp.front``: the core is loaded in a worker thread, then its warm-up is started — and a
warm-up that fails leaves the core served (the first prompt pays, as without it)."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tether.acp.front import Front


class Core:
    provider = None  # no SDK to import
    connection = None


@pytest.fixture(autouse=True)
def unfrozen() -> Iterator[None]:
    yield
    gc.unfreeze()  # ``_loaded`` freezes what it loaded, as for the process it runs in


def test_the_warm_up_is_given_the_core_and_what_the_client_declared() -> None:
    core = Core()
    given: list[tuple[Any, dict[str, Any]]] = []

    def warm(server: Any, declared: Callable[[], dict[str, Any]]) -> None:
        given.append((server, declared()))

    front = Front(lambda: core, warm)  # type: ignore[arg-type, return-value]
    front._capabilities = {"fs": {"readTextFile": True}}
    assert front._loaded() is core
    assert given == [(core, {"fs": {"readTextFile": True}})]


def test_a_warm_up_that_fails_leaves_the_core_served() -> None:
    core = Core()

    def warm(server: Any, declared: Callable[[], dict[str, Any]]) -> None:
        raise RuntimeError("the SDK's module is broken")

    assert Front(lambda: core, warm)._loaded() is core  # type: ignore[arg-type, return-value]
