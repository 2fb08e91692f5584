"""Upstream TrustGraph 2.11's wire records where they differ from 2.1's, and its queue names.

The default schema (``trustgraph.schema``) is 2.1's, which upstream 2.1.4
peers read and write.  2.11 changed some records without any version field on
the wire, so a processor run with ``--wire 2.11`` encodes and decodes these
instead; both go through the one codec (``trustgraph.schema.codec``), since
2.11 encodes a record the way 2.1 does (``json.dumps`` of every field,
``None`` as null).  Records 2.11 left unchanged (``FlowRequest``,
``FlowResponse``, ``Error``, ``PromptRequest``, ``EmbeddingsResponse``, and the
tool records ``ToolRequest``/``ToolResponse`` and ``StructuredQueryResponse``) are 2.1's
and not repeated here.
"""

from .agent import AgentRequest, AgentResponse, AgentStep, PlanStep
from .config import (
    ConfigKey,
    ConfigPush,
    ConfigRequest,
    ConfigResponse,
    ConfigValue,
    WorkspaceChanges,
)
from .embeddings import EmbeddingsRequest, RowEmbeddingsRequest, RowEmbeddingsResponse, RowIndexMatch
from .prompt import PromptResponse
from .queues import (
    CONFIG_NOTIFY,
    CONFIG_REQUEST,
    CONFIG_RESPONSE,
    DEFAULT_WORKSPACE,
    MAX_WORKSPACE_NAME,
    PROCESSOR_TYPE_PREFIX,
    RESERVED_PREFIX,
    WORKSPACE_TYPE,
    WORKSPACES,
    QueueError,
    config_push_queue,
    config_request_queue,
    config_response_queue,
    flow_request_queue,
    flow_response_queue,
    is_reserved,
    processor_type,
    queue,
    to_pulsar,
    workspace_problem,
    workspace_queue,
)
from .retrieval import GraphRagQuery, GraphRagResponse, Source, TraversalStep

__all__ = [
    "AgentRequest", "AgentResponse", "AgentStep", "EmbeddingsRequest", "GraphRagQuery", "GraphRagResponse",
    "PlanStep", "PromptResponse", "RowEmbeddingsRequest", "RowEmbeddingsResponse", "RowIndexMatch", "Source",
    "TraversalStep",
    "CONFIG_NOTIFY", "CONFIG_REQUEST", "CONFIG_RESPONSE", "DEFAULT_WORKSPACE", "MAX_WORKSPACE_NAME",
    "PROCESSOR_TYPE_PREFIX",
    "RESERVED_PREFIX", "WORKSPACES", "WORKSPACE_TYPE", "ConfigKey", "ConfigPush",
    "ConfigRequest", "ConfigResponse", "ConfigValue", "QueueError", "WorkspaceChanges", "is_reserved",
    "config_push_queue", "config_request_queue", "config_response_queue", "flow_request_queue",
    "flow_response_queue", "processor_type", "queue", "to_pulsar", "workspace_problem", "workspace_queue",
]
