"""The flags every processor takes (upstream 2.1.4's common ones and ours), and reading the broker token.

Kept apart from :class:`~.async_processor.AsyncProcessor` because they are
read before any processor exists: ``launch`` parses them, and the launcher
and the services' own flags take their defaults the same way
(:func:`env_default`).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ...topics import CONFIG_REQUEST, CONFIG_RESPONSE, config_push_queue
from ..messaging import metrics
from ..messaging.broker_url import DEFAULT_PULSAR_HOST
from ..wire import ENV as WIRE_ENV
from ..wire import WIRES, wire_for


def env_default(name: str, default: Any = None) -> Any:
    """``$name`` as a flag's default, or ``default`` when it is unset or empty."""
    value = os.environ.get(name)
    return value if value not in (None, "") else default


class TokenFileError(ValueError):
    """``--pulsar-api-key-file`` names a file that gives no token."""


def pulsar_token(params: dict[str, Any]) -> str | None:
    """The Pulsar token: from ``pulsar_api_key_file`` when given, else ``pulsar_api_key``.

    A file of its own per process (a mounted secret, tg-launch's
    ``--pulsar-token-dir``) gives each process its own broker role and keeps
    the token out of the command line and the environment; it wins over
    ``$PULSAR_API_KEY``, which a whole stack may share.
    """
    path = params.get("pulsar_api_key_file")
    if not path:
        return params.get("pulsar_api_key") or None
    try:
        with open(path, encoding="utf-8") as f:
            token = f.read().strip()
    except (OSError, UnicodeDecodeError) as e:
        raise TokenFileError(f"cannot read the Pulsar token file {path}: {getattr(e, 'strerror', None) or e} "
                             "(give --pulsar-api-key-file a readable file holding the token)") from None
    if not token:
        raise TokenFileError(f"the Pulsar token file {path} is empty (put the token in it)")
    return token


def add_processor_args(parser: argparse.ArgumentParser) -> None:
    """Upstream 2.1.4's common processor flags, and ours (broker token file, metrics, the queues)."""
    parser.add_argument("--id", default=None, help="processor id (default: the command's)")
    parser.add_argument("--pubsub-backend", default=env_default("PUBSUB_BACKEND", "pulsar"),
                        choices=["pulsar"], help="messaging backend (only pulsar)")
    parser.add_argument("-p", "--pulsar-host", default=env_default("PULSAR_HOST"),
                        help="broker URL (default: $PULSAR_HOST, else the broker of the stack "
                             "running in ./.trustgraph or $TRUSTGRAPH_DATA, else "
                             f"{DEFAULT_PULSAR_HOST})")
    parser.add_argument("--pulsar-api-key", default=env_default("PULSAR_API_KEY"),
                        help="Pulsar token (env PULSAR_API_KEY)")
    parser.add_argument("--pulsar-api-key-file", default=env_default("PULSAR_API_KEY_FILE"), metavar="FILE",
                        help="read the Pulsar token from FILE (env PULSAR_API_KEY_FILE); wins over "
                             "--pulsar-api-key, so each process can have its own role")
    parser.add_argument("--pulsar-listener", default=None, help="Pulsar listener name")
    add_log_flags(parser)
    parser.add_argument("--metrics", action=argparse.BooleanOptionalAction, default=True,
                        help="serve Prometheus metrics")
    parser.add_argument("-P", "--metrics-port", type=int, default=None,
                        help=f"metrics port (default {metrics.DEFAULT_PORT}, or a free one "
                             "when that is taken)")
    parser.add_argument("--metrics-host", default=metrics.DEFAULT_HOST,
                        help="address the metrics server listens on (default %(default)s; "
                             "0.0.0.0 for every interface)")
    parser.add_argument("--wire", default=env_default(WIRE_ENV, WIRES[0]), choices=WIRES,
                        help=f"which upstream TrustGraph deployment's topics and records to speak "
                             f"(default ${WIRE_ENV}, else {WIRES[0]}; docs/compatibility.md)")
    parser.add_argument("--config-push-queue", default=config_push_queue)
    parser.add_argument("--config-request-queue", default=CONFIG_REQUEST,
                        help="config-svc's requests, where the config is fetched and each push "
                             "checked (default %(default)s)")
    parser.add_argument("--config-response-queue", default=CONFIG_RESPONSE,
                        help="config-svc's replies (default %(default)s)")
    # None: the default of the --wire chosen (its announce_topics()).
    parser.add_argument("--announce-queue", default=None,
                        help=f"where tool services announce themselves (default {_per_wire('announce')})")
    parser.add_argument("--announce-probe-queue", default=None,
                        help=f"where readers ask tool services to announce (default {_per_wire('probe')})")


def _per_wire(topic: str) -> str:
    """Each wire's default of one of its announce topics, for a flag's help: ``X, under --wire 2.11 Y``."""
    default = {name: getattr(wire_for(name).announce_topics(), topic) for name in WIRES}
    ours, *others = WIRES
    return ", ".join([default[ours], *(f"under --wire {name} {default[name]}" for name in others)])


#: The levels ``-l/--log-level`` takes (upstream's).
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def add_log_flags(parser: argparse.ArgumentParser) -> None:
    """``-l/--log-level``, and upstream's Loki flags, accepted and unused: we log to stderr only."""
    level = str(env_default("TRUSTGRAPH_LOG_LEVEL", "INFO")).upper()
    parser.add_argument("-l", "--log-level", default=level if level in LOG_LEVELS else "INFO", choices=LOG_LEVELS,
                        help="log level (default: $TRUSTGRAPH_LOG_LEVEL, else INFO; tg-launch passes "
                             "its environment on to every component)")
    # Accepted for compatibility with upstream deployments; we log to stderr only.
    parser.add_argument("--loki-enabled", action=argparse.BooleanOptionalAction, default=False,
                        help=argparse.SUPPRESS)
    parser.add_argument("--loki-url", default=env_default("LOKI_URL"), help=argparse.SUPPRESS)
    parser.add_argument("--loki-username", default=env_default("LOKI_USERNAME"), help=argparse.SUPPRESS)
    parser.add_argument("--loki-password", default=env_default("LOKI_PASSWORD"), help=argparse.SUPPRESS)
