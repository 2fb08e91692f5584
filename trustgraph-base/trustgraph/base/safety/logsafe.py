"""Log lines that a request cannot forge, flood or fill with secrets.

Log messages quote what requests carry (ids, topics, names, error texts).
Quoted raw, a newline in a message's ``id`` property starts a line that
looks like a log record of its own, and a 1 MB id makes a 1 MB line.  Rather
than trust every log call to escape its arguments, the processors' log
handler does it for every record (:func:`configure`):

* each string argument is cut to :data:`MAX_ARG` characters (:data:`MAX_DEBUG_ARG`
  at DEBUG, where a developer asked for payloads), the whole message to
  :data:`MAX_MESSAGE`, saying how much was left out;
* control characters are escaped (a newline becomes ``\\n``), so one record
  is one line;
* exception and stack texts are indented, so every line that starts in
  column 0 is the first line of a record, whatever an exception's message says;
* credentials are masked (:func:`trustgraph.base.safety.secrets.scrub`).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from . import secrets

#: As long as the longest request id served (limits.MAX_ID), so no valid id is ever cut,
#: and long enough for the composed one-line explanations some messages pass as one argument.
MAX_ARG = 1024
MAX_DEBUG_ARG = 4096
MAX_MESSAGE = 16384

#: A processor's log line: time, level, logger, message (what ``launch`` configures).
PROCESSOR_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# C0 and C1 controls (ESC starts a terminal escape sequence, and so does the one-character
# CSI, U+009B), line and paragraph separators, and the bidirectional overrides and isolates,
# which make a terminal show text in another order than it is.
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r"}
# Kept beyond a cut while masking, so that a secret across the cut is still whole.
_MARGIN = 512


def escape(text: str) -> str:
    """``text`` with control characters (tab aside) written as escapes: always one line, and
    nothing a terminal would take as a command or a change of direction (the tables of the
    commands show what services announce this way too)."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_escaped, text)


def _escaped(m: re.Match[str]) -> str:
    c = m[0]
    if c in _NAMED:
        return _NAMED[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def clip(text: str, limit: int = MAX_ARG, length: int | None = None) -> str:
    """``text`` cut to ``limit`` characters, saying how many were left out (of ``length``, if given)."""
    total = len(text) if length is None else length
    if total <= limit:
        return text
    return f"{text[:limit]}...({total - limit:,} more characters)"


def shown(value: Any, limit: int = MAX_ARG) -> str:
    """A value (an id, a name) as a log line or an error message may quote it: escaped and clipped."""
    return escape(clip(value if isinstance(value, str) else str(value), limit))


class SafeRecords(logging.Filter):
    """Rewrites each record's message as described in the module docstring (never drops one)."""

    def filter(self, record: logging.LogRecord) -> bool:
        limit = MAX_DEBUG_ARG if record.levelno <= logging.DEBUG else MAX_ARG
        msg = record.msg if isinstance(record.msg, str) else str(record.msg)
        if record.args:
            args = record.args
            try:
                if isinstance(args, Mapping):
                    msg = msg % {k: _arg(v, limit) for k, v in args.items()}
                else:
                    msg = msg % tuple(_arg(a, limit) for a in args)
            except (TypeError, ValueError, KeyError):
                # A bad format string: the record is still worth a line.
                shown_args = args.values() if isinstance(args, Mapping) else args
                msg = f"{msg} (arguments: {', '.join(repr(_arg(a, limit)) for a in shown_args)})"
        record.msg = escape(clip(secrets.scrub(msg), MAX_MESSAGE))
        record.args = None
        return True


class SafeFormatter(logging.Formatter):
    """Indents exception and stack texts (see the module docstring) and masks credentials in them."""

    def formatException(self, ei: Any) -> str:  # noqa: N802 - logging's name
        return _indented(secrets.scrub(super().formatException(ei)))

    def formatStack(self, stack_info: str) -> str:  # noqa: N802 - logging's name
        return _indented(super().formatStack(stack_info))


def configure(level: int | str = logging.INFO, fmt: str | None = None, stream: TextIO | None = None,
              secret_values: Iterable[str | None] = ()) -> None:
    """The process's logging: one handler on ``stream`` (stderr) with :class:`SafeRecords`.

    ``secret_values`` (tokens, keys this process was given) are masked in
    every line; see :func:`trustgraph.base.safety.secrets.remember`.
    """
    secrets.remember(*secret_values)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(SafeFormatter(fmt))
    handler.addFilter(SafeRecords())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level if isinstance(level, int) else getattr(logging, str(level).upper()))


def _arg(value: Any, limit: int) -> Any:
    if isinstance(value, (int, float)) or value is None:
        return value  # for %d, %.1f
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return value  # unchanged, so %r still shows the object's repr
    # Masked before it is cut, so a cut never shows the start of a secret.
    return clip(secrets.scrub(text[:limit + _MARGIN]), limit, len(text))


def _indented(text: str) -> str:
    return "\n".join("  " + line for line in text.split("\n"))
