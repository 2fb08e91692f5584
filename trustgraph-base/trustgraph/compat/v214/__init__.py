"""Upstream TrustGraph 2.1.4's processor-author API on our core.

Processors written against upstream 2.1.4 (upstream's own trustgraph-flow,
and the ones users wrote from its docs) import names from ``trustgraph.base``
and modules under it (``trustgraph.base.llm_service``,
``trustgraph.base.flow_processor``, ...).  Two hooks in ``trustgraph.base``
serve them from here, and nothing else of ours does:

* :data:`EXPORTS`: each upstream name ``trustgraph.base`` offers that ours
  does not (ours keeps its own where it has one), and the module of this
  package that defines it; ``trustgraph.base.__getattr__`` falls back to it.
* :data:`BASE_PATHS`: a directory appended to ``trustgraph.base.__path__``,
  holding one small file per upstream module path, named as upstream names
  it, that imports its names from here.  The directory's name is no
  identifier, so none of its files can be imported under a second name (two
  ``LlmService`` classes), and base's own directory comes first on the path
  (a test checks that the two share no file name).
"""

from __future__ import annotations

from pathlib import Path

#: Where upstream's module files under ``trustgraph.base`` are (not a package).
BASE_PATHS = Path(__file__).resolve().parent / "base-paths"

#: Upstream name -> the module (absolute) that defines it, for ``from trustgraph.base import NAME``.
EXPORTS: dict[str, str] = {
    # -- metrics, Cassandra and collection config, logging
    # -- publishers, subscribers, upstream's Consumer and Producer
    # -- the LLM service base
    # -- the processor surface, the flow client specs, AgentService and ToolService
    # -- the store and query service bases, EmbeddingsService, ChunkingService
}
