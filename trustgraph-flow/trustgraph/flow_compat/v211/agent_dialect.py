"""agent-manager-react's messages on upstream 2.11's wire: the ``agent-dialect`` of :class:`Wire211`.

Ours is :data:`trustgraph.agent.react.dialects.DIALECT`; this is the same
:class:`~trustgraph.agent.react.dialects.Dialect` with 2.11's records, so the
loop reads and writes 2.1's request and its events on either wire.

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

from trustgraph.agent.react.dialects import ERROR_TYPE, Dialect
from trustgraph.agent.react.vocabulary import Act, Answer, Event, Failed, Observation, Thought
from trustgraph.base.messaging.serving import Replies, ServiceError, message_or_type
from trustgraph.compat.v211 import schema as v211
from trustgraph.compat.v211.schema.agent import PATTERN_REACT
from trustgraph.compat.v211.tool_records import TOOLS
from trustgraph.compat.v211.wire import WIRE
from trustgraph.schema import AgentRequest, AgentStep, Error


def _error(error: Error) -> v211.AgentResponse:
    # 2.11.1's agent answers every failure it catches in this shape, streamed or not.
    return v211.AgentResponse(message_type="error", content=error.message, end_of_message=True,
                              end_of_dialog=True, error=error)


REPLIES = Replies(error_record=_error, error_type=ERROR_TYPE, describe=message_or_type, confirm=True)

#: The patterns agent-manager-react runs; 2.11's orchestrator runs the others.
REACT_PATTERNS = ("", PATTERN_REACT)


def _agent_uri(session_id: str) -> str:
    """2.11's provenance URI of a dialog (trustgraph-base 2.11.1 ``provenance/uris.py``)."""
    return f"urn:trustgraph:agent:{session_id}"


class Dialog:
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
            error = _error(Error(type=ERROR_TYPE, message=event.message))
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
                                      candidates=list(event.candidates) or None, approval=event.approval)
        kind = "thought" if isinstance(event, Thought) else "observation"
        return v211.AgentResponse(message_type=kind, content=event.content, end_of_message=event.end,
                                  message_id=message_id)

    def next(self, continued: AgentRequest) -> v211.AgentRequest:
        """The request as it came, with the new state and steps and the dialog's session.

        The steps the request came with are kept as 2.11 wrote them; the loop's steps after them
        are added (one; all of a dialog resumed from an approval token, whose request came with
        none)."""
        own = list(self._record.history or [])
        return dataclasses.replace(
            self._record, state=continued.state, session_id=self.session_id,
            history=[*own, *(v211.AgentStep(thought=step.thought, action=step.action, arguments=dict(step.arguments),
                                            observation=step.observation)
                             for step in continued.history[len(own):])])


#: The agent's dialect on 2.11: its request, response and prompt-reply records, and its tools'.
DIALECT = Dialect(WIRE.name, v211.AgentRequest, v211.AgentResponse, v211.PromptResponse, REPLIES, Dialog,
                  TOOLS)
