"""Which broker a processor or an operators' command uses, when it was not told: the running stack's.

``tg-launch`` records its broker's URL (and the embedded broker's HTTP
address) in its data directory (:mod:`..launching.stack`), so a processor
started by hand, ``tg-init-trustgraph`` and ``tg-verify-system-status`` find
it without flags, and a broker that cannot be reached is reported with where
the running stack's broker really is (:func:`stack_hint`).  A stack on a
RabbitMQ the user runs records that and its settings (never the password), so
a processor started by hand with no ``--pubsub-backend`` joins it
(:func:`choose_backend`).

This lives here, above both rooms it joins: the messaging core knows brokers
in general (parsing a URL, probing it, the one "unreachable" line) and is
given the hint as a callable (``PubSub(hint=...)``), so it imports nothing of
launching.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..launching.stack import LOCK_FILE, data_dir, running_stack
from ..messaging.broker_url import DEFAULT_PULSAR_ADMIN_URL, DEFAULT_PULSAR_HOST
from .flags import add_backend_args


def choose_broker_url(given: str | None) -> tuple[str, str]:
    """The broker URL a processor uses, and where it came from (to say so at start).

    ``-p`` wins, then ``$PULSAR_HOST``, then the stack running in the data
    directory (``tg-launch`` writes its broker URL there), then the default.
    """
    env = os.environ.get("PULSAR_HOST")
    if given:
        # The flag's default is the variable, so a match most likely came from there.
        return given, "from $PULSAR_HOST" if given == env else "from -p/--pulsar-host"
    if env:
        return env, "from $PULSAR_HOST"
    stack = running_stack()
    if stack is not None and stack.pulsar:
        return stack.pulsar, f"the running stack's, from {stack.pulsar_url_file}"
    return DEFAULT_PULSAR_HOST, f"the default; no running stack found in {data_dir()}"


def choose_backend(params: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """The broker's kind a processor uses, the settings to reach it, and where they came from.

    ``--pubsub-backend`` (its default is ``$PUBSUB_BACKEND``) wins; without
    it, a stack running in the data directory on RabbitMQ is joined with the
    settings tg-launch recorded (its ``--rabbitmq-*`` values and password file;
    without a file, the password is this process's own ``--rabbitmq-password``
    or ``$RABBITMQ_PASSWORD``, as tg-launch gave its children); else Pulsar.
    ``params`` is returned as given but for the joined stack's settings.
    """
    given = params.get("pubsub_backend")
    if given:
        return given, params, ("from --pubsub-backend" if given != os.environ.get("PUBSUB_BACKEND")
                               else "from $PUBSUB_BACKEND")
    stack = running_stack()
    if stack is None or stack.backend != "rabbitmq":
        return "pulsar", params, ""
    joined = dict(params)
    for key in ("host", "port", "username", "vhost", "password-file"):
        if key in stack.rabbitmq:
            joined[f"rabbitmq_{key.replace('-', '_')}"] = stack.rabbitmq[key]
    return "rabbitmq", joined, f"the running stack's, from {stack.data_dir / LOCK_FILE}"


def rabbitmq_in_use(prog: str) -> tuple[dict[str, Any], str] | None:
    """The RabbitMQ processors started here with no flags would use (``$PUBSUB_BACKEND`` and
    ``$RABBITMQ_*``, or the stack running in the data directory), as ``--rabbitmq-*`` settings, and
    where they came from; None when they would use Pulsar.  For operators' commands (``prog``'s name
    is on the line of a bad ``$PUBSUB_BACKEND``), which take Pulsar flags only."""
    flags = argparse.ArgumentParser(prog=prog, add_help=False)
    add_backend_args(flags)
    backend, params, source = choose_backend(vars(flags.parse_args([])))
    return (params, source) if backend == "rabbitmq" else None


def choose_admin_url(given: str | None) -> tuple[str, str]:
    """The broker's admin URL an operators' command uses, and where it came from.

    The flag wins, then ``$PULSAR_ADMIN_URL`` (the processors' variable for
    it), then the stack running in the data directory (its embedded broker
    serves HTTP on a free port, which tg-launch records), then Apache
    Pulsar's web service port on this machine.
    """
    if given:
        return given, "from the command line"
    env = os.environ.get("PULSAR_ADMIN_URL")
    if env:
        return env, "from $PULSAR_ADMIN_URL"
    stack = running_stack()
    if stack is not None and stack.pulsar_admin:
        return stack.pulsar_admin, f"the running stack's, from {stack.data_dir}"
    return DEFAULT_PULSAR_ADMIN_URL, f"the default; no running stack found in {data_dir()}"


def stack_hint(url: str, given: bool = False) -> str:
    """Where the running stack's broker is, as the end of an error line about the broker at ``url``
    (``PubSub``'s ``hint``: read when the line is written, so a stack started meanwhile counts).
    ``given``: the URL came from ``-p`` or ``$PULSAR_HOST``, so telling the user to give one says
    nothing (a tool service's author saw "give the broker URL with -p" after giving it)."""
    stack = running_stack()
    if stack is not None and stack.backend == "rabbitmq":
        return (f"the stack running in {stack.data_dir} uses RabbitMQ at "
                f"{stack.rabbitmq.get('host', 'localhost')}:{stack.rabbitmq.get('port', '5672')}: "
                f"give no broker flags to join it, or --pubsub-backend rabbitmq and its --rabbitmq-* settings")
    if stack is None or not stack.pulsar:
        if given:
            return (f"check that a broker listens there; no stack is running in {data_dir()} "
                    f"(`make run` starts one, which a service joins without -p)")
        return (f"no stack is running in {data_dir()}: start one with `make run`, "
                f"or give the broker URL with -p")
    if stack.pulsar == url:
        return f"this is the broker of the stack running in {stack.data_dir}, which may be (re)starting"
    return f"the stack running in {stack.data_dir} uses {stack.pulsar} (in {stack.pulsar_url_file})"
