"""The agent's messages on each upstream wire: 2.1's (the default) and 2.11's.

Why one object per wire, chosen once at start (``dialect_for(processor.wire)``):
the loop (``agent_manager.py``) reads and writes one vocabulary, the 2.1
``AgentRequest`` and the events of ``types.py``, and only the edges differ
between the wires: which records the request, ``next``, the response and the
prompt service's reply are, what a request may ask for, how an event becomes a
message and how the next iteration's request is written.  A :class:`Dialect`
holds the records and the reply shapes; :meth:`Dialect.open` reads one request
into a :class:`Dialog`, which gives the loop its 2.1 request and turns the
loop's events and its ``Continue`` back into this wire's records.  So the loop
has no ``if wire`` anywhere, and the 2.1 path is the code it was.

2.11's shapes, as upstream 2.11.1's agent-manager-react sends them
(trustgraph-flow 2.11.1 ``agent/react/service.py`` and ``agent_manager.py``):
every message carries ``message_type`` and ``content``; ``message_id`` names the
thought (``urn:trustgraph:agent:{session}/i{n}/thought``), the observation
(``.../i{n}/observation``) or the answer (``urn:trustgraph:agent:{session}/final``)
it belongs to; a streamed answer ends with an empty ``answer`` message that
sets ``end_of_message`` and ``end_of_dialog``; an error is ``message_type``
``error`` with the message as ``content`` and in ``error``, ending the dialog,
streamed or not.  The dialog's ``session_id`` is made on its first iteration
when the caller sent none, and goes on with ``next``.  Not sent: ``explain``
messages (no provenance triples are written), token counts (null, as 2.11.1's
agent-manager-react leaves them).
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from trustgraph.base.messaging.serving import Replies, ServiceError, message_or_type
from trustgraph.base.wire import WIRE_21, WIRE_211
from trustgraph.catalog.wires import ToolWire, tool_wire
from trustgraph.compat.v211 import schema as v211
from trustgraph.compat.v211.schema.agent import PATTERN_REACT
from trustgraph.schema import AgentRequest, AgentResponse, AgentStep, Error, PromptResponse

from .types import Act, Answer, Event, Failed, Observation, Thought

ERROR_TYPE = "agent-error"


class Dialog(Protocol):
    """One request as the loop reads it, and the way back to the wire."""

    #: The request in the loop's (2.1) vocabulary.
    request: AgentRequest

    def response(self, event: Event) -> Any:
        """The wire message of one event (not :class:`~.types.Continue`)."""

    def next(self, continued: AgentRequest) -> Any:
        """The wire request of the next iteration, from the loop's ``Continue``."""


@dataclasses.dataclass(frozen=True)
class Dialect:
    """One wire's records and reply shapes; ``open(record)`` reads a request (a bad one raises
    ServiceError, which the serving path answers in this wire's error shape)."""

    wire: str
    request: type
    response: type
    prompt_response: type
    replies: Replies
    open: Callable[[Any], Dialog]
    #: The built-in tools' flow records and implementations on this wire.
    tools: ToolWire


# -- 2.1: the records as they were ------------------------------------------------------------


def to_response(event: Event, streaming: bool) -> AgentResponse:
    """The wire message of one event, in upstream 2.1.4's streaming or non-streaming shape.

    Non-streaming messages set the legacy fields they do not use to None
    explicitly: a consumer takes a message whose ``answer`` is not null as
    the last one, and a missing key would be read as ``""``.
    """
    if isinstance(event, Failed):
        error = Error(type=ERROR_TYPE, message=event.message)
        if streaming:
            return AgentResponse(chunk_type="error", content=event.message, end_of_message=True,
                                 end_of_dialog=True, error=error, outcome=event.outcome)
        return AgentResponse(error=error, outcome=event.outcome)
    if isinstance(event, Act):
        # Ours, for callers who ask (property show-actions: tg-invoke-agent -v); upstream's
        # API reads an "action" chunk as a thought.
        content = f"{event.name} {json.dumps(event.arguments)}"
        if streaming:
            return AgentResponse(chunk_type="action", content=content, end_of_message=True)
        return AgentResponse(chunk_type="action", content=content, thought=None, answer=None,
                             observation=None, end_of_message=True)
    if streaming:
        if isinstance(event, Thought):
            return AgentResponse(chunk_type="thought", content=event.content, thought=event.content,
                                 end_of_message=event.end)
        if isinstance(event, Observation):
            return AgentResponse(chunk_type="observation", content=event.content,
                                 observation=event.content, end_of_message=event.end)
        return AgentResponse(chunk_type="answer", content=event.content, end_of_message=event.end,
                             end_of_dialog=event.end, outcome=event.outcome,
                             candidates=list(event.candidates) or None)
    if isinstance(event, Thought):
        return AgentResponse(thought=event.content, answer=None, observation=None, end_of_message=True)
    if isinstance(event, Observation):
        return AgentResponse(observation=event.content, thought=None, answer=None, end_of_message=True)
    assert isinstance(event, Answer)
    return AgentResponse(answer=event.content, thought=None, observation=None, end_of_message=True,
                         end_of_dialog=True, outcome=event.outcome, candidates=list(event.candidates) or None)


