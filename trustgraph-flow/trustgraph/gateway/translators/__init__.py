"""Per-kind translation between the gateway's JSON and the wire records (upstream 2.1.4's JSON per kind).

The rules are :mod:`trustgraph.messaging`'s translators, the ones upstream's
gateway uses too; here: ``base`` (the gateway's Translator and error bodies),
``kinds`` (the request/response kinds and their records), ``loading``
(senders and import/export sockets).
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
from .kinds import FLOW_KINDS, GLOBAL_KINDS
from .loading import EXPORTS, IMPORTS, SENDERS, OneWay, interface_name

__all__ = ["DEFAULT_COLLECTION", "DEFAULT_USER", "EXPORTS", "FLOW_KINDS", "GLOBAL_KINDS", "IMPORTS",
           "JsonObject", "OneWay", "BadRequest", "SENDERS", "Translator", "error_body", "gateway_error",
           "interface_name"]
