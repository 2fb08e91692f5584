"""The request/response kinds the gateway serves, each with its records and its translators.

The rules per kind are upstream 2.1.4's (:mod:`trustgraph.messaging`, which
the registry names by upstream's service names); this table adds the topics'
records and our one request property.  Ours, beyond upstream's translators:

* ``"show_actions": true`` in an agent body asks for the agent's action
  messages, and ``"approval": {"token": ..., "decision": ...}`` answers a call
  the agent paused for approval (message properties, so the record stays
  upstream's; the agent checks the approval);
* the rest is in the translators' docstrings (an empty agent question is
  refused, null fields take the defaults, mcp-tool's absent parameters are
  ``"{}"``, librarian content must be base64).
"""

from __future__ import annotations

import json

from trustgraph.messaging import TranslatorRegistry
from trustgraph.schema import (
    AgentRequest,
    AgentResponse,
    CollectionManagementRequest,
    CollectionManagementResponse,
    ConfigRequest,
    ConfigResponse,
    DocumentEmbeddingsRequest,
    DocumentEmbeddingsResponse,
    DocumentRagQuery,
    DocumentRagResponse,
    EmbeddingsRequest,
    EmbeddingsResponse,
    FlowRequest,
    FlowResponse,
    GraphEmbeddingsRequest,
    GraphEmbeddingsResponse,
    GraphRagQuery,
    GraphRagResponse,
    KnowledgeRequest,
    KnowledgeResponse,
    LibrarianRequest,
    LibrarianResponse,
    PromptRequest,
    PromptResponse,
    QuestionToStructuredQueryRequest,
    QuestionToStructuredQueryResponse,
    RowEmbeddingsRequest,
    RowEmbeddingsResponse,
    RowsQueryRequest,
    RowsQueryResponse,
    StructuredDataDiagnosisRequest,
    StructuredDataDiagnosisResponse,
    StructuredQueryRequest,
    StructuredQueryResponse,
    TextCompletionRequest,
    TextCompletionResponse,
    ToolRequest,
    ToolResponse,
    TriplesQueryRequest,
    TriplesQueryResponse,
)
from trustgraph.schema.services.agent import APPROVAL, SHOW_ACTIONS

from .base import JsonObject, Translator


def _agent_properties(body: JsonObject) -> dict[str, str]:
    """``"show_actions": true`` (ours) asks for the agent's action messages; ``"approval"`` (ours)
    goes on as the ``approval`` property, as given: the agent checks it and says what is wrong."""
    props = {SHOW_ACTIONS: "true"} if body.get("show_actions") is True else {}
    if body.get("approval") is not None:
        props[APPROVAL] = json.dumps(body["approval"])
    return props


def _kind(kind: str, service: str, request_schema: type, response_schema: type, properties=None) -> Translator:
    return Translator(kind, request_schema, response_schema, TranslatorRegistry.get_request_translator(service),
                      TranslatorRegistry.get_response_translator(service), properties)


#: Services reached on fixed topics: ``POST /api/v1/{kind}``.
GLOBAL_KINDS: dict[str, Translator] = {t.kind: t for t in (
    _kind("config", "config", ConfigRequest, ConfigResponse),
    _kind("flow", "flow", FlowRequest, FlowResponse),
    _kind("librarian", "librarian", LibrarianRequest, LibrarianResponse),
    _kind("knowledge", "knowledge", KnowledgeRequest, KnowledgeResponse),
    _kind("collection-management", "collection-management", CollectionManagementRequest,
          CollectionManagementResponse),
)}

#: Services reached through a flow's interfaces: ``POST /api/v1/flow/{flow}/service/{kind}``
#: (the gateway's kind, then upstream's service name where they differ).
FLOW_KINDS: dict[str, Translator] = {t.kind: t for t in (
    _kind("agent", "agent", AgentRequest, AgentResponse, _agent_properties),
    _kind("text-completion", "text-completion", TextCompletionRequest, TextCompletionResponse),
    _kind("prompt", "prompt", PromptRequest, PromptResponse),
    _kind("mcp-tool", "tool", ToolRequest, ToolResponse),
    _kind("graph-rag", "graph-rag", GraphRagQuery, GraphRagResponse),
    _kind("structured-query", "structured-query", StructuredQueryRequest, StructuredQueryResponse),
    _kind("embeddings", "embeddings", EmbeddingsRequest, EmbeddingsResponse),
    # Served by upstream processors this fork does not ship: routed and translated as upstream's
    # gateway does, so an upstream processor behind our gateway answers upstream clients unchanged.
    _kind("document-rag", "document-rag", DocumentRagQuery, DocumentRagResponse),
    _kind("graph-embeddings", "graph-embeddings-query", GraphEmbeddingsRequest, GraphEmbeddingsResponse),
    _kind("document-embeddings", "document-embeddings-query", DocumentEmbeddingsRequest,
          DocumentEmbeddingsResponse),
    _kind("row-embeddings", "row-embeddings-query", RowEmbeddingsRequest, RowEmbeddingsResponse),
    _kind("triples", "triples-query", TriplesQueryRequest, TriplesQueryResponse),
    _kind("rows", "rows-query", RowsQueryRequest, RowsQueryResponse),
    _kind("nlp-query", "nlp-query", QuestionToStructuredQueryRequest, QuestionToStructuredQueryResponse),
    _kind("structured-diag", "structured-diag", StructuredDataDiagnosisRequest, StructuredDataDiagnosisResponse),
)}
