"""One workspace folder for a module's generated examples (hypothesis cannot take ``tmp_path``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.host import NoBuffers
from tether.workspace.folders import Workspace


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    root: Path = tmp_path_factory.mktemp("ws")
    return Workspace([root], NoBuffers())
