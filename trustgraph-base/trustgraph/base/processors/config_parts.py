"""Config of any size on the bus: replies in parts, pushes that fit, notices for those that do not.

A broker message holds at most about 5 MiB (Pulsar's default
``maxMessageSize``), and chunking, which would carry more, works neither on
non-persistent topics (config replies) nor, on Apache Pulsar, for Shared
subscriptions (every consumer of ours is Shared, as upstream 2.1.4's are).  So a
config bigger than one message travels like this (our extension; upstream
2.1.4 peers neither send nor see any of it):

* **Replies in parts.**  A caller that can take a reply in several messages
  says so with the request property ``parts: "1"``.  A reply that fits one
  message is sent as before, upstream's shape; a bigger one becomes several
  ``ConfigResponse`` records with the same ``version``, each carrying a slice
  of ``config``, ``values`` or ``directory`` and the property ``part: "i/n"``
  (1-based).  A request with ``part: "i"`` too gets part i alone (our
  callers ask page by page, :func:`request`); without it, every part.  The
  caller merges them.  A caller that did
  not ask (an upstream one) gets a ``config-error`` naming the size, instead
  of a reply the broker would refuse.
* **Pushes that fit.**  config-svc pushes the whole config on
  ``persistent://tg/config/config`` when it fits one message, exactly as
  upstream; 2.1.4 peers read those.
* **A notice for those that do not.**  A config too big for one message is
  not pushed (an upstream peer keeps the last version that fitted, and
  config-svc says so in its log); instead a ``ConfigPush`` with only the
  ``version`` goes on ``<push topic>-notify``, and our processors, which
  follow that topic too, fetch the new version in parts.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ...schema import ConfigRequest, ConfigResponse, ConfigValue
from ...schema.codec import encode
from ..messaging.pubsub import MAX_MESSAGE_BYTES
from ..messaging.request_response import RequestResponseClient, RequestTimeout

logger = logging.getLogger(__name__)

__all__ = ["PART", "PART_LIMIT", "PARTS", "PartsError", "Gather", "request", "request_with_properties", "split"]

#: Request property: the caller takes a reply in several messages.
PARTS = "parts"
#: Response property of each message of a reply in parts: ``"i/n"``, 1-based.
PART = "part"
#: The most one message of a config reply or push may hold (room left for properties).
PART_LIMIT = MAX_MESSAGE_BYTES - 64 * 1024


class PartsError(ValueError):
    """A reply that cannot be cut into messages (one item alone is too big), or parts that do not fit together."""


def fits(data: bytes, limit: int | None = None) -> bool:
    """Whether ``data`` fits one message (``limit`` defaults to :data:`PART_LIMIT`, read at call time)."""
    return len(data) <= (PART_LIMIT if limit is None else limit)


# -- the serving side: cutting a reply -------------------------------------------------

def _items(resp: ConfigResponse) -> Iterator[tuple[str, Any, int]]:
    """The reply's pieces as ``(field, piece, encoded size)``; a piece of ``config`` is (type, key, value)."""
    for t, section in (resp.config or {}).items():
        overhead = len(json.dumps(t)) + 4
        for k, v in section.items():
            yield "config", (t, k, v), len(json.dumps(k)) + len(json.dumps(v)) + 4 + overhead
    for v in resp.values or []:
        yield "values", v, len(json.dumps([v.type, v.key, v.value])) + 32
    for d in resp.directory or []:
        yield "directory", d, len(json.dumps(d)) + 2


def _part(resp: ConfigResponse, pieces: list[tuple[str, Any]]) -> ConfigResponse:
    config: dict[str, dict[str, str]] = {}
    values: list[ConfigValue] = []
    directory: list[str] = []
    for name, piece in pieces:
        if name == "config":
            t, k, v = piece
            config.setdefault(t, {})[k] = v
        elif name == "values":
            values.append(piece)
        else:
            directory.append(piece)
    # A field the whole reply leaves null stays null in every part (as the wire has it).
    return replace(resp, config=config if resp.config is not None else None,
                   values=values if resp.values is not None else None,
                   directory=directory if resp.directory is not None else None)


