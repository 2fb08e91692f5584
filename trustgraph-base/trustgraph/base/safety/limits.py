"""Limits on what a request may contain, and the JSON decoding that enforces them.

Python's JSON decoder recurses once per nesting level: a value nested about
a thousand levels deep raises ``RecursionError`` (not a ``ValueError``, so
code that catches decoding errors lets it through), and one a little less
deep decodes but breaks whatever recurses over it next (the encoder, the
schema codec, a template).  Every JSON text that comes from outside (a
request body, a websocket frame, a JSON string inside a message, a model's
reply) is decoded here, so one limit holds everywhere and every failure is a
``ValueError`` that says what was wrong.

The limits (docs/security.md, "Limits, logs and secrets"):

* :data:`MAX_JSON_DEPTH` levels of nested arrays and objects;
* :data:`MAX_JSON_CONTAINERS` arrays and objects in one text (a body of
  ``[{}, {}, ...]`` costs about 25 times its size in memory);
* the gateway's body and frame size, :data:`MAX_BODY`;
* a request's ``id``, :data:`MAX_ID` characters;
* one message on the broker, :data:`MAX_MESSAGE_BYTES`.
"""

from __future__ import annotations

import json
from typing import Any

#: Deeper than any real request (a flow blueprint is about 6 levels), and far
#: enough below the interpreter's recursion limit that code recursing over a
#: value (several frames per level) still has room.
MAX_JSON_DEPTH = 100

#: Arrays and objects in one JSON text.
MAX_JSON_CONTAINERS = 1_000_000

#: A REST body or websocket frame the gateway reads (upstream: 256 MiB and
#: 50 MiB).  Requests on non-persistent topics cannot exceed 5 MiB anyway;
#: this leaves room for the bulk kinds (text-load, document-load) on
#: persistent ones while bounding what one request can make the gateway hold.
MAX_BODY = 32 * 1024 * 1024

#: A request id (the ``id`` message property, a websocket frame's ``id``).  Ids
#: are uuid4s (36 characters) for every client we know; a longer one is refused
#: with an error reply carrying it, so a caller can still match it, because
#: every reply, log line and in-flight table would otherwise hold a copy.
MAX_ID = 1024

#: One message on the broker.  Pulsar's default maxMessageSize is 5 MiB, less
#: room for the metadata (pulsar-client refuses more than 5,232,640 bytes).
#: Persistent topics chunk bigger messages; non-persistent ones (every request
#: and response topic) cannot, and the client would drop the message with only a
#: log line, so the producer refuses it up front with a clear error, and a
#: command splits what would not fit (tg-import-config).
MAX_MESSAGE_BYTES = 5 * 1024 * 1024 - 10 * 1024

_DECODER = json.JSONDecoder()
_LENIENT = json.JSONDecoder(strict=False)


class JsonLimitError(ValueError):
    """A JSON text over one of the limits (a ``ValueError``, as every decoding failure)."""


def loads(text: str | bytes | bytearray, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads`` within the limits; every failure is a ``ValueError``.

    That is ``json.JSONDecodeError`` for text that is not JSON,
    ``UnicodeDecodeError`` for bytes that are not UTF-8 and
    :class:`JsonLimitError` for JSON over a limit.
    """
    if isinstance(text, (bytes, bytearray)):
        # As json.loads: UTF-8, or UTF-16/32 told apart by the first bytes.
        text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")
    _check_containers(text)
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise _too_deep(max_depth) from None
    check_depth(value, max_depth, text)
    return value


def loads_object(text: str | None, what: str, verb: str = "is") -> dict[str, Any]:
    """A JSON object given as text (a tool call's config, arguments or parameters), within the
    limits: empty text, ``{}`` and ``null`` are no keys; a ``ValueError`` naming ``what``
    otherwise (``"{what} {verb} not valid JSON: ..."``)."""
    if not text or text == "{}":  # the common case, without the JSON parser
        return {}
    try:
        value = loads(text)
    except ValueError as e:
        raise ValueError(f"{what} {verb} not valid JSON: {e}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object, got {type(value).__name__}")
    return value


def object_or_none(text: str | None) -> dict[str, Any] | None:
    """A JSON object given as text, within the limits; None when there is none, or it is not
    JSON, or not an object: for optional values a peer may leave out or send garbled (an
    upstream peer sets none of our properties), where a bad one means "not given"."""
    if not text:
        return None
    try:
        value = loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def raw_decode(text: str, index: int = 0, *, strict: bool = True,
               max_depth: int = MAX_JSON_DEPTH) -> tuple[Any, int]:
    """``JSONDecoder.raw_decode`` within the limits: the value at ``index`` and where it ends.

    ``strict=False`` accepts raw control characters inside strings (models
    write raw newlines).  Failures as :func:`loads`.
    """
    _check_containers(text)
    try:
        value, end = (_DECODER if strict else _LENIENT).raw_decode(text, index)
    except RecursionError:
        raise _too_deep(max_depth) from None
    check_depth(value, max_depth, text)
    return value, end


def check_depth(value: Any, max_depth: int = MAX_JSON_DEPTH, text: str | None = None) -> None:
    """Raise :class:`JsonLimitError` when ``value`` nests deeper than ``max_depth``.

    Iterative, so a deep value cannot exhaust the stack here.  Given the
    ``text`` it came from, a text with fewer brackets than the limit is
    passed without a walk (the common case: a small request).
    """
    if text is not None and text.count("[") + text.count("{") <= max_depth:
        return
    if value.__class__ is not dict and value.__class__ is not list:
        return
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise _too_deep(max_depth)
        for child in (node.values() if node.__class__ is dict else node):
            cls = child.__class__
            if cls is dict or cls is list:
                stack.append((child, depth + 1))


def _check_containers(text: str) -> None:
    # Brackets inside strings count too: an upper bound, found at C speed
    # before the decoder builds anything.
    if len(text) > MAX_JSON_CONTAINERS and text.count("[") + text.count("{") > MAX_JSON_CONTAINERS:
        raise JsonLimitError(f"JSON with more than {MAX_JSON_CONTAINERS:,} arrays and objects "
                             f"is over the limit")


def id_problem(rid: str) -> str | None:
    """Why a request id is refused, or None: the one wording, for the bus and the websocket."""
    if len(rid) > MAX_ID:
        return f"the request id is {len(rid):,} characters long, over the limit of {MAX_ID:,}"
    return None


def _too_deep(max_depth: int) -> JsonLimitError:
    return JsonLimitError(f"JSON nested deeper than {max_depth} levels is over the limit")
