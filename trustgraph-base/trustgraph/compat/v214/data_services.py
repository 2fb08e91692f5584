"""Upstream 2.1.4's EmbeddingsService and ChunkingService, on our FlowProcessor (with upstream's surface, :mod:`.processor`).

* :class:`EmbeddingsService`: a subclass writes ``on_embeddings(text,
  model=None)`` returning a list of vectors; the base answers a flow's
  ``request`` topic (an ``EmbeddingsRequest``) on its ``response`` topic,
  passes the flow's ``model`` parameter, and takes ``-c/--concurrency``
  (upstream's flag, default 1) as the number of requests worked at once.
  An exception becomes ``EmbeddingsResponse(error=embeddings-error,
  vectors=None)``; a TooManyRequests is tried again every 10 s while the
  caller still waits (upstream retries for up to two hours, whoever waits),
  then answered with the error type ``too-many-requests``.
* :class:`ChunkingService`: the base of a chunker (upstream's chunker-token
  and chunker-recursive).  It declares the flow parameters ``chunk-size``
  and ``chunk-overlap`` (``chunk_document`` picks them over the chunker's
  own defaults) and is a librarian client: ``get_document_text`` returns a
  ``TextDocument``'s text, fetched from the librarian when the document only
  names it, and ``save_child_document`` stores a chunk as a child document.
  The chunker itself registers its consumer and producer (upstream's specs,
  ``handler(msg, consumer, flow)``), as upstream's do.

The librarian calls go through our :class:`~trustgraph.base.RequestResponseClient`
(deadlines, a subscription of this process's own, calls that end when the
librarian restarts) instead of upstream's producer and shared consumer.
"""

from __future__ import annotations

import argparse
import base64
import logging
import uuid
from typing import Any

from ...base.messaging.message import Message
from ...base.messaging.request_response import RequestResponseClient, RequestTimeout
from ...base.messaging.serving import Replies, Reply, ServiceError, message_or_type
from ...base.processors.flow_processor import ConsumerSpec, Flow, ParameterSpec, ProducerSpec
from ...exceptions import TooManyRequests
from ...schema import (
    DocumentMetadata,
    EmbeddingsRequest,
    EmbeddingsResponse,
    Error,
    LibrarianRequest,
    LibrarianResponse,
    TextDocument,
    librarian_request_queue,
    librarian_response_queue,
)
from .handling import RATE_LIMIT_RETRY, RATE_LIMIT_TIMEOUT, retry_rate_limited
from .processor import FlowProcessor

logger = logging.getLogger(__name__)

__all__ = ["ChunkingService", "EmbeddingsService"]

EMBEDDINGS_ERROR = "embeddings-error"
#: The error type a rate-limited request is answered with (upstream's clients raise TooManyRequests).
TOO_MANY_REQUESTS = "too-many-requests"

default_concurrency = 1
default_librarian_request_queue = librarian_request_queue
default_librarian_response_queue = librarian_response_queue
#: Seconds a librarian call waits (upstream's default ``timeout`` of both calls).
LIBRARIAN_TIMEOUT = 120


