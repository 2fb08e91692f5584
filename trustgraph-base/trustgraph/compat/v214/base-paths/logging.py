"""``trustgraph.base.logging``: upstream 2.1.4's log flags and set-up (:mod:`trustgraph.compat.v214.logging_setup`)."""

from trustgraph.compat.v214.logging_setup import add_logging_args, setup_logging

__all__ = ["add_logging_args", "setup_logging"]
