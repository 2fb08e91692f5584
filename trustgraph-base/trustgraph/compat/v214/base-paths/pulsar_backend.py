"""``trustgraph.base.pulsar_backend``: upstream 2.1.4's Pulsar backend (:mod:`trustgraph.compat.v214.backends`)."""

from trustgraph.compat.v214.backends import (
    PulsarBackend,
    PulsarBackendConsumer,
    PulsarBackendProducer,
    PulsarMessage,
    dataclass_to_dict,
    dict_to_dataclass,
)

__all__ = [
    "PulsarBackend",
    "PulsarBackendConsumer",
    "PulsarBackendProducer",
    "PulsarMessage",
    "dataclass_to_dict",
    "dict_to_dataclass",
]
