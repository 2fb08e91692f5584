"""``trustgraph.agent.react.types``: upstream 2.1.4's module path (the code: ``trustgraph.flow_compat.v214``).

Upstream's agent types: ``Tool`` and ``Argument``, and ``Action`` (with
``observation``) and ``Final`` (with ``final``) built on our agent's own
(:mod:`trustgraph.agent.react.vocabulary`).  ``CallContext`` and ``ToolImpl``,
what a tool is given and does, are names of ours this path offered too; they
live with the tools (:mod:`trustgraph.catalog.implementations`).
"""

from trustgraph.catalog.implementations import CallContext, ToolImpl
from trustgraph.flow_compat.v214.agent import Action, Argument, Final, Tool

__all__ = ["Action", "Argument", "CallContext", "Final", "Tool", "ToolImpl"]
