"""The agent's wire edges (``agent/react/dialects.py``, 2.11's ``flow_compat/v211/agent_dialect.py``): 2.1's bytes
as they were, 2.11's as 2.11.1 writes them."""

from __future__ import annotations

import pytest
from trustgraph.agent.react.dialects import DIALECT, Dialect
from trustgraph.agent.react.vocabulary import Act, Answer, Failed, Observation, Thought
from trustgraph.base.messaging.serving import ServiceError
from trustgraph.base.wire import wire_for
from trustgraph.compat.v211 import schema as v211
from trustgraph.schema import AgentRequest, AgentStep, encode


def dialect_for(wire: str) -> Dialect:
    """The agent's dialect on ``wire``, as its processor gets it."""
    return wire_for(wire).component("agent-dialect", DIALECT)


# -- 2.1: pinned, byte for byte, as the agent wrote them before the 2.11 wire existed -----------

GOLDEN_21 = [
    (Answer("a", outcome="no-tool"), False,
     '{"chunk_type": "", "content": "", "end_of_message": true, "end_of_dialog": true, "answer": "a", "error": '
     'null, "thought": null, "observation": null, "outcome": "no-tool", "candidates": null, "approval": null}'),
    (Failed("boom", outcome="tool-unavailable"), False,
     '{"chunk_type": "", "content": "", "end_of_message": false, "end_of_dialog": false, "answer": "", "error": '
     '{"type": "agent-error", "message": "boom"}, "thought": "", "observation": "", "outcome": "tool-unavailable", '
     '"candidates": null, "approval": null}'),
    (Thought("t"), True,
     '{"chunk_type": "thought", "content": "t", "end_of_message": true, "end_of_dialog": false, "answer": "", '
     '"error": null, "thought": "t", "observation": "", "outcome": "", "candidates": null, "approval": null}'),
    (Answer("", end=True, outcome="tool-result", candidates=("joke",)), True,
     '{"chunk_type": "answer", "content": "", "end_of_message": true, "end_of_dialog": true, "answer": "", '
     '"error": null, "thought": "", "observation": "", "outcome": "tool-result", "candidates": ["joke"], "approval": null}'),
]


@pytest.mark.parametrize(("event", "streaming", "payload"), GOLDEN_21)
def test_the_2_1_messages_are_the_bytes_they_were(event, streaming, payload):
    dialog = dialect_for("2.1").open(AgentRequest(question="q", user="alice", streaming=streaming))
    assert encode(dialog.response(event)) == payload.encode()


def test_a_2_1_request_is_the_loops_own_and_next_is_what_the_loop_wrote():
    request = AgentRequest(question="q", user="alice")
    dialog = dialect_for("2.1").open(request)
    assert dialog.request is request
    continued = AgentRequest(question="q", user="alice", history=[AgentStep(action="a")])
    assert dialog.next(continued) is continued


def test_2_1_error_replies_are_as_they_were():
    replies = dialect_for("2.1").replies
    assert encode(replies.malformed("y")) == (
        b'{"chunk_type": "error", "content": "malformed request: y", "end_of_message": true, "end_of_dialog": true, '
        b'"answer": "", "error": {"type": "agent-error", "message": "malformed request: y"}, "thought": "", '
        b'"observation": "", "outcome": "", "candidates": null, "approval": null}')


# -- 2.11 ---------------------------------------------------------------------------------------

S = "urn:trustgraph:agent:s-1"
OURS = ', "outcome": "", "candidates": null, "approval": null}'


def open_211(**fields):
    return dialect_for("2.11").open(v211.AgentRequest(**{"question": "q", "session_id": "s-1", **fields}))


def test_2_11_messages_are_what_2_11s_agent_writes():
    dialog = open_211(history=[v211.AgentStep(thought="t0", action="a", observation="o0")])
    # the thought of iteration 2, whole (2.11.1's agent_manager sends it with end_of_message set)
    assert encode(dialog.response(Thought("Check the graph"))) == (
        '{"message_type": "thought", "content": "Check the graph", "end_of_message": true, "end_of_dialog": false, '
        '"explain_id": null, "explain_graph": null, "explain_triples": [], "message_id": '
        f'"{S}/i2/thought", "error": null, "in_token": null, "out_token": null, "model": null' + OURS).encode()
    assert dialog.response(Observation("part", end=False)).message_id == f"{S}/i2/observation"
    end = dialog.response(Answer("", end=True, outcome="tool-result", candidates=("joke",)))
    assert (end.message_type, end.content, end.end_of_message, end.end_of_dialog, end.message_id) == (
        "answer", "", True, True, f"{S}/final")
    assert (end.outcome, end.candidates) == ("tool-result", ["joke"])
    chunk = dialog.response(Answer("par", end=False))
    assert (chunk.end_of_message, chunk.end_of_dialog) == (False, False)


def test_a_2_11_failure_is_one_error_message_that_ends_the_dialog():
    error = open_211().response(Failed("Too many agent iterations", outcome="error"))
    assert encode(error) == (
        b'{"message_type": "error", "content": "Too many agent iterations", "end_of_message": true, "end_of_dialog": '
        b'true, "explain_id": null, "explain_graph": null, "explain_triples": [], "message_id": "", "error": {"type": '
        b'"agent-error", "message": "Too many agent iterations"}, "in_token": null, "out_token": null, "model": null, '
        b'"outcome": "error", "candidates": null, "approval": null}')
    assert dialect_for("2.11").replies.malformed("bad").message_type == "error"


def test_an_action_message_is_sent_as_action():
    act = open_211().response(Act("joke", {"topic": "cats"}))
    assert (act.message_type, act.content, act.message_id) == ("action", 'joke {"topic": "cats"}', f"{S}/i1")


def test_a_2_11_request_in_the_loops_terms():
    dialog = open_211(state=None, group=["g"], streaming=True,
                      history=[v211.AgentStep(thought="t", action="a", arguments={"x": "1"}, observation="o",
                                              step_type="react")])
    assert dialog.request == AgentRequest(question="q", state="", group=["g"], streaming=True, user="",
                                          history=[AgentStep(thought="t", action="a", arguments={"x": "1"},
                                                             observation="o")])


def test_the_next_2_11_request_carries_the_dialogs_own_fields():
    first = v211.AgentStep(thought="t", action="a", observation="o", step_type="react")
    dialog = dialect_for("2.11").open(v211.AgentRequest(
        question="q", collection="c", conversation_id="conv", pattern="react", framing="f", history=[first]))
    continued = AgentRequest(question="q", state="after", history=[*dialog.request.history, AgentStep(
        thought="t2", action="b", arguments={"y": "2"}, observation="o2")])
    nxt = dialog.next(continued)
    assert nxt.session_id and nxt.session_id == dialog.session_id  # made here, the same for every message
    assert (nxt.state, nxt.collection, nxt.conversation_id, nxt.pattern, nxt.framing) == (
        "after", "c", "conv", "react", "f")
    assert nxt.history == [first, v211.AgentStep(thought="t2", action="b", arguments={"y": "2"}, observation="o2")]


@pytest.mark.parametrize("pattern", ["plan-then-execute", "supervisor", "Plan"])
def test_a_pattern_other_than_react_is_refused_in_one_line(pattern):
    with pytest.raises(ServiceError) as refused:
        open_211(pattern=pattern)
    assert repr(pattern) in str(refused.value) and "\n" not in str(refused.value)
