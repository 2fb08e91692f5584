"""``trustgraph.base.spec``: the base of upstream 2.1.4's flow specs (:mod:`trustgraph.compat.v214.processor`)."""

from trustgraph.compat.v214.processor import Spec

__all__ = ["Spec"]
