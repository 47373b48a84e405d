"""The real-provider task: read → write → answer through the OpenAI and the Anthropic
provider (their official SDKs) against local fake APIs that answer at once.

Prompt → result: ``agent/run`` sent → its result read, with the write approved by this
client and applied to disk through ``workspace/applyEdit``, as an editor would.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from tests.providers.fakes import FakeApi, Sse, anthropic_stream, openai_stream
from tether.text.model import offset_at
from tether.workspace.folders import path_from_uri

from ..harness import Context, allow, ms
from ..report import Row, median

NAME = "real-provider task"
APP = "def greet(name):\n    return 'hello ' + name\n"


def _queue_task(fake: FakeApi, provider: str, index: int) -> None:
    stream = openai_stream if provider == "openai" else anthropic_stream
    content = json.dumps({"path": "src/app.py", "content": APP.replace("hello", f"hi {index}")})
    fake.queue(
        Sse(stream("Let me read it.", calls=[("c1", "read_file", ['{"path": "src/app.py"}'])])),
        Sse(stream("Now the change.", calls=[("c2", "write_file", [content])])),
        Sse(stream("Done: ", "it says hi now.")),
    )


def apply_on_disk(params: Any) -> dict[str, Any]:
    """``workspace/applyEdit`` for files that are not open: change the disk (as an editor
    would; the task only edits files that exist)."""
    for change in params["edit"]["documentChanges"]:
        path = path_from_uri(change["textDocument"]["uri"])
        assert path is not None
        text = path.read_text(encoding="utf-8")
        spans = [
            (
                offset_at(text, e["range"]["start"]["line"], e["range"]["start"]["character"]),
                offset_at(text, e["range"]["end"]["line"], e["range"]["end"]["character"]),
                e["newText"],
            )
            for e in change["edits"]
        ]
        for start, end, new in sorted(spans, reverse=True):
            text = text[:start] + new + text[end:]
        path.write_text(text, encoding="utf-8")
    return {"applied": True}


FIRST_PROMPT_AFTER_NS = 2_000_000_000
"""An editor's first prompt comes seconds after it started the server (issue 29)."""


async def _provider(ctx: Context, provider: str) -> tuple[list[float], float]:
    root = ctx.folder(f"provider-{provider}")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text(APP)
    times: list[float] = []
    first = 0.0
    with FakeApi() as fake:
        base_url = fake.url + "/v1" if provider == "openai" else fake.url
        options = {"provider": provider, "baseUrl": base_url, "model": "bench-model"}
        async with ctx.server(f"provider-{provider}", root) as server:
            server.handlers["agent/approve"] = allow
            server.handlers["workspace/applyEdit"] = apply_on_disk
            await server.initialize(root, options)
            # The first prompt 2 s after the spawn, as an editor's: the lean start has
            # answered initialize at once and loaded the rest (the SDK too) meanwhile.
            await asyncio.sleep(
                max(0, server.started_ns + FIRST_PROMPT_AFTER_NS - time.monotonic_ns()) / 1e9
            )
            for index in range(ctx.sizes.provider_runs + 1):  # the first one warms up
                _queue_task(fake, provider, index)
                began = time.monotonic_ns()
                result = await server.run("make it say hi")
                took = ms(time.monotonic_ns() - began)
                if result["outcome"] != "done" or result["steps"] != 3:
                    raise RuntimeError(f"{provider}: unexpected result {result}")
                if index:
                    times.append(took)
                else:
                    first = took
                ctx.log(f"{provider} task {index}: {took:.1f} ms")
            if f"hi {ctx.sizes.provider_runs}" not in (root / "src" / "app.py").read_text():
                raise RuntimeError(f"{provider}: the write did not reach the disk")
    return times, first


async def run(ctx: Context) -> list[Row]:
    rows = []
    for provider in ("anthropic", "openai"):
        times, first = await _provider(ctx, provider)
        rows.append(Row.of(NAME, f"{provider}: prompt → result", "ms", times, limit=60.0))
        warm = median(times)
        rows.append(
            Row(
                NAME,
                f"{provider}: 1st prompt 2 s after spawn / warm",
                "×",
                first / warm,
                None,
                1,
                "≤ 1.5",
                1.5,
                note=f"{first:.1f} ms against the warm median {warm:.1f} ms (one sample)",
            )
        )
    return rows
