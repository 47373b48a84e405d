"""The loop, tools and providers stay behind their seams: no pygls, no SDK imported."""

from __future__ import annotations

import json
import subprocess
import sys

CORE = [
    "tether.loop",
    "tether.runs",
    "tether.events",
    "tether.host",
    "tether.workspace",
    "tether.session.writer",
    "tether.session.index",
    "tether.config",
    "tether.prompting",
    "tether.providers",
    "tether.providers.scripted",
    "tether.tools.registry",
    "tether.tools.files",
    "tether.tools.edits",
    "tether.tools.shell",
    "tether.tools.search",
    "tether.approvals",
    "tether.coherence",
    "tether.context",
    "tether.untrusted",
    "tether.textedit",
    "tether.textspan",
    "tether.diskedit",
    "tether.undo",
    "tether.session.records",
    "tether.session.store",
    "tether.session.repair",
    "tether.replay",
    "tether.client",
]
FORBIDDEN = ("pygls", "lsprotocol", "openai", "anthropic")


def test_core_modules_import_no_transport_or_sdk() -> None:
    code = (
        "import importlib, json, sys\n"
        f"for name in {CORE!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(out.stdout))
    assert "tether" in loaded  # the check really imported the package
    assert loaded.isdisjoint(FORBIDDEN), loaded & set(FORBIDDEN)


def test_the_protocol_package_does_not_import_the_server() -> None:
    code = "import sys, tether_protocol.schema; print('tether' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "False"