class EmbeddingsService(FlowProcessor):
    """Base of an embeddings service: write ``on_embeddings(text, model=None)``."""

    #: Seconds between tries of a rate-limited request, and the longest it is tried (upstream's).
    rate_limit_retry: float = RATE_LIMIT_RETRY
    rate_limit_timeout: float = RATE_LIMIT_TIMEOUT

    def __init__(self, **params: Any) -> None:
        concurrency = params.get("concurrency") or default_concurrency
        super().__init__(**params | {"concurrency": concurrency})
        replies = Replies(error_record=self._error_record, error_type=EMBEDDINGS_ERROR,
                          describe=message_or_type)
        self.register_specification(ConsumerSpec("request", EmbeddingsRequest, self._serve,
                                                 concurrency=concurrency, replies=replies))
        self.register_specification(ProducerSpec("response", EmbeddingsResponse))
        self.register_specification(ParameterSpec("model"))

    @staticmethod
    def _error_record(error: Error) -> EmbeddingsResponse:
        return EmbeddingsResponse(error=error, vectors=None)

    async def _serve(self, msg: Message, flow: Flow, reply: Reply) -> None:
        text, model = msg.value.text, flow("model")
        logger.debug("Embeddings request %s (model %s)", reply.id, model)
        try:
            vectors = await retry_rate_limited(lambda: self.on_embeddings(text, model=model),
                                               every=self.rate_limit_retry,
                                               give_up_after=self.rate_limit_timeout, deadline=reply.deadline)
        except TooManyRequests as e:
            raise ServiceError(str(e) or "rate limited", TOO_MANY_REQUESTS) from e
        await reply.send(EmbeddingsResponse(error=None, vectors=vectors))

    async def on_request(self, msg: Any, consumer: Any, flow: Any) -> None:
        """Answer one request as upstream's handler does (``msg.value()``, ``msg.properties()["id"]``).

        The service answers through the reply path above; this is for code
        that calls upstream's handler directly.  TooManyRequests propagates,
        as upstream's does, for the caller to retry.
        """
        rid = msg.properties()["id"]
        try:
            response = EmbeddingsResponse(error=None,
                                          vectors=await self.on_embeddings(msg.value().text, model=flow("model")))
        except TooManyRequests:
            raise
        except Exception as e:
            logger.error("Embeddings request failed: %s", e, exc_info=True)
            response = self._error_record(Error(type=EMBEDDINGS_ERROR, message=message_or_type(e)))
        await flow("response").send(response, properties={"id": rid})

    async def on_embeddings(self, text: str, model: str | None = None) -> list[list[float]]:
        """The vectors of ``text``, with ``model`` (the flow's, or None for the service's default)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement on_embeddings")

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("-c", "--concurrency", type=int, default=default_concurrency,
                            help=f"requests worked at once (default: {default_concurrency})")
        super().add_args(parser)


class ChunkingService(FlowProcessor):
    """Base of a chunker: the chunk-size/chunk-overlap parameters and the librarian calls."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.register_specification(ParameterSpec("chunk-size"))
        self.register_specification(ParameterSpec("chunk-overlap"))
        request_topic = params.get("librarian_request_queue") or default_librarian_request_queue
        response_topic = params.get("librarian_response_queue") or default_librarian_response_queue
        # Subscribed on the first call: a chunker whose documents all come inline never needs it.
        # Its producer and consumer are the processor's PubSub's, closed when the processor stops.
        self.librarian: RequestResponseClient[LibrarianRequest, LibrarianResponse] = RequestResponseClient(
            self.pubsub, request_topic=request_topic, response_topic=response_topic,
            request_schema=LibrarianRequest, response_schema=LibrarianResponse,
            subscription=f"{self.id}--librarian--{uuid.uuid4()}", timeout=LIBRARIAN_TIMEOUT, name="librarian")

    async def _librarian(self, request: LibrarianRequest, timeout: float, timed_out: str) -> LibrarianResponse:
        try:
            return await self.librarian.request(request, timeout=timeout)
        except RequestTimeout as e:
            raise RuntimeError(timed_out) from e

    async def fetch_document_content(self, document_id: str, user: str, timeout: float = LIBRARIAN_TIMEOUT) -> Any:
        """The stored content of ``document_id`` (base64 text, as the librarian sends it)."""
        response = await self._librarian(
            LibrarianRequest(operation="get-document-content", document_id=document_id, user=user),
            timeout, f"Timeout fetching document {document_id}")
        if response.error:
            raise RuntimeError(f"Librarian error: {response.error.type}: {response.error.message}")
        return response.content

    async def save_child_document(self, doc_id: str, parent_id: str, user: str, content: bytes | str,
                                  document_type: str = "chunk", title: str | None = None,
                                  timeout: float = LIBRARIAN_TIMEOUT) -> str:
        """Store ``content`` as a child document of ``parent_id``; returns ``doc_id``."""
        data = content.encode("utf-8") if isinstance(content, str) else content
        metadata = DocumentMetadata(id=doc_id, user=user, kind="text/plain", title=title or doc_id,
                                    parent_id=parent_id, document_type=document_type)
        response = await self._librarian(
            LibrarianRequest(operation="add-child-document", document_metadata=metadata,
                             content=base64.b64encode(data)),
            timeout, f"Timeout saving chunk {doc_id}")
        if response.error:
            raise RuntimeError(f"Librarian error saving chunk: {response.error.type}: {response.error.message}")
        return doc_id

    async def get_document_text(self, doc: TextDocument) -> str:
        """The document's text: inline, or fetched from the librarian when only ``document_id`` is set."""
        if doc.document_id and not doc.text:
            logger.info("Fetching document %s from the librarian", doc.document_id)
            content = await self.fetch_document_content(document_id=doc.document_id, user=doc.metadata.user)
            if isinstance(content, str):
                content = content.encode("utf-8")
            text = base64.b64decode(content).decode("utf-8")
            logger.debug("Fetched %d characters of %s", len(text), doc.document_id)
            return text
        return doc.text.decode("utf-8")

    async def chunk_document(self, msg: Any, consumer: Any, flow: Any, default_chunk_size: Any,
                             default_chunk_overlap: Any) -> tuple[Any, Any]:
        """The chunk size and overlap to use: the flow's parameters where set, else the defaults given."""
        size, overlap = flow("chunk-size"), flow("chunk-overlap")
        return (default_chunk_size if size is None else size,
                default_chunk_overlap if overlap is None else overlap)

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--librarian-request-queue", default=default_librarian_request_queue,
                            help=f"librarian request queue (default: {default_librarian_request_queue})")
        parser.add_argument("--librarian-response-queue", default=default_librarian_response_queue,
                            help=f"librarian response queue (default: {default_librarian_response_queue})")
