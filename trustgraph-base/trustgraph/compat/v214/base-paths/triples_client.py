"""``trustgraph.base.triples_client``: upstream 2.1.4's triples query client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import Triple, TriplesClient, TriplesClientSpec, from_value, to_value

__all__ = ["Triple", "TriplesClient", "TriplesClientSpec", "from_value", "to_value"]
