"""Upstream 2.1.4's store and query service bases, on our FlowProcessor (with upstream's surface, :mod:`.processor`).

Upstream's graph and vector store processors (``triples-write-cassandra``,
``graph-embeddings-query-qdrant``, ...) and the ones users wrote subclass one
of six bases and write one method:

* a store consumes a flow's ``input`` topic and hands each record to
  ``store_triples`` / ``store_graph_embeddings`` /
  ``store_document_embeddings``; nothing is answered.  An exception
  negative-acknowledges the message (the broker delivers it again), and a
  :class:`~trustgraph.exceptions.TooManyRequests` is retried in place every
  10 s for up to two hours first, as upstream's consumer does;
* a query service answers a flow's ``request`` topic on its ``response``
  topic with what ``query_triples`` / ``query_graph_embeddings`` /
  ``query_document_embeddings`` returns (triples, entity terms, chunk ids);
  any exception becomes upstream's error record (``triples-query-error``,
  ``graph-embeddings-query-error``, ``document-embeddings-query-error``, with
  the exception's text).

The consumers, producers and the reply path are ours (:mod:`trustgraph.base.messaging.serving`):
a request without an ``id`` is dropped instead of answered under no id, an
undecodable one gets the error record, and a request whose caller's deadline
has passed is skipped.  ``on_message(msg, consumer, flow)`` stays callable
with upstream's arguments for code that drives a service by hand.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from ...base.messaging.message import Message
from ...base.messaging.serving import Replies, Reply, message_or_type
from ...base.processors.flow_processor import ConsumerSpec, Flow, ProducerSpec
from ...schema import (
    DocumentEmbeddings,
    DocumentEmbeddingsRequest,
    DocumentEmbeddingsResponse,
    Error,
    GraphEmbeddings,
    GraphEmbeddingsRequest,
    GraphEmbeddingsResponse,
    Triples,
    TriplesQueryRequest,
    TriplesQueryResponse,
)
from .handling import RATE_LIMIT_RETRY, RATE_LIMIT_TIMEOUT, UpstreamMessage, retry_rate_limited
from .processor import FlowProcessor

logger = logging.getLogger(__name__)

__all__ = ["DocumentEmbeddingsQueryService", "DocumentEmbeddingsStoreService", "GraphEmbeddingsQueryService",
           "GraphEmbeddingsStoreService", "TriplesQueryService", "TriplesStoreService"]

# -- stores ---------------------------------------------------------------------------------------

class _StoreService(FlowProcessor):
    """Consumes records of ``schema`` on the flow's ``input`` topic; a subclass stores them."""

    schema: ClassVar[type]
    #: Seconds between tries of a rate-limited record, and how long to keep trying (upstream's).
    rate_limit_retry: float = RATE_LIMIT_RETRY
    rate_limit_timeout: float = RATE_LIMIT_TIMEOUT

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.register_specification(ConsumerSpec("input", self.schema, self._take))

    async def _take(self, msg: Message, flow: Flow) -> None:
        consumer = flow.consumers.get("input")
        await retry_rate_limited(lambda: self.on_message(UpstreamMessage(msg), consumer, flow),
                                 every=self.rate_limit_retry, give_up_after=self.rate_limit_timeout)

    async def on_message(self, msg: Any, consumer: Any, flow: Any) -> None:
        """Store one received record (upstream's handler; ``msg.value()`` is the record)."""
        await self._store(msg.value())

    async def _store(self, record: Any) -> None:
        raise NotImplementedError


class TriplesStoreService(_StoreService):
    """Base of a triple store: write ``store_triples(message)`` (a :class:`~trustgraph.schema.Triples`)."""

    schema = Triples

    async def _store(self, record: Triples) -> None:
        await self.store_triples(record)

    async def store_triples(self, message: Triples) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement store_triples")


class GraphEmbeddingsStoreService(_StoreService):
    """Base of an entity vector store: write ``store_graph_embeddings(message)`` (a GraphEmbeddings)."""

    schema = GraphEmbeddings

    async def _store(self, record: GraphEmbeddings) -> None:
        await self.store_graph_embeddings(record)

    async def store_graph_embeddings(self, message: GraphEmbeddings) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement store_graph_embeddings")


class DocumentEmbeddingsStoreService(_StoreService):
    """Base of a chunk vector store: write ``store_document_embeddings(message)`` (a DocumentEmbeddings)."""

    schema = DocumentEmbeddings

    async def _store(self, record: DocumentEmbeddings) -> None:
        await self.store_document_embeddings(record)

    async def store_document_embeddings(self, message: DocumentEmbeddings) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement store_document_embeddings")


