"""How the agent-quality table reads and scores one dialog, and sums a row of them.

A :class:`Dialog` is what a websocket client saw of one agent dialog: each
gateway response is fed in as it came (:meth:`Dialog.feed`), streamed chunks
are joined per message, and the raw responses are kept (``frames``) so a
recorded dialog can be scored again later.

The agent may say how a dialog ended (our extension, field ``outcome`` of
its final message, the one with ``end_of_dialog``):

* ``tool-result``: answered from a tool's result;
* ``no-tool``: no tool fits; the answer is the model's own, marked as such;
* ``asked-back``: not sure which tool was meant; the answer asks, and the
  message's ``candidates`` lists the likely tools, most likely first;
* ``tool-unavailable``: a tool could not be used (an error ending);
* ``error``: any other failure of the agent.

An upstream agent, or one from before that field, sends none; its dialogs
score exactly as they did before the field existed (no abstentions, every
answer either from the expected tool's result or wrongly successful).

A transport timeout is a dialog that the gateway ended with its own
``Timeout`` (``gateway-error``) or that did not end within the client's
deadline: the caller got no word from the agent at all.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from common import percentile
from quality_args import args_right, distinctive, key_value, normal_ws

#: Outcomes that end a dialog honestly without a tool's answer.
ABSTAINED = frozenset({"asked-back", "no-tool"})
#: Outcomes that are failures even when an answer message came.
FAILED = frozenset({"tool-unavailable", "error"})
OUTCOMES = ("tool-result", "no-tool", "asked-back", "tool-unavailable", "error")


@dataclass
class Call:
    """One ``action`` message: the tool the model named, its arguments, and the observation that followed."""

    tool: str
    args: Any                 # the parsed JSON, None when the content was not "<tool> <json>"
    raw: str
    observation: str | None = None


def _candidates(value: Any) -> list[str]:
    """The ``candidates`` field: a JSON list of tool names, or the same list as JSON text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    return [str(v) for v in value if isinstance(v, str)] if isinstance(value, list) else []


