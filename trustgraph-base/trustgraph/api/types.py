"""The values :mod:`trustgraph.api` returns: triples, config items, metadata, streamed chunks."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Any

from ..knowledge import Literal, Uri, hash  # noqa: F401 - importable from here, as upstream's


@dataclasses.dataclass
class Triple:
    """A statement: subject, predicate, object (``Uri``/``Literal`` or plain strings)."""

    s: Any
    p: Any
    o: Any


@dataclasses.dataclass
class ConfigKey:
    """Address of a config item."""

    type: str
    key: str


@dataclasses.dataclass
class ConfigValue:
    """A config item and its (string) value."""

    type: str
    key: str
    value: str


@dataclasses.dataclass
class DocumentMetadata:
    """A library document as :meth:`Library.get_documents` returns it."""

    id: str
    time: datetime.datetime
    kind: str
    title: str
    comments: str
    metadata: list[Triple]
    user: str
    tags: list[str]
    parent_id: str = ""
    document_type: str = "source"


@dataclasses.dataclass
class ProcessingMetadata:
    """A document being processed by a flow."""

    id: str
    document_id: str
    time: datetime.datetime
    flow: str
    user: str
    collection: str
    tags: list[str]


@dataclasses.dataclass
class CollectionMetadata:
    """A collection of a user."""

    user: str
    collection: str
    name: str
    description: str
    tags: list[str]


@dataclasses.dataclass
class StreamingChunk:
    """One piece of a streamed answer."""

    content: str
    end_of_message: bool = False


@dataclasses.dataclass
class AgentThought(StreamingChunk):
    """Part of the agent's reasoning."""

    chunk_type: str = "thought"


@dataclasses.dataclass
class AgentObservation(StreamingChunk):
    """What a tool returned to the agent."""

    chunk_type: str = "observation"


@dataclasses.dataclass
class AgentAnswer(StreamingChunk):
    """Part of the agent's final answer; ``end_of_dialog`` marks the last."""

    chunk_type: str = "final-answer"
    end_of_dialog: bool = False


@dataclasses.dataclass
class RAGChunk(StreamingChunk):
    """Part of a generated text (RAG, LLM, prompt); ``end_of_stream`` marks the last."""

    chunk_type: str = "rag"
    end_of_stream: bool = False
    error: dict[str, str] | None = None
