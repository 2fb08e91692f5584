"""``python -m trustgraph.gateway``: the same as the ``api-gateway`` command."""

from .service import run

run()
