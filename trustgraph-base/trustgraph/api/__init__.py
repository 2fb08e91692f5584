"""The Python client of a TrustGraph API gateway (upstream 2.1's ``trustgraph.api``).

    from trustgraph.api import Api
    api = Api("http://localhost:8088/")
    api.config().list("tool")
    api.flow().id("default").text_completion(system="", prompt="Hello")
    for chunk in api.socket().flow("default").agent("Hi", user="trustgraph", streaming=True):
        print(chunk.content)

REST interfaces: ``config()``, ``flow()`` (and ``flow().id(f)``),
``library()``, ``knowledge()``, ``collection()``; websocket: ``socket()``,
``async_socket()``; bulk sockets: ``bulk()``, ``async_bulk()``; asyncio
REST: ``async_flow()``; metrics: ``metrics()``, ``async_metrics()``.
"""

from .api import Api
from .async_flow import AsyncFlow, AsyncFlowInstance
from .async_socket_client import AsyncSocketClient, AsyncSocketFlowInstance
from .bulk_client import AsyncBulkClient, BulkClient
from .exceptions import (
    AgentError,
    ApplicationException,
    ConfigError,
    DocumentRagError,
    FlowError,
    GatewayError,
    GraphRagError,
    LLMError,
    LoadError,
    LookupError,  # noqa: A004 - upstream's public name
    NLPQueryError,
    ProtocolException,
    RequestError,
    RowsQueryError,
    StructuredQueryError,
    TrustGraphException,
    UnexpectedError,
)
from .flow import Flow, FlowInstance
from .metrics import AsyncMetrics, Metrics
from .socket_client import SocketClient, SocketFlowInstance
from .types import (
    AgentAnswer,
    AgentObservation,
    AgentThought,
    CollectionMetadata,
    ConfigKey,
    ConfigValue,
    DocumentMetadata,
    Literal,
    ProcessingMetadata,
    RAGChunk,
    StreamingChunk,
    Triple,
    Uri,
)

__all__ = [
    "AgentAnswer", "AgentError", "AgentObservation", "AgentThought", "Api", "ApplicationException",
    "AsyncBulkClient", "AsyncFlow", "AsyncFlowInstance", "AsyncMetrics", "AsyncSocketClient",
    "AsyncSocketFlowInstance", "BulkClient", "CollectionMetadata", "ConfigError", "ConfigKey",
    "ConfigValue", "DocumentMetadata", "DocumentRagError", "Flow", "FlowError", "FlowInstance",
    "GatewayError", "GraphRagError", "LLMError", "Literal", "LoadError", "LookupError", "Metrics",
    "NLPQueryError", "ProcessingMetadata", "ProtocolException", "RAGChunk", "RequestError",
    "RowsQueryError", "SocketClient", "SocketFlowInstance", "StreamingChunk", "StructuredQueryError",
    "Triple", "TrustGraphException", "UnexpectedError", "Uri",
]
