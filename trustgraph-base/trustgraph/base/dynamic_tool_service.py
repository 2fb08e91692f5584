"""The base class of a tool service: subclass it and write ``invoke``.

::

    class Processor(DynamicToolService):
        default_topic = "joke"

        async def invoke(self, user, config, arguments):
            return f"Hey {user}! ..."

``invoke`` gets ``config`` and ``arguments`` as dicts and returns a string, a
JSON-able value (sent JSON-encoded), or is an async generator yielding string
chunks (each sent as it comes, then an end-of-stream message).  An exception
becomes an error reply; nothing a request contains can stop the service.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import time
import types
from typing import Any

from ..schema import Error, ToolServiceRequest, ToolServiceResponse
from . import metrics
from .async_processor import AsyncProcessor
from .pubsub import Message, Producer
from .topics import tool_service_topics

logger = logging.getLogger(__name__)

ERROR_TYPE = "tool-service-error"


class ToolError(Exception):
    """Raise from ``invoke`` to send the caller an error with your own message and type."""

    def __init__(self, message: str, type: str = ERROR_TYPE) -> None:
        super().__init__(message)
        self.type = type
        self.message = message


def _parse_object(text: str, what: str) -> dict[str, Any]:
    if not text or text == "{}":  # the common case, without the JSON parser
        return {}
    try:
        value = json.loads(text)
    except ValueError as e:
        raise ToolError(f"request {what} is not valid JSON: {e}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ToolError(f"request {what} must be a JSON object, got {type(value).__name__}")
    return value


_Coroutine = types.CoroutineType


def _as_text(value: Any) -> str:
    if value.__class__ is str or isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


class DynamicToolService(AsyncProcessor):
    """Serves ``non-persistent://tg/request/{topic}``, answers on ``.../response/{topic}``."""

    default_topic = "tool"
    default_concurrency = 16

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.topic: str = params.get("topic") or self.default_topic
        self.concurrency: int = int(params.get("concurrency") or self.default_concurrency)
        self.request_topic, self.response_topic = tool_service_topics(self.topic)
        self._out: Producer | None = None
        # Labelled metric children looked up once, not per request.
        self._m_invocations = metrics.tool_invocations.labels(self.id)
        self._m_latency = metrics.tool_latency.labels(self.id)

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> Any:
        """Override: the tool's work.  Return the observation or yield chunks."""
        raise NotImplementedError(f"{type(self).__name__} does not implement invoke()")

    async def start(self) -> None:
        await super().start()
        self._out = await self.pubsub.producer(self.response_topic)
        await self.pubsub.consumer(
            self.request_topic, f"{self.id}-request", ToolServiceRequest,
            handler=self.on_request, concurrency=self.concurrency, name="request",
            malformed=self._on_malformed, needs_id=True,
        )
        logger.info("Tool service %s serving %s (concurrency %d)",
                    self.id, self.request_topic, self.concurrency)

    def _send(self, rid: str, response: ToolServiceResponse) -> None:
        """Replies go without waiting for a receipt: the caller's deadline covers a lost one."""
        self._out.send_nowait(response, {"id": rid})

    def _send_error(self, rid: str, etype: str, message: str) -> None:
        metrics.tool_errors.labels(self.id, etype).inc()
        self._send(rid, ToolServiceResponse(
            error=Error(type=etype, message=message), response="", end_of_stream=True))

    async def _on_malformed(self, props: dict[str, str], reason: str) -> None:
        if "id" in props:
            self._send_error(props["id"], ERROR_TYPE, f"malformed request: {reason}")

    async def on_request(self, msg: Message) -> None:
        """Run one invocation; every outcome is a reply, never an exception."""
        rid = msg.id  # never None: the consumer has needs_id
        req: ToolServiceRequest = msg.value
        self._m_invocations.inc()
        start = time.perf_counter()
        try:
            try:
                config = _parse_object(req.config, "config")
                arguments = _parse_object(req.arguments, "arguments")
                result = self.invoke(req.user or "trustgraph", config, arguments)
                if inspect.isasyncgen(result):
                    async for chunk in result:
                        text = _as_text(chunk)
                        if text:
                            self._send(rid, ToolServiceResponse(response=text, end_of_stream=False))
                    self._send(rid, ToolServiceResponse(response="", end_of_stream=True))
                    return
                if result.__class__ is _Coroutine or inspect.isawaitable(result):
                    result = await result
                self._send(rid, ToolServiceResponse(response=_as_text(result), end_of_stream=True))
            except ToolError as e:
                self._send_error(rid, e.type, e.message)
            except Exception as e:
                logger.warning("invoke failed (id=%s): %s: %s", rid, type(e).__name__, e,
                               exc_info=logger.isEnabledFor(logging.DEBUG))
                self._send_error(rid, ERROR_TYPE, str(e) or type(e).__name__)
        except Exception as e:
            # The reply itself could not be sent (broker gone); re-running invoke
            # could repeat its side effects, so log and let the caller time out.
            logger.error("Reply for %s not sent: %s", rid, e)
        finally:
            self._m_latency.observe(time.perf_counter() - start)

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("-t", "--topic", default=cls.default_topic,
                            help="tool-service topic: requests on non-persistent://tg/request/TOPIC, "
                                 "responses on non-persistent://tg/response/TOPIC (default %(default)s)")
        parser.add_argument("-c", "--concurrency", type=int, default=cls.default_concurrency,
                            help="invocations in flight per process (default %(default)s)")