def split(resp: ConfigResponse, limit: int | None = None) -> list[tuple[ConfigResponse, bytes]]:
    """``resp`` as messages of at most ``limit`` bytes: ``[(record, its encoding), ...]``.

    One message when it fits (the common case costs one encoding).  Raises
    :class:`PartsError` when a single item is bigger than ``limit`` on its own.
    """
    limit = PART_LIMIT if limit is None else limit
    whole = encode(resp)
    if fits(whole, limit):
        return [(resp, whole)]
    groups: list[list[tuple[str, Any]]] = [[]]
    size = 0
    budget = int(limit * 0.9)  # the sizes are estimates; every part is checked below
    for name, piece, n in _items(resp):
        if groups[-1] and size + n > budget:
            groups.append([])
            size = 0
        groups[-1].append((name, piece))
        size += n
    out: list[tuple[ConfigResponse, bytes]] = []
    todo = list(reversed(groups))
    while todo:
        group = todo.pop()
        record = _part(resp, group)
        data = encode(record)
        if fits(data, limit):
            out.append((record, data))
        elif len(group) > 1:
            half = len(group) // 2
            todo += [group[half:], group[:half]]
        else:
            name, piece = group[0]
            where = f"{piece[0]}/{piece[1]}" if name == "config" else (
                f"{piece.type}/{piece.key}" if name == "values" else "a directory entry")
            raise PartsError(f"config item {where} alone is {len(data):,} bytes, over the "
                             f"{limit:,}-byte limit of one message")
    return out


def part_property(i: int, n: int) -> dict[str, str]:
    """The properties of part ``i`` of ``n`` (1-based), beside the reply's id."""
    return {PART: f"{i}/{n}"}


def too_large(size: int, limit: int | None = None) -> str:
    """The error an upstream caller (one that cannot take parts) gets for a reply too big."""
    limit = PART_LIMIT if limit is None else limit
    return (f"the reply is {size:,} bytes, over the {limit:,}-byte limit of one message; "
            f"a client that sets the request property '{PARTS}' gets it in parts "
            f"(this fork's commands and processors do), or read fewer items at a time")


# -- the calling side: gathering a reply -------------------------------------------------

def _parse_part(raw: str | None) -> tuple[int, int] | None:
    if not raw:
        return None
    try:
        i, n = (int(x) for x in raw.split("/", 1))
    except ValueError:
        return None
    return (i, n) if 1 <= i <= n else None


class Gather:
    """The parts of one reply, merged into one ``ConfigResponse`` once all are in."""

    def __init__(self) -> None:
        self.parts: dict[int, ConfigResponse] = {}
        self.expected: int | None = None

    def add(self, resp: ConfigResponse, properties: dict[str, str]) -> ConfigResponse | None:
        """Take one message; the whole reply once the last part is in, else None."""
        where = _parse_part(properties.get(PART))
        if where is None or resp.error is not None:
            return resp  # one message: the whole reply (or an error, which ends the call)
        i, n = where
        if self.expected is None:
            self.expected = n
        elif n != self.expected:
            raise PartsError(f"reply parts disagree on their number ({n} and {self.expected})")
        self.parts[i] = resp
        if len(self.parts) < n:
            return None
        return merge([self.parts[k] for k in sorted(self.parts)])


def merge(parts: list[ConfigResponse]) -> ConfigResponse:
    """One reply from its parts (all of one version)."""
    versions = {p.version for p in parts}
    if len(versions) != 1:
        raise PartsError(f"reply parts of different versions {sorted(versions)}")
    first = parts[0]
    config: dict[str, dict[str, str]] | None = None if first.config is None else {}
    values: list[ConfigValue] | None = None if first.values is None else []
    directory: list[str] | None = None if first.directory is None else []
    for p in parts:
        for t, section in (p.config or {}).items():
            config.setdefault(t, {}).update(section)
        if values is not None:
            values.extend(p.values or [])
        if directory is not None:
            directory.extend(p.directory or [])
    return replace(first, config=config, values=values, directory=directory)


