"""The agent's messages on a wire: the records it reads and writes, and their shapes.

Why one object per wire, chosen once at start (the processor's
``self.wire.component("agent-dialect")``): the loop (``agent_manager.py``)
reads and writes one vocabulary, the 2.1 ``AgentRequest`` and the events of
``vocabulary.py``, and only the edges differ between the wires: which records
the request, ``next``, the response and the prompt service's reply are, what a
request may ask for, how an event becomes a message and how the next
iteration's request is written.  A :class:`Dialect` holds the records and the
reply shapes; :meth:`Dialect.open` reads one request into a :class:`Dialog`,
which gives the loop its 2.1 request and turns the loop's events and its
``Continue`` back into this wire's records.  So the loop has no ``if wire``
anywhere.  :data:`DIALECT` is ours, upstream 2.1.4's records and shapes;
another wire's dialect is that wire's own (``--wire 2.11``'s is a component
of the 2.11 wire object, in the compatibility package).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, Protocol

from trustgraph.base.messaging.serving import Replies, message_or_type
from trustgraph.base.wire import NATIVE
from trustgraph.catalog.wires import TOOLS, ToolWire
from trustgraph.schema import AgentRequest, AgentResponse, Error, PromptResponse

from .vocabulary import Act, Answer, Event, Failed, Observation, Thought

ERROR_TYPE = "agent-error"


class Dialog(Protocol):
    """One request as the loop reads it, and the way back to the wire."""

    #: The request in the loop's (2.1) vocabulary.
    request: AgentRequest

    def response(self, event: Event) -> Any:
        """The wire message of one event (not :class:`~.vocabulary.Continue`)."""

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
                             candidates=list(event.candidates) or None, approval=event.approval)
    if isinstance(event, Thought):
        return AgentResponse(thought=event.content, answer=None, observation=None, end_of_message=True)
    if isinstance(event, Observation):
        return AgentResponse(observation=event.content, thought=None, answer=None, end_of_message=True)
    assert isinstance(event, Answer)
    return AgentResponse(answer=event.content, thought=None, observation=None, end_of_message=True,
                         end_of_dialog=True, outcome=event.outcome, candidates=list(event.candidates) or None,
                         approval=event.approval)


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


#: The agent's dialect on our wire (2.1's): ``Wire.components["agent-dialect"]`` names it.
DIALECT = Dialect(NATIVE.name, AgentRequest, AgentResponse, PromptResponse, REPLIES, _Dialog21, TOOLS)
