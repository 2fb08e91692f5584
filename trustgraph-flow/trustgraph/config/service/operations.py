"""Running one operation of a table: shared by the config and the flow operations.

Both look the operation up in a table, answer an unknown one with
``bad-operation``, and turn every failure into an error reply so one bad
request cannot stop the service: only the error type and the response shape
differ.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

logger = logging.getLogger(__name__)

Response = dict[str, Any]
Handler = Callable[[Mapping[str, Any]], tuple[Response, bool]]


class Refused(Exception):
    """A request a handler will not carry out because of its content; the text goes to the caller verbatim."""


def run_operation(request: Any, handlers: Mapping[str, Handler], *, error_type: str,
             error: Callable[[str, str], Response]) -> tuple[Response, bool]:
    """Run ``request``'s operation; return ``(response, push_needed)``, never raise.

    A :class:`Refused` goes to the caller as is.  Anything else is reported
    with its type, and logged with a traceback.
    """
    try:
        if not isinstance(request, Mapping):
            raise Refused(f"request must be an object, got {type(request).__name__}")
        operation = request.get("operation")
        handler = handlers.get(operation) if isinstance(operation, str) else None
        if handler is None:
            return error("bad-operation", "Bad operation"), False
        return handler(request)
    except Refused as e:
        return error(error_type, str(e)), False
    except Exception as e:
        logger.exception("%s request failed", error_type.removesuffix("-error"))
        return error(error_type, f"{type(e).__name__}: {e}"), False
