"""The 2.11 wire object: where a processor on upstream 2.11's wire differs from ours."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from trustgraph.base.wire import WIRE_211, Wire
from trustgraph.topics import AnnounceTopics

from .topics import ANNOUNCE_TOPICS_211

if TYPE_CHECKING:
    from trustgraph.base.messaging.rabbitmq_topology import Topology


class Wire211(Wire):
    """Upstream 2.11's wire."""

    name = WIRE_211
    components: Mapping[str, str] = MappingProxyType({
        # config-svc: 2.11's config protocol (workspaces, notify then fetch) beside 2.1's.
        "config-service": "trustgraph.flow_compat.v211.config_service:ConfigProtocol211",
        # agent-manager-react: 2.11's agent records and message shapes.
        "agent-dialect": "trustgraph.flow_compat.v211.agent_dialect:DIALECT",
        # every processor: notices, then a fetch of one workspace; flows as processor:<id> items.
        "config-following": "trustgraph.compat.v211.config_follow:NotifyFollowing",
        "flow-assignment": "trustgraph.compat.v211.flows:PROCESSOR_ITEMS",
    })

    def announce_topics(self) -> AnnounceTopics:
        """In ``tg/notify``: 2.11's topology has no ``tg/config`` (:mod:`.topics`)."""
        return ANNOUNCE_TOPICS_211

    def rabbitmq_topology(self) -> Topology:
        """2.11.1's own queues, argument for argument (:mod:`.rabbitmq_topology`)."""
        from .rabbitmq_topology import UPSTREAM_211

        return UPSTREAM_211


WIRE = Wire211()