@dataclass
class Dialog:
    """One agent dialog as a websocket client saw it (streamed chunks joined per message)."""

    question: str
    secs: float = 0.0
    messages: list[tuple[str, str]] = field(default_factory=list)   # (chunk_type, whole message text)
    frames: list[dict[str, Any]] = field(default_factory=list)      # every response, as it came
    answer: str | None = None
    answered: bool = False    # an answer message with end_of_dialog came
    error: str | None = None
    timed_out: bool = False   # ended by a transport timeout, not by the agent
    socket_error: str | None = None   # a gateway error with no response (a frame not answered by id)
    cut_after: float | None = None    # the client's deadline passed after this many seconds
    outcome: str | None = None
    candidates: list[str] = field(default_factory=list)
    _kind: str | None = None
    _text: str = ""

    def feed(self, response: dict[str, Any]) -> None:
        self.frames.append(response)
        if isinstance(response.get("outcome"), str) and response["outcome"]:
            self.outcome = response["outcome"]
        if "candidates" in response:
            self.candidates = _candidates(response["candidates"])
        err = response.get("error")
        if err:
            self.error = (f"{err.get('type')}: {err.get('message')}" if isinstance(err, dict) else str(err))
            if isinstance(err, dict) and err.get("type") == "gateway-error" and err.get("message") == "Timeout":
                self.timed_out = True
            return
        kind = response.get("chunk_type")
        content = response.get("content") or ""
        if kind == "error":
            self.error = content or "agent error"
            return
        if kind == "action":
            self._flush()
            self.messages.append(("action", content))
            return
        if kind not in ("thought", "observation", "answer"):
            return
        if self._kind not in (None, kind):
            self._flush()
        self._kind = kind
        self._text += content
        if kind == "answer" and response.get("end_of_dialog"):
            self.answered = True
        if response.get("end_of_message") or response.get("end_of_dialog"):
            self._flush()

    def no_end(self, secs: float) -> None:
        """The client's deadline passed before the dialog ended."""
        self.error = self.error or f"no end of dialog within {secs:g} s"
        self.timed_out = True
        self.cut_after = secs

    def socket_failed(self, error: Any) -> None:
        """The gateway answered with an error of its own, outside any response."""
        self.socket_error = str(error)
        self.error = f"gateway: {error}"

    def _flush(self) -> None:
        if self._kind is not None:
            self.messages.append((self._kind, self._text))
            if self._kind == "answer":
                self.answer = (self.answer or "") + self._text
        self._kind, self._text = None, ""

    def finish(self) -> None:
        self._flush()
        if self.error is None and not self.answered:
            self.error = "the dialog ended without an answer or an error"

    def record(self) -> dict[str, Any]:
        """What :meth:`replay` needs to make this dialog again (kept in dialogs.json)."""
        return {"question": self.question, "secs": round(self.secs, 3), "frames": self.frames,
                "socket_error": self.socket_error, "cut_after": self.cut_after}

    @classmethod
    def replay(cls, record: dict[str, Any]) -> Dialog:
        """A recorded dialog fed again, as its client saw it."""
        d = cls(record["question"])
        for frame in record.get("frames") or []:
            d.feed(frame)
        if record.get("socket_error") is not None:
            d.socket_failed(record["socket_error"])
        if record.get("cut_after") is not None:
            d.no_end(float(record["cut_after"]))
        d.finish()
        d.secs = float(record.get("secs") or 0.0)
        return d

    @property
    def first_kind(self) -> str | None:
        return self.messages[0][0] if self.messages else None

    @property
    def calls(self) -> list[Call]:
        """The actions in order, each with the observation that came after it (before the next step)."""
        out: list[Call] = []
        pending: Call | None = None
        for kind, text in self.messages:
            if kind == "action":
                name, _, rest = text.partition(" ")
                try:
                    args = json.loads(rest) if rest.strip() else {}
                except ValueError:
                    args = None
                pending = Call(name, args, text)
                out.append(pending)
            elif kind == "observation":
                if pending is not None:
                    pending.observation = text
                pending = None
            elif kind == "thought":
                pending = None
        return out


# -- arguments and results (each tool's rules: quality_args.py) ------------------------------
_ws = normal_ws


def _carries(answer: str, key: str) -> bool:
    return re.search(r"(?<![\w.])" + re.escape(_ws(key)) + r"(?![\w])", answer) is not None


def call_valid(call: Call, schemas: dict[str, dict[str, Any]]) -> bool:
    schema = schemas.get(call.tool)
    if schema is None or not isinstance(call.args, dict):
        return False
    try:
        jsonschema.validate(call.args, schema)
    except jsonschema.ValidationError:
        return False
    return True


# -- one dialog's score ---------------------------------------------------------------------
@dataclass
class Score:
    question: str
    tool: str | None          # the right tool; None when no tool fits
    dialog: Dialog
    right_first: bool         # the first call names the right tool
    right_offered_first: bool  # that, or asked back with the right tool as first candidate
    calls: int
    valid_calls: int
    right_args: bool
    answered_from_result: bool
    successful_right: bool    # answered from the right tool's result of the right arguments, not marked otherwise
    abstained: bool           # ended asking back, or saying no tool fits
    wrongly_successful: bool
    error: bool
    timed_out: bool
    key_only: bool = False    # wrongly successful, yet the answer has the result's key value

    @property
    def right_ending(self) -> bool:
        """The ending a right agent gives: for a tool question, the answer from the right tool's
        result with the right arguments, or asking back with the right tool first; for a question
        no tool fits, asking back or saying so."""
        if self.tool is None:
            return self.abstained
        return (self.successful_right and self.right_first and self.right_args) \
            or (self.abstained and self.right_offered_first)

    @property
    def failed(self) -> bool:
        return not self.right_ending


