"""Broker URLs: which one a processor uses, whether it is well formed, and why it is unreachable.

A new user's first mistakes are a wrong port, the gateway's ``http://`` URL
given as the broker's, or a URL without its scheme.  pulsar-client answers
each with a stream of C++ log lines and, minutes later, a bare ``Timeout``.
This module lets :class:`~trustgraph.base.messaging.pubsub.PubSub` say in one line what
is wrong, and where the running stack's broker really is.
"""

from __future__ import annotations

import asyncio
import os
import socket
import ssl
import urllib.parse
from dataclasses import dataclass

from ..launching.stack import data_dir, running_stack

DEFAULT_PULSAR_HOST = "pulsar://localhost:6650"
#: Apache Pulsar's web service (admin REST API) on this machine.
DEFAULT_PULSAR_ADMIN_URL = "http://localhost:8080"
_DEFAULT_PORTS = {"pulsar": 6650, "pulsar+ssl": 6651, "http": 8080, "https": 8443}
PROBE_TIMEOUT = 3.0
# An Apache Pulsar HTTP service URL answers a topic lookup; anything else (an
# API gateway, a web server) does not, which is what we want to tell the user.
_LOOKUP_PROBE = "/lookup/v2/topic/non-persistent/tg/request/config"


class BrokerUrlError(ValueError):
    """A broker URL that cannot be right, whatever the broker does."""


@dataclass(frozen=True)
class BrokerUrl:
    url: str
    scheme: str
    hosts: tuple[tuple[str, int], ...]

    @property
    def http(self) -> bool:
        return self.scheme in ("http", "https")


def parse_broker_url(url: str) -> BrokerUrl:
    """Check ``url`` is a Pulsar service URL (``pulsar://host:port``, several hosts allowed)."""
    text = (url or "").strip()
    example = "pulsar://localhost:6650"
    if "://" not in text:
        guess = f"did you mean pulsar://{text}?" if text else f"e.g. {example}"
        raise BrokerUrlError(f"malformed broker URL {url!r}: it needs a scheme; {guess}")
    scheme, _, rest = text.partition("://")
    scheme = scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise BrokerUrlError(f"malformed broker URL {url!r}: unknown scheme {scheme!r}; "
                             f"a broker URL looks like {example}")
    netloc = rest.split("/", 1)[0]
    if not netloc:
        raise BrokerUrlError(f"malformed broker URL {url!r}: no host; e.g. {example}")
    hosts = []
    for part in netloc.split(","):
        try:
            split = urllib.parse.urlsplit("//" + part)
            number = split.port or _DEFAULT_PORTS[scheme]
        except ValueError:
            raise BrokerUrlError(f"malformed broker URL {url!r}: bad port in {part!r}; "
                                 f"e.g. {example}") from None
        if not split.hostname:
            raise BrokerUrlError(f"malformed broker URL {url!r}: no host in {part!r}; e.g. {example}")
        hosts.append((split.hostname, number))
    return BrokerUrl(text, scheme, tuple(hosts))


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
    """Where the running stack's broker is, as the end of an error line."""
    stack = running_stack()
    if stack is None or not stack.pulsar:
        return (f"no stack is running in {data_dir()}: start one with `make run`, "
                f"or give the broker URL with -p")
    if stack.pulsar == url:
        return f"this is the broker of the stack running in {stack.data_dir}, which may be (re)starting"
    return f"the stack running in {stack.data_dir} uses {stack.pulsar} (in {stack.pulsar_url_file})"


async def probe(broker: BrokerUrl, timeout: float = PROBE_TIMEOUT) -> str | None:
    """None when one of the hosts accepts a connection (and, for http, answers a
    Pulsar lookup); else what went wrong, worded for the user."""
    problems = []
    for host, port in broker.hosts:
        problem = await _probe_one(broker, host, port, timeout)
        if problem is None:
            return None
        problems.append(problem)
    return "; ".join(dict.fromkeys(problems))


async def _probe_one(broker: BrokerUrl, host: str, port: int, timeout: float) -> str | None:
    context = ssl.create_default_context() if broker.scheme == "https" else None
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=context), timeout)
    except TimeoutError:
        return f"no answer from {host}:{port} within {timeout:g}s"
    except ConnectionRefusedError:
        return f"connection refused on {host}:{port} (nothing listens there)"
    except socket.gaierror:
        return f"unknown host {host!r}"
    except OSError as e:
        return f"cannot connect to {host}:{port}: {e.strerror or e}"
    try:
        if not broker.http:
            return None
        return await _http_lookup(reader, writer, host, timeout)
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except (OSError, ssl.SSLError):
            pass


async def _http_lookup(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str,
                       timeout: float) -> str | None:
    """An http:// broker URL is legal (Pulsar's HTTP lookup service); a gateway's is not."""
    writer.write(f"GET {_LOOKUP_PROBE} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
    try:
        status = await asyncio.wait_for(reader.readline(), timeout)
    except (TimeoutError, OSError):
        status = b""
    parts = status.decode("latin-1").split()
    code = parts[1] if len(parts) > 1 else "?"
    if code == "200":
        return None
    return (f"it answers HTTP but not as a Pulsar lookup service (HTTP {code} for {_LOOKUP_PROBE}); "
            f"an http:// URL here must be a Pulsar HTTP service URL, not the API gateway's "
            f"(the gateway's URL goes to the tg-* commands as -u/--api-url); "
            f"the broker URL usually looks like pulsar://host:6650")


def unreachable(url: str, problem: str) -> str:
    """The one line that says the broker cannot be reached, why, and where to look."""
    return f"cannot reach the broker at {url}: {problem}; {stack_hint(url)}"
