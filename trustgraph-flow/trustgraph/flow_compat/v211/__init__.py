"""Upstream TrustGraph 2.11's wire for trustgraph-flow's processors (``--wire 2.11``).

The flow side of :mod:`trustgraph.compat.v211`: the strategies that
``trustgraph.compat.v211.wire.Wire211`` names as its components, each the
2.11 counterpart of one of ours, loaded by the processor's wire object
(``self.wire.component(role)``) and never imported by our own code:

* :mod:`.agent_dialect` (role ``agent-dialect``): agent-manager-react's
  records and message shapes on 2.11 (ours: ``trustgraph.agent.react.dialects``).
* :mod:`.config_service` (role ``config-service``): config-svc's 2.11 config
  protocol (config per workspace, notify then fetch) beside 2.1's, with 2.11's
  operations (:mod:`.config_ops`, :mod:`.flow_ops`) and which registered
  workspaces it serves (:mod:`.workspaces`) (ours: ``trustgraph.config.service.protocol``).
"""
