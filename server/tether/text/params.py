"""A request's params from the wire, and what is wrong with them in one line: the check of
the server's requests (``-32602``) and of ``tether rules``, which answers in-process."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from .echo import clip

M = TypeVar("M", bound=BaseModel)


class ParamsError(ValueError):
    """Params a model refuses; the message names the first bad field, cut short."""


def validated(model: type[M], params: Any) -> M:
    """Wire params → ``model``, or ``ParamsError`` (``where: why``; ``None`` is ``{}``)."""
    if params is None:
        params = {}
    try:
        # NaN and Infinity (Python's json reads them) reach the model, which refuses them.
        return model.model_validate_json(json.dumps(params))
    except (TypeError, ValueError, RecursionError) as exc:
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            where = ".".join(clip(str(p)) for p in first["loc"]) or "params"
            raise ParamsError(f"{where}: {clip(first['msg'])}") from exc
        raise ParamsError("params must be a JSON object") from exc
