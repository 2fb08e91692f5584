"""The kinds this fork serves itself: config, flow, agent, LLM, prompt, mcp-tool, graph-rag, ...

The gateway speaks the JSON dialect that TrustGraph 2.1 clients send and read;
the bus speaks the schema records.  Each kind gets a :class:`Translator`:
how a JSON body becomes a request record, how a response record becomes JSON,
and when a response is the last one of a call.  The rules are upstream's,
because existing clients depend on them:

* requests use kebab-case field names for ``flow`` and ``graph-rag`` limits,
  snake_case elsewhere; defaults such as ``user: "trustgraph"`` are filled in
  here so that services see what an upstream gateway would send;
* responses leave out null (and, for most kinds, empty) fields, except the
  flags clients test (``end_of_stream``, ``end_of_message``...);
* a response whose ``error`` is set is always final and becomes
  ``{"error": {"type", "message"}}`` whatever the kind;
* the non-streaming agent's final message is the one whose ``answer`` is not
  null (a thought or observation carries an explicit ``"answer": null``).

Ours: an agent request whose ``question`` is empty or only whitespace is
refused like any body that cannot be translated (``Bad request: the agent
request's question is empty: ask a question``, a ``gateway-error``), so
nothing is sent to the agent (upstream's gateway passes it on and the model
answers nothing with a guess).
"""

from __future__ import annotations

import json
from typing import Any

from trustgraph.base.formats.text import json_or_text
from trustgraph.schema import (
    AgentRequest,
    AgentResponse,
    ConfigRequest,
    ConfigResponse,
    EmbeddingsRequest,
    EmbeddingsResponse,
    FlowRequest,
    FlowResponse,
    GraphRagQuery,
    GraphRagResponse,
    PromptRequest,
    PromptResponse,
    StructuredQueryRequest,
    StructuredQueryResponse,
    TextCompletionRequest,
    TextCompletionResponse,
    ToolRequest,
    ToolResponse,
    from_dict,
)
from trustgraph.schema.services.agent import EMPTY_QUESTION, SHOW_ACTIONS

from .base import (
    DEFAULT_COLLECTION,
    DEFAULT_USER,
    BadRequest,
    JsonObject,
    Translator,
    first,
    given,
    is_end_of_stream,
    json_object,
    required,
    translator,
)

# -- config -------------------------------------------------------------------


def _config_request(body: JsonObject) -> ConfigRequest:
    fields = {k: body[k] for k in ("operation", "keys", "type", "values") if body.get(k) is not None}
    return from_dict(ConfigRequest, fields)


def _config_response(r: ConfigResponse) -> JsonObject:
    out: JsonObject = {}
    if r.version is not None:
        out["version"] = r.version
    if r.values is not None:
        out["values"] = [{"type": v.type, "key": v.key, "value": v.value} for v in r.values]
    if r.directory is not None:
        out["directory"] = r.directory
    if r.config is not None:
        out["config"] = r.config
    return out


# -- flow ---------------------------------------------------------------------

_FLOW_FIELDS = (("operation", "operation"), ("blueprint-name", "blueprint_name"),
                ("blueprint-definition", "blueprint_definition"), ("flow-id", "flow_id"))


def _flow_request(body: JsonObject) -> FlowRequest:
    fields = {dst: body[src] for src, dst in _FLOW_FIELDS if body.get(src) is not None}
    if isinstance(fields.get("blueprint_definition"), dict):
        # Upstream clients send the definition as JSON text; an object is accepted too.
        fields["blueprint_definition"] = json.dumps(fields["blueprint_definition"])
    # Absent stays null: config-svc answers start-flow without one with "No description".
    fields["description"] = body.get("description")
    record = from_dict(FlowRequest, fields)
    params = json_object(body, "parameters")
    if params is not None:
        # Values are passed as given: config-svc stringifies them when it resolves a flow's parameters.
        record.parameters = dict(params)
    return record


def _flow_response(r: FlowResponse) -> JsonObject:
    pairs = (("blueprint-names", r.blueprint_names), ("flow-ids", r.flow_ids),
             ("blueprint-definition", r.blueprint_definition), ("flow", r.flow),
             ("description", r.description), ("parameters", r.parameters))
    return {k: v for k, v in pairs if v is not None}


# -- agent --------------------------------------------------------------------


def _agent_request(body: JsonObject) -> AgentRequest:
    record = from_dict(AgentRequest, {
        "question": required(body, "question"),
        "state": body.get("state"),
        "group": body.get("group"),
        "history": given(body, "history", []),
        "user": given(body, "user", DEFAULT_USER),
        "streaming": given(body, "streaming", False),
        "show_actions": given(body, "show_actions", False),   # ours: action messages (AgentRequest)
    })
    if isinstance(record.question, str) and not record.question.strip():
        # Refused before anything is sent: the model would answer nothing with a guess.
        raise BadRequest(f"Bad request: {EMPTY_QUESTION}")
    return record


def _agent_properties(body: JsonObject) -> dict[str, str]:
    """``"show_actions": true`` (ours) asks for the agent's action messages."""
    return {SHOW_ACTIONS: "true"} if body.get("show_actions") is True else {}


def _agent_response(r: AgentResponse) -> JsonObject:
    out: JsonObject = {}
    if r.chunk_type:
        out["chunk_type"] = r.chunk_type
    if r.content:
        out["content"] = r.content
    for name in ("answer", "thought", "observation"):
        value = getattr(r, name)
        if value:
            out[name] = value
    out["end_of_message"] = bool(r.end_of_message)
    out["end_of_dialog"] = bool(r.end_of_dialog)
    if r.outcome:   # ours: how the dialog ended (upstream's clients ignore it)
        out["outcome"] = r.outcome
    if r.candidates:
        out["candidates"] = list(r.candidates)
    return out


