"""From a frame's body to the protocol: parse once, check the envelope, answer what is wrong.

Every client mistake gets a JSON-RPC error when it carries an id (``-32700`` parse error,
``-32600`` invalid request, ``-32602`` invalid params) and a one-line log otherwise; no
echoed value is longer than ``MAX_ECHO`` characters, and nothing nested deeper than
``MAX_NESTING`` reaches a handler.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.protocol import JsonRPCProtocol

from ..framing import PEEK_BYTES, Oversized
from ..text.echo import MAX_ECHO as MAX_ECHO  # quoted in its answers (tests read it here)
from ..text.echo import clip

log = logging.getLogger(__name__)

MAX_NESTING = 128
"""Nesting depth of arrays and objects in one message (LSP's deepest is about ten)."""
MAX_ID_CHARS = 256
"""Length of a string request id (ids are numbers or short strings in every client)."""
MAX_METHOD_CHARS = 256

_STRING = rb'"(?:[^"\\]|\\.)*"'
_ID_VALUE = rb'(-?\d{1,20}|"(?:[^"\\]|\\.){0,256}")'
# The top-level "id" of a body only seen in part: after other string or scalar members at
# the start, or as the last member at the end (every client puts it at one of the two).
_HEAD_ID = re.compile(
    rb"^\s*\{(?:\s*" + _STRING + rb"\s*:\s*(?:" + _STRING + rb"|[-+.\w]+)\s*,)*?"
    rb'\s*"id"\s*:\s*' + _ID_VALUE + rb"\s*[,}]"
)
_TAIL_ID = re.compile(rb'[{,]\s*"id"\s*:\s*' + _ID_VALUE + rb"\s*\}\s*$")


def error_response(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error answer."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _nesting_exceeds(value: Any, limit: int) -> bool:
    """Whether arrays/objects nest deeper than ``limit`` (iterative: no recursion limit)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


def _has_lone_surrogate(value: Any) -> bool:
    """Whether a string (key or value) holds half of a UTF-16 pair: no text can have it."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _may_hold_surrogates(body: bytes | bytearray) -> bool:
    # A \uD800-\uDFFF escape, or raw bytes ED A0-BF (json reads UTF-8 with surrogatepass).
    return b"\\ud" in body or b"\\uD" in body or b"\xed" in body


def _may_nest_deeply(body: bytes | bytearray) -> bool:
    # Fewer brackets in the text than the limit: no need to walk the parsed value.
    return body.count(b"[") + body.count(b"{") > MAX_NESTING


def _valid_id(msg_id: Any) -> bool:
    if isinstance(msg_id, bool):
        return False
    if isinstance(msg_id, str):
        return len(msg_id) <= MAX_ID_CHARS
    return msg_id is None or isinstance(msg_id, int)


def _envelope_problem(raw: dict[str, Any]) -> str | None:
    """What makes ``raw`` no JSON-RPC 2.0 message, if anything."""
    if raw.get("jsonrpc") != "2.0":
        return 'not a JSON-RPC 2.0 message ("jsonrpc": "2.0" is missing)'
    method = raw.get("method")
    if "method" in raw and not isinstance(method, str):
        return "method must be a string"
    if isinstance(method, str) and len(method) > MAX_METHOD_CHARS:
        return f"method name longer than {MAX_METHOD_CHARS} characters"
    if "method" not in raw and "id" not in raw:
        return "neither a request, a notification nor a response"
    return None


def dispatch(protocol: JsonRPCProtocol, body: bytes | bytearray) -> None:
    """Parse one body and hand it to the protocol, or answer why it cannot be."""
    send = protocol._send_data
    try:
        raw = json.loads(body)
    except RecursionError:
        # Well-formed as far as it was read: its id, if it shows, is the one to answer.
        msg_id = recover_id(bytes(body[:PEEK_BYTES]), bytes(body[-PEEK_BYTES:]))
        reason = f"Invalid Request: nested deeper than {MAX_NESTING} levels"
        send(error_response(msg_id if _valid_id(msg_id) else None, -32600, reason))
        return
    except (ValueError, UnicodeDecodeError) as exc:
        send(error_response(None, -32700, f"Parse error: {clip(str(exc))}"))
        return
    if not isinstance(raw, dict):
        what = "batches are not supported" if isinstance(raw, list) else "not a JSON object"
        send(error_response(None, -32600, f"Invalid Request: {what}"))
        return
    msg_id = raw.get("id")
    if not _valid_id(msg_id):
        send(error_response(None, -32600, "Invalid Request: id must be a number or a string"))
        return
    problem = _envelope_problem(raw)
    if problem is None and _may_nest_deeply(body) and _nesting_exceeds(raw, MAX_NESTING):
        problem = f"nested deeper than {MAX_NESTING} levels"
    if problem is None and _may_hold_surrogates(body) and _has_lone_surrogate(raw):
        problem = "a string holds a lone UTF-16 surrogate (\\ud800-\\udfff): not Unicode text"
    if problem is not None:
        if "id" in raw:
            send(error_response(msg_id, -32600, f"Invalid Request: {problem}"))
        else:
            log.warning("dropped a message: %s", problem)
        return
    try:
        message = protocol.structure_message(raw)
    except Exception as exc:
        _reject(protocol, raw, exc)
        return
    try:
        protocol.handle_message(message)
    except Exception:  # a bug in a handler: one message fails, the server goes on
        log.exception("failed to handle a %s message", clip(str(raw.get("method", "response"))))


def _reject(protocol: JsonRPCProtocol, raw: dict[str, Any], exc: Exception) -> None:
    """Answer a message whose shape the protocol refused."""
    method = clip(str(raw.get("method", "")))
    if "id" not in raw:
        log.warning("dropped a malformed %s notification", method)
        return
    msg_id = raw["id"]
    if "method" not in raw:
        # An answer to one of our requests that cannot be read: fail the waiting request
        # now rather than leave it waiting for an answer that has come and gone.
        _fail_pending(protocol, msg_id, "the client's answer could not be read")
        return
    if isinstance(exc, JsonRpcException):
        detail = str(exc.message or exc.__cause__ or exc)
        if isinstance(exc, JsonRpcInvalidRequest):
            text = f"Invalid Request: {clip(detail)}"
        else:
            text = f"invalid params for {method}: {clip(detail)}"
        code = exc.code
    else:
        code, text = -32600, f"Invalid Request: {clip(str(exc))}"
    if msg_id == getattr(protocol, "lean_answered", None):  # answered already: shown instead
        protocol._send_response(msg_id, error=JsonRpcException(text, code).to_response_error())
        return
    protocol._send_data(error_response(msg_id, code, text))


def _fail_pending(protocol: JsonRPCProtocol, msg_id: Any, reason: str) -> None:
    future = protocol._request_futures.pop(msg_id, None)
    protocol._result_types.pop(msg_id, None)
    if future is None or future.done():
        log.warning("dropped an unreadable answer to unknown request %s", clip(repr(msg_id)))
        return
    log.warning("%s (request %s)", reason, clip(repr(msg_id)))
    future.set_exception(JsonRpcInvalidRequest(reason))


def recover_id(head: bytes, tail: bytes) -> Any:
    """The top-level id of a body seen only by its first and last bytes, if it shows."""
    found = _HEAD_ID.match(head) or _TAIL_ID.search(tail)
    if found is None:
        return None
    try:
        return json.loads(found.group(1))
    except ValueError:
        return None


def answer_oversized(protocol: JsonRPCProtocol, skipped: Oversized, cap: int) -> None:
    """A body over the cap was skipped: answer (or fail the request it answers) if it shows
    its id, else log one line."""
    reason = (
        f"message of {skipped.length} bytes is over the limit of {cap} bytes "
        "(setting maxMessageBytes)"
    )
    msg_id = recover_id(skipped.head, skipped.tail)
    if msg_id is None or not _valid_id(msg_id):
        log.warning("skipped a %s without a readable id", reason)
        return
    if msg_id in protocol._result_types:  # the id of one of our requests: this answers it
        _fail_pending(protocol, msg_id, f"skipped an answer: {reason}")
        return
    log.warning("refused a %s", reason)
    protocol._send_data(error_response(msg_id, -32600, f"Invalid Request: {reason}"))
