"""The 2.11 agent and prompt records (``trustgraph.compat.v211.schema``) against upstream 2.11.1's encoding.

Each payload is what upstream 2.11.1 puts on the bus (its Pulsar backend: ``json.dumps`` of
``serialization.dataclass_to_dict``, every field present, None as null, in its field order),
written out here as text, so a renamed field, a changed default or a codec change fails these.
"""

from __future__ import annotations

import json

import pytest
from trustgraph.compat.v211.schema import AgentRequest, AgentResponse, AgentStep, PlanStep, PromptResponse
from trustgraph.schema import IRI, LITERAL, Error, PromptRequest, SchemaError, decode, encode, to_dict

# An orchestrator's dialog step on its way back to the agent: every 2.11 field set.
REQUEST = (
    '{"question": "Who flew STS-51-L?", "state": null, "group": ["default"], "history": [{"thought": "Check", '
    '"action": "kb", "arguments": {"question": "crew"}, "observation": "Scobee", "step_type": "react", "plan": '
    '[{"goal": "g", "tool_hint": "kb", "depends_on": [0], "status": "completed", "result": "r"}], '
    '"subagent_results": {"g": "r"}}], "collection": "default", "streaming": true, "session_id": "s-1", '
    '"conversation_id": "", "pattern": "react", "task_type": "", "framing": "", "correlation_id": "", '
    '"parent_session_id": "", "subagent_goal": "", "expected_siblings": 0}')

THOUGHT = (
    '{"message_type": "thought", "content": "Check the graph", "end_of_message": true, "end_of_dialog": false, '
    '"explain_id": null, "explain_graph": null, "explain_triples": [], "message_id": '
    '"urn:trustgraph:agent:s-1/i1/thought", "error": null, "in_token": null, "out_token": null, "model": null}')

EXPLAIN = (
    '{"message_type": "explain", "content": "", "end_of_message": false, "end_of_dialog": false, "explain_id": '
    '"urn:trustgraph:agent:s-1", "explain_graph": "urn:graph:retrieval", "explain_triples": [{"s": {"type": "i", '
    '"iri": "urn:trustgraph:agent:s-1", "id": "", "value": "", "datatype": "", "language": "", "triple": null}, '
    '"p": {"type": "i", "iri": "http://www.w3.org/2000/01/rdf-schema#label", "id": "", "value": "", "datatype": "", '
    '"language": "", "triple": null}, "o": {"type": "l", "iri": "", "id": "", "value": "q", "datatype": "", '
    '"language": "", "triple": null}, "g": null}], "message_id": "", "error": null, "in_token": null, '
    '"out_token": null, "model": null}')

ERROR = (
    '{"message_type": "error", "content": "Too many agent iterations", "end_of_message": true, "end_of_dialog": '
    'true, "explain_id": null, "explain_graph": null, "explain_triples": [], "message_id": "", "error": {"type": '
    '"agent-error", "message": "Too many agent iterations"}, "in_token": null, "out_token": null, "model": null}')

FINAL = (
    '{"message_type": "answer", "content": "", "end_of_message": true, "end_of_dialog": true, "explain_id": null, '
    '"explain_graph": null, "explain_triples": [], "message_id": "urn:trustgraph:agent:s-1/final", "error": null, '
    '"in_token": 120, "out_token": 30, "model": "gpt"}')

# What 2.11.1's prompt-template sends: text, a JSON object, an error.
PROMPT_TEXT = ('{"error": null, "text": "Thought: x\\nFinal Answer: y", "object": null, "end_of_stream": true, '
               '"in_token": 12, "out_token": 7, "model": "m"}')
PROMPT_OBJECT = ('{"error": null, "text": null, "object": "{\\"a\\": 1}", "end_of_stream": true, "in_token": 0, '
                 '"out_token": 0, "model": ""}')
