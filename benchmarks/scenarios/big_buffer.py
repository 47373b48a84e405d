"""Big buffer: a 10 MB document open in the editor.

* a 1-character incremental ``didChange``: (didChange + a round trip) − the median bare
  round trip (``agent/cancel`` of no run), interleaved; pygls' own store is timed on the
  same change in this process for reference;
* ``read_file`` of its first 2,000 lines (the default window), the output checked against
  the buffer (not the disk);
* ``edit_file`` of one line, approved, applied by this client (which sends the change back
  as an incremental ``didChange``); the ``workspace/applyEdit`` must hold one small
  ``TextEdit``.

A tool's time is what its step adds to a run: the run's wall time (prompt → result) minus
that of a run that only answers, interleaved. Lines carry multi-byte text (``é``); a second,
untargeted pass adds ``🌍`` (two UTF-16 units), with which CPython stores the whole text at
four bytes a character: the worst case for every scan and copy.
"""

from __future__ import annotations

import random
import time
from typing import Any

from ..client import Server
from ..documents import ClientDocument
from ..harness import Context, allow, call, ms, script
from ..report import Row, median

NAME = "big buffer"
LINE_BYTES = 50


def big_text(megabytes: float, astral: bool = False) -> str:
    """About ``megabytes`` of 50-byte lines, each unique, some with ``é`` (two UTF-8 bytes).

    With ``astral`` some lines hold ``🌍`` (two UTF-16 units): CPython then stores the
    whole text with four bytes a character, the worst case for every scan and copy.
    """
    count = int(megabytes * 1024 * 1024) // LINE_BYTES
    lines = []
    for i in range(count):
        if astral and i % 1013 == 7:
            body = f"{i:07d} globe 🌍 here"
        elif i % 97 == 3:
            body = f"{i:07d} café au lait"
        else:
            body = f"{i:07d} the quick brown fox jumps over"
        lines.append(body.ljust(LINE_BYTES - 1, "."))
    return "\n".join(lines) + "\n"


async def _round_trip(server: Server) -> int:
    began = time.monotonic_ns()
    await server.request("agent/cancel", {"runId": "none"})
    return time.monotonic_ns() - began


async def _changes(ctx: Context, server: Server, doc: ClientDocument) -> tuple[list[float], int]:
    pings: list[int] = []
    changes: list[int] = []
    rng = random.Random(8)
    for _ in range(ctx.sizes.big_buffer_changes):
        pings.append(await _round_trip(server))
        line = rng.randrange(len(doc.lines) - 1)
        change = doc.insert(line, rng.randrange(len(doc.lines[line]) + 1), "x")
        began = time.monotonic_ns()
        await server.notify("textDocument/didChange", doc.did_change([change]))
        await server.request("agent/cancel", {"runId": "none"})
        changes.append(time.monotonic_ns() - began)
    ping = median(pings)
    return [ms(c - ping) for c in changes], int(ping)


def _pygls_change_ms(text: str, samples: int) -> list[float]:
    """pygls 2's own TextDocument on the same kind of change (in this process)."""
    from lsprotocol import types
    from pygls.workspace import TextDocument

    document = TextDocument("file:///big.txt", text)
    times = []
    for i in range(samples):
        position = types.Position(line=1000 + i, character=3)
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=position, end=position), text="x"
        )
        began = time.perf_counter_ns()
        document.apply_change(change)
        times.append(ms(time.perf_counter_ns() - began))
    return times


def _tool_result(server: Server, tool: str) -> dict[str, Any]:
    result = next(e for e in server.events if e.kind == "tool-result").params
    if result["tool"] != tool or not result["ok"]:
        raise RuntimeError(f"{tool} failed: {result}")
    return result


async def _configure(server: Server, *turns: dict[str, Any]) -> None:
    settings = {"tether": {"provider": "scripted", "script": script(*turns)}}
    await server.notify("workspace/didChangeConfiguration", {"settings": settings})


async def _wall(server: Server, prompt: str) -> float:
    """One run's wall time, prompt → result, in ms (its events kept for checking)."""
    server.events.clear()
    began = time.monotonic_ns()
    await server.run(prompt)
    return ms(time.monotonic_ns() - began)


async def _baseline(server: Server) -> float:
    """A run that only answers: what a tool step adds is measured above it."""
    await _configure(server, {"text": "ok"})
    return await _wall(server, "answer")


