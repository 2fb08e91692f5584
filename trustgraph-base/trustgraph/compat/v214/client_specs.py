"""Upstream 2.1.4's flow client specs and their clients, on our request/response client.

A processor written for upstream declares the services it calls as specs
(``PromptClientSpec(request_name="prompt-request",
response_name="prompt-response")``) and calls them through the flow:
``await flow("prompt-request").prompt(id=..., variables=...)``.  Each spec
here is upstream's :class:`~.processor.RequestResponseSpec` with the service's
records and client; each client is a :class:`~.processor.RequestResponse`, so
our client's whole-call deadline, bound on calls in flight and lost-call
handling come along.

The methods are upstream's, with its defaults and results: the records sent
are the same, an error response raises ``RuntimeError(message)``, and a
streamed answer is read to its ``end_of_stream`` response.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ...base.tool_services import tool_service_client as ours_tool_service_client
from ...knowledge import Literal, Uri
from ...schema import (
    IRI,
    LITERAL,
    AgentRequest,
    AgentResponse,
    DocumentEmbeddingsRequest,
    DocumentEmbeddingsResponse,
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
    StructuredQueryRequest,
    StructuredQueryResponse,
    Term,
    TextCompletionRequest,
    TextCompletionResponse,
    ToolRequest,
    ToolResponse,
    ToolServiceRequest,
    ToolServiceResponse,
    TriplesQueryRequest,
    TriplesQueryResponse,
)
from .processor import RequestResponse, RequestResponseSpec, pubsub_for

logger = logging.getLogger(__name__)

__all__ = [
    "AgentClient", "AgentClientSpec", "DocumentEmbeddingsClient", "DocumentEmbeddingsClientSpec",
    "EmbeddingsClient", "EmbeddingsClientSpec", "GraphEmbeddingsClient", "GraphEmbeddingsClientSpec",
    "GraphRagClient", "GraphRagClientSpec", "PromptClient", "PromptClientSpec", "RowEmbeddingsQueryClient",
    "RowEmbeddingsQueryClientSpec", "StructuredQueryClient", "StructuredQueryClientSpec",
    "TextCompletionClient", "TextCompletionClientSpec", "ToolClient", "ToolClientSpec", "ToolServiceClient",
    "ToolServiceClientSpec", "Triple", "TriplesClient", "TriplesClientSpec", "from_value", "to_value",
]

#: ``chunk_callback(text, end_of_stream)`` of a streamed prompt; may be async.
ChunkCallback = Callable[[str, bool], "Awaitable[None] | None"]


def _raise_error(resp: Any) -> None:
    """Upstream's clients end a call whose response carries an error with RuntimeError(message)."""
    if resp is not None and resp.error:
        raise RuntimeError(resp.error.message)


def _is_final(resp: Any) -> bool:
    return bool(getattr(resp, "end_of_stream", False))


