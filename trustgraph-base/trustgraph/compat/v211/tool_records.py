"""The built-in tool types on upstream 2.11's wire: the ``tools`` of 2.11's agent dialect.

Ours is :data:`trustgraph.catalog.wires.TOOLS` (2.1's records and
:mod:`trustgraph.catalog.implementations`); this table is the same but for
the types whose records 2.11 changed, checked against upstream 2.11.1's schema
(trustgraph-base ``schema/``) and services (trustgraph-flow):

* ``knowledge-query``: 2.11.1's graph-rag answers with ``explain`` messages
  first (``response`` empty) and the answer in ``chunk`` messages, the last
  with ``end_of_session``; 2.1's implementation takes the first reply, an
  empty one.  The query has no ``user`` (2.11's service ignores 2.1's).
* ``row-embeddings-query``: 2.11.1's embeddings service reads ``texts`` (2.1
  sends ``text``, read as no text at all) and 2.11.1's row-embeddings query
  reads one ``vector`` (2.1 sends ``vectors``): a 2.1 call finds nothing,
  without any error.
* ``text-completion`` and ``prompt``: ``PromptRequest`` is unchanged; 2.11's
  ``PromptResponse`` adds token counts and writes ``text`` or ``object`` as
  null, which the agent's prompt client reads as 2.11's
  (:class:`.schema.PromptResponse`).
* ``mcp-tool``: ``ToolRequest`` and ``ToolResponse`` are unchanged.
* ``structured-query``: the request has no ``user`` in 2.11 (2.11.1's service
  ignores 2.1's, the workspace being the tenancy); the response is unchanged,
  so 2.1's implementation serves.
* ``tool-service``: ``ToolServiceRequest`` lost ``user`` in 2.11 (its services
  ignore ours); the response is unchanged, so 2.1's implementation serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from trustgraph.base.wire import WIRE_211
from trustgraph.catalog.implementations import (
    BUILDERS,
    FLOW_CLIENTS,
    Builder,
    CallContext,
    matches_text,
    raise_error,
)
from trustgraph.catalog.wires import ToolWire
from trustgraph.schema import EmbeddingsResponse, PromptRequest

from . import schema as v211
from .schema.retrieval import EXPLAIN


@dataclass(frozen=True)
class KnowledgeQuery211Impl:
    """Graph-RAG over a collection on 2.11: the answer is the ``chunk`` messages up to ``end_of_session``.

    Explain messages (provenance) are skipped: the agent writes no provenance.
    """

    collection: str

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        query = v211.GraphRagQuery(query=str(arguments.get("question", "")), collection=self.collection)
        parts: list[str] = []
        async with ctx.flow("graph-rag-request").stream(query, final=_rag_done, timeout=ctx.timeout) as replies:
            async for reply in replies:
                raise_error(reply.error)
                if reply.message_type != EXPLAIN and reply.response:
                    parts.append(reply.response)
        return "".join(parts)


def _rag_done(reply: v211.GraphRagResponse) -> bool:
    # 2.11.1's graph-rag ends every answer, an error too, with end_of_session.
    return reply.end_of_session or reply.error is not None


@dataclass(frozen=True)
class RowEmbeddingsQuery211Impl:
    """Semantic search over a schema's row indexes on 2.11: embed ``texts=[query]``, then query its ``vector``.

    The answer is worded as 2.1's (:func:`trustgraph.catalog.implementations.matches_text`).
    """

    schema_name: str
    collection: str
    index_name: str | None
    limit: int

    async def invoke(self, ctx: CallContext, arguments: dict[str, Any]) -> str:
        emb = await ctx.flow("embeddings-request").request(
            v211.EmbeddingsRequest(texts=[str(arguments.get("query", ""))]), timeout=ctx.timeout)
        raise_error(emb.error)
        vector = emb.vectors[0] if emb.vectors else []   # one vector per text
        resp = await ctx.flow("row-embeddings-query-request").request(v211.RowEmbeddingsRequest(
            vector=vector, limit=self.limit, collection=self.collection, schema_name=self.schema_name,
            index_name=self.index_name or None), timeout=ctx.timeout)
        raise_error(resp.error)
        return matches_text(resp.matches or [])


#: 2.11's flow clients: 2.1's but for the records 2.11 changed.
FLOW_CLIENTS_211: Mapping[str, tuple[type, type]] = MappingProxyType({
    **FLOW_CLIENTS,
    "prompt": (PromptRequest, v211.PromptResponse),
    "graph-rag": (v211.GraphRagQuery, v211.GraphRagResponse),
    "embeddings": (v211.EmbeddingsRequest, EmbeddingsResponse),
    "row-embeddings-query": (v211.RowEmbeddingsRequest, v211.RowEmbeddingsResponse),
})

#: 2.11's implementations: 2.1's but for the types whose records changed.
BUILDERS_211: Mapping[str, Builder] = MappingProxyType({
    **BUILDERS,
    "knowledge-query": lambda tool, _: KnowledgeQuery211Impl(tool.descriptor.collection),
    "row-embeddings-query": lambda tool, _: RowEmbeddingsQuery211Impl(
        tool.descriptor.schema_name or "", tool.descriptor.collection, tool.descriptor.index_name,
        tool.descriptor.limit),
})

#: The built-in tool types on 2.11's wire.
TOOLS = ToolWire(WIRE_211, FLOW_CLIENTS_211, BUILDERS_211)
