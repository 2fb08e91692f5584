"""``trustgraph.base.parameter_spec``: upstream 2.1.4's flow parameter spec (:mod:`trustgraph.compat.v214.processor`)."""

from trustgraph.compat.v214.processor import Parameter, ParameterSpec

__all__ = ["Parameter", "ParameterSpec"]
