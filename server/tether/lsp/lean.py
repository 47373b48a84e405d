"""The lean start: ``initialize`` answered before the heavy imports.

An editor starts ``tether serve`` and waits for the answer to ``initialize``; pygls,
lsprotocol, pydantic and the protocol models take most of a second to import. The answer
does not depend on the settings (the capabilities are fixed; only the position encoding
follows the client's list), so this module, which imports nothing but the framing, reads
the first message and, when it is a well-formed ``initialize``, answers it from one fixed
template and hands the message on: the full server then handles it as usual (the settings
assembled, the workspace opened, the client's declaration read) with its answer dropped,
since the client has it already (``TetherProtocol._send_response``). A setting that cannot
be used is shown to the user and refuses the runs, whoever answered (``lsp.server``).
Anything unusual — a first message that is not ``initialize``, a shape pygls may refuse —
is handed on unanswered, and the full server answers it. Everything after ``initialize``
waits in the pipe while the rest is imported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import tether

from ..framing import DEFAULT_MAX_MESSAGE_BYTES, FrameReader, Oversized, UnframeableStream, frame

PROTOCOL_VERSION = 2
"""``tether_protocol.methods.PROTOCOL_VERSION`` (that package imports pydantic)."""
TOOL_NAMES = (
    "read_file",
    "list_files",
    "search",
    "diagnostics",
    "plan",
    "ask_user",
    "edit_file",
    "write_file",
    "bash",
    "job_output",
    "job_stop",
)
"""``tools.build_tools().names``."""
PROVIDERS = ("scripted", "openai", "anthropic")
"""``providers.AVAILABLE_PROVIDERS``."""
COMMANDS = ("tether.run", "tether.cancel")
ENCODINGS = ("utf-8", "utf-16", "utf-32")
"""The position encodings pygls supports, in the order it checks a client's list."""
MAX_NESTING = 128
CAP_VARIABLE = "TETHER_MAX_MESSAGE_BYTES"
"""The message cap until the full server applies every layer (``maxMessageBytes``)."""
MIN_CAP, MAX_CAP = 64 * 1024, 1024 * 1024 * 1024
LEAN_OFF = "TETHER_LEAN_START"
"""``0`` turns the lean start off (the full server answers ``initialize``)."""

_TRACES = ("off", "messages", "verbose")

Item = bytearray | Oversized | UnframeableStream | None
"""What the reader gives: a body, a skipped body, a stream given up on, or end of input."""


@dataclass
class Handover:
    """What the lean start read and did, for the full server to go on from."""

    reader: FrameReader
    first: list[Item] = field(default_factory=list)
    """Read but not yet handled: the full server dispatches these first."""
    answered_id: int | str | None = None
    """The ``initialize`` already answered (its full answer is dropped), if any."""
    answer: bytes | None = None
    """The body sent for it."""
    limit: Callable[[], int] = lambda: DEFAULT_MAX_MESSAGE_BYTES
    """The message cap the reader applies (the full server's setting once it exists)."""

    @property
    def answered(self) -> bool:
        return self.answered_id is not None


def start(stdin: BinaryIO, stdout: BinaryIO, environ: Mapping[str, str]) -> Handover:
    """Read the first message and answer it when it is a well-formed ``initialize``; the
    reader and what was read go to the full server."""
    handover = Handover(FrameReader(stdin.fileno(), lambda: handover.limit()))
    raw = environ.get(CAP_VARIABLE, "")  # the full server checks it; the user's file waits
    if raw.isascii() and raw.isdigit() and MIN_CAP <= int(raw) <= MAX_CAP:
        cap = int(raw)
        handover.limit = lambda: cap
    if environ.get(LEAN_OFF) == "0":
        return handover  # the full server reads everything
    try:
        item: Item = handover.reader.read_frame()
    except UnframeableStream as exc:
        item = exc
    except (OSError, ValueError):
        item = None
    handover.first.append(item)
    if not isinstance(item, bytearray):
        return handover
    answer = lean_answer(item)
    if answer is None:
        return handover
    msg_id, body = answer
    try:
        stdout.write(frame(body))
        stdout.flush()
    except (OSError, ValueError):
        pass  # the client is gone: end of input follows
    handover.answered_id, handover.answer = msg_id, body
    return handover


