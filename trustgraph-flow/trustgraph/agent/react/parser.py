"""The ReAct text format: the parser of a model's whole reply, and of a reply as it streams.

The reply format (upstream's, parsed more forgivingly): optional
``Thought:``; then ``Action: <tool>`` with ``Args: {json}``, or
``Final Answer: <text>``.  A marker counts at the start of a line (any case,
after list or markdown marks) or, written exactly, after a space on the same
line, because small models put everything on one line.  ``Args`` is read
with a real JSON decoder, so braces inside strings work; surrounding code
fences and quotes around the tool name are dropped.  Unlike upstream, a
multi-line final answer keeps its line breaks.

(A template may ask for a structured JSON decision instead: ``decisions.py``.)
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from trustgraph.base.formats.text import strip_fences
from trustgraph.base.safety import limits

from .vocabulary import Action, Answer, Final, ReactParseError, Thought

FORMAT_HINT = ("Reply with 'Thought: <your reasoning>' followed by either 'Action: <tool name>' and "
               "'Args: <JSON object>', or 'Final Answer: <your answer>'.")

_MARKER = re.compile(
    r"(?:(?:^|(?<=\n))[ \t>*_#-]*(?P<line>(?i:thought|action|args|final[ \t]+answer))"
    r"|(?<=[ \t])(?P<inline>Thought|Action|Args|Final Answer))[ \t*_]*:")
_LINE_FORMS = ("thought:", "thought :", "action:", "action :", "final answer:", "final answer :")
_INLINE_FORMS = ("Action:", "Action :", "Final Answer:", "Final Answer :")


@dataclass(frozen=True)
class _Marker:
    name: str   # thought, action, args or "final answer"
    start: int  # where the marker's line (or word) begins
    end: int    # just after the colon


def _markers(body: str) -> list[_Marker]:
    return [_Marker(" ".join((m["line"] or m["inline"]).lower().split()), m.start(), m.end())
            for m in _MARKER.finditer(body)]


def _skip_bold(body: str, i: int) -> int:
    while i < len(body) and body[i] in "*_":
        i += 1
    return i


def _split(body: str) -> tuple[int, _Marker | None, list[_Marker]]:
    """Where the thought starts, and the first Action/Final Answer marker after it."""
    ms = _markers(body)
    start = 0
    for m in ms:  # "Thought:", or a repeated "Thought: Thought:" (a prefix the model echoed)
        if m.name != "thought" or body[start:m.start].strip():
            break
        start = _skip_bold(body, m.end)
    decisive = next((m for m in ms if m.name in ("action", "final answer") and m.start >= start), None)
    return start, decisive, ms


def _parse_args(body: str, i: int, marked: bool, thought: str) -> dict[str, Any]:
    while i < len(body) and body[i].isspace():
        i += 1
    if body.startswith("```", i):  # Args: ```json { ... } ```
        nl = body.find("\n", i)
        i = len(body) if nl < 0 else nl + 1
        while i < len(body) and body[i].isspace():
            i += 1
    if i >= len(body) or body[i] != "{":
        if not marked or i >= len(body) or body.startswith("```", i):
            return {}  # no Args (or an empty one): a tool without arguments
        raise ReactParseError("'Args:' must be followed by a JSON object such as {\"name\": \"value\"}",
                              thought)
    try:
        value, _ = limits.raw_decode(body, i, strict=False)  # raw newlines inside strings are fine
    except json.JSONDecodeError as e:
        raise ReactParseError(f"the Args are not valid JSON ({e.msg}); write them as one JSON object "
                              "with double-quoted names and strings", thought) from None
    except ValueError as e:  # over the JSON limits, or a number too long to read
        raise ReactParseError(f"the Args cannot be read: {e}", thought) from None
    return value


def parse_react(text: str) -> Action | Final:
    """Parse one whole reply; raise :class:`ReactParseError` saying what is wrong."""
    body = strip_fences(text)
    if not body:
        raise ReactParseError("the reply is empty")
    start, decisive, ms = _split(body)
    if decisive is None:
        raise ReactParseError("the reply has neither an 'Action:' nor a 'Final Answer:' line",
                              body[start:].strip())
    thought = body[start:decisive.start].strip()
    content = _skip_bold(body, decisive.end)
    if decisive.name == "final answer":
        answer = body[content:].strip()
        if not answer:
            raise ReactParseError("the Final Answer is empty", thought)
        return Final(thought, answer)
    line_end = body.find("\n", content)
    line_end = len(body) if line_end < 0 else line_end
    args = next((m for m in ms if m.name == "args" and m.start >= content), None)
    name_end = args.start if args is not None and args.start < line_end else line_end
    name = body[content:name_end].strip().strip("\"'`*").strip()
    if not name:
        raise ReactParseError("the 'Action:' line names no tool", thought)
    at = _skip_bold(body, args.end) if args is not None else line_end
    return Action(thought, name, _parse_args(body, at, args is not None, thought))


def _prefix_of(text: str, forms: tuple[str, ...]) -> bool:
    return any(f.startswith(text) for f in forms)


def _safe_end(text: str, fenced: bool) -> int:
    """How much of a growing thought or answer can be sent: not trailing space, nor a tail
    that may yet become a marker (or the closing fence)."""
    end = len(text.rstrip())
    line = text.rfind("\n", 0, end) + 1
    head = text[line:end].lstrip(" \t>*_#-")
    norm = " ".join(head.replace("*", "").replace("_", "").lower().split())
    if _prefix_of(norm, _LINE_FORMS) or (fenced and "```".startswith(head.strip())):
        return len(text[:line].rstrip())
    for i in range(max(line, end - 16), end):
        if i > 0 and text[i - 1] in " \t" and _prefix_of(text[i:end], _INLINE_FORMS):
            return len(text[:i].rstrip())
    return end


class StreamParser:
    """Classifies a streamed reply as it grows: thought chunks, then answer chunks.

    Each :meth:`feed` returns the events the new text makes certain.
    :meth:`finish` runs :func:`parse_react` on the whole text, so both modes
    decide the same way; the streamed chunks join to the parsed thought and
    answer.  The last thought chunk has ``end`` set (it may be empty).
    """

    def __init__(self) -> None:
        self.text = ""
        self._fenced = False
        self._thought = ""
        self._thought_done = False
        self._answer = ""

    def feed(self, chunk: str) -> list[Thought | Answer]:
        self.text += chunk
        return self._advance(None)

    def finish(self) -> tuple[list[Thought | Answer], Action | Final | ReactParseError]:
        try:
            result: Action | Final | ReactParseError = parse_react(self.text)
        except ReactParseError as e:
            result = e
        return self._advance(result), result

    def _body(self) -> str | None:
        t = self.text.lstrip()
        if t.startswith("```"):
            nl = t.find("\n")
            if nl < 0:
                return None
            self._fenced = True
            return t[nl + 1:]
        return None if t and "```".startswith(t) else t

    def _advance(self, result: Action | Final | ReactParseError | None) -> list[Thought | Answer]:
        done = result is not None
        body = strip_fences(self.text) if done else self._body()
        if body is None:
            return []
        start, decisive, _ = _split(body)
        events: list[Thought | Answer] = []
        if not self._thought_done:
            if decisive is not None or done:
                full = body[start:decisive.start if decisive else len(body)].strip()
                events.append(Thought(full[len(self._thought):] if full.startswith(self._thought) else "",
                                      end=True))
                self._thought_done = True
                if not self._thought and not full:
                    events.pop()  # no thought at all: nothing to close
            else:
                text = body[start:].lstrip()
                safe = text[:_safe_end(text, self._fenced)]
                if len(safe) > len(self._thought):
                    events.append(Thought(safe[len(self._thought):], end=False))
                    self._thought = safe
        if decisive is not None and decisive.name == "final answer":
            if done:
                full = result.answer if isinstance(result, Final) else self._answer
            else:
                text = body[_skip_bold(body, decisive.end):].lstrip()
                full = text[:_safe_end(text, self._fenced)]
            if len(full) > len(self._answer) and full.startswith(self._answer):
                events.append(Answer(full[len(self._answer):], end=False))
                self._answer = full
        return events