PROMPT_ERROR = ('{"error": {"type": "llm-error", "message": "boom"}, "text": null, "object": null, '
                '"end_of_stream": true, "in_token": null, "out_token": null, "model": null}')

#: Ours, written after 2.11's fields (2.11's decoders skip keys they do not know).
OURS = ', "outcome": "", "candidates": null, "approval": null}'


def test_a_2_11_agent_request_decodes_and_round_trips_byte_for_byte():
    request = decode(AgentRequest, REQUEST.encode())
    assert (request.question, request.state, request.group, request.session_id, request.pattern) == (
        "Who flew STS-51-L?", None, ["default"], "s-1", "react")
    (step,) = request.history
    assert step == AgentStep(thought="Check", action="kb", arguments={"question": "crew"}, observation="Scobee",
                             step_type="react", plan=[PlanStep(goal="g", tool_hint="kb", depends_on=[0],
                                                               status="completed", result="r")],
                             subagent_results={"g": "r"})
    assert encode(request) == REQUEST.encode()
    assert "user" not in to_dict(request)


def test_a_2_11_request_from_its_cli_takes_2_11_defaults():
    request = decode(AgentRequest, b'{"question": "Hi", "streaming": true}')
    assert (request.collection, request.state, request.group, request.history, request.expected_siblings) == (
        "default", "", None, [], 0)
    assert PlanStep().status == "pending"


@pytest.mark.parametrize("payload", [THOUGHT, EXPLAIN, ERROR, FINAL], ids=["thought", "explain", "error", "final"])
def test_a_2_11_agent_response_decodes_and_round_trips(payload):
    response = decode(AgentResponse, payload.encode())
    # 2.11's bytes, then our two fields at their defaults
    assert encode(response) == (payload[:-1] + OURS).encode()
    assert decode(AgentResponse, encode(response)) == response


def test_2_11_response_fields_decode_to_their_values():
    explain = decode(AgentResponse, EXPLAIN.encode())
    (triple,) = explain.explain_triples
    assert (triple.s.type, triple.s.iri, triple.o.type, triple.o.value, triple.g) == (
        IRI, "urn:trustgraph:agent:s-1", LITERAL, "q", None)
    error = decode(AgentResponse, ERROR.encode())
    assert error.error == Error(type="agent-error", message="Too many agent iterations")
    final = decode(AgentResponse, FINAL.encode())
    assert (final.in_token, final.out_token, final.model, final.message_id) == (
        120, 30, "gpt", "urn:trustgraph:agent:s-1/final")


@pytest.mark.parametrize("payload", [PROMPT_TEXT, PROMPT_OBJECT, PROMPT_ERROR], ids=["text", "object", "error"])
def test_a_2_11_prompt_response_round_trips_byte_for_byte(payload):
    response = decode(PromptResponse, payload.encode())
    assert encode(response) == payload.encode()


def test_2_11_prompt_responses_read_as_the_agent_reads_them():
    text = decode(PromptResponse, PROMPT_TEXT.encode())
    assert (text.text, text.object, text.in_token, text.model) == ("Thought: x\nFinal Answer: y", None, 12, "m")
    assert json.loads(decode(PromptResponse, PROMPT_OBJECT.encode()).object) == {"a": 1}
    assert decode(PromptResponse, PROMPT_ERROR.encode()).error.message == "boom"


def test_the_2_1_prompt_request_is_2_11s_too():
    # 2.11.1's PromptRequest has 2.1's fields, so the agent sends the one record on both wires.
    request = PromptRequest(id="agent-react", terms={"question": json.dumps("Who?")}, streaming=False)
    assert encode(request) == b'{"id": "agent-react", "terms": {"question": "\\"Who?\\""}, "streaming": false}'


def test_a_wrongly_typed_2_11_field_is_a_schema_error_naming_it():
    with pytest.raises(SchemaError, match=r"AgentRequest\.expected_siblings: expected int, got str"):
        decode(AgentRequest, b'{"question": "q", "expected_siblings": "two"}')