# A failure of ours (not the model's) ends the dialog: eom and eod set.  An
# undecodable request gets the streaming error shape, which both kinds of
# caller read as the end (eod set, as upstream 2.1.4's streaming error).
REPLIES = Replies(
    error_record=lambda error: AgentResponse(error=error, end_of_message=True, end_of_dialog=True),
    malformed_record=lambda error: AgentResponse(chunk_type="error", content=error.message,
                                                 end_of_message=True, end_of_dialog=True, error=error),
    error_type=ERROR_TYPE, describe=message_or_type, confirm=True)


class _Dialog21:
    """A 2.1 request is the loop's own: nothing to translate."""

    def __init__(self, request: AgentRequest) -> None:
        self.request = request
        self._streaming = bool(request.streaming)

    def response(self, event: Event) -> AgentResponse:
        return to_response(event, self._streaming)

    def next(self, continued: AgentRequest) -> AgentRequest:
        return continued


# -- 2.11 -------------------------------------------------------------------------------------


def _error_211(error: Error) -> v211.AgentResponse:
    # 2.11.1's agent answers every failure it catches in this shape, streamed or not.
    return v211.AgentResponse(message_type="error", content=error.message, end_of_message=True,
                              end_of_dialog=True, error=error)


REPLIES_211 = Replies(error_record=_error_211, error_type=ERROR_TYPE, describe=message_or_type, confirm=True)

#: The patterns agent-manager-react runs; 2.11's orchestrator runs the others.
REACT_PATTERNS = ("", PATTERN_REACT)


def _agent_uri(session_id: str) -> str:
    """2.11's provenance URI of a dialog (trustgraph-base 2.11.1 ``provenance/uris.py``)."""
    return f"urn:trustgraph:agent:{session_id}"


class _Dialog211:
    """A 2.11 request read into the loop's terms; its own fields go on with ``next``."""

    def __init__(self, record: v211.AgentRequest) -> None:
        pattern = record.pattern or ""
        if pattern not in REACT_PATTERNS:
            raise ServiceError(f"agent-manager-react runs the react pattern only, not {pattern!r}: "
                               "send it to upstream 2.11's agent-orchestrator, or leave 'pattern' empty")
        self._record = record
        self.session_id = record.session_id or str(uuid.uuid4())
        history = list(record.history or [])
        # No user on 2.11's wire: its tenancy is the workspace, whose queues the request came on.
        self.request = AgentRequest(
            question=record.question, state=record.state or "", group=record.group,
            history=[AgentStep(thought=h.thought, action=h.action, arguments=h.arguments,
                               observation=h.observation) for h in history],
            streaming=bool(record.streaming))
        iteration = f"{_agent_uri(self.session_id)}/i{len(history) + 1}"
        self._ids = {Thought: f"{iteration}/thought", Observation: f"{iteration}/observation",
                     Act: iteration, Answer: f"{_agent_uri(self.session_id)}/final"}

    def response(self, event: Event) -> v211.AgentResponse:
        if isinstance(event, Failed):
            error = _error_211(Error(type=ERROR_TYPE, message=event.message))
            error.outcome = event.outcome
            return error
        message_id = self._ids[type(event)]
        if isinstance(event, Act):
            # Ours, only for a caller that asked (show-actions); 2.11's API reads it as a thought.
            return v211.AgentResponse(message_type="action", content=f"{event.name} {json.dumps(event.arguments)}",
                                      end_of_message=True, message_id=message_id)
        if isinstance(event, Answer):
            # Whole: one message ends the dialog.  Streamed: chunks, then an empty one that does.
            return v211.AgentResponse(message_type="answer", content=event.content, end_of_message=event.end,
                                      end_of_dialog=event.end, message_id=message_id, outcome=event.outcome,
                                      candidates=list(event.candidates) or None)
        kind = "thought" if isinstance(event, Thought) else "observation"
        return v211.AgentResponse(message_type=kind, content=event.content, end_of_message=event.end,
                                  message_id=message_id)

    def next(self, continued: AgentRequest) -> v211.AgentRequest:
        """The request as it came, with the new state and step and the dialog's session."""
        step = continued.history[-1]
        return dataclasses.replace(
            self._record, state=continued.state, session_id=self.session_id,
            history=[*(self._record.history or []),
                     v211.AgentStep(thought=step.thought, action=step.action, arguments=dict(step.arguments),
                                    observation=step.observation)])


DIALECTS = {
    WIRE_21: Dialect(WIRE_21, AgentRequest, AgentResponse, PromptResponse, REPLIES, _Dialog21,
                     tool_wire(WIRE_21)),
    WIRE_211: Dialect(WIRE_211, v211.AgentRequest, v211.AgentResponse, v211.PromptResponse, REPLIES_211,
                      _Dialog211, tool_wire(WIRE_211)),
}


def dialect_for(wire: str) -> Dialect:
    """The dialect of a wire the agent speaks (``Processor.wires`` lists them)."""
    return DIALECTS[wire]
