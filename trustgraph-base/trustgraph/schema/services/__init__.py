"""Service request/response records, one module per service, and the global topics."""

from .agent import (
    AgentRequest,
    AgentResponse,
    AgentStep,
)
from .collection import (
    CollectionManagementRequest,
    CollectionManagementResponse,
    CollectionMetadata,
    collection_request_queue,
    collection_response_queue,
)
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
from .diagnosis import (
    StructuredDataDiagnosisRequest,
    StructuredDataDiagnosisResponse,
)
from .embeddings import (
    EmbeddingsRequest,
    EmbeddingsResponse,
)
from .flow import (
    FlowRequest,
    FlowResponse,
    flow_request_queue,
    flow_response_queue,
)
from .library import (
    Criteria,
    DocumentMetadata,
    LibrarianRequest,
    LibrarianResponse,
    ProcessingMetadata,
    UploadProgress,
    UploadSession,
    librarian_request_queue,
    librarian_response_queue,
)
from .llm import (
    TextCompletionRequest,
    TextCompletionResponse,
)
from .lookup import (
    LookupRequest,
    LookupResponse,
)
from .nlp_query import (
    QuestionToStructuredQueryRequest,
    QuestionToStructuredQueryResponse,
)
from .prompt import (
    PromptRequest,
    PromptResponse,
)
from .query import (
    DocumentEmbeddingsRequest,
    DocumentEmbeddingsResponse,
    GraphEmbeddingsRequest,
    GraphEmbeddingsResponse,
    RowEmbeddingsRequest,
    RowEmbeddingsResponse,
    RowIndexMatch,
    TriplesQueryRequest,
    TriplesQueryResponse,
    document_embeddings_request_queue,
    document_embeddings_response_queue,
    row_embeddings_request_queue,
    row_embeddings_response_queue,
)
from .retrieval import (
    DocumentRagQuery,
    DocumentRagResponse,
    GraphRagQuery,
    GraphRagResponse,
)
from .rows_query import (
    GraphQLError,
    RowsQueryRequest,
    RowsQueryResponse,
)
from .serving import ServingStarted
from .structured_query import (
    StructuredQueryRequest,
    StructuredQueryResponse,
)
from .tool import (
    ToolRequest,
    ToolResponse,
)
from .tool_service import (
    ToolServiceAnnouncement,
    ToolServiceProbe,
    ToolServiceRequest,
    ToolServiceResponse,
)

__all__ = [
    "ServingStarted",
    "AgentRequest",
    "AgentResponse",
    "AgentStep",
    "CollectionManagementRequest",
    "CollectionManagementResponse",
    "CollectionMetadata",
    "ConfigKey",
    "ConfigPush",
    "ConfigRequest",
    "ConfigResponse",
    "ConfigValue",
    "Criteria",
    "DocumentEmbeddingsRequest",
    "DocumentEmbeddingsResponse",
    "DocumentMetadata",
    "DocumentRagQuery",
    "DocumentRagResponse",
    "EmbeddingsRequest",
    "EmbeddingsResponse",
    "FlowRequest",
    "FlowResponse",
    "GraphEmbeddingsRequest",
    "GraphEmbeddingsResponse",
    "GraphQLError",
    "GraphRagQuery",
    "GraphRagResponse",
    "LibrarianRequest",
    "LibrarianResponse",
    "LookupRequest",
    "LookupResponse",
    "ProcessingMetadata",
    "PromptRequest",
    "PromptResponse",
    "QuestionToStructuredQueryRequest",
    "QuestionToStructuredQueryResponse",
    "RowEmbeddingsRequest",
    "RowEmbeddingsResponse",
    "RowIndexMatch",
    "RowsQueryRequest",
    "RowsQueryResponse",
    "StructuredDataDiagnosisRequest",
    "StructuredDataDiagnosisResponse",
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
    "TriplesQueryRequest",
    "TriplesQueryResponse",
    "UploadProgress",
    "UploadSession",
    "collection_request_queue",
    "collection_response_queue",
    "config_push_queue",
    "config_request_queue",
    "config_response_queue",
    "document_embeddings_request_queue",
    "document_embeddings_response_queue",
    "flow_request_queue",
    "flow_response_queue",
    "librarian_request_queue",
    "librarian_response_queue",
    "row_embeddings_request_queue",
    "row_embeddings_response_queue",
]
