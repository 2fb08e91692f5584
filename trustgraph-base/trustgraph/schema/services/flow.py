"""Flow-management records (served by config-svc), and (re-exported) their global topics."""

from dataclasses import dataclass, field
from typing import Any

from ...topics import flow_request_queue, flow_response_queue
from ..core.primitives import Error


@dataclass
class FlowRequest:
    """Flow/blueprint operation.

    ``blueprint_definition`` is JSON text.  ``description`` may arrive as null
    (start-flow then fails with "No description"), hence ``str | None``.
    ``parameters`` values may be any JSON value: upstream's clients send
    numbers and booleans as they are, and config-svc stringifies them.
    """

    operation: str = ""
    blueprint_name: str = ""
    blueprint_definition: str | None = ""
    description: str | None = ""
    flow_id: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)


@dataclass
class FlowResponse:
    """Reply to a FlowRequest.

    ``blueprint_definition`` is null when get-blueprint finds nothing;
    ``flow`` is the stored flow record as JSON text.
    """

    blueprint_names: list[str] = field(default_factory=list)
    flow_ids: list[str] = field(default_factory=list)
    blueprint_definition: str | None = ""
    flow: str | None = ""
    description: str | None = ""
    parameters: dict[str, str] = field(default_factory=dict)
    error: Error | None = None


# Defined with the topic grammar (trustgraph.topics), re-exported for upstream code.
__all__ = ["FlowRequest", "FlowResponse", "flow_request_queue", "flow_response_queue"]
