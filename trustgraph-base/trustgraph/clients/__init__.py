"""Blocking Pulsar clients of the services (upstream's ``trustgraph.clients``).

``from trustgraph.clients.config_client import ConfigClient`` and the rest
of upstream's module paths work; the classes themselves live in
:mod:`.base`, :mod:`.config_client` and :mod:`.services`.
"""

from .base import BaseClient
from .config_client import ConfigClient
from .services import (
    AgentClient,
    DocumentEmbeddingsClient,
    DocumentRagClient,
    EmbeddingsClient,
    GraphEmbeddingsClient,
    GraphRagClient,
    LlmClient,
    PromptClient,
    RowEmbeddingsClient,
    TriplesQueryClient,
)

__all__ = ["AgentClient", "BaseClient", "ConfigClient", "DocumentEmbeddingsClient", "DocumentRagClient",
           "EmbeddingsClient", "GraphEmbeddingsClient", "GraphRagClient", "LlmClient", "PromptClient",
           "RowEmbeddingsClient", "TriplesQueryClient"]
