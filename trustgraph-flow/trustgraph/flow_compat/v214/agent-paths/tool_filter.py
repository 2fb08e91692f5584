"""``trustgraph.agent.tool_filter``: upstream 2.1.4's module path (the code: ``trustgraph.flow_compat.v214``)."""

from trustgraph.flow_compat.v214.tool_filter import (  # noqa: F401  (_is_tool_available: upstream's tests)
    _is_tool_available,
    filter_tools_by_group_and_state,
    get_next_state,
    validate_tool_config,
)

__all__ = ["filter_tools_by_group_and_state", "get_next_state", "validate_tool_config"]