def score(q: dict[str, Any], d: Dialog, schemas: dict[str, dict[str, Any]]) -> Score:
    calls = d.calls
    expected = q["tool"]
    first_expected = next((c for c in calls if c.tool == expected), None) if expected else None
    answered = [c for c in calls
                if expected and c.tool == expected and c.observation and not c.observation.startswith("Error:")]
    results = [c.observation for c in answered]
    ended_ok = d.answered and d.error is None and d.outcome not in FAILED
    abstained = ended_ok and d.outcome in ABSTAINED
    answer = _ws(d.answer or "")

    def given(result: str) -> bool:
        return _ws(result) in answer or _ws(distinctive(result)) in answer

    from_result = ended_ok and any(given(r) for r in results)
    # Right only from a result of the right arguments: "5 kilometres is 5 kilometres" (a converter
    # called from kilometres for "Express 5 miles in kilometres") answers wrongly.
    from_right = ended_ok and any(given(c.observation) for c in answered if args_right(q, c.args))
    # A shortened answer carries the key value of a result of the right arguments.
    keys = [k for k in (key_value(expected, c.observation) for c in answered if args_right(q, c.args)) if k] \
        if expected else []
    right_first = expected is not None and bool(calls) and calls[0].tool == expected
    offered = d.outcome == "asked-back" and bool(d.candidates) and d.candidates[0] == expected
    wrongly = ended_ok and not abstained and not from_right
    return Score(
        question=q["question"], tool=expected, dialog=d,
        right_first=right_first, right_offered_first=right_first or (expected is not None and offered),
        calls=len(calls), valid_calls=sum(call_valid(c, schemas) for c in calls),
        right_args=first_expected is not None and args_right(q, first_expected.args),
        answered_from_result=from_result,
        successful_right=from_right and d.outcome in (None, "tool-result"),
        abstained=abstained,
        wrongly_successful=wrongly,
        error=not ended_ok,
        timed_out=d.timed_out,
        key_only=wrongly and any(_carries(answer, k) for k in keys),
    )


def summarise(scores: list[Score], tools: Iterable[str]) -> dict[str, Any]:
    """A row of the table: the counts, and per right tool (None: no tool fits) how often it came first."""
    secs = [s.dialog.secs for s in scores]
    per_tool: dict[str | None, list[int]] = {t: [0, 0] for t in tools}
    outcomes: dict[str, int] = {}
    for s in scores:
        right = s.abstained if s.tool is None else s.right_offered_first
        per_tool.setdefault(s.tool, [0, 0])
        per_tool[s.tool][1] += 1
        per_tool[s.tool][0] += right
        name = s.dialog.outcome or "(none)"
        outcomes[name] = outcomes.get(name, 0) + 1

    def count(attr: str, which: Iterable[Score] = scores) -> int:
        return sum(bool(getattr(s, attr)) for s in which)

    no_tool = [s for s in scores if s.tool is None]
    return {
        "questions": len(scores),
        "tool_questions": len(scores) - len(no_tool),
        "no_tool_questions": len(no_tool),
        "right_first": count("right_first"),
        "right_offered_first": count("right_offered_first"),
        "calls": sum(s.calls for s in scores),
        "valid_calls": sum(s.valid_calls for s in scores),
        "right_args": count("right_args"),
        "answered": count("answered_from_result"),
        "successful_right": count("successful_right"),
        "abstained": count("abstained"),
        "abstained_no_tool": count("abstained", no_tool),
        "wrongly": count("wrongly_successful"),
        "key_only": count("key_only"),
        "errors": count("error"),
        "timeouts": count("timed_out"),
        "right_endings": count("right_ending"),
        "outcomes": outcomes,
        "median_s": statistics.median(secs) if secs else 0.0,
        "p90_s": percentile(secs, 90) if secs else 0.0,
        "per_tool": per_tool,
    }
