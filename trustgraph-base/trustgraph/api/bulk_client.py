"""``BulkClient`` / ``AsyncBulkClient``: the gateway's import and export sockets.

Imports send one JSON message per frame to
``api/v1/flow/{flow}/import/{kind}``; exports yield every frame of
``.../export/{kind}`` until the caller stops.  Triples are batched, each
with the import's ``metadata``; a plain-string term is an IRI when it looks
like a URL, else a literal.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from . import websocket
from .loop_thread import LoopThread
from .terms import string_to_term
from .types import Triple

DEFAULT_METADATA = {"id": "", "metadata": [], "user": "trustgraph", "collection": "default"}


def _batches(items: Iterable[Any], key: str, metadata: dict[str, Any] | None, size: int,
             convert: Any = lambda x: x) -> Iterator[dict[str, Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(convert(item))
        if len(batch) >= size:
            yield {"metadata": metadata or DEFAULT_METADATA, key: batch}
            batch = []
    if batch:
        yield {"metadata": metadata or DEFAULT_METADATA, key: batch}


def _triple_json(t: Triple) -> dict[str, Any]:
    return {"s": string_to_term(str(t.s)), "p": string_to_term(str(t.p)), "o": string_to_term(str(t.o))}


def _triple_from_export(message: dict[str, Any]) -> Iterator[Triple]:
    """An exported Triples message as Triples of plain strings."""
    for t in message.get("triples") or []:
        yield Triple(s=_term_text(t.get("s")), p=_term_text(t.get("p")), o=_term_text(t.get("o")))


def _term_text(term: Any) -> str:
    if not isinstance(term, dict):
        return "" if term is None else str(term)
    return term.get("i") or term.get("v") or term.get("d") or ""


def _path(flow: str, direction: str, kind: str) -> str:
    return f"api/v1/flow/{flow}/{direction}/{kind}"


class BulkClient:
    """Bulk imports and exports from synchronous code."""

    def __init__(self, url: str, timeout: float, token: str | None) -> None:
        self.url = websocket.to_ws_url(url)
        self.timeout = timeout
        self.token = token
        self._loop = LoopThread()

    def _send(self, flow: str, kind: str, messages: Iterable[Any]) -> None:
        self._loop.run(websocket.send_all(self.url, _path(flow, "import", kind), self.token,
                                          messages, self.timeout))

    def _receive(self, flow: str, kind: str) -> Iterator[Any]:
        return self._loop.iterate(websocket.receive_all(self.url, _path(flow, "export", kind), self.token))

    def import_triples(self, flow: str, triples: Iterable[Triple], metadata: dict[str, Any] | None = None,
                       batch_size: int = 100, **kwargs: Any) -> None:
        """Send triples in batches."""
        self._send(flow, "triples", _batches(triples, "triples", metadata, batch_size, _triple_json))

    def export_triples(self, flow: str, **kwargs: Any) -> Iterator[Triple]:
        """Every triple the flow stores from now on."""
        for message in self._receive(flow, "triples"):
            yield from _triple_from_export(message)

    def import_graph_embeddings(self, flow: str, embeddings: Iterable[dict[str, Any]], **kwargs: Any) -> None:
        """Send GraphEmbeddings messages as they are."""
        self._send(flow, "graph-embeddings", embeddings)

    def export_graph_embeddings(self, flow: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every GraphEmbeddings message of the flow."""
        return self._receive(flow, "graph-embeddings")

    def import_document_embeddings(self, flow: str, embeddings: Iterable[dict[str, Any]],
                                   **kwargs: Any) -> None:
        """Send DocumentEmbeddings messages as they are."""
        self._send(flow, "document-embeddings", embeddings)

    def export_document_embeddings(self, flow: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every DocumentEmbeddings message of the flow."""
        return self._receive(flow, "document-embeddings")

    def import_entity_contexts(self, flow: str, contexts: Iterable[dict[str, Any]],
                               metadata: dict[str, Any] | None = None, batch_size: int = 100,
                               **kwargs: Any) -> None:
        """Send entity contexts in batches."""
        self._send(flow, "entity-contexts", _batches(contexts, "entities", metadata, batch_size))

    def export_entity_contexts(self, flow: str, **kwargs: Any) -> Iterator[dict[str, Any]]:
        """Every EntityContexts message of the flow."""
        return self._receive(flow, "entity-contexts")

    def import_rows(self, flow: str, rows: Iterable[dict[str, Any]], **kwargs: Any) -> None:
        """Send ExtractedObject messages as they are."""
        self._send(flow, "rows", rows)

    def close(self) -> None:
        """Stop the private event loop."""
        self._loop.close()


class AsyncBulkClient:
    """Bulk imports and exports from asyncio code."""

    def __init__(self, url: str, timeout: float, token: str | None) -> None:
        self.url = websocket.to_ws_url(url)
        self.timeout = timeout
        self.token = token

    async def _send(self, flow: str, kind: str, messages: Any) -> None:
        await websocket.send_all(self.url, _path(flow, "import", kind), self.token, messages, self.timeout)

    def _receive(self, flow: str, kind: str) -> AsyncIterator[Any]:
        return websocket.receive_all(self.url, _path(flow, "export", kind), self.token)

    async def import_triples(self, flow: str, triples: AsyncIterator[Triple], **kwargs: Any) -> None:
        """Send triples, one message each."""
        async def messages() -> AsyncIterator[dict[str, Any]]:
            async for t in triples:
                yield {"metadata": DEFAULT_METADATA, "triples": [_triple_json(t)]}
        await self._send(flow, "triples", messages())

    async def export_triples(self, flow: str, **kwargs: Any) -> AsyncIterator[Triple]:
        """Every triple the flow stores from now on."""
        async for message in self._receive(flow, "triples"):
            for t in _triple_from_export(message):
                yield t

    async def import_graph_embeddings(self, flow: str, embeddings: AsyncIterator[dict[str, Any]],
                                      **kwargs: Any) -> None:
        """Send GraphEmbeddings messages as they are."""
        await self._send(flow, "graph-embeddings", embeddings)

    def export_graph_embeddings(self, flow: str, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Every GraphEmbeddings message of the flow."""
        return self._receive(flow, "graph-embeddings")

    async def import_document_embeddings(self, flow: str, embeddings: AsyncIterator[dict[str, Any]],
                                         **kwargs: Any) -> None:
        """Send DocumentEmbeddings messages as they are."""
        await self._send(flow, "document-embeddings", embeddings)

    def export_document_embeddings(self, flow: str, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Every DocumentEmbeddings message of the flow."""
        return self._receive(flow, "document-embeddings")

    async def import_entity_contexts(self, flow: str, contexts: AsyncIterator[dict[str, Any]],
                                     **kwargs: Any) -> None:
        """Send EntityContexts messages as they are."""
        await self._send(flow, "entity-contexts", contexts)

    def export_entity_contexts(self, flow: str, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        """Every EntityContexts message of the flow."""
        return self._receive(flow, "entity-contexts")

    async def import_rows(self, flow: str, rows: AsyncIterator[dict[str, Any]], **kwargs: Any) -> None:
        """Send ExtractedObject messages as they are."""
        await self._send(flow, "rows", rows)

    async def aclose(self) -> None:
        """Nothing is held between calls."""
