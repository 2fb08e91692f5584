"""Upstream TrustGraph 2.1.4's processor-author API on our core.

Processors written against upstream 2.1.4 (upstream's own trustgraph-flow,
and the ones users wrote from its docs) import names from ``trustgraph.base``
and modules under it (``trustgraph.base.llm_service``,
``trustgraph.base.flow_processor``, ...).  Two hooks in ``trustgraph.base``
serve them from here, and nothing else of ours does:

* :data:`EXPORTS`: each upstream name ``trustgraph.base`` offers that ours
  does not (ours keeps its own where it has one), and the module of this
  package that defines it; ``trustgraph.base.__getattr__`` falls back to it.
* :data:`BASE_PATHS`: a directory appended to ``trustgraph.base.__path__``,
  holding one small file per upstream module path, named as upstream names
  it, that imports its names from here.  The directory's name is no
  identifier, so none of its files can be imported under a second name (two
  ``LlmService`` classes), and base's own directory comes first on the path
  (a test checks that the two share no file name).
"""

from __future__ import annotations

from pathlib import Path

#: Where upstream's module files under ``trustgraph.base`` are (not a package).
BASE_PATHS = Path(__file__).resolve().parent / "base-paths"

#: Upstream name -> the module (absolute) that defines it, for ``from trustgraph.base import NAME``.
EXPORTS: dict[str, str] = {
    # -- metrics, Cassandra and collection config, logging
    "ProcessorMetrics": "trustgraph.compat.v214.metrics",
    "ConsumerMetrics": "trustgraph.compat.v214.metrics",
    "ProducerMetrics": "trustgraph.compat.v214.metrics",
    "add_logging_args": "trustgraph.compat.v214.logging_setup",
    "setup_logging": "trustgraph.compat.v214.logging_setup",
    "CollectionConfigHandler": "trustgraph.compat.v214.collection_config",
    # -- publishers, subscribers, upstream's Consumer and Producer
    "Consumer": "trustgraph.compat.v214.consumer",
    "Producer": "trustgraph.compat.v214.pubsub",
    "Publisher": "trustgraph.compat.v214.pubsub",
    "Subscriber": "trustgraph.compat.v214.pubsub",
    "SubscriberSpec": "trustgraph.compat.v214.pubsub",
    "get_pubsub": "trustgraph.compat.v214.backends",
    "PulsarClient": "trustgraph.compat.v214.backends",
    # -- the LLM service base
    "LlmService": "trustgraph.compat.v214.llm",
    "LlmResult": "trustgraph.compat.v214.llm",
    "LlmChunk": "trustgraph.compat.v214.llm",
    # -- the processor surface, the flow client specs, AgentService and ToolService
    "AsyncProcessor": "trustgraph.compat.v214.processor",
    "FlowProcessor": "trustgraph.compat.v214.processor",
    "ConsumerSpec": "trustgraph.compat.v214.processor",
    "ProducerSpec": "trustgraph.compat.v214.processor",
    "ParameterSpec": "trustgraph.compat.v214.processor",
    "RequestResponseSpec": "trustgraph.compat.v214.processor",
    "PromptClientSpec": "trustgraph.compat.v214.client_specs",
    "TextCompletionClientSpec": "trustgraph.compat.v214.client_specs",
    "EmbeddingsClientSpec": "trustgraph.compat.v214.client_specs",
    "GraphEmbeddingsClientSpec": "trustgraph.compat.v214.client_specs",
    "TriplesClientSpec": "trustgraph.compat.v214.client_specs",
    "DocumentEmbeddingsClientSpec": "trustgraph.compat.v214.client_specs",
    "GraphRagClientSpec": "trustgraph.compat.v214.client_specs",
    "AgentClientSpec": "trustgraph.compat.v214.client_specs",
    "ToolClientSpec": "trustgraph.compat.v214.client_specs",
    "ToolServiceClientSpec": "trustgraph.compat.v214.client_specs",
    "StructuredQueryClientSpec": "trustgraph.compat.v214.client_specs",
    "RowEmbeddingsQueryClientSpec": "trustgraph.compat.v214.client_specs",
    "AgentService": "trustgraph.compat.v214.services",
    "ToolService": "trustgraph.compat.v214.services",
    # -- the store and query service bases, EmbeddingsService, ChunkingService
    "TriplesStoreService": "trustgraph.compat.v214.stores",
    "TriplesQueryService": "trustgraph.compat.v214.stores",
    "GraphEmbeddingsStoreService": "trustgraph.compat.v214.stores",
    "GraphEmbeddingsQueryService": "trustgraph.compat.v214.stores",
    "DocumentEmbeddingsStoreService": "trustgraph.compat.v214.stores",
    "DocumentEmbeddingsQueryService": "trustgraph.compat.v214.stores",
    "EmbeddingsService": "trustgraph.compat.v214.data_services",
    "ChunkingService": "trustgraph.compat.v214.data_services",
}
