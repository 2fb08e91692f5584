"""agent-manager-react: the ReAct agent with tool services (see service.py).

Upstream 2.1.4's module paths under this package that ours lacks
(``trustgraph.agent.react.tools``, upstream's tool implementations) are
files of an overlay directory of the compatibility package, found through
this package's path after its own directory.
"""

from trustgraph.flow_compat import v214 as _upstream

_upstream.extend(__name__, __path__)

from .service import Processor, run  # noqa: E402

__all__ = ["Processor", "run"]