# -- queries --------------------------------------------------------------------------------------

class _QueryService(FlowProcessor):
    """Answers ``request_schema`` on the flow's ``request`` topic, on its ``response`` topic."""

    request_schema: ClassVar[type]
    response_schema: ClassVar[type]
    error_type: ClassVar[str]

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        replies = Replies(error_record=self._error_record, error_type=self.error_type,
                          describe=message_or_type)
        self.register_specification(ConsumerSpec("request", self.request_schema, self._serve, replies=replies))
        self.register_specification(ProducerSpec("response", self.response_schema))

    async def _serve(self, msg: Message, flow: Flow, reply: Reply) -> None:
        logger.debug("%s: request %s", type(self).__name__, reply.id)
        await reply.send(self._answer_record(await self._query(msg.value)))

    async def on_message(self, msg: Any, consumer: Any, flow: Any) -> None:
        """Answer one request as upstream's handler does (``msg.value()``, ``msg.properties()["id"]``).

        The service itself answers through the reply path above; this is for
        code that calls upstream's handler directly.
        """
        rid = msg.properties()["id"]
        try:
            response = self._answer_record(await self._query(msg.value()))
        except Exception as e:
            logger.error("%s failed: %s", self.error_type, e, exc_info=True)
            response = self._error_record(Error(type=self.error_type, message=message_or_type(e)))
        await flow("response").send(response, properties={"id": rid})

    async def _query(self, request: Any) -> Any:
        raise NotImplementedError

    def _answer_record(self, result: Any) -> Any:
        raise NotImplementedError

    def _error_record(self, error: Error) -> Any:
        raise NotImplementedError


class TriplesQueryService(_QueryService):
    """Base of a triples query service: write ``query_triples(request)``, returning a list of Triple."""

    request_schema = TriplesQueryRequest
    response_schema = TriplesQueryResponse
    error_type = "triples-query-error"

    async def _query(self, request: TriplesQueryRequest) -> Any:
        return await self.query_triples(request)

    def _answer_record(self, result: Any) -> TriplesQueryResponse:
        return TriplesQueryResponse(error=None, triples=result)

    def _error_record(self, error: Error) -> TriplesQueryResponse:
        return TriplesQueryResponse(error=error, triples=None)

    async def query_triples(self, request: TriplesQueryRequest) -> list[Any]:
        raise NotImplementedError(f"{type(self).__name__} does not implement query_triples")


class GraphEmbeddingsQueryService(_QueryService):
    """Base of an entity vector search: write ``query_graph_embeddings(request)``, returning Terms."""

    request_schema = GraphEmbeddingsRequest
    response_schema = GraphEmbeddingsResponse
    error_type = "graph-embeddings-query-error"

    async def _query(self, request: GraphEmbeddingsRequest) -> Any:
        return await self.query_graph_embeddings(request)

    def _answer_record(self, result: Any) -> GraphEmbeddingsResponse:
        return GraphEmbeddingsResponse(error=None, entities=result)

    def _error_record(self, error: Error) -> GraphEmbeddingsResponse:
        # Upstream meant no entities here (its record had a misspelt field, so it sent nothing).
        return GraphEmbeddingsResponse(error=error, entities=None)

    async def query_graph_embeddings(self, request: GraphEmbeddingsRequest) -> list[Any]:
        raise NotImplementedError(f"{type(self).__name__} does not implement query_graph_embeddings")


class DocumentEmbeddingsQueryService(_QueryService):
    """Base of a chunk vector search: write ``query_document_embeddings(request)``, returning chunk ids."""

    request_schema = DocumentEmbeddingsRequest
    response_schema = DocumentEmbeddingsResponse
    error_type = "document-embeddings-query-error"

    async def _query(self, request: DocumentEmbeddingsRequest) -> Any:
        return await self.query_document_embeddings(request)

    def _answer_record(self, result: Any) -> DocumentEmbeddingsResponse:
        return DocumentEmbeddingsResponse(error=None, chunk_ids=result)

    def _error_record(self, error: Error) -> DocumentEmbeddingsResponse:
        return DocumentEmbeddingsResponse(error=error, chunk_ids=[])

    async def query_document_embeddings(self, request: DocumentEmbeddingsRequest) -> list[str]:
        raise NotImplementedError(f"{type(self).__name__} does not implement query_document_embeddings")
