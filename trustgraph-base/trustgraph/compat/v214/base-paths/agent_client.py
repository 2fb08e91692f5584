"""``trustgraph.base.agent_client``: upstream 2.1.4's agent client and spec (:mod:`trustgraph.compat.v214.client_specs`)."""

from trustgraph.compat.v214.client_specs import AgentClient, AgentClientSpec

__all__ = ["AgentClient", "AgentClientSpec"]
