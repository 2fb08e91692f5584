"""``AsyncSocketClient``: flow services over the websocket, for asyncio code.

The asyncio twin of :mod:`.socket_client`: ``agent(..., streaming=True)``
returns an async iterator of chunks, ``streaming=False`` the final response;
the text services return a string, or an async iterator of strings.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from . import websocket
from .socket_client import FlowRequests
from .types import StreamingChunk


class AsyncSocketClient:
    """Websocket calls from asyncio code."""

    def __init__(self, url: str, timeout: float, token: str | None) -> None:
        self.url = websocket.to_ws_url(url)
        self.timeout = timeout
        self.token = token

    def flow(self, flow_id: str) -> AsyncSocketFlowInstance:
        """The services of one flow."""
        return AsyncSocketFlowInstance(self, flow_id)

    async def request(self, service: str, flow: str | None, request: dict[str, Any]) -> dict[str, Any]:
        """The final response of one call."""
        return await websocket.final(self.url, self.token, self.timeout, service, flow, request)

    async def chunks(self, service: str, flow: str | None,
                     request: dict[str, Any]) -> AsyncIterator[StreamingChunk]:
        """Every response of one call as a typed chunk."""
        async for response in websocket.call(self.url, self.token, self.timeout, service, flow, request):
            yield websocket.parse_chunk(response)

    async def aclose(self) -> None:
        """Nothing is held between calls."""


async def _texts(chunks: AsyncIterator[StreamingChunk]) -> AsyncIterator[str]:
    async for chunk in chunks:
        yield chunk.content


class AsyncSocketFlowInstance:
    """One flow's services over the websocket, for asyncio code."""

    def __init__(self, client: AsyncSocketClient, flow_id: str) -> None:
        self.client = client
        self.flow_id = flow_id

    async def _text(self, service: str, request: dict[str, Any], streaming: bool, key: str) -> Any:
        if streaming:
            return _texts(self.client.chunks(service, self.flow_id, request))
        return (await self.client.request(service, self.flow_id, request)).get(key, "")

    async def _call(self, service: str, request: dict[str, Any]) -> dict[str, Any]:
        return await self.client.request(service, self.flow_id, request)

    async def agent(self, question: str, user: str, state: Any = None, group: Any = None,
                    history: list[Any] | None = None, streaming: bool = False, **kwargs: Any) -> Any:
        """Chunks (``streaming``), or the final response."""
        request = FlowRequests.agent(question, user, state, group, history, streaming, kwargs)
        if streaming:
            return self.client.chunks("agent", self.flow_id, request)
        return await self._call("agent", request)

    async def text_completion(self, system: str, prompt: str, streaming: bool = False, **kwargs: Any) -> Any:
        """The LLM's answer, or its pieces."""
        request = {"system": system, "prompt": prompt, "streaming": streaming, **kwargs}
        return await self._text("text-completion", request, streaming, "response")

    async def graph_rag(self, query: str, user: str, collection: str, max_subgraph_size: int = 1000,
                        max_subgraph_count: int = 5, max_entity_distance: int = 3,
                        streaming: bool = False, **kwargs: Any) -> Any:
        """A graph-RAG answer, or its pieces."""
        request = FlowRequests.graph_rag(query, user, collection, max_subgraph_size, max_subgraph_count,
                                         max_entity_distance, streaming, kwargs)
        return await self._text("graph-rag", request, streaming, "response")

    async def document_rag(self, query: str, user: str, collection: str, doc_limit: int = 10,
                           streaming: bool = False, **kwargs: Any) -> Any:
        """A document-RAG answer, or its pieces."""
        request = {"query": query, "user": user, "collection": collection, "doc-limit": doc_limit,
                   "streaming": streaming, **kwargs}
        return await self._text("document-rag", request, streaming, "response")

    async def prompt(self, id: str, variables: dict[str, Any], streaming: bool = False,  # noqa: A002
                     **kwargs: Any) -> Any:
        """A prompt template's text, or its pieces."""
        request = {"id": id, "variables": variables, "streaming": streaming, **kwargs}
        return await self._text("prompt", request, streaming, "text")

    async def embeddings(self, text: str, **kwargs: Any) -> dict[str, Any]:
        """``{"vectors": ...}`` of a text."""
        return await self._call("embeddings", {"text": text, **kwargs})

    async def graph_embeddings_query(self, text: str, user: str, collection: str, limit: int = 10,
                                     **kwargs: Any) -> dict[str, Any]:
        """Entities near a text."""
        vectors = (await self.embeddings(text)).get("vectors", [])
        return await self._call("graph-embeddings", {"vectors": vectors, "user": user,
                                                     "collection": collection, "limit": limit, **kwargs})

    async def triples_query(self, s: Any = None, p: Any = None, o: Any = None, user: str | None = None,
                            collection: str | None = None, limit: int = 100, **kwargs: Any) -> dict[str, Any]:
        """Triples matching a pattern."""
        return await self._call("triples", FlowRequests.triples(s, p, o, user, collection, limit, kwargs))

    async def rows_query(self, query: str, user: str, collection: str, variables: Any = None,
                         operation_name: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """A GraphQL query over stored rows."""
        return await self._call("rows", FlowRequests.rows(query, user, collection, variables,
                                                          operation_name, kwargs))

    async def mcp_tool(self, name: str, parameters: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Call an MCP tool."""
        return await self._call("mcp-tool", {"name": name, "parameters": parameters, **kwargs})

    async def row_embeddings_query(self, text: str, schema_name: str, user: str = "trustgraph",
                                   collection: str = "default", index_name: str | None = None,
                                   limit: int = 10, **kwargs: Any) -> dict[str, Any]:
        """Rows whose indexed values are near a text."""
        vectors = (await self.embeddings(text)).get("vectors", [])
        return await self._call("row-embeddings", FlowRequests.row_embeddings(
            vectors, schema_name, user, collection, index_name, limit, kwargs))
