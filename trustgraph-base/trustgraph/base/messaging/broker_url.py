"""Broker URLs: whether one is well formed, whether it answers, and the one line when it does not.

A new user's first mistakes are a wrong port, the gateway's ``http://`` URL
given as the broker's, or a URL without its scheme.  pulsar-client answers
each with a stream of C++ log lines and, minutes later, a bare ``Timeout``.
This module lets :class:`~trustgraph.base.messaging.pubsub.PubSub` say in one
line what is wrong.  Where to look instead (the running stack's broker) is
not the messaging core's to know: the line ends with a :data:`Hint` its
caller gives (a processor's is ``processors.broker_choice.stack_hint``, which
also chooses the URL when none is given).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

#: Where to look when the broker at a URL cannot be reached, as the end of the "unreachable"
#: line (None: nothing to add); called when the line is written.
Hint = Callable[[str], str | None]

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
    try:
        hosts = split_hosts(netloc, _DEFAULT_PORTS[scheme])
    except BrokerUrlError as e:
        raise BrokerUrlError(f"malformed broker URL {url!r}: {e}; e.g. {example}") from None
    return BrokerUrl(text, scheme, hosts)


def split_hosts(hosts: str, default_port: int) -> tuple[tuple[str, int], ...]:
    """``h1:p1,h2`` as ``((h1, p1), (h2, default_port))``: the nodes of a cluster, in the order given
    (an IPv6 address in brackets, ``[::1]:5672``); :class:`BrokerUrlError` names a part that is not
    ``host`` or ``host:port``."""
    found = []
    for part in hosts.split(","):
        part = part.strip()
        try:
            split = urllib.parse.urlsplit("//" + part)
            number = split.port or default_port
        except ValueError:
            raise BrokerUrlError(f"bad port in {part!r}") from None
        if not split.hostname:
            raise BrokerUrlError(f"no host in {part!r}")
        found.append((split.hostname, number))
    return tuple(found)


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


def unreachable(url: str, problem: str, hint: Hint | None = None) -> str:
    """The one line that says the broker cannot be reached, why, and (``hint``'s) where to look."""
    line = f"cannot reach the broker at {url}: {problem}"
    where = hint(url) if hint is not None else None
    return f"{line}; {where}" if where else line
