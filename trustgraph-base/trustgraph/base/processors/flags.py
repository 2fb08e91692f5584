"""The flags every processor takes (upstream 2.1.4's and 2.11's common ones and ours), and reading the broker secrets.

Kept apart from :class:`~.async_processor.AsyncProcessor` because they are
read before any processor exists: ``launch`` parses them, and the launcher
and the services' own flags take their defaults the same way
(:func:`env_default`).
"""

from __future__ import annotations

import argparse
import os
from typing import Any
from urllib.parse import quote

from ...topics import CONFIG_REQUEST, CONFIG_RESPONSE, config_push_queue
from ..messaging import metrics
from ..messaging.broker_url import DEFAULT_PULSAR_HOST, split_hosts
from ..wire import ENV as WIRE_ENV
from ..wire import WIRES, wire_for


def env_default(name: str, default: Any = None) -> Any:
    """``$name`` as a flag's default, or ``default`` when it is unset or empty."""
    value = os.environ.get(name)
    return value if value not in (None, "") else default


class TokenFileError(ValueError):
    """``--pulsar-api-key-file`` or ``--rabbitmq-password-file`` names a file that gives no secret."""


def _secret_file(path: str, what: str, flag: str) -> str:
    """The secret in the file at ``path`` (stripped), or :class:`TokenFileError` in one line."""
    try:
        with open(path, encoding="utf-8") as f:
            secret = f.read().strip()
    except (OSError, UnicodeDecodeError) as e:
        raise TokenFileError(f"cannot read the {what} file {path}: {getattr(e, 'strerror', None) or e} "
                             f"(give {flag} a readable file holding it)") from None
    if not secret:
        raise TokenFileError(f"the {what} file {path} is empty (put the {what} in it)")
    return secret


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
    return _secret_file(path, "Pulsar token", "--pulsar-api-key-file")


#: The backends ``--pubsub-backend`` takes; the first is the default.
BACKENDS = ("pulsar", "rabbitmq")
#: Backends upstream 2.11 has that we do not ship, and where our docs say why.
NOT_SHIPPED = {"kafka": "docs/running.md, \"Brokers\", says why and how it would plug in"}
#: RabbitMQ's user and password when none is given: upstream 2.11's, and RabbitMQ's own (its
#: ``guest`` user may connect from localhost only).
RABBITMQ_DEFAULT_USER = "guest"
RABBITMQ_DEFAULT_PASSWORD = "guest"
RABBITMQ_DEFAULT_PORT = 5672


def backend_name(text: str) -> str:
    """An argparse ``type`` for ``--pubsub-backend``: one of :data:`BACKENDS`, else one line saying
    which exist (and, for one of upstream's we do not ship, where the docs say why)."""
    name = text.strip().lower()
    if name in BACKENDS:
        return name
    if name in NOT_SHIPPED:
        raise argparse.ArgumentTypeError(f"the {name} backend is not shipped ({NOT_SHIPPED[name]}); "
                                         f"use one of: {', '.join(BACKENDS)}")
    raise argparse.ArgumentTypeError(f"unknown backend {text!r}; use one of: {', '.join(BACKENDS)}")


def rabbitmq_password(params: dict[str, Any]) -> str:
    """RabbitMQ's password: from ``rabbitmq_password_file`` when given, else ``rabbitmq_password``,
    else :data:`RABBITMQ_DEFAULT_PASSWORD` (upstream's default).

    As with :func:`pulsar_token`, a file keeps the password off the command line (where ``ps``
    shows it) and out of the environment; it wins over ``$RABBITMQ_PASSWORD``.
    """
    path = params.get("rabbitmq_password_file")
    if path:
        return _secret_file(path, "RabbitMQ password", "--rabbitmq-password-file")
    return params.get("rabbitmq_password") or RABBITMQ_DEFAULT_PASSWORD


