"""Per-kind translation between the gateway's JSON and the wire records (upstream 2.1.4's JSON per kind).

``base`` (the Translator, error bodies, helpers), ``terms`` (RDF terms and
triples), ``core`` (the kinds this fork serves), ``stores`` (flow kinds of
upstream processors we route but do not ship), ``library`` (librarian,
knowledge, collection-management), ``loading`` (senders and import/export
sockets).
"""

from .base import (
           DEFAULT_COLLECTION,
           DEFAULT_USER,
           BadRequest,
           JsonObject,
           Translator,
           error_body,
           gateway_error,
)
from .core import FLOW_KINDS as _CORE_FLOW_KINDS
from .core import GLOBAL_KINDS as _CORE_GLOBAL_KINDS
from .library import LIBRARY_KINDS
from .loading import EXPORTS, IMPORTS, SENDERS, OneWay, interface_name
from .stores import STORE_KINDS

#: Services reached on fixed topics: ``POST /api/v1/{kind}``.
GLOBAL_KINDS: dict[str, Translator] = {**_CORE_GLOBAL_KINDS, **LIBRARY_KINDS}

#: Request/response services reached through a flow's interfaces.
FLOW_KINDS: dict[str, Translator] = {**_CORE_FLOW_KINDS, **STORE_KINDS}

__all__ = ["DEFAULT_COLLECTION", "DEFAULT_USER", "EXPORTS", "FLOW_KINDS", "GLOBAL_KINDS", "IMPORTS",
           "JsonObject", "OneWay", "BadRequest", "SENDERS", "Translator", "error_body", "gateway_error",
           "interface_name"]
