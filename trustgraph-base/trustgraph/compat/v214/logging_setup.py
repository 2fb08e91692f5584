"""Upstream 2.1.4's ``trustgraph.base.logging``: a process's log flags and log set-up, on ours.

Upstream's api-gateway (and any command written like it) parses its own
flags and calls ``setup_logging(vars(args))``; its processors call it from
``AsyncProcessor.launch``.  Here both give what our processors get: one
stderr handler whose records are escaped, clipped and cleared of the
process's secrets (:func:`trustgraph.base.safety.logsafe.configure`), in our
processors' line format, so one stack's logs read alike whoever wrote the
component.  The Loki flags are accepted, as by our processors, and unused: we
log to stderr only (a collector ships it).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Mapping
from typing import Any

from trustgraph.base.processors.flags import add_log_flags
from trustgraph.base.safety import logsafe
from trustgraph.base.safety.secrets import secret_values

logger = logging.getLogger(__name__)


def add_logging_args(parser: argparse.ArgumentParser) -> None:
    """``-l/--log-level`` (default ``$TRUSTGRAPH_LOG_LEVEL``, else INFO) and the Loki flags (unused)."""
    add_log_flags(parser)


def setup_logging(args: Mapping[str, Any] | argparse.Namespace) -> None:
    """Configure this process's logging from parsed flags (``vars(args)``, as upstream; a namespace works too).

    ``log_level`` is any level name logging knows, any case (INFO when absent);
    an unknown one gives INFO and a warning rather than a failed start.  Values
    of secret parameters (``cassandra_password``, ``pulsar_api_key`` ...) are
    masked in every later log line.
    """
    params = args if isinstance(args, Mapping) else vars(args)
    asked = str(params.get("log_level") or "INFO").upper()
    known = isinstance(logging.getLevelName(asked), int)
    logsafe.configure(asked if known else "INFO", logsafe.PROCESSOR_FORMAT, sys.stderr, secret_values(params))
    if not known:
        logger.warning("Unknown log level %r: logging at INFO", params.get("log_level"))
    logger.info("Logging configured with level: %s", asked if known else "INFO")
    if params.get("loki_enabled"):
        logger.debug("Loki flags ignored: logs go to stderr only")


__all__ = ["add_logging_args", "setup_logging"]