#: Operations that only read: a page of theirs that never came is asked for again.
READS = frozenset({"config", "get", "list", "getvalues"})
#: Seconds a page may take before a read asks for it again (within the call's deadline).
PAGE_WAIT = 15.0
#: How often a paged read starts over because the config changed between its pages.
RESTARTS = 3


async def _page(client: RequestResponseClient, req: ConfigRequest, page: int, props: dict[str, str],
                deadline: float, retry: bool) -> tuple[ConfigResponse, tuple[int, int] | None, dict[str, str]]:
    """Part ``page`` of the reply (the first message of a call asking for it), its ``(i, n)`` and
    its properties."""
    while True:
        left = deadline - time.time()
        wait = min(left, PAGE_WAIT) if retry else left
        try:
            async with client.stream(req, timeout=wait, properties={**props, PART: str(page)},
                                     messages=True) as responses:
                async for msg in responses:
                    return msg.value, _parse_part(msg.properties.get(PART)), dict(msg.properties)
        except RequestTimeout:
            if not retry or deadline - time.time() <= 0:
                raise
            logger.info("Config reply part %d did not come within %.0fs; asking again", page, wait)
        if deadline - time.time() <= 0:
            raise RequestTimeout(f"no response from {client.request_topic}: the deadline has passed")


async def request(client: RequestResponseClient, req: ConfigRequest, *, timeout: float | None = None,
                  deadline: float | None = None, properties: dict[str, str] | None = None) -> ConfigResponse:
    """One config request, its reply gathered from however many parts it comes in.

    The parts are asked for one at a time (request property ``part``: which
    one), never all at once: a broker skips a non-persistent message for a
    consumer whose connection is still busy with the previous megabytes, so
    back-to-back parts of 5 MB lost one now and then.  A read (``config``,
    ``get``, ``list``, ``getvalues``) asks again for a part that did not come
    within :data:`PAGE_WAIT`, and starts over if the config changed between
    its parts.  ``timeout`` and ``deadline`` bound the whole call, every part
    included (:class:`~trustgraph.base.messaging.request_response.RequestTimeout`).
    """
    resp, _props = await request_with_properties(client, req, timeout=timeout, deadline=deadline,
                                                 properties=properties)
    return resp


async def request_with_properties(client: RequestResponseClient, req: ConfigRequest, *,
                                  timeout: float | None = None, deadline: float | None = None,
                                  properties: dict[str, str] | None = None
                                  ) -> tuple[ConfigResponse, dict[str, str]]:
    """:func:`request`, and the properties of the reply's first message (config-svc's stamp,
    :mod:`.config_source`)."""
    limit = timeout if timeout is not None else client.timeout
    end = time.time() + limit if deadline is None else min(deadline, time.time() + limit)
    props = {**(properties or {}), PARTS: "1"}
    retry = req.operation in READS
    for _ in range(RESTARTS + 1):
        first, where, stamp = await _page(client, req, 1, props, end, retry)
        if where is None or first.error is not None:
            return first, stamp  # the whole reply in one message (or an error)
        _, n = where
        parts = [first]
        for page in range(2, n + 1):
            part, where, _ = await _page(client, req, page, props, end, retry)
            if part.error is not None:
                return part, stamp
            if where is None or where[1] != n or part.version != first.version:
                break  # the config changed between pages: start over
            parts.append(part)
        else:
            return merge(parts), stamp
        logger.info("Config changed while its reply was read in parts; reading it again")
    raise PartsError(f"the config kept changing while its reply was read in {RESTARTS + 1} attempts")


def push_size_line(version: int, size: int, limit: int | None = None) -> str:
    """config-svc's log line for a config too big to push (what upstream peers then miss)."""
    limit = PART_LIMIT if limit is None else limit
    return (f"Config version {version} is {size:,} bytes ({math.ceil(size / 1048576)} MiB), over the "
            f"{limit:,}-byte limit of one message: it is not pushed whole; processors of this fork "
            f"fetch it in parts on the notice, upstream 2.1.4 processors keep the last version that fitted")
