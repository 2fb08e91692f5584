"""``trustgraph.base.request_response_spec``: upstream 2.1.4's client spec and client base (:mod:`trustgraph.compat.v214.processor`)."""

from trustgraph.compat.v214.processor import RequestResponse, RequestResponseSpec

__all__ = ["RequestResponse", "RequestResponseSpec"]
