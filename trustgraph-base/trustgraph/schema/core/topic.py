"""Generic (backend-neutral) topic names: upstream's ``trustgraph.schema.topic``.

Defined with the topic grammar in :mod:`trustgraph.topics`, the one module
that knows topic syntax; re-exported here because upstream code imports it
from the schema.
"""

from ...topics import topic

__all__ = ["topic"]
