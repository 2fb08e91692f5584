"""Prometheus metrics shared by every processor.

Metric names are created once per process (prometheus_client refuses
duplicates), and labelled by processor id and by the consumer or service name so
that one scrape shows every role of a process.
"""

from __future__ import annotations

import logging

from prometheus_client import Counter, Gauge, Histogram, Info, start_http_server

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

# The LLM services' own two, under upstream 2.1.4's names and labels (its dashboards read them):
# seconds per completion, by processor id and "<flow>-<consumer>"; the model and temperature last
# used, by processor id and flow.
completion_duration = Histogram(
    "text_completion_duration", "Text completion duration (seconds)", ["id", "flow"],
    buckets=(0.25, 0.5, *range(1, 26), 30, 35, 40, 45, 50, 60, 80, 100, 120),
)
completion_model = Info("text_completion_model", "Text completion model", ["processor", "flow"])

# Which config version a processor has applied (its handlers have run on it): an operator sees
# at one scrape whether every processor follows config-svc, and `make bench` times a change.
config_version = Gauge(
    "config_version", "Config version whose handlers this processor has run", ["processor"]
)

DEFAULT_PORT = 8000
# Metrics say what runs and how busy it is: not for the whole network unless asked.
DEFAULT_HOST = "127.0.0.1"

_started_port: int | None = None


def start_metrics_server(port: int | None = None, host: str = DEFAULT_HOST) -> int | None:
    """Serve /metrics once per process; the port it listens on, or None.

    ``port=None`` (no ``-P`` given): port 8000, or any free port when 8000 is
    taken, quietly: every processor started by hand would otherwise want 8000.
    A port that was asked for and is busy is a warning, never fatal: metrics
    must not stop a processor from doing its real work.
    """
    global _started_port
    if _started_port is not None:
        return _started_port
    for candidate in ((DEFAULT_PORT, 0) if port is None else (port,)):
        try:
            server, _thread = start_http_server(candidate, addr=host)
        except OSError as e:
            if port is not None:
                logger.warning("Metrics server not started on %s:%d: %s", host, port, e)
            continue
        _started_port = server.server_port
        logger.info("Metrics on http://%s:%d/metrics", host, _started_port)
        return _started_port
    return None