def _spec(name: str, request_schema: type, response_schema: type, impl: type) -> type:
    """A spec class of upstream's shape: ``NameSpec(request_name, response_name)``."""

    def __init__(self: RequestResponseSpec, request_name: str, response_name: str) -> None:
        RequestResponseSpec.__init__(self, request_name=request_name, request_schema=request_schema,
                                     response_name=response_name, response_schema=response_schema,
                                     impl=impl)

    doc = (f"A flow client of {request_schema.__name__} / {response_schema.__name__}: "
           f"``flow(request_name)`` is a :class:`{impl.__name__}`.")
    return type(name, (RequestResponseSpec,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


# -- terms -------------------------------------------------------------------------------------------

def to_value(term: Term) -> Uri | Literal:
    """A wire Term as upstream's clients return it: a :class:`~trustgraph.knowledge.Uri` for an
    IRI, else a :class:`~trustgraph.knowledge.Literal`."""
    if term.type == IRI:
        return Uri(term.iri)
    if term.type == LITERAL:
        return Literal(term.value)
    return Literal(term.value or term.iri)


def from_value(value: Any) -> Term | None:
    """A Uri (an IRI term) or anything else (a literal of its text) as a wire Term; None stays None."""
    if value is None:
        return None
    if isinstance(value, Uri):
        return Term(type=IRI, iri=str(value))
    return Term(type=LITERAL, value=str(value))


class Triple:
    """One triple of a :meth:`TriplesClient.query` result (``s``, ``p``, ``o`` as :func:`to_value` gives)."""

    def __init__(self, s: Any, p: Any, o: Any) -> None:
        self.s = s
        self.p = p
        self.o = o

    def __repr__(self) -> str:
        return f"Triple({self.s!r}, {self.p!r}, {self.o!r})"


# -- clients -----------------------------------------------------------------------------------------

class PromptClient(RequestResponse):
    """Calls prompt-template: ``prompt(id, variables)`` and upstream's shortcuts per template."""

    async def prompt(self, id: str, variables: dict[str, Any], timeout: float = 600,  # noqa: A002
                     streaming: bool = False, chunk_callback: ChunkCallback | None = None) -> Any:
        """Run template ``id`` with ``variables`` (each JSON-encoded as a term).

        Returns the text, or the JSON object a template that answers JSON
        produced.  Streaming, each text chunk goes to ``chunk_callback(text,
        end_of_stream)`` as it arrives (the final, possibly empty, one too),
        and the last text (or object) is returned.
        """
        request = PromptRequest(id=id, terms={k: json.dumps(v) for k, v in variables.items()},
                                streaming=bool(streaming))
        if not streaming:
            resp = await self.request(request, timeout=timeout)
            _raise_error(resp)
            if resp.text:
                return resp.text
            return json.loads(resp.object) if resp.object else resp.text

        last_text = ""
        last_object: str | None = None

        async def chunk(resp: PromptResponse) -> bool:
            nonlocal last_text, last_object
            _raise_error(resp)
            final = _is_final(resp)
            if resp.text is not None:
                last_text = resp.text
                if chunk_callback is not None:
                    done = chunk_callback(resp.text, final)
                    if done is not None and hasattr(done, "__await__"):
                        await done
            elif resp.object:
                last_object = resp.object
            return final

        await self.request(request, timeout=timeout, recipient=chunk)
        if last_text:
            return last_text
        return json.loads(last_object) if last_object else None

    async def extract_definitions(self, text: str, timeout: float = 600) -> Any:
        return await self.prompt(id="extract-definitions", variables={"text": text}, timeout=timeout)

    async def extract_relationships(self, text: str, timeout: float = 600) -> Any:
        return await self.prompt(id="extract-relationships", variables={"text": text}, timeout=timeout)

    async def extract_objects(self, text: str, schema: Any, timeout: float = 600) -> Any:
        return await self.prompt(id="extract-rows", variables={"text": text, "schema": schema}, timeout=timeout)

    async def kg_prompt(self, query: str, kg: Iterable[Any], timeout: float = 600, streaming: bool = False,
                        chunk_callback: ChunkCallback | None = None) -> Any:
        """Template ``kg-prompt``: answer ``query`` from ``kg``, (s, p, o) triples."""
        knowledge = [{"s": t[0], "p": t[1], "o": t[2]} for t in kg]
        return await self.prompt(id="kg-prompt", variables={"query": query, "knowledge": knowledge},
                                 timeout=timeout, streaming=streaming, chunk_callback=chunk_callback)

    async def document_prompt(self, query: str, documents: Any, timeout: float = 600, streaming: bool = False,
                              chunk_callback: ChunkCallback | None = None) -> Any:
        """Template ``document-prompt``: answer ``query`` from ``documents``."""
        return await self.prompt(id="document-prompt", variables={"query": query, "documents": documents},
                                 timeout=timeout, streaming=streaming, chunk_callback=chunk_callback)

    async def agent_react(self, variables: dict[str, Any], timeout: float = 600, streaming: bool = False,
                          chunk_callback: ChunkCallback | None = None) -> Any:
        """Template ``agent-react``: one step of upstream's ReAct agent."""
        return await self.prompt(id="agent-react", variables=variables, timeout=timeout,
                                 streaming=streaming, chunk_callback=chunk_callback)

    async def question(self, question: str, timeout: float = 600) -> Any:
        return await self.prompt(id="question", variables={"question": question}, timeout=timeout)


class TextCompletionClient(RequestResponse):
    """Calls an LLM service."""

    async def text_completion(self, system: str, prompt: str, streaming: bool = False,
                              timeout: float = 600) -> str:
        """The completion of ``prompt`` under ``system``; streaming, the chunks joined."""
        request = TextCompletionRequest(system=system, prompt=prompt, streaming=bool(streaming))
        if not streaming:
            resp = await self.request(request, timeout=timeout)
            _raise_error(resp)
            return resp.response
        parts: list[str] = []

        async def chunk(resp: TextCompletionResponse) -> bool:
            _raise_error(resp)
            if resp.response:
                parts.append(resp.response)
            return _is_final(resp)

        await self.request(request, timeout=timeout, recipient=chunk)
        return "".join(parts)


class EmbeddingsClient(RequestResponse):
    """Calls an embeddings service."""

    async def embed(self, text: Any, timeout: float = 30) -> Any:
        """The vectors of ``text``."""
        resp = await self.request(EmbeddingsRequest(text=text), timeout=timeout)
        _raise_error(resp)
        return resp.vectors


class GraphEmbeddingsClient(RequestResponse):
    """Calls an entity vector search."""

    async def query(self, vectors: Any, limit: int = 20, user: str = "trustgraph",
                    collection: str = "default", timeout: float = 30) -> list[Uri | Literal]:
        """The entities nearest ``vectors``, as :func:`to_value` gives them."""
        resp = await self.request(GraphEmbeddingsRequest(vectors=vectors, limit=limit, user=user,
                                                         collection=collection), timeout=timeout)
        logger.debug("Graph embeddings response: %s", resp)
        _raise_error(resp)
        return [to_value(term) for term in resp.entities or []]


class DocumentEmbeddingsClient(RequestResponse):
    """Calls a chunk vector search."""

    async def query(self, vectors: Any, limit: int = 20, user: str = "trustgraph",
                    collection: str = "default", timeout: float = 30) -> list[str]:
        """The ids of the chunks nearest ``vectors``."""
        resp = await self.request(DocumentEmbeddingsRequest(vectors=vectors, limit=limit, user=user,
                                                            collection=collection), timeout=timeout)
        logger.debug("Document embeddings response: %s", resp)
        _raise_error(resp)
        return resp.chunk_ids


class TriplesClient(RequestResponse):
    """Calls a triples query service."""

    async def query(self, s: Any = None, p: Any = None, o: Any = None, limit: int = 20,
                    user: str = "trustgraph", collection: str = "default", timeout: float = 30) -> list[Triple]:
        """The triples matching ``s``, ``p``, ``o`` (None: any); a Uri is an IRI, anything else a literal."""
        resp = await self.request(TriplesQueryRequest(s=from_value(s), p=from_value(p), o=from_value(o),
                                                      limit=limit, user=user, collection=collection),
                                  timeout=timeout)
        _raise_error(resp)
        return [Triple(to_value(t.s), to_value(t.p), to_value(t.o)) for t in resp.triples or []]


class GraphRagClient(RequestResponse):
    """Calls graph RAG."""

    async def rag(self, query: str, user: str = "trustgraph", collection: str = "default",
                  timeout: float = 600) -> str:
        resp = await self.request(GraphRagQuery(query=query, user=user, collection=collection), timeout=timeout)
        _raise_error(resp)
        return resp.response


class AgentClient(RequestResponse):
    """Calls an agent."""

    async def invoke(self, recipient: Callable[[AgentResponse], Any], question: str, plan: Any = None,
                     state: Any = None, history: list[Any] | None = None, timeout: float = 300) -> str:
        """Ask ``question``; each response goes to ``recipient`` until it returns True (the dialog's end).

        ``plan`` is accepted for upstream's signature; its AgentRequest has no
        such field (upstream's own call fails on it), so it is not sent.
        """
        request = AgentRequest(question=question, state=state or "", history=list(history or []))
        resp = await self.request(request, timeout=timeout, recipient=recipient)
        _raise_error(resp)
        return resp.answer if resp is not None else ""


class ToolClient(RequestResponse):
    """Calls an MCP tool (upstream's mcp-tool service)."""

    async def invoke(self, name: str, parameters: dict[str, Any] | None = None, timeout: float = 600) -> Any:
        """Run tool ``name``; its text, or the JSON object it returned."""
        resp = await self.request(ToolRequest(name=name, parameters=json.dumps(parameters or {})),
                                  timeout=timeout)
        _raise_error(resp)
        if resp.text:
            return resp.text
        return json.loads(resp.object) if resp.object else resp.text


class StructuredQueryClient(RequestResponse):
    """Calls structured query."""

    async def structured_query(self, question: str, user: str = "trustgraph", collection: str = "default",
                               timeout: float = 600) -> dict[str, Any]:
        """``{"data", "errors", "error"}`` of the answer, for the caller to interpret."""
        resp = await self.request(StructuredQueryRequest(question=question, user=user, collection=collection),
                                  timeout=timeout)
        _raise_error(resp)
        return {"data": resp.data, "errors": resp.errors or [], "error": resp.error}


class RowEmbeddingsQueryClient(RequestResponse):
    """Calls a row vector search."""

    async def row_embeddings_query(self, vectors: Any, schema_name: str, user: str = "trustgraph",
                                   collection: str = "default", index_name: str | None = None,
                                   limit: int = 10, timeout: float = 600) -> list[dict[str, Any]]:
        """The matching rows' ``index_name``, ``index_value``, ``text`` and ``score``."""
        request = RowEmbeddingsRequest(vectors=vectors, schema_name=schema_name, user=user,
                                       collection=collection, limit=limit)
        if index_name:
            request.index_name = index_name
        resp = await self.request(request, timeout=timeout)
        _raise_error(resp)
        return [{"index_name": m.index_name, "index_value": m.index_value, "text": m.text, "score": m.score}
                for m in resp.matches or []]


class ToolServiceClient(RequestResponse, ours_tool_service_client.ToolServiceClient):
    """Upstream's tool-service client: ours (``call``, ``call_streaming``), made with upstream's keywords.

    Upstream's agent builds one with ``backend=``, ``subscription=``, the
    topics, schemas and metrics; ours takes ``pubsub`` and the topics.  The
    calls are ours: a streamed answer is joined, an error raises
    :class:`~trustgraph.base.tool_services.tool_service_client.ToolServiceError`
    (a ``RuntimeError``, as upstream's), and the default timeout is
    upstream's 600 s.
    """

    def __init__(self, backend: Any, subscription: str | None = None, consumer_name: str | None = None,
                 request_topic: str | None = None, request_schema: type | None = None,
                 request_metrics: Any = None, response_topic: str | None = None,
                 response_schema: type | None = None, response_metrics: Any = None, **ours: Any) -> None:
        if request_topic is None or response_topic is None:
            raise TypeError("ToolServiceClient needs request_topic and response_topic")
        ours.setdefault("timeout", 600)
        ours_tool_service_client.ToolServiceClient.__init__(
            self, pubsub_for(backend, "ToolServiceClient"), request_topic=request_topic, response_topic=response_topic,
            subscription=subscription, **ours)
        self.consumer_name = consumer_name
        self.request_metrics = request_metrics
        self.response_metrics = response_metrics


# -- specs -------------------------------------------------------------------------------------------

PromptClientSpec = _spec("PromptClientSpec", PromptRequest, PromptResponse, PromptClient)
TextCompletionClientSpec = _spec("TextCompletionClientSpec", TextCompletionRequest, TextCompletionResponse,
                                 TextCompletionClient)
EmbeddingsClientSpec = _spec("EmbeddingsClientSpec", EmbeddingsRequest, EmbeddingsResponse, EmbeddingsClient)
GraphEmbeddingsClientSpec = _spec("GraphEmbeddingsClientSpec", GraphEmbeddingsRequest, GraphEmbeddingsResponse,
                                  GraphEmbeddingsClient)
DocumentEmbeddingsClientSpec = _spec("DocumentEmbeddingsClientSpec", DocumentEmbeddingsRequest,
                                     DocumentEmbeddingsResponse, DocumentEmbeddingsClient)
TriplesClientSpec = _spec("TriplesClientSpec", TriplesQueryRequest, TriplesQueryResponse, TriplesClient)
GraphRagClientSpec = _spec("GraphRagClientSpec", GraphRagQuery, GraphRagResponse, GraphRagClient)
AgentClientSpec = _spec("AgentClientSpec", AgentRequest, AgentResponse, AgentClient)
ToolClientSpec = _spec("ToolClientSpec", ToolRequest, ToolResponse, ToolClient)
ToolServiceClientSpec = _spec("ToolServiceClientSpec", ToolServiceRequest, ToolServiceResponse, ToolServiceClient)
StructuredQueryClientSpec = _spec("StructuredQueryClientSpec", StructuredQueryRequest, StructuredQueryResponse,
                                  StructuredQueryClient)
RowEmbeddingsQueryClientSpec = _spec("RowEmbeddingsQueryClientSpec", RowEmbeddingsRequest, RowEmbeddingsResponse,
                                     RowEmbeddingsQueryClient)
