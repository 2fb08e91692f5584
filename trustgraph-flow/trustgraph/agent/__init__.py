"""Agents: ``react`` is the ReAct agent manager (command ``agent-manager-react``).

Upstream 2.1.4's module paths under this package that ours lacks
(``trustgraph.agent.tool_filter``) are files of an overlay directory of the
compatibility package, found through this package's path after its own
directory.
"""

from trustgraph.flow_compat import v214 as _upstream

_upstream.extend(__name__, __path__)
