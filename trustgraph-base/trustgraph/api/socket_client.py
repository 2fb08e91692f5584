"""``SocketClient``: flow services over the websocket, synchronously, streaming or not.

``Api(...).socket().flow("default").agent(question, user, streaming=True)``
yields :class:`AgentThought`, :class:`AgentObservation` and
:class:`AgentAnswer` chunks; the text services yield (``streaming=True``) or
return (``False``) strings.  The asyncio twin is :mod:`.async_socket_client`;
both share the flow methods through :class:`FlowRequests`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import websocket
from .loop_thread import LoopThread
from .types import StreamingChunk


class FlowRequests:
    """How each flow method builds its request: shared by the sync and async socket clients."""

    @staticmethod
    def agent(question: str, user: str, state: Any, group: Any, history: Any, streaming: bool,
              extra: dict[str, Any]) -> dict[str, Any]:
        request: dict[str, Any] = {"question": question, "user": user, "streaming": streaming}
        for key, value in (("state", state), ("group", group), ("history", history)):
            if value is not None:
                request[key] = value
        return {**request, **extra}

    @staticmethod
    def graph_rag(query: str, user: str, collection: str, max_subgraph_size: int,
                  max_subgraph_count: int, max_entity_distance: int, streaming: bool,
                  extra: dict[str, Any]) -> dict[str, Any]:
        return {"query": query, "user": user, "collection": collection,
                "max-subgraph-size": max_subgraph_size, "max-subgraph-count": max_subgraph_count,
                "max-entity-distance": max_entity_distance, "streaming": streaming, **extra}

    @staticmethod
    def triples(s: Any, p: Any, o: Any, user: str | None, collection: str | None, limit: int,
                extra: dict[str, Any]) -> dict[str, Any]:
        request: dict[str, Any] = {"limit": limit}
        for key, value in (("s", s), ("p", p), ("o", o)):
            if value is not None:
                request[key] = str(value)
        for key, value in (("user", user), ("collection", collection)):
            if value is not None:
                request[key] = value
        return {**request, **extra}

    @staticmethod
    def rows(query: str, user: str, collection: str, variables: Any, operation_name: str | None,
             extra: dict[str, Any]) -> dict[str, Any]:
        request: dict[str, Any] = {"query": query, "user": user, "collection": collection}
        if variables:
            request["variables"] = variables
        if operation_name:
            request["operationName"] = operation_name
        return {**request, **extra}

    @staticmethod
    def row_embeddings(vectors: Any, schema_name: str, user: str, collection: str,
                       index_name: str | None, limit: int, extra: dict[str, Any]) -> dict[str, Any]:
        request: dict[str, Any] = {"vectors": vectors, "schema_name": schema_name, "user": user,
                                   "collection": collection, "limit": limit}
        if index_name:
            request["index_name"] = index_name
        return {**request, **extra}


class SocketClient:
    """Websocket calls from synchronous code (a private event loop runs them)."""

    def __init__(self, url: str, timeout: float, token: str | None) -> None:
        self.url = websocket.to_ws_url(url)
        self.timeout = timeout
        self.token = token
        self._loop = LoopThread()

    def flow(self, flow_id: str) -> SocketFlowInstance:
        """The services of one flow."""
        return SocketFlowInstance(self, flow_id)

    def request(self, service: str, flow: str | None, request: dict[str, Any]) -> dict[str, Any]:
        """The final response of one call."""
        return self._loop.run(websocket.final(self.url, self.token, self.timeout, service, flow, request))

    def stream(self, service: str, flow: str | None, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Every response of one call, as it arrives."""
        return self._loop.iterate(websocket.call(self.url, self.token, self.timeout, service, flow, request))

    def chunks(self, service: str, flow: str | None, request: dict[str, Any]) -> Iterator[StreamingChunk]:
        """Every response of one call as a typed chunk."""
        for response in self.stream(service, flow, request):
            yield websocket.parse_chunk(response)

    def close(self) -> None:
        """Stop the private event loop."""
        self._loop.close()


def _texts(chunks: Iterator[StreamingChunk]) -> Iterator[str]:
    for chunk in chunks:
        yield chunk.content


