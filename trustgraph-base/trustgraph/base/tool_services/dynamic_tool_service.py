"""The base class of a tool service: subclass it and write ``invoke``.

::

    class Processor(DynamicToolService):
        default_topic = "joke"

        async def invoke(self, user, config, arguments):
            return f"Hey {user}! ..."

``invoke`` gets ``config`` and ``arguments`` as dicts (and first the caller's
``user``, as in TrustGraph 2.1; a service written for 2.11, whose requests
have no user, declares ``invoke(self, config, arguments)`` and runs unchanged:
the base reads which one it is from the signature) and returns a string, a
JSON-able value (sent JSON-encoded), or is an async generator yielding string
chunks.  Chunks are sent as they come, then an end-of-stream message, but only
to a caller whose request carries the ``reads-streams`` property
(:data:`~trustgraph.schema.services.tool_service.READS_STREAMS`; our
``ToolServiceClient`` always sends it).  Any other caller (every upstream one)
takes the first response as the whole answer, so it gets one response holding
the chunks joined, of at most :attr:`DynamicToolService.max_whole_reply`
bytes.  An exception
becomes an error reply (:class:`ToolError` chooses its type); nothing a
request contains can stop the service.  An invocation still running when
its caller's deadline passes (the request's ``deadline`` property: the caller
no longer waits, or gave up the call, as mcp-server does for a cancelled MCP
task) is stopped then: an ``async`` invoke is cancelled at its next
``await`` (a plain ``def`` one runs to its end).  The reply path is
:mod:`trustgraph.base.messaging.serving`'s, shared with every other service.

A service announces itself while it runs (``announcer.py``): its
``tool-service`` descriptor (id, queues, ``config_params``, ``idempotent``,
``read_only``, ``destructive``, ``open_world``, ``call_timeout``) and the
``tools`` it declares, so agents and gateways can use it with no config step,
and know at once when it stops.  ``--no-announce`` turns that off (the
service then needs its descriptors in config, as upstream's do).  Announcing
is never what serving waits for: topics that cannot be opened are one
WARNING (``announcer.py``).

Before it serves anything, a service checks its descriptor and declared
tools with the one descriptor model every reader uses
(:func:`trustgraph.base.descriptors.checks.check_declaration`): a declaration
readers would leave out stops it, in one line naming the tool and the field;
a key nothing reads is a WARNING.

It speaks both upstream wires (``--wire 2.1|2.11``): in a 2.11 deployment its
request and response topics are 2.1's (``non-persistent://tg/request/{topic}``),
its requests lack ``user`` (read as "trustgraph", or not passed to a 2.11-style
``invoke``), and its announcements move to ``tg/notify``, a namespace 2.11's
topology creates.  It follows no config of its own, and serves before any
config following a subclass registers is opened, so neither a missing config
service nor a missing config namespace keeps it from serving.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import logging
import math
import sys
import time
import types
from collections.abc import Mapping, Sequence
from typing import Any

from ...schema import ToolServiceRequest, ToolServiceResponse
from ...schema.services.tool_service import READS_STREAMS
from ...topics import tool_service_topics
from ..descriptors.annotations import DESTRUCTIVE, IDEMPOTENT, OPEN_WORLD, READ_ONLY
from ..descriptors.checks import Declaration, check_declaration, tool_descriptor
from ..descriptors.errors import InvalidDescriptor
from ..descriptors.models import (
    CONFIG_PARAMS,
    REQUEST_QUEUE,
    RESPONSE_QUEUE,
    ToolDescriptor,
    ToolServiceDescriptor,
)
from ..formats.text import as_text
from ..messaging import metrics
from ..messaging.pubsub import MAX_MESSAGE_BYTES, Message
from ..messaging.serving import Replies, Reply, ReplyNotSent, ServiceError, message_or_type
from ..processors.async_processor import AsyncProcessor, StartRefused
from ..safety import limits
from ..wire import WIRES
from .announcer import DEFAULT_LEASE, Announcer

logger = logging.getLogger(__name__)

ERROR_TYPE = "tool-service-error"


class ToolError(ServiceError):
    """Raise from ``invoke`` to send the caller an error with your own message and type."""

    def __init__(self, message: str, type: str = ERROR_TYPE) -> None:
        super().__init__(message, type)


def _parse_object(text: str, what: str) -> dict[str, Any]:
    try:
        return limits.loads_object(text, f"request {what}")
    except ValueError as e:
        raise ToolError(str(e)) from None


_Coroutine = types.CoroutineType


_END = ToolServiceResponse(response="", end_of_stream=True)


async def _chunks(result: Any) -> Any:
    """The response records of a streaming ``invoke``: one per non-empty chunk."""
    async for chunk in result:
        text = as_text(chunk)
        if text:
            yield ToolServiceResponse(response=text, end_of_stream=False)


async def _joined(result: Any, limit: int) -> str:
    """The chunks of a streaming ``invoke`` as one text, for a caller that reads one reply.

    Stops (closing the generator, so its work stops too) once the text is over ``limit``
    bytes: a reply that big could not be sent anyway, and collecting on would hold an
    unbounded answer in memory.
    """
    parts: list[str] = []
    size = 0
    async with contextlib.aclosing(result) as chunks:
        async for chunk in chunks:
            text = as_text(chunk)
            if not text:
                continue
            size += len(text.encode("utf-8", "surrogatepass"))
            if size > limit:
                raise ToolError(
                    f"the streamed answer is over the {limit:,}-byte limit of one reply "
                    f"({len(parts) + 1} chunks, {size:,} bytes so far): its caller reads whole "
                    f"replies (no '{READS_STREAMS}' property), so the chunks are joined into one")
            parts.append(text)
    return "".join(parts)


def _parameters(invoke: Any) -> list[inspect.Parameter] | None:
    """A bound ``invoke``'s parameters, or None when any number of positional arguments fits it
    (``*args``) or Python cannot tell its shape: it is then called as 2.1's."""
    try:
        params = list(inspect.signature(invoke).parameters.values())
    except (TypeError, ValueError):
        return None
    return None if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params) else params


