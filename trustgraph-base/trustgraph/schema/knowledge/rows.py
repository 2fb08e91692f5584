"""Structured data: extracted objects, stored rows, raw submissions."""

from dataclasses import dataclass, field

from ..core.metadata import Metadata
from ..core.primitives import RowSchema


@dataclass
class ExtractedObject:
    """Objects of one schema found in text (each a field -> value map)."""

    metadata: Metadata | None = None
    schema_name: str = ""
    values: list[dict[str, str]] = field(default_factory=list)
    confidence: float = 0.0
    source_span: str = ""


@dataclass
class Rows:
    """Rows to store, with their schema."""

    metadata: Metadata | None = None
    row_schema: RowSchema | None = None
    rows: list[dict[str, str]] = field(default_factory=list)


@dataclass
class StructuredDataSubmission:
    """Raw structured data (json, csv, xml) to ingest into a schema."""

    metadata: Metadata | None = None
    format: str = ""
    schema_name: str = ""
    data: bytes = b""
    options: dict[str, str] = field(default_factory=dict)