class SocketFlowInstance:
    """One flow's services over the websocket."""

    def __init__(self, client: SocketClient, flow_id: str) -> None:
        self.client = client
        self.flow_id = flow_id

    def _text(self, service: str, request: dict[str, Any], streaming: bool, key: str) -> Any:
        if streaming:
            return _texts(self.client.chunks(service, self.flow_id, request))
        return self.client.request(service, self.flow_id, request).get(key, "")

    def _call(self, service: str, request: dict[str, Any]) -> dict[str, Any]:
        return self.client.request(service, self.flow_id, request)

    def agent(self, question: str, user: str, state: Any = None, group: Any = None,
              history: list[dict[str, Any]] | None = None, streaming: bool = False,
              **kwargs: Any) -> Iterator[StreamingChunk]:
        """The agent's thoughts, observations and answer as chunks (whatever ``streaming`` says)."""
        request = FlowRequests.agent(question, user, state, group, history, streaming, kwargs)
        return self.client.chunks("agent", self.flow_id, request)

    def text_completion(self, system: str, prompt: str, streaming: bool = False, **kwargs: Any) -> Any:
        """The LLM's answer: a string, or its pieces when streaming."""
        request = {"system": system, "prompt": prompt, "streaming": streaming, **kwargs}
        return self._text("text-completion", request, streaming, "response")

    def graph_rag(self, query: str, user: str, collection: str, max_subgraph_size: int = 1000,
                  max_subgraph_count: int = 5, max_entity_distance: int = 3, streaming: bool = False,
                  **kwargs: Any) -> Any:
        """A graph-RAG answer: a string, or its pieces when streaming."""
        request = FlowRequests.graph_rag(query, user, collection, max_subgraph_size, max_subgraph_count,
                                         max_entity_distance, streaming, kwargs)
        return self._text("graph-rag", request, streaming, "response")

    def document_rag(self, query: str, user: str, collection: str, doc_limit: int = 10,
                     streaming: bool = False, **kwargs: Any) -> Any:
        """A document-RAG answer: a string, or its pieces when streaming."""
        request = {"query": query, "user": user, "collection": collection, "doc-limit": doc_limit,
                   "streaming": streaming, **kwargs}
        return self._text("document-rag", request, streaming, "response")

    def prompt(self, id: str, variables: dict[str, Any], streaming: bool = False, **kwargs: Any) -> Any:  # noqa: A002
        """A prompt template's text: a string, or its pieces when streaming."""
        request = {"id": id, "variables": variables, "streaming": streaming, **kwargs}
        return self._text("prompt", request, streaming, "text")

    def embeddings(self, text: str, **kwargs: Any) -> dict[str, Any]:
        """``{"vectors": ...}`` of a text."""
        return self._call("embeddings", {"text": text, **kwargs})

    def graph_embeddings_query(self, text: str, user: str, collection: str, limit: int = 10,
                               **kwargs: Any) -> dict[str, Any]:
        """Entities near a text."""
        vectors = self.embeddings(text).get("vectors", [])
        return self._call("graph-embeddings", {"vectors": vectors, "user": user,
                                               "collection": collection, "limit": limit, **kwargs})

    def document_embeddings_query(self, text: str, user: str, collection: str, limit: int = 10,
                                  **kwargs: Any) -> dict[str, Any]:
        """Chunks near a text."""
        vectors = self.embeddings(text).get("vectors", [])
        return self._call("document-embeddings", {"vectors": vectors, "user": user,
                                                  "collection": collection, "limit": limit, **kwargs})

    def triples_query(self, s: Any = None, p: Any = None, o: Any = None, user: str | None = None,
                      collection: str | None = None, limit: int = 100, **kwargs: Any) -> dict[str, Any]:
        """Triples matching a pattern."""
        return self._call("triples", FlowRequests.triples(s, p, o, user, collection, limit, kwargs))

    def rows_query(self, query: str, user: str, collection: str, variables: Any = None,
                   operation_name: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """A GraphQL query over stored rows."""
        return self._call("rows", FlowRequests.rows(query, user, collection, variables,
                                                    operation_name, kwargs))

    def mcp_tool(self, name: str, parameters: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Call an MCP tool."""
        return self._call("mcp-tool", {"name": name, "parameters": parameters, **kwargs})

    def row_embeddings_query(self, text: str, schema_name: str, user: str = "trustgraph",
                             collection: str = "default", index_name: str | None = None,
                             limit: int = 10, **kwargs: Any) -> dict[str, Any]:
        """Rows whose indexed values are near a text."""
        vectors = self.embeddings(text).get("vectors", [])
        return self._call("row-embeddings", FlowRequests.row_embeddings(
            vectors, schema_name, user, collection, index_name, limit, kwargs))
