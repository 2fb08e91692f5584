"""Blocking Pulsar clients of the flow services, one small class each.

Flow services live on per-flow queues (``active-flow`` config), so these
take ``input_queue`` and ``output_queue``; only the global services have
well-known defaults.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..schema import (
    IRI,
    LITERAL,
    AgentRequest,
    AgentResponse,
    DocumentEmbeddingsRequest,
    DocumentEmbeddingsResponse,
    DocumentRagQuery,
    DocumentRagResponse,
    EmbeddingsRequest,
    EmbeddingsResponse,
    GraphEmbeddingsRequest,
    GraphEmbeddingsResponse,
    GraphRagQuery,
    GraphRagResponse,
    PromptRequest,
    PromptResponse,
    RowEmbeddingsRequest,
    RowEmbeddingsResponse,
    Term,
    TextCompletionRequest,
    TextCompletionResponse,
    TriplesQueryRequest,
    TriplesQueryResponse,
    document_embeddings_request_queue,
    document_embeddings_response_queue,
    row_embeddings_request_queue,
    row_embeddings_response_queue,
)
from .base import ERROR, BaseClient


class _Client(BaseClient):
    REQUEST: type
    RESPONSE: type
    INPUT: str | None = None
    OUTPUT: str | None = None

    def __init__(self, log_level: Any = ERROR, subscriber: str | None = None, input_queue: str | None = None,
                 output_queue: str | None = None, pulsar_host: str = "pulsar://pulsar:6650",
                 pulsar_api_key: str | None = None, listener: str | None = None) -> None:
        super().__init__(log_level=log_level, subscriber=subscriber, input_queue=input_queue or self.INPUT,
                         output_queue=output_queue or self.OUTPUT, input_schema=self.REQUEST,
                         output_schema=self.RESPONSE, pulsar_host=pulsar_host,
                         pulsar_api_key=pulsar_api_key, listener=listener)


class AgentClient(_Client):
    """The agent: ``request(question, think=fn, observe=fn)`` returns the answer."""

    REQUEST, RESPONSE = AgentRequest, AgentResponse

    def request(self, question: str, think: Callable[[str], Any] | None = None,
                observe: Callable[[str], Any] | None = None, timeout: float = 300) -> str:
        def inspect(r: AgentResponse) -> bool:
            if r.thought and think:
                think(r.thought)
                return False
            if r.observation and observe:
                observe(r.observation)
                return False
            return bool(r.answer) or bool(r.end_of_dialog)

        return self.call(question=question, inspect=inspect, timeout=timeout).answer


class LlmClient(_Client):
    """Text completion: ``request(system, prompt)``, or ``request_stream`` for the chunks."""

    REQUEST, RESPONSE = TextCompletionRequest, TextCompletionResponse

    def request(self, system: str, prompt: str, timeout: float = 300, streaming: bool = False) -> str:
        if streaming:
            raise ValueError("Use request_stream() for streaming requests")
        return self.call(system=system, prompt=prompt, streaming=False, timeout=timeout).response

    def request_stream(self, system: str, prompt: str, timeout: float = 300) -> Iterator[TextCompletionResponse]:
        for value in self._responses(TextCompletionRequest(system=system, prompt=prompt, streaming=True),
                                     timeout):
            yield value
            if value.end_of_stream:
                return


@dataclass
class Definition:
    name: str
    definition: str


@dataclass
class Relationship:
    s: str
    p: str
    o: str
    o_entity: str


@dataclass
class Topic:
    name: str
    definition: str


class PromptClient(_Client):
    """Prompt templates: ``request(id, variables)`` returns the text or the decoded object."""

    REQUEST, RESPONSE = PromptRequest, PromptResponse

    def request(self, id: str, variables: dict[str, Any], timeout: float = 300) -> Any:  # noqa: A002
        resp = self.call(id=id, terms={k: json.dumps(v) for k, v in variables.items()}, timeout=timeout)
        return resp.text if resp.text else json.loads(resp.object)

    def request_definitions(self, chunk: str, timeout: float = 300) -> list[Definition]:
        return [Definition(name=d["entity"], definition=d["definition"])
                for d in self.request("extract-definitions", {"text": chunk}, timeout)]

    def request_relationships(self, chunk: str, timeout: float = 300) -> list[Relationship]:
        return [Relationship(s=d["subject"], p=d["predicate"], o=d["object"], o_entity=d["object-entity"])
                for d in self.request("extract-relationships", {"text": chunk}, timeout)]

    def request_topics(self, chunk: str, timeout: float = 300) -> list[Topic]:
        return [Topic(name=d["topic"], definition=d["definition"])
                for d in self.request("extract-topics", {"text": chunk}, timeout)]

    def request_rows(self, schema: Any, chunk: str, timeout: float = 300) -> Any:
        fields = [{"name": f.name, "type": str(f.type), "size": f.size, "primary": f.primary,
                   "description": f.description} for f in schema.fields]
        return self.request("extract-rows", {"chunk": chunk, "row-schema": {
            "name": schema.name, "description": schema.description, "fields": fields}}, timeout)

    def request_kg_prompt(self, query: str, kg: list[tuple[str, str, str]], timeout: float = 300) -> Any:
        return self.request("kg-prompt", {"query": query,
                                          "knowledge": [{"s": s, "p": p, "o": o} for s, p, o in kg]}, timeout)

    def request_document_prompt(self, query: str, documents: list[str], timeout: float = 300) -> Any:
        return self.request("document-prompt", {"query": query, "documents": documents}, timeout)


class GraphRagClient(_Client):
    """Graph RAG: ``request(query, user, collection)`` returns the answer."""

    REQUEST, RESPONSE = GraphRagQuery, GraphRagResponse

    def request(self, query: str, user: str = "trustgraph", collection: str = "default",
                timeout: float = 500) -> str:
        return self.call(query=query, user=user, collection=collection, timeout=timeout).response


class DocumentRagClient(_Client):
    """Document RAG: ``request(query)`` returns the answer."""

    REQUEST, RESPONSE = DocumentRagQuery, DocumentRagResponse

    def request(self, query: str, timeout: float = 300) -> str:
        return self.call(query=query, timeout=timeout).response


class EmbeddingsClient(_Client):
    """Embeddings: ``request(text)`` returns the vectors."""

    REQUEST, RESPONSE = EmbeddingsRequest, EmbeddingsResponse

    def request(self, text: str, timeout: float = 300) -> list[list[float]]:
        return self.call(text=text, timeout=timeout).vectors


class GraphEmbeddingsClient(_Client):
    """Graph-embeddings query: ``request(vectors)`` returns the entities."""

    REQUEST, RESPONSE = GraphEmbeddingsRequest, GraphEmbeddingsResponse

    def request(self, vectors: list[list[float]], user: str = "trustgraph", collection: str = "default",
                limit: int = 10, timeout: float = 300) -> list[Term]:
        return self.call(vectors=vectors, user=user, collection=collection, limit=limit,
                         timeout=timeout).entities


class DocumentEmbeddingsClient(_Client):
    """Document-embeddings query: ``request(vectors)`` returns the chunk ids."""

    REQUEST, RESPONSE = DocumentEmbeddingsRequest, DocumentEmbeddingsResponse
    INPUT, OUTPUT = document_embeddings_request_queue, document_embeddings_response_queue

    def request(self, vectors: list[list[float]], user: str = "trustgraph", collection: str = "default",
                limit: int = 10, timeout: float = 300) -> list[str]:
        return self.call(vectors=vectors, user=user, collection=collection, limit=limit,
                         timeout=timeout).chunk_ids


class RowEmbeddingsClient(_Client):
    """Row-embeddings query: ``request(vectors, schema_name)`` returns the matches."""

    REQUEST, RESPONSE = RowEmbeddingsRequest, RowEmbeddingsResponse
    INPUT, OUTPUT = row_embeddings_request_queue, row_embeddings_response_queue

    def request(self, vectors: list[list[float]], schema_name: str, user: str = "trustgraph",
                collection: str = "default", index_name: str | None = None, limit: int = 10,
                timeout: float = 300) -> list[Any]:
        return self.call(vectors=vectors, schema_name=schema_name, user=user, collection=collection,
                         index_name=index_name or None, limit=limit, timeout=timeout).matches


def _term(value: str | None) -> Term | None:
    if value is None:
        return None
    if value.startswith(("http://", "https://")):
        return Term(type=IRI, iri=value)
    return Term(type=LITERAL, value=value)


class TriplesQueryClient(_Client):
    """Triples query: ``request(s, p, o)`` (plain strings, None for any) returns the triples."""

    REQUEST, RESPONSE = TriplesQueryRequest, TriplesQueryResponse

    def create_value(self, ent: str | None) -> Term | None:
        return _term(ent)

    def request(self, s: str | None, p: str | None, o: str | None, user: str = "trustgraph",
                collection: str = "default", limit: int = 10, timeout: float = 120) -> list[Any]:
        return self.call(s=_term(s), p=_term(p), o=_term(o), user=user, collection=collection,
                         limit=limit, timeout=timeout).triples
