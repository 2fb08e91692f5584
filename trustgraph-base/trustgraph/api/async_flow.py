"""``AsyncFlow``: flows and their services over REST, for asyncio code.

Method names are upstream's, including the pre-2.1 ``*_class`` ones, which
here call the blueprint operations that 2.1 config-svc serves.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from .exceptions import ProtocolException, check_error
from .socket_client import FlowRequests


class AsyncFlow:
    """Flow management and ``id(flow)`` services; ``url`` ends in ``api/v1/``."""

    def __init__(self, url: str, timeout: float, token: str | None) -> None:
        self.url = url
        self.timeout = timeout
        self.token = token

    async def request(self, path: str, request_data: dict[str, Any]) -> dict[str, Any]:
        """POST JSON to ``{url}{path}``; errors raise as :meth:`Api.request` does."""
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout)) as session:
            async with session.post(f"{self.url}{path}", json=request_data, headers=headers) as resp:
                if resp.status != 200:
                    raise ProtocolException(f"Status code {resp.status}")
                try:
                    body = await resp.json(content_type=None)
                except ValueError:
                    raise ProtocolException("Expected JSON response") from None
        check_error(body)
        return body

    async def list(self) -> list[str]:
        """The running flows."""
        return (await self.request("flow", {"operation": "list-flows"})).get("flow-ids", [])

    async def get(self, id: str) -> Any:  # noqa: A002
        """One flow's record."""
        return json.loads((await self.request("flow", {"operation": "get-flow", "flow-id": id})).get("flow") or "{}")

    async def start(self, class_name: str, id: str, description: str,  # noqa: A002
                    parameters: dict[str, Any] | None = None) -> None:
        """Start flow ``id`` from blueprint ``class_name``."""
        request: dict[str, Any] = {"operation": "start-flow", "flow-id": id, "blueprint-name": class_name,
                                   "description": description}
        if parameters:
            request["parameters"] = parameters
        await self.request("flow", request)

    async def stop(self, id: str) -> None:  # noqa: A002
        """Stop a flow."""
        await self.request("flow", {"operation": "stop-flow", "flow-id": id})

    async def list_classes(self) -> list[str]:
        """The blueprint names."""
        return (await self.request("flow", {"operation": "list-blueprints"})).get("blueprint-names", [])

    async def get_class(self, class_name: str) -> Any:
        """One blueprint's definition."""
        reply = await self.request("flow", {"operation": "get-blueprint", "blueprint-name": class_name})
        return json.loads(reply.get("blueprint-definition") or "{}")

    async def put_class(self, class_name: str, definition: Any) -> None:
        """Store a blueprint."""
        await self.request("flow", {"operation": "put-blueprint", "blueprint-name": class_name,
                                    "blueprint-definition": json.dumps(definition)})

    async def delete_class(self, class_name: str) -> None:
        """Delete a blueprint."""
        await self.request("flow", {"operation": "delete-blueprint", "blueprint-name": class_name})

    def id(self, flow_id: str) -> AsyncFlowInstance:
        """The services of one flow."""
        return AsyncFlowInstance(self, flow_id)

    async def aclose(self) -> None:
        """Nothing is held between calls."""


class AsyncFlowInstance:
    """One flow's services over REST, for asyncio code (final responses only)."""

    def __init__(self, flow: AsyncFlow, flow_id: str) -> None:
        self.flow = flow
        self.flow_id = flow_id

    async def request(self, service: str, request_data: dict[str, Any]) -> dict[str, Any]:
        """``POST flow/{id}/service/{service}``."""
        return await self.flow.request(f"flow/{self.flow_id}/service/{service}", request_data)

    async def agent(self, question: str, user: str, state: Any = None, group: Any = None,
                    history: list[Any] | None = None, **kwargs: Any) -> dict[str, Any]:
        """The agent's final message."""
        return await self.request("agent", FlowRequests.agent(question, user, state, group, history,
                                                              False, kwargs))

    async def text_completion(self, system: str, prompt: str, **kwargs: Any) -> str:
        """The LLM's answer."""
        reply = await self.request("text-completion", {"system": system, "prompt": prompt,
                                                       "streaming": False, **kwargs})
        return reply.get("response", "")

    async def graph_rag(self, query: str, user: str, collection: str, max_subgraph_size: int = 1000,
                        max_subgraph_count: int = 5, max_entity_distance: int = 3, **kwargs: Any) -> str:
        """A graph-RAG answer."""
        reply = await self.request("graph-rag", FlowRequests.graph_rag(
            query, user, collection, max_subgraph_size, max_subgraph_count, max_entity_distance,
            False, kwargs))
        return reply.get("response", "")

    async def document_rag(self, query: str, user: str, collection: str, doc_limit: int = 10,
                           **kwargs: Any) -> str:
        """A document-RAG answer."""
        reply = await self.request("document-rag", {"query": query, "user": user, "collection": collection,
                                                    "doc-limit": doc_limit, "streaming": False, **kwargs})
        return reply.get("response", "")

    async def embeddings(self, text: str, **kwargs: Any) -> dict[str, Any]:
        """``{"vectors": ...}`` of a text."""
        return await self.request("embeddings", {"text": text, **kwargs})

    async def graph_embeddings_query(self, text: str, user: str, collection: str, limit: int = 10,
                                     **kwargs: Any) -> dict[str, Any]:
        """Entities near a text."""
        vectors = (await self.embeddings(text)).get("vectors", [])
        return await self.request("graph-embeddings", {"vectors": vectors, "user": user,
                                                       "collection": collection, "limit": limit, **kwargs})

    async def triples_query(self, s: Any = None, p: Any = None, o: Any = None, user: str | None = None,
                            collection: str | None = None, limit: int = 100, **kwargs: Any) -> dict[str, Any]:
        """Triples matching a pattern."""
        return await self.request("triples", FlowRequests.triples(s, p, o, user, collection, limit, kwargs))

    async def rows_query(self, query: str, user: str, collection: str, variables: Any = None,
                         operation_name: str | None = None, **kwargs: Any) -> dict[str, Any]:
        """A GraphQL query over stored rows."""
        return await self.request("rows", FlowRequests.rows(query, user, collection, variables,
                                                            operation_name, kwargs))

    async def row_embeddings_query(self, text: str, schema_name: str, user: str = "trustgraph",
                                   collection: str = "default", index_name: str | None = None,
                                   limit: int = 10, **kwargs: Any) -> dict[str, Any]:
        """Rows whose indexed values are near a text."""
        vectors = (await self.embeddings(text)).get("vectors", [])
        return await self.request("row-embeddings", FlowRequests.row_embeddings(
            vectors, schema_name, user, collection, index_name, limit, kwargs))
