"""Translation between the wire records and the JSON clients speak (upstream 2.1.4's
``trustgraph.messaging``, at its path and with its names).

The API gateway turns a client's JSON request into a record with a request
translator's ``to_pulsar`` and each response record into JSON with a response
translator's ``from_response_with_completion`` (the JSON, and whether that
message ends the call).  Our gateway (``trustgraph.gateway``) and upstream's
gateway, reverse gateway and row extractor, running on this package, use the
same translators, so both speak upstream's JSON for every kind.

:class:`TranslatorRegistry` holds them under upstream's service names, filled
below when this package is first imported.  The differences from upstream's
(a stricter reading of requests, a few defaults) are listed in
:mod:`.translators.base` and in each module's docstring.
"""

from .registry import TranslatorRegistry
from .translators import *  # noqa: F403  (upstream's package exports every translator)
from .translators import (
    AgentRequestTranslator,
    AgentResponseTranslator,
    CollectionManagementRequestTranslator,
    CollectionManagementResponseTranslator,
    ConfigRequestTranslator,
    ConfigResponseTranslator,
    DocumentEmbeddingsRequestTranslator,
    DocumentEmbeddingsResponseTranslator,
    DocumentRagRequestTranslator,
    DocumentRagResponseTranslator,
    DocumentTranslator,
    EmbeddingsRequestTranslator,
    EmbeddingsResponseTranslator,
    FlowRequestTranslator,
    FlowResponseTranslator,
    GraphEmbeddingsRequestTranslator,
    GraphEmbeddingsResponseTranslator,
    GraphRagRequestTranslator,
    GraphRagResponseTranslator,
    KnowledgeRequestTranslator,
    KnowledgeResponseTranslator,
    LibraryRequestTranslator,
    LibraryResponseTranslator,
    PromptRequestTranslator,
    PromptResponseTranslator,
    QuestionToStructuredQueryRequestTranslator,
    QuestionToStructuredQueryResponseTranslator,
    RowEmbeddingsRequestTranslator,
    RowEmbeddingsResponseTranslator,
    RowsQueryRequestTranslator,
    RowsQueryResponseTranslator,
    StructuredDataDiagnosisRequestTranslator,
    StructuredDataDiagnosisResponseTranslator,
    StructuredQueryRequestTranslator,
    StructuredQueryResponseTranslator,
    TextCompletionRequestTranslator,
    TextCompletionResponseTranslator,
    TextDocumentTranslator,
    ToolRequestTranslator,
    ToolResponseTranslator,
    TriplesQueryRequestTranslator,
    TriplesQueryResponseTranslator,
)
from .translators import __all__ as _translators

__all__ = ["TranslatorRegistry", *_translators]

#: Upstream's service names (its gateway's dispatchers ask for these) -> the request and
#: response translator classes.
SERVICES: dict[str, tuple[type, type]] = {
    "agent": (AgentRequestTranslator, AgentResponseTranslator),
    "embeddings": (EmbeddingsRequestTranslator, EmbeddingsResponseTranslator),
    "text-completion": (TextCompletionRequestTranslator, TextCompletionResponseTranslator),
    "document-rag": (DocumentRagRequestTranslator, DocumentRagResponseTranslator),
    "graph-rag": (GraphRagRequestTranslator, GraphRagResponseTranslator),
    "triples-query": (TriplesQueryRequestTranslator, TriplesQueryResponseTranslator),
    "knowledge": (KnowledgeRequestTranslator, KnowledgeResponseTranslator),
    "librarian": (LibraryRequestTranslator, LibraryResponseTranslator),
    "config": (ConfigRequestTranslator, ConfigResponseTranslator),
    "flow": (FlowRequestTranslator, FlowResponseTranslator),
    "prompt": (PromptRequestTranslator, PromptResponseTranslator),
    "tool": (ToolRequestTranslator, ToolResponseTranslator),
    "document-embeddings-query": (DocumentEmbeddingsRequestTranslator, DocumentEmbeddingsResponseTranslator),
    "graph-embeddings-query": (GraphEmbeddingsRequestTranslator, GraphEmbeddingsResponseTranslator),
    "row-embeddings-query": (RowEmbeddingsRequestTranslator, RowEmbeddingsResponseTranslator),
    "rows-query": (RowsQueryRequestTranslator, RowsQueryResponseTranslator),
    "nlp-query": (QuestionToStructuredQueryRequestTranslator, QuestionToStructuredQueryResponseTranslator),
    "structured-query": (StructuredQueryRequestTranslator, StructuredQueryResponseTranslator),
    "structured-diag": (StructuredDataDiagnosisRequestTranslator, StructuredDataDiagnosisResponseTranslator),
    "collection-management": (CollectionManagementRequestTranslator, CollectionManagementResponseTranslator),
}

#: One-way kinds: only a request translator (``document-load`` and ``text-load`` send these).
SENDS: dict[str, type] = {"document": DocumentTranslator, "text-document": TextDocumentTranslator}

for _name, (_request, _response) in SERVICES.items():
    TranslatorRegistry.register_service(_name, _request(), _response())
for _name, _request in SENDS.items():
    TranslatorRegistry.register_request(_name, _request())
del _name, _request, _response