def _positional(params: list[inspect.Parameter]) -> list[inspect.Parameter]:
    return [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]


def takes_user(invoke: Any) -> bool:
    """Whether a bound ``invoke`` is 2.1's ``invoke(user, config, arguments)`` rather than 2.11's
    ``invoke(config, arguments)``: two positional parameters are 2.11's; anything else
    (three, or ``*args``) gets the user first, as before."""
    params = _parameters(invoke)
    return params is None or len(_positional(params)) != 2


def invoke_problem(invoke: Any) -> str | None:
    """Why a bound ``invoke`` cannot be called as a tool service calls it (None: it can): with
    ``(config, arguments)`` (2.11) or ``(user, config, arguments)`` (2.1), or ``*args``.  Any
    other shape would fail every call, so the service refuses to start instead."""
    params = _parameters(invoke)
    if params is None:
        return None
    positional = _positional(params)
    # Two positional parameters are called with two (takes_user); any other number with three.
    needed = [p for p in positional if p.default is inspect.Parameter.empty]
    keywords = [p for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty]
    if not keywords and (len(positional) == 2 or len(positional) >= 3 and len(needed) <= 3):
        return None
    return (f"invoke{inspect.signature(invoke)}: it must take (config, arguments), or (user, config, "
            f"arguments) as in TrustGraph 2.1")


