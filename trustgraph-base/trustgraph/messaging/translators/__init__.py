"""Every translator, one module per service (upstream 2.1.4's module names).

See :mod:`trustgraph.messaging` for what they are for, and
:mod:`.base` for what ours checks that upstream's did not.
"""

from .agent import AgentRequestTranslator, AgentResponseTranslator
from .base import BadRequest, MessageTranslator, SendTranslator, Translator, handle_optional_fields
from .collection import CollectionManagementRequestTranslator, CollectionManagementResponseTranslator
from .config import ConfigRequestTranslator, ConfigResponseTranslator
from .diagnosis import StructuredDataDiagnosisRequestTranslator, StructuredDataDiagnosisResponseTranslator
from .document_loading import (
    ChunkTranslator,
    DocumentEmbeddingsTranslator,
    DocumentTranslator,
    TextDocumentTranslator,
)
from .embeddings import EmbeddingsRequestTranslator, EmbeddingsResponseTranslator
from .embeddings_query import (
    DocumentEmbeddingsRequestTranslator,
    DocumentEmbeddingsResponseTranslator,
    GraphEmbeddingsRequestTranslator,
    GraphEmbeddingsResponseTranslator,
    RowEmbeddingsRequestTranslator,
    RowEmbeddingsResponseTranslator,
)
from .flow import FlowRequestTranslator, FlowResponseTranslator
from .knowledge import (
    GraphEmbeddingsTranslator,
    KnowledgeRequestTranslator,
    KnowledgeResponseTranslator,
    TriplesTranslator,
)
from .library import LibraryRequestTranslator, LibraryResponseTranslator
from .metadata import DocumentMetadataTranslator, ProcessingMetadataTranslator
from .nlp_query import QuestionToStructuredQueryRequestTranslator, QuestionToStructuredQueryResponseTranslator
from .primitives import (
    FieldTranslator,
    RowSchemaTranslator,
    SubgraphTranslator,
    TermTranslator,
    TripleTranslator,
    ValueTranslator,
    field_translator,
    row_schema_translator,
)
from .prompt import PromptRequestTranslator, PromptResponseTranslator
from .retrieval import (
    DocumentRagRequestTranslator,
    DocumentRagResponseTranslator,
    GraphRagRequestTranslator,
    GraphRagResponseTranslator,
)
from .rows_query import RowsQueryRequestTranslator, RowsQueryResponseTranslator
from .structured_query import StructuredQueryRequestTranslator, StructuredQueryResponseTranslator
from .text_completion import TextCompletionRequestTranslator, TextCompletionResponseTranslator
from .tool import ToolRequestTranslator, ToolResponseTranslator
from .triples import TriplesQueryRequestTranslator, TriplesQueryResponseTranslator

__all__ = [
    "AgentRequestTranslator", "AgentResponseTranslator", "BadRequest", "ChunkTranslator",
    "CollectionManagementRequestTranslator", "CollectionManagementResponseTranslator", "ConfigRequestTranslator",
    "ConfigResponseTranslator", "DocumentEmbeddingsRequestTranslator", "DocumentEmbeddingsResponseTranslator",
    "DocumentEmbeddingsTranslator", "DocumentMetadataTranslator", "DocumentRagRequestTranslator",
    "DocumentRagResponseTranslator", "DocumentTranslator", "EmbeddingsRequestTranslator",
    "EmbeddingsResponseTranslator", "FieldTranslator", "FlowRequestTranslator", "FlowResponseTranslator",
    "GraphEmbeddingsRequestTranslator", "GraphEmbeddingsResponseTranslator", "GraphEmbeddingsTranslator",
    "GraphRagRequestTranslator", "GraphRagResponseTranslator", "KnowledgeRequestTranslator",
    "KnowledgeResponseTranslator", "LibraryRequestTranslator", "LibraryResponseTranslator", "MessageTranslator",
    "ProcessingMetadataTranslator", "PromptRequestTranslator", "PromptResponseTranslator",
    "QuestionToStructuredQueryRequestTranslator", "QuestionToStructuredQueryResponseTranslator",
    "RowEmbeddingsRequestTranslator", "RowEmbeddingsResponseTranslator", "RowSchemaTranslator",
    "RowsQueryRequestTranslator", "RowsQueryResponseTranslator", "SendTranslator",
    "StructuredDataDiagnosisRequestTranslator", "StructuredDataDiagnosisResponseTranslator",
    "StructuredQueryRequestTranslator", "StructuredQueryResponseTranslator", "SubgraphTranslator",
    "TermTranslator", "TextCompletionRequestTranslator", "TextCompletionResponseTranslator",
    "TextDocumentTranslator", "ToolRequestTranslator", "ToolResponseTranslator", "Translator",
    "TripleTranslator", "TriplesQueryRequestTranslator", "TriplesQueryResponseTranslator", "TriplesTranslator",
    "ValueTranslator", "field_translator", "handle_optional_fields", "row_schema_translator",
]
