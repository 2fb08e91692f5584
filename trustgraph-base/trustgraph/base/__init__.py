"""Messaging core and processor base classes.

A service author needs only this package: ``from trustgraph.base import
DynamicToolService``.  Names are imported lazily so that importing one piece
(a CLI helper, the topic mapping) does not load the Pulsar client.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AsyncProcessor": ".async_processor",
    "FlowProcessor": ".flow_processor",
    "Flow": ".flow_processor",
    "ConsumerSpec": ".flow_processor",
    "ProducerSpec": ".flow_processor",
    "RequestResponseSpec": ".flow_processor",
    "ParameterSpec": ".flow_processor",
    "PubSub": ".pubsub",
    "Producer": ".pubsub",
    "Consumer": ".pubsub",
    "Message": ".pubsub",
    "PubSubError": ".pubsub",
    "RequestResponseClient": ".request_response",
    "RequestTimeout": ".request_response",
    "DynamicToolService": ".dynamic_tool_service",
    "ToolServiceClient": ".tool_service_client",
    "ToolServiceError": ".tool_service_client",
    "ToolServiceClients": ".tool_service_client",
    "ServiceUnavailable": ".tool_service_client",
    "ServiceNotFound": ".service_lookup",
    "ServiceDirectory": ".service_directory",
    "EmbeddedBroker": ".broker",
    "to_pulsar": "..topics",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'trustgraph.base' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