class DynamicToolService(AsyncProcessor):
    """Serves ``non-persistent://tg/request/{topic}``, answers on ``.../response/{topic}``."""

    #: The topic it serves unless ``-t/--topic`` says another.  A class that sets none must be
    #: given one: upstream's base default, ``tool``, put every such service (its spec's own
    #: example among them) on one topic, whatever its descriptor said, and two of them would
    #: each take the other's calls.  :meth:`start` refuses instead, in one line.
    default_topic: str | None = None
    default_concurrency = 16
    #: Every wire: 2.11's tool-service topics and records are 2.1's, less the request's ``user``.
    wires = WIRES

    #: The tools this service offers, announced while it runs: tool descriptors
    #: as a person writes them (``name``, ``description``, ``arguments``,
    #: ``examples`` (questions a user might ask that the tool answers, and
    #: example calls ``{"arguments": {...}, "question": ...}``), values
    #: for ``config_params``, and any of ``read-only``, ``destructive``,
    #: ``idempotent``, ``open-world`` where a tool differs from the service),
    #: without ``type`` and ``service``, which the announcement fills in.
    tools: Sequence[Mapping[str, Any]] = ()
    #: The config params its tools may set: bare names or ``{"name", "required"}``.
    config_params: Sequence[str | Mapping[str, Any]] = ()
    #: True when calling it twice does no harm: callers then retry a call that
    #: timed out or found no replica (see ``ToolServiceClients.invoke``), unless it
    #: (or the tool called) says it is destructive.
    idempotent: bool = False
    #: What its tools do, as a rule (a declared tool's own ``read-only`` ... wins): True or
    #: False, or None to say nothing (``trustgraph.base.descriptors.annotations``).
    read_only: bool | None = None
    destructive: bool | None = None
    open_world: bool | None = None
    #: Seconds one call may take, announced as the descriptor's ``timeout``
    #: (None: the caller's own limit).
    call_timeout: float | None = None
    #: Bytes (UTF-8) a streamed answer may reach when it is joined into one reply for a
    #: caller that does not read streams: a bigger one is an error reply saying so.  The
    #: reply goes on a non-persistent topic, which holds no bigger message.
    max_whole_reply: int = MAX_MESSAGE_BYTES

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.topic: str = params.get("topic") or self.default_topic or ""
        self.concurrency: int = int(params.get("concurrency") or self.default_concurrency)
        # Without a topic, no queues: start() refuses (after the declaration check).
        self.request_topic, self.response_topic = tool_service_topics(self.topic) if self.topic else ("", "")
        self.service_id: str = params.get("service_id") or self.id
        self.announce: bool = params.get("announce", True)
        self.announce_lease: float = float(params.get("announce_lease") or DEFAULT_LEASE)
        self.announcer: Announcer | None = None
        self._takes_user = takes_user(self.invoke)
        # Labelled metric children looked up once, not per request.
        self._m_invocations = metrics.tool_invocations.labels(self.id)
        self._m_latency = metrics.tool_latency.labels(self.id)
        ident = self.id
        self.replies = Replies(
            error_record=lambda error: ToolServiceResponse(error=error, response="", end_of_stream=True),
            error_type=ERROR_TYPE, describe=message_or_type,
            on_error=lambda etype: metrics.tool_errors.labels(ident, etype).inc())

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> Any:
        """Override: the tool's work.  Return the observation or yield chunks."""
        raise NotImplementedError(f"{type(self).__name__} does not implement invoke()")

    def service_descriptor(self) -> ToolServiceDescriptor:
        """This service's ``tool-service`` descriptor, from its attributes (:class:`InvalidDescriptor`
        names the first that is wrong)."""
        return self._descriptor(self.request_topic, self.response_topic)

    def _descriptor(self, request_topic: str, response_topic: str) -> ToolServiceDescriptor:
        data: dict[str, Any] = {"id": self.service_id, REQUEST_QUEUE: request_topic, RESPONSE_QUEUE: response_topic,
                                CONFIG_PARAMS: list(self.config_params), IDEMPOTENT: self.idempotent,
                                READ_ONLY: self.read_only, DESTRUCTIVE: self.destructive,
                                OPEN_WORLD: self.open_world, "timeout": self.call_timeout}
        return ToolServiceDescriptor.from_wire(data, self.service_id)

    def declaration(self) -> Declaration:
        """This service's declaration as every reader of its announcement checks it: its usable
        tools, its errors (readers would leave those tools out) and warnings (a key nothing reads)."""
        try:
            # A class given no topic is refused when it starts, after this check: until then its
            # tools are checked against its id's topics, so that one run says every problem.
            service = self._descriptor(*tool_service_topics(self.topic or self.service_id))
        except InvalidDescriptor as e:
            return Declaration((), (e.error,))
        return check_declaration(service, self.tools, queues=bool(self.topic))

    def declared_tools(self) -> tuple[ToolDescriptor, ...]:
        """The declared ``tools``, checked (:class:`InvalidDescriptor` names the first wrong tool and field)."""
        declaration = self.declaration()
        if declaration.errors:
            raise InvalidDescriptor(declaration.errors[0])
        return declaration.tools

    def descriptor(self) -> dict[str, Any]:
        """This service's ``tool-service`` descriptor, as it announces it."""
        return self.service_descriptor().to_wire()

    def tool_descriptors(self) -> dict[str, dict[str, Any]]:
        """The declared tools as the tool descriptors it announces (as written, ``type`` and
        ``service`` filled in), by tool name."""
        names = {t.name for t in self.declared_tools()}
        return {t["name"].strip(): tool_descriptor(self.service_id, t) for t in self.tools
                if isinstance(t, Mapping) and isinstance(t.get("name"), str) and t["name"].strip() in names}

    def declared_problems(self) -> list[str]:
        """What readers would say of this service's declaration (empty: nothing), errors first:
        a service author can call this in a unit test."""
        return self.declaration().problems()

    def _unservable(self) -> list[str]:
        """Why the service cannot serve, whatever its tools: no topic, an ``invoke`` no call fits.
        Start refusals, and errors of ``--check-tools``, which must not say "would start" of a
        class that will not."""
        out = []
        if not self.topic:
            out.append(f"{type(self).__name__} names no topic to serve: set default_topic = \"NAME\" on the class, "
                       f"or pass -t/--topic NAME (it then serves non-persistent://tg/request/NAME; its tool-service "
                       f"descriptor's request-queue must say the same)")
        if (wrong := invoke_problem(self.invoke)) is not None:
            out.append(f"{type(self).__name__}.{wrong}")
        return out

    async def _check_declarations(self) -> None:
        """Refuse to start on a declaration readers would leave out; log what they would warn of."""
        declaration = self.declaration()
        if declaration.errors:
            raise StartRefused(f"{declaration.errors[0]}; fix the service's declaration")
        for problem in declaration.warnings:
            logger.warning("Declared %s", problem)

    async def start(self) -> None:
        # Before anything is served or announced: a declaration that readers
        # would leave out stops the service here, in one line naming the tool and field.
        await self._check_declarations()
        if unservable := self._unservable():
            raise StartRefused(unservable[0])
        # Serving first, then announcing, then the base's start (metrics, and the config a
        # subclass may follow): requests need neither, so neither may hold them up.
        await self.serve(self.request_topic, ToolServiceRequest, self.on_request,
                         replies=self.replies, subscription=f"{self.id}-request",
                         response_topic=self.response_topic, concurrency=self.concurrency,
                         name="request")
        logger.info("Tool service %s serving %s (concurrency %d, wire %s)",
                    self.id, self.request_topic, self.concurrency, self.wire)
        if self.announce:
            self.announcer = Announcer(self.pubsub, service=self.service_id, descriptor=self.descriptor(),
                                       tools=self.tool_descriptors(), lease=self.announce_lease,
                                       topic=self.announce_queue, probe_topic=self.announce_probe_queue)
            await self.announcer.start()  # never raises for its topics: one WARNING, then retries
        await super().start()

    async def stop(self) -> None:
        if self.announcer is not None:
            await self.announcer.stop()
            self.announcer = None
        await super().stop()

    async def on_request(self, msg: Message, reply: Reply) -> None:
        """Run one invocation and send its reply (errors become error replies: see serving)."""
        req: ToolServiceRequest = msg.value
        self._m_invocations.inc()
        start = time.perf_counter()
        try:
            config = _parse_object(req.config, "config")
            arguments = _parse_object(req.arguments, "arguments")
            left = reply.left(math.inf)
            bound = asyncio.timeout(None if math.isinf(left) else max(left, 0.0))
            async with bound:
                await self._invoke(msg, reply, config, arguments)
        except TimeoutError:
            if not bound.expired():
                raise
            logger.debug("invoke stopped (id=%s): its caller's deadline passed", reply.id)
            raise ServiceError("the invocation was stopped: the caller's deadline passed") from None
        finally:
            self._m_latency.observe(time.perf_counter() - start)

    async def _invoke(self, msg: Message, reply: Reply, config: dict[str, Any], arguments: dict[str, Any]) -> None:
        """Call ``invoke`` and send what it returns (a failure of the author's code is a ServiceError)."""
        req: ToolServiceRequest = msg.value
        try:
            result = (self.invoke(req.user or "trustgraph", config, arguments) if self._takes_user
                      else self.invoke(config, arguments))
            if result.__class__ is _Coroutine or inspect.isawaitable(result):
                result = await result
            # An async generator streams, whether invoke is one or returns one, to a
            # caller that reads streams; any other gets its chunks joined, in one reply.
            if inspect.isasyncgen(result):
                if msg.properties.get(READS_STREAMS) == "true":
                    await reply.stream(_chunks(result), end=_END)
                    return
                result = await _joined(result, self.max_whole_reply)
            await reply.send(ToolServiceResponse(response=as_text(result), end_of_stream=True))
        except (ServiceError, ReplyNotSent):
            raise
        except Exception as e:
            # The author's code failing is the tool's answer, not a bug of ours:
            # a warning, with the traceback only at DEBUG.
            logger.warning("invoke failed (id=%s): %s: %s", reply.id, type(e).__name__, e,
                           exc_info=logger.isEnabledFor(logging.DEBUG))
            raise ServiceError(message_or_type(e)) from e

    @classmethod
    def checked(cls, params: dict[str, Any]) -> int | None:
        """``--check-tools``: the declared tools checked as the service checks them before it serves (and
        every reader of its announcement), each problem printed, errors first, and nothing
        connected to: 0 when it would start (warnings aside), 2 when it would not."""
        if not params.get("check_tools"):
            return None
        service = cls(**{**params, "metrics": False})
        problems = service.declaration()
        errors = [*problems.errors, *service._unservable()]
        for error in errors:
            print(f"{params['id']}: error: {error}", file=sys.stderr)
        for warning in problems.warnings:
            print(f"{params['id']}: warning: {warning}", file=sys.stderr)
        if not errors:
            print(f"{params['id']}: {len(cls.tools)} declared tool(s) would be announced"
                  + (f" ({len(problems.warnings)} warning(s))" if problems.warnings else ""))
        return 2 if errors else 0

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--check-tools", action="store_true",
                            help="check the declared tools and exit (0: it would start; 2: it would "
                                 "not, each problem said), connecting to nothing")
        parser.add_argument("-t", "--topic", default=cls.default_topic,
                            help="tool-service topic: requests on non-persistent://tg/request/TOPIC, "
                                 "responses on non-persistent://tg/response/TOPIC (default "
                                 + (f"{cls.default_topic})" if cls.default_topic else
                                    "the class's default_topic; this class sets none, so it is required)"))
        parser.add_argument("-c", "--concurrency", type=int, default=cls.default_concurrency,
                            help="invocations in flight per process (default %(default)s)")
        parser.add_argument("--service-id", default=None,
                            help="the id it announces itself under, which tools name as their "
                                 "'service' (default: the processor --id)")
        parser.add_argument("--announce", action=argparse.BooleanOptionalAction, default=True,
                            help="announce this service and its tools while it runs (default on)")
        parser.add_argument("--announce-lease", type=float, default=DEFAULT_LEASE,
                            help="seconds readers count this replica as live after each heartbeat; "
                                 "a heartbeat goes every third of it (default %(default)s)")
