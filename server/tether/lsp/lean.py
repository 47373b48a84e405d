"""The lean start: ``initialize`` answered before the heavy imports.

An editor starts ``tether serve`` and waits for the answer to ``initialize``; pygls,
lsprotocol, pydantic and the protocol models take most of a second to import, and a model
SDK as much again. The answer itself is fixed (the capabilities do not depend on anything
but the position encoding the client prefers), so this module, which imports nothing but
the framing and the quick settings check, reads the first message, answers it when it can
be sure the full server would answer the same, and hands the message on: the full server
then handles it as usual (the settings assembled, the workspace opened, the client's
declaration read) with its answer dropped, since the client has it already
(``TetherProtocol._send_response``). Everything after ``initialize`` waits in the pipe
while the rest is imported.

"Sure" is conservative: a well-formed ``initialize`` whose settings (each layer of
``config.assemble``: the user's file, the project's, the ``TETHER_*`` variables,
``initializationOptions``) pass ``config.quick``. Anything else — a first message that is
not ``initialize``, an unusual shape, a setting the quick check is not sure of — is handed
on unanswered and the full server answers it exactly as before (a refused setting is still
a ``-32602`` naming the field). ``tests/e2e/test_lean_start.py`` checks that both answers
are the same bytes for the editors' real ``initialize`` messages.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import tether

from ..config.quick import QuickSettings, folder_of, quick_settings
from ..framing import DEFAULT_MAX_MESSAGE_BYTES, FrameReader, Oversized, UnframeableStream, frame

PROTOCOL_VERSION = 2
"""``tether_protocol.methods.PROTOCOL_VERSION`` (that package imports pydantic)."""
TOOL_NAMES = (
    "read_file",
    "list_files",
    "search",
    "diagnostics",
    "plan",
    "edit_file",
    "write_file",
    "bash",
)
"""``cli.build_tools().names``."""
PROVIDERS = ("scripted", "openai", "anthropic")
"""``providers.AVAILABLE_PROVIDERS``."""
COMMANDS = ("tether.run", "tether.cancel")
ENCODINGS = ("utf-8", "utf-16", "utf-32")
"""The position encodings pygls supports, in the order it checks a client's list."""
MAX_NESTING = 128
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
    settings: QuickSettings | None = None
    """What the quick check found (the provider to warm up)."""
    limit: Callable[[], int] = lambda: DEFAULT_MAX_MESSAGE_BYTES
    """The message cap the reader applies (the full server's setting once it exists)."""

    @property
    def answered(self) -> bool:
        return self.answered_id is not None


def start(stdin: BinaryIO, stdout: BinaryIO, environ: Mapping[str, str]) -> Handover:
    """Read the first message and answer it when it is an ``initialize`` the full server
    would answer the same way; the reader and what was read go to the full server."""
    early = quick_settings(environ, None, None)
    cap = DEFAULT_MAX_MESSAGE_BYTES
    if early is not None:  # the cap before initialize: the user's file < the variables
        cap = int(early.before.get("max_message_bytes") or cap)
    handover = Handover(FrameReader(stdin.fileno(), lambda: handover.limit()))
    handover.limit = lambda: cap
    if early is None or environ.get(LEAN_OFF) == "0":
        return handover  # the full server reads everything (and reports a bad variable)
    try:
        item: Item = handover.reader.read_frame()
    except UnframeableStream as exc:
        item = exc
    except (OSError, ValueError):
        item = None
    handover.first.append(item)
    if not isinstance(item, bytearray):
        return handover
    answer = lean_answer(item, environ)
    if answer is None:
        return handover
    msg_id, body, settings = answer
    try:
        stdout.write(frame(body))
        stdout.flush()
    except (OSError, ValueError):
        pass  # the client is gone: end of input follows
    handover.answered_id, handover.answer, handover.settings = msg_id, body, settings
    return handover


def lean_answer(
    body: bytes | bytearray, environ: Mapping[str, str]
) -> tuple[int | str, bytes, QuickSettings] | None:
    """The answer to ``body`` when it is an ``initialize`` that is certainly accepted."""
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
    root = _config_root(params)
    if root is None:
        return None
    folder = root if isinstance(root, Path) else None
    settings = quick_settings(environ, folder, params.get("initializationOptions"))
    if settings is None:
        return None
    return msg_id, initialize_answer(msg_id, encoding, sync), settings


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


def _config_root(params: dict[str, Any]) -> Path | bool | None:
    """The folder whose project file counts (``lsp.server._first_folder``): False for
    none, None when not sure."""
    folders = params.get("workspaceFolders") or []
    uri = folders[0]["uri"] if folders else params.get("rootUri")
    if not uri:
        return False
    folder = folder_of(uri)
    if not isinstance(folder, Path):
        return folder
    try:
        return Path(os.path.realpath(folder))
    except (OSError, ValueError):
        return None
