"""Prometheus metrics shared by every processor.

Metric names are created once per process (prometheus_client refuses
duplicates), and labelled by processor id and by the consumer or service name so
that one scrape shows every role of a process.
"""

from __future__ import annotations

import logging

from prometheus_client import Counter, Histogram, Info, start_http_server

logger = logging.getLogger(__name__)

processor_info = Info("processor", "Processor identity")

messages_received = Counter(
    "received_count", "Messages received by a consumer", ["processor", "consumer"]
)
messages_handled = Counter(
    "processing_count", "Messages handled, by outcome", ["processor", "consumer", "status"]
)
messages_dropped = Counter(
    "dropped_count", "Messages acknowledged without handling (undecodable)",
    ["processor", "consumer", "reason"],
)
requests_expired = Counter(
    "expired_count", "Requests skipped because their caller's deadline had passed",
    ["processor", "consumer"],
)
handling_latency = Histogram(
    "request_latency", "Seconds spent handling one message", ["processor", "consumer"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120),
)
tool_invocations = Counter(
    "tool_service_invocations", "Tool-service invocations", ["service"]
)
tool_errors = Counter(
    "tool_service_errors", "Tool-service invocations that returned an error", ["service", "type"]
)
tool_latency = Histogram(
    "tool_service_latency", "Seconds per tool-service invocation", ["service"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120),
)

_started_port: int | None = None


def start_metrics_server(port: int) -> bool:
    """Serve /metrics on ``port`` once per process; a busy port is logged, not fatal.

    Several processors on one machine all default to port 8000, so a port clash
    must not stop a processor from doing its real work.
    """
    global _started_port
    if _started_port is not None:
        return True
    try:
        start_http_server(port)
    except OSError as e:
        logger.warning("Metrics server not started on port %d: %s", port, e)
        return False
    _started_port = port
    logger.info("Metrics on http://0.0.0.0:%d/metrics", port)
    return True
