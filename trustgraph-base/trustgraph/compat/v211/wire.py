"""The 2.11 wire object: where a processor on upstream 2.11's wire differs from ours."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from trustgraph.base.wire import WIRE_211, Wire


class Wire211(Wire):
    """Upstream 2.11's wire."""

    name = WIRE_211
    components: Mapping[str, str] = MappingProxyType({})


WIRE = Wire211()