def amqp_url(params: dict[str, Any]) -> str:
    """``amqp://host:port/vhost`` for lines and logs: where a processor's RabbitMQ is (vhost ``/`` quoted,
    as in an AMQP URL: ``amqp://h:5672/%2F``).  No user either: the log filter masks a URL's user
    (:func:`~trustgraph.base.safety.secrets.scrub`, a token is often sent as one), so the start line
    names the user apart."""
    host = params.get("rabbitmq_host") or "localhost"
    port = int(params.get("rabbitmq_port") or RABBITMQ_DEFAULT_PORT)
    vhost = params.get("rabbitmq_vhost") or "/"
    try:   # a cluster's nodes, h1:5672,h2:5673: each with its own port
        nodes = ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in split_hosts(host, port))
    except ValueError:   # refused where the transport is made, in one line
        nodes = f"{host}:{port}"
    return f"amqp://{nodes}/{quote(vhost, safe='')}"


def add_backend_args(parser: argparse.ArgumentParser) -> None:
    """``--pubsub-backend`` and upstream 2.11's ``--rabbitmq-*`` flags, with its variables and defaults
    (but ``localhost`` for the host), and ``--rabbitmq-password-file`` of ours."""
    # None when neither is given: a processor then joins the RabbitMQ of a stack running in its data
    # directory (processors.broker_choice.choose_backend), else uses Pulsar.
    parser.add_argument("--pubsub-backend", default=env_default("PUBSUB_BACKEND"), type=backend_name,
                        metavar="{" + ",".join(BACKENDS) + "}",
                        help=f"the broker's kind (default $PUBSUB_BACKEND, else the RabbitMQ of a tg-launch stack "
                             f"running in the data directory, else {BACKENDS[0]})")
    # Upstream's default host is "rabbitmq", a container's name in its compose files; ours is
    # this machine, as the Pulsar default is.
    parser.add_argument("--rabbitmq-host", default=env_default("RABBITMQ_HOST", "localhost"),
                        help="RabbitMQ host (default $RABBITMQ_HOST, else %(default)s; upstream's default "
                             "is rabbitmq, its compose files' container), or a cluster's nodes as "
                             "h1:5672,h2:5673 (ours: a lost connection moves to the next node)")
    parser.add_argument("--rabbitmq-port", type=int, default=env_default("RABBITMQ_PORT", RABBITMQ_DEFAULT_PORT),
                        help="RabbitMQ AMQP port (default $RABBITMQ_PORT, else %(default)s)")
    parser.add_argument("--rabbitmq-username", default=env_default("RABBITMQ_USERNAME", RABBITMQ_DEFAULT_USER),
                        help="RabbitMQ user (default $RABBITMQ_USERNAME, else %(default)s)")
    # None here, the default applied when used (rabbitmq_password), so that a password given is
    # masked in this process's logs and the default is not (it would mask every "guest").
    parser.add_argument("--rabbitmq-password", default=env_default("RABBITMQ_PASSWORD"),
                        help=f"RabbitMQ password (default $RABBITMQ_PASSWORD, else {RABBITMQ_DEFAULT_PASSWORD}; "
                             "prefer --rabbitmq-password-file: a command line is visible in ps)")
    parser.add_argument("--rabbitmq-password-file", default=env_default("RABBITMQ_PASSWORD_FILE"), metavar="FILE",
                        help="read the RabbitMQ password from FILE (env RABBITMQ_PASSWORD_FILE); wins over "
                             "--rabbitmq-password")
    parser.add_argument("--rabbitmq-vhost", default=env_default("RABBITMQ_VHOST", "/"),
                        help="RabbitMQ virtual host (default $RABBITMQ_VHOST, else %(default)s)")


def add_processor_args(parser: argparse.ArgumentParser) -> None:
    """Upstream 2.1.4's common processor flags, and ours (broker token file, metrics, the queues)."""
    parser.add_argument("--id", default=None, help="processor id (default: the command's)")
    add_backend_args(parser)
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
