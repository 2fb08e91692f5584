"""TrustGraph 2.1 wire schema: dataclass records, topic names and the JSON codec.

Everything a processor, client or the gateway needs is importable from here,
as from upstream's ``trustgraph.schema``: e.g. ``from trustgraph.schema
import AgentRequest, Triple, IRI, encode, decode``.
"""

from .codec import SchemaError, decode, encode, from_dict, to_dict
from .core import *  # noqa: F403 - the schema is one flat namespace, as upstream's
from .core import __all__ as _core
from .knowledge import *  # noqa: F403
from .knowledge import __all__ as _knowledge
from .services import *  # noqa: F403
from .services import __all__ as _services

__all__ = ["SchemaError", "decode", "encode", "from_dict", "to_dict", *_core, *_knowledge, *_services]