async def _reads(ctx: Context, server: Server, doc: ClientDocument) -> list[float]:
    walls, bases = [], []
    expected = [f"{n + 1:>6}\t{line}" for n, line in enumerate(doc.lines[:2000])]
    for _ in range(ctx.sizes.big_buffer_reads):
        bases.append(await _baseline(server))
        await _configure(server, {"toolCalls": [call("read_file", path="big.txt")]}, {"text": "ok"})
        walls.append(await _wall(server, "read the big file"))
        # The event's preview keeps the head and the tail: check the whole lines of the head.
        head = _tool_result(server, "read_file")["output"].split(" characters cut] …")[0]
        shown = head.split("\n")[:-2]
        if len(shown) < 10 or shown != expected[: len(shown)]:
            raise RuntimeError("read_file did not show the buffer's text")
    return [w - median(bases) for w in walls]


async def _edits(ctx: Context, server: Server, doc: ClientDocument) -> tuple[list[float], str]:
    walls, bases = [], []
    sent: list[list[dict[str, Any]]] = []

    async def apply_edit(params: Any) -> dict[str, Any]:
        [document_edit] = params["edit"]["documentChanges"]
        edits = document_edit["edits"]
        sent.append(edits)
        for edit in sorted(edits, key=lambda e: e["range"]["start"]["line"], reverse=True):
            doc.apply(edit)
        changes = [{"range": e["range"], "text": e["newText"]} for e in edits]
        await server.notify("textDocument/didChange", doc.did_change(changes))
        return {"applied": True}

    server.handlers["workspace/applyEdit"] = apply_edit
    rng = random.Random(5)
    for _ in range(ctx.sizes.big_buffer_edits):
        bases.append(await _baseline(server))
        line = doc.lines[rng.randrange(len(doc.lines) // 2, len(doc.lines) - 1)]
        edit = call("edit_file", path="big.txt", old_text=line, new_text=line + " # edited")
        await _configure(server, {"toolCalls": [edit]}, {"text": "ok"})
        walls.append(await _wall(server, "edit one line"))
        _tool_result(server, "edit_file")
    if any(len(e) != 1 or len(e[0]["newText"]) > 200 for e in sent):
        raise RuntimeError(f"the edit sent was not one small TextEdit: {sent}")
    span = {e[0]["range"]["end"]["line"] - e[0]["range"]["start"]["line"] for e in sent}
    note = f"{len(sent)} edits, each 1 TextEdit over {max(span)} line(s)"
    return [w - median(bases) for w in walls], note


async def _measure(ctx: Context, astral: bool) -> list[Row]:
    root = ctx.folder("big-ws")
    text = big_text(ctx.sizes.big_buffer_mb, astral)
    path = root / "big.txt"
    path.write_text(text)
    doc = ClientDocument(path.as_uri(), text)
    size = f"{len(text.encode()) / 1024 / 1024:.1f} MB"
    options = {"provider": "scripted", "script": script({"text": "ok"})}
    async with ctx.server("big-buffer", root) as server:
        server.handlers["agent/approve"] = allow
        await server.initialize(root, options)
        await _round_trip(server)  # the first request also loads what requests need
        ping = min([await _round_trip(server) for _ in range(3)])
        began = time.monotonic_ns()
        await server.notify("textDocument/didOpen", doc.did_open())
        await server.request("agent/cancel", {"runId": "none"})
        opened = ms(time.monotonic_ns() - began - ping)
        changes, _ = await _changes(ctx, server, doc)
        reads = await _reads(ctx, server, doc)
        edits, edit_note = await _edits(ctx, server, doc)
    if astral:  # the worst case, reported beside the targets
        name = f"{NAME}, 4-byte chars"
        return [
            Row.of(name, "1-char incremental didChange", "ms", changes),
            Row.of(name, "read_file, first 2,000 lines", "ms", reads),
            Row.of(name, "edit_file of one line", "ms", edits, note=edit_note),
        ]
    pygls = _pygls_change_ms(text, max(3, ctx.sizes.big_buffer_changes // 5))
    ratio = median(pygls) / median(changes) if median(changes) > 0 else float("inf")
    return [
        Row(NAME, f"didOpen of {size}", "ms", opened, note="informational"),
        Row.of(
            NAME,
            "1-char incremental didChange",
            "ms",
            changes,
            limit=5.0,
            note=f"pygls' store: {median(pygls):.1f} ms in-process ({ratio:.0f}× slower)",
        ),
        Row.of(NAME, "read_file, first 2,000 lines", "ms", reads, limit=20.0),
        Row.of(NAME, "edit_file of one line", "ms", edits, limit=50.0, note=edit_note),
    ]


async def run(ctx: Context) -> list[Row]:
    rows = await _measure(ctx, astral=False)
    if not ctx.quick:
        rows += await _measure(ctx, astral=True)
    return rows
