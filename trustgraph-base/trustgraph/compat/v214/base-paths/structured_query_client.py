"""``trustgraph.base.structured_query_client``: upstream 2.1.4's structured query client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import StructuredQueryClient, StructuredQueryClientSpec

__all__ = ["StructuredQueryClient", "StructuredQueryClientSpec"]
