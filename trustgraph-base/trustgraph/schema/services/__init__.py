"""Service request/response records, one module per service."""

from .agent import AgentRequest, AgentResponse, AgentStep
from .config import (
    ConfigKey,
    ConfigPush,
    ConfigRequest,
    ConfigResponse,
    ConfigValue,
    config_push_queue,
    config_request_queue,
    config_response_queue,
)
from .embeddings import EmbeddingsRequest, EmbeddingsResponse
from .flow import FlowRequest, FlowResponse, flow_request_queue, flow_response_queue
from .llm import TextCompletionRequest, TextCompletionResponse
from .prompt import PromptRequest, PromptResponse
from .retrieval import GraphRagQuery, GraphRagResponse
from .structured_query import StructuredQueryRequest, StructuredQueryResponse
from .tool import ToolRequest, ToolResponse
from .tool_service import (
    ToolServiceAnnouncement,
    ToolServiceProbe,
    ToolServiceRequest,
    ToolServiceResponse,
)

__all__ = [
    "AgentRequest",
    "AgentResponse",
    "AgentStep",
    "ConfigKey",
    "ConfigPush",
    "ConfigRequest",
    "ConfigResponse",
    "ConfigValue",
    "EmbeddingsRequest",
    "EmbeddingsResponse",
    "FlowRequest",
    "FlowResponse",
    "GraphRagQuery",
    "GraphRagResponse",
    "PromptRequest",
    "PromptResponse",
    "StructuredQueryRequest",
    "StructuredQueryResponse",
    "TextCompletionRequest",
    "TextCompletionResponse",
    "ToolRequest",
    "ToolResponse",
    "ToolServiceAnnouncement",
    "ToolServiceProbe",
    "ToolServiceRequest",
    "ToolServiceResponse",
    "config_push_queue",
    "config_request_queue",
    "config_response_queue",
    "flow_request_queue",
    "flow_response_queue",
]
