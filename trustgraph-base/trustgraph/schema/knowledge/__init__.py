"""Knowledge records: documents, chunks, triples, embeddings, rows and knowledge cores.

What the ingestion processors and the gateway's import/export sockets carry;
this fork ships none of those processors, but the gateway routes them
unchanged, as upstream 2.1.4's gateway does.
"""

from .document import Chunk, Document, TextDocument
from .embeddings import (
    ChunkEmbeddings,
    DocumentEmbeddings,
    EntityEmbeddings,
    GraphEmbeddings,
    ObjectEmbeddings,
    RowEmbeddings,
    RowIndexEmbedding,
    StructuredObjectEmbedding,
)
from .graph import EntityContext, EntityContexts, Triples
from .knowledge import (
    KnowledgeRequest,
    KnowledgeResponse,
    knowledge_request_queue,
    knowledge_response_queue,
)
from .nlp import Definition, Fact, Relationship, Topic
from .rows import ExtractedObject, Rows, StructuredDataSubmission

__all__ = [
    "Chunk", "ChunkEmbeddings", "Definition", "Document", "DocumentEmbeddings", "EntityContext",
    "EntityContexts", "EntityEmbeddings", "ExtractedObject", "Fact", "GraphEmbeddings",
    "KnowledgeRequest", "KnowledgeResponse", "ObjectEmbeddings", "Relationship", "RowEmbeddings",
    "RowIndexEmbedding", "Rows", "StructuredDataSubmission", "StructuredObjectEmbedding",
    "TextDocument", "Topic", "Triples", "knowledge_request_queue", "knowledge_response_queue",
]
