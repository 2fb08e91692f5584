"""Which broker a processor or an operators' command uses, when it was not told: the running stack's.

``tg-launch`` records its broker's URL (and the embedded broker's HTTP
address) in its data directory (:mod:`..launching.stack`), so a processor
started by hand, ``tg-init-trustgraph`` and ``tg-verify-system-status`` find
it without flags, and a broker that cannot be reached is reported with where
the running stack's broker really is (:func:`stack_hint`).

This lives here, above both rooms it joins: the messaging core knows brokers
in general (parsing a URL, probing it, the one "unreachable" line) and is
given the hint as a callable (``PubSub(hint=...)``), so it imports nothing of
launching.
"""

from __future__ import annotations

import os

from ..launching.stack import data_dir, running_stack
from ..messaging.broker_url import DEFAULT_PULSAR_ADMIN_URL, DEFAULT_PULSAR_HOST


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


def stack_hint(url: str) -> str:
    """Where the running stack's broker is, as the end of an error line about the broker at ``url``
    (``PubSub``'s ``hint``: read when the line is written, so a stack started meanwhile counts)."""
    stack = running_stack()
    if stack is None or not stack.pulsar:
        return (f"no stack is running in {data_dir()}: start one with `make run`, "
                f"or give the broker URL with -p")
    if stack.pulsar == url:
        return f"this is the broker of the stack running in {stack.data_dir}, which may be (re)starting"
    return f"the stack running in {stack.data_dir} uses {stack.pulsar} (in {stack.pulsar_url_file})"