def _agent_final(r: AgentResponse) -> bool:
    # Upstream 2.1.4's gateway rule: without a chunk_type, a non-null
    # answer ends the call, even an empty one.
    if r.chunk_type:
        return bool(r.end_of_dialog)
    return r.answer is not None


# -- text-completion, prompt ---------------------------------------------------------


def _text_completion_request(body: JsonObject) -> TextCompletionRequest:
    return from_dict(TextCompletionRequest, {
        "system": given(body, "system", ""),
        "prompt": required(body, "prompt"),
        "streaming": given(body, "streaming", False),
    })


def _text_completion_response(r: TextCompletionResponse) -> JsonObject:
    out: JsonObject = {"response": r.response}
    if r.in_token:
        out["in_token"] = r.in_token
    if r.out_token:
        out["out_token"] = r.out_token
    if r.model:
        out["model"] = r.model
    out["end_of_stream"] = bool(r.end_of_stream)
    return out


def _prompt_request(body: JsonObject) -> PromptRequest:
    variables = json_object(body, "variables")
    if variables is not None:
        terms: Any = {k: json.dumps(v) for k, v in variables.items()}
    else:
        terms = given(body, "terms", {})
    return from_dict(PromptRequest, {
        "id": given(body, "id", ""),
        "terms": terms,
        "streaming": given(body, "streaming", False),
    })


def _prompt_response(r: PromptResponse) -> JsonObject:
    out: JsonObject = {}
    if r.text is not None:
        out["text"] = r.text
    if r.object is not None:
        out["object"] = r.object
    out["end_of_stream"] = bool(r.end_of_stream)
    return out


# -- mcp-tool, graph-rag, structured-query, embeddings ---------------------------------


def _mcp_tool_request(body: JsonObject) -> ToolRequest:
    params = body.get("parameters")
    # No parameters means a call without arguments: "{}" rather than upstream's null,
    # which an MCP invoker cannot parse.
    return from_dict(ToolRequest, {
        "name": given(body, "name", ""),
        "parameters": json.dumps({} if params is None else params),
    })


def _mcp_tool_response(r: ToolResponse) -> JsonObject:
    out: JsonObject = {}
    if r.text:
        out["text"] = r.text
    if r.object:
        out["object"] = json_or_text(r.object)
    return out


def _graph_rag_request(body: JsonObject) -> GraphRagQuery:
    return from_dict(GraphRagQuery, {
        "query": given(body, "query", ""),
        "user": given(body, "user", DEFAULT_USER),
        "collection": given(body, "collection", DEFAULT_COLLECTION),
        "entity_limit": given(body, "entity-limit", 50),
        "triple_limit": given(body, "triple-limit", 30),
        "max_subgraph_size": given(body, "max-subgraph-size", 1000),
        "max_path_length": given(body, "max-path-length", 2),
        "streaming": given(body, "streaming", False),
    })


def _graph_rag_response(r: GraphRagResponse) -> JsonObject:
    out: JsonObject = {}
    if r.response:
        out["response"] = r.response
    out["end_of_stream"] = bool(r.end_of_stream)
    return out


def _structured_query_request(body: JsonObject) -> StructuredQueryRequest:
    return from_dict(StructuredQueryRequest, {
        "question": given(body, "question", ""),
        "user": given(body, "user", DEFAULT_USER),
        "collection": given(body, "collection", DEFAULT_COLLECTION),
    })


def _structured_query_response(r: StructuredQueryResponse) -> JsonObject:
    return {"data": json_or_text(r.data) if r.data else None, "errors": list(r.errors or [])}


def _embeddings_request(body: JsonObject) -> EmbeddingsRequest:
    return from_dict(EmbeddingsRequest, {"text": given(body, "text", "")})


def _embeddings_response(r: EmbeddingsResponse) -> JsonObject:
    return {"vectors": r.vectors if r.vectors is not None else []}


# -- the tables ---------------------------------------------------------------------


#: Services reached on fixed topics: ``POST /api/v1/{kind}``.
GLOBAL_KINDS: dict[str, Translator] = {
    "config": translator("config", ConfigRequest, ConfigResponse, _config_request, _config_response, first),
    "flow": translator("flow", FlowRequest, FlowResponse, _flow_request, _flow_response, first),
}

#: Services reached through a flow's interfaces: ``POST /api/v1/flow/{flow}/service/{kind}``.
FLOW_KINDS: dict[str, Translator] = {
    "agent": translator("agent", AgentRequest, AgentResponse, _agent_request, _agent_response, _agent_final,
                        _agent_properties),
    "text-completion": translator("text-completion", TextCompletionRequest, TextCompletionResponse,
                          _text_completion_request, _text_completion_response, is_end_of_stream),
    "prompt": translator("prompt", PromptRequest, PromptResponse, _prompt_request, _prompt_response,
                 is_end_of_stream),
    "mcp-tool": translator("mcp-tool", ToolRequest, ToolResponse, _mcp_tool_request, _mcp_tool_response, first),
    "graph-rag": translator("graph-rag", GraphRagQuery, GraphRagResponse, _graph_rag_request,
                    _graph_rag_response, is_end_of_stream),
    "structured-query": translator("structured-query", StructuredQueryRequest, StructuredQueryResponse,
                           _structured_query_request, _structured_query_response, first),
    "embeddings": translator("embeddings", EmbeddingsRequest, EmbeddingsResponse, _embeddings_request,
                     _embeddings_response, first),
}
