"""Structured-data diagnosis: detect a sample's format, suggest a descriptor or a schema."""

from dataclasses import dataclass, field

from ..core.primitives import Error


@dataclass
class StructuredDataDiagnosisRequest:
    """detect-type, generate-descriptor, diagnose or schema-selection of a data ``sample``."""

    operation: str = ""
    sample: str = ""
    type: str = ""
    schema_name: str = ""
    options: dict[str, str] = field(default_factory=dict)


@dataclass
class StructuredDataDiagnosisResponse:
    """What the diagnosis found; ``descriptor`` is JSON text."""

    error: Error | None = None
    operation: str = ""
    detected_type: str = ""
    confidence: float = 0.0
    descriptor: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    schema_matches: list[str] = field(default_factory=list)
