"""``trustgraph.base.agent_service``: upstream 2.1.4's agent base (:mod:`trustgraph.compat.v214.services`)."""

from trustgraph.compat.v214.services import AgentService, default_ident

__all__ = ["AgentService", "default_ident"]