def lean_answer(body: bytes | bytearray) -> tuple[int | str, bytes] | None:
    """The answer to ``body`` when it is an ``initialize`` pygls certainly accepts."""
    if b"\\ud" in body or b"\\uD" in body or b"\xed" in body:
        return None  # maybe a lone surrogate: the full server's checks decide
    try:
        raw = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(raw, dict) or raw.get("jsonrpc") != "2.0":
        return None
    if raw.get("method") != "initialize" or set(raw) - {"jsonrpc", "id", "method", "params"}:
        return None
    msg_id = raw.get("id")
    if isinstance(msg_id, bool) or not isinstance(msg_id, (int, str)):
        return None
    if isinstance(msg_id, str) and len(msg_id) > 256:
        return None
    params = raw.get("params")
    if not isinstance(params, dict) or _too_deep(params):
        return None
    encoding = _plain_params(params)
    sync = _document_sync(params["capabilities"]) if encoding is not None else None
    if encoding is None or sync is None:
        return None
    return msg_id, initialize_answer(msg_id, encoding, sync)


def _document_sync(capabilities: dict[str, Any]) -> dict[str, Any] | None:
    """``textDocumentSync`` as pygls builds it: ``willSave`` (and ``willSaveWaitUntil``)
    false when the client declares it, left out when it does not (the server has neither
    feature); None when not sure."""
    sync: dict[str, Any] = {"openClose": True, "change": 2}
    document = capabilities.get("textDocument") or {}
    declared = document.get("synchronization")
    if declared is not None and not isinstance(declared, dict):
        return None
    for key in ("willSave", "willSaveWaitUntil"):
        value = (declared or {}).get(key)
        if value is not None and not isinstance(value, bool):
            return None
        if value is not None:
            sync[key] = False
    sync["save"] = True
    return sync


def initialize_answer(msg_id: int | str, encoding: str, sync: dict[str, Any]) -> bytes:
    """The body of the full server's answer, as pygls serializes it."""
    result = {
        "capabilities": {
            "positionEncoding": encoding,
            "textDocumentSync": sync,
            "executeCommandProvider": {"commands": list(COMMANDS)},
            "workspace": {
                "workspaceFolders": {"supported": True, "changeNotifications": True},
                "fileOperations": {},
            },
            "experimental": {
                "tether": {
                    "protocolVersion": PROTOCOL_VERSION,
                    "tools": list(TOOL_NAMES),
                    "providers": list(PROVIDERS),
                }
            },
        },
        "serverInfo": {"name": "tether", "version": tether.__version__},
    }
    return json.dumps({"id": msg_id, "jsonrpc": "2.0", "result": result}).encode("utf-8")


def _too_deep(value: Any) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING // 2:
            return True
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


def _optional_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _plain_params(params: dict[str, Any]) -> str | None:
    """The position encoding pygls will choose, when every field pygls reads has the type
    it expects; None when not sure."""
    capabilities = params.get("capabilities")
    if not isinstance(capabilities, dict):
        return None
    for section in ("workspace", "textDocument", "notebookDocument", "window", "general"):
        if not isinstance(capabilities.get(section, {}), dict):
            return None
    process_id = params.get("processId")
    if process_id is not None and (type(process_id) is not int or abs(process_id) >= 1 << 31):
        return None
    if not (_optional_str(params.get("rootUri")) and _optional_str(params.get("rootPath"))):
        return None
    if not _optional_str(params.get("locale")):
        return None
    if params.get("trace") not in (None, *_TRACES):
        return None
    client = params.get("clientInfo")
    if client is not None and not (
        isinstance(client, dict)
        and isinstance(client.get("name"), str)
        and _optional_str(client.get("version"))
        and not set(client) - {"name", "version"}
    ):
        return None
    token = params.get("workDoneToken")
    if token is not None and (isinstance(token, bool) or not isinstance(token, (int, str))):
        return None
    folders = params.get("workspaceFolders")
    if folders is not None and not (
        isinstance(folders, list)
        and all(
            isinstance(f, dict)
            and isinstance(f.get("uri"), str)
            and isinstance(f.get("name"), str)
            and not set(f) - {"uri", "name"}
            for f in folders
        )
    ):
        return None
    general = capabilities.get("general") or {}
    encodings = general.get("positionEncodings")
    if encodings is None:
        return "utf-16"
    if not isinstance(encodings, list) or not all(isinstance(e, str) for e in encodings):
        return None
    return next((e for e in encodings if e in ENCODINGS), None)  # none known: not sure
