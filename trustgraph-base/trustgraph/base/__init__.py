"""Messaging core, processor base classes and tool services, in rooms.

A service author needs only this package: ``from trustgraph.base import
DynamicToolService, ToolError``.  Names are imported lazily so that importing
one piece (a CLI helper, the topic mapping) does not load the Pulsar client.

The rooms, each importing only the ones listed after it:

* :mod:`.testing`: the in-memory transport and a started processor, for unit tests;
* :mod:`.tool_services`: ``DynamicToolService``, ``ToolServiceClient``, the
  descriptor model, announcing and finding services, the catalog feed;
* :mod:`.processors`: ``AsyncProcessor``, ``FlowProcessor``, following the config;
* :mod:`.messaging`: ``PubSub``, request/response, serving, deadlines, metrics;
* :mod:`.launching`: a stack's run files, the embedded broker, listen addresses;
* :mod:`.formats`: the agent's decision schema, observation text;
* :mod:`.safety`: request limits, secrets, safe log lines.

``pubsub``, ``subscriber``, ``tool_service_client`` and ``dynamic_tool_service``
stay importable at their old paths because upstream 2.1.4 code imports them there.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    # ``AsyncProcessor``, ``FlowProcessor`` and the ``*Spec`` names here are upstream 2.1.4's
    # (specs with ``add()``, handlers of ``(msg, consumer, flow)``), built on ours, which live in
    # ``.processors`` (``from trustgraph.base.processors.flow_processor import FlowProcessor``).
    "Flow": ".processors.flow_processor",
    # ``Consumer`` and ``Producer`` here are upstream 2.1.4's (made with a backend, started and
    # stopped); ours are made by ``PubSub`` and live in ``.messaging.pubsub``.
    "PubSub": ".messaging.pubsub",
    "Message": ".messaging.pubsub",
    "PubSubError": ".messaging.pubsub",
    "RequestResponseClient": ".messaging.request_response",
    "RequestTimeout": ".messaging.request_response",
    "DynamicToolService": ".tool_services.dynamic_tool_service",
    "ToolError": ".tool_services.dynamic_tool_service",
    "ToolServiceClient": ".tool_services.tool_service_client",
    "ToolServiceError": ".tool_services.tool_service_client",
    "ToolServiceClients": ".tool_services.tool_service_client",
    "ServiceUnavailable": ".tool_services.tool_service_client",
    "ServiceNotFound": ".tool_services.service_lookup",
    "ServiceDirectory": ".tool_services.service_directory",
    "EmbeddedBroker": ".launching.broker",
    "to_pulsar": "..topics",
}

__all__ = list(_EXPORTS)

# Upstream 2.1.4's module paths under this package (``trustgraph.base.llm_service`` ...) are files
# of the compatibility package, found through this package's path after its own directory.
from ..compat import v214 as _upstream  # noqa: E402

__path__.append(str(_upstream.BASE_PATHS))


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        # An upstream 2.1.4 name ours does not have (``LlmService``, ``PromptClientSpec`` ...).
        upstream = _upstream.EXPORTS.get(name)
        if upstream is None:
            raise AttributeError(f"module 'trustgraph.base' has no attribute {name!r}")
        value = getattr(importlib.import_module(upstream), name)
    else:
        value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
