"""Upstream 2.1.4's LLM service base (``trustgraph.base.llm_service``) on ours.

An LLM provider written for upstream (each of upstream's ``text-completion-*``
and the ones users wrote from its docs) subclasses ``LlmService`` and writes
``generate_content(system, prompt, model=None, temperature=None)`` returning
an ``LlmResult``, and, when it can stream, ``supports_streaming()`` returning
True and ``generate_content_stream(...)`` yielding ``LlmChunk`` objects, the
last with ``is_final=True``.

Here that class is a thin layer over our own base,
:class:`trustgraph.base.processors.llm_service.CompletionService`: the request and
response records, the flows, deadlines, error replies, stop strings and
metrics are ours; this module only turns upstream's method shapes into our
``generate``/``generate_stream`` and back.  Where ours behaves otherwise than
upstream's base (a completion bounded by ``--timeout``, a rate-limited
backend asked again only within the caller's wait, an end marker always
sent), docs/compatibility.md says so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator
from typing import Any

from trustgraph.base.messaging import metrics
from trustgraph.base.messaging.message import Message
from trustgraph.base.messaging.serving import RequestServer, message_or_type
from trustgraph.base.processors import flow_processor as ours_flow
from trustgraph.base.processors import llm_service as ours
from trustgraph.base.processors.flow_processor import Flow
from trustgraph.exceptions import LlmError
from trustgraph.schema import TextCompletionResponse

from .processor import FlowProcessor, ParameterSpec

logger = logging.getLogger(__name__)

__all__ = ["LlmChunk", "LlmResult", "LlmService", "default_concurrency", "default_ident"]

default_ident = "text-completion"
default_concurrency = 1
#: Upstream's callers (its prompt and text-completion clients) wait 600 s for a completion.
default_timeout = 600.0


class LlmResult:
    """A whole completion as upstream's providers return it (every field may be None)."""

    __slots__ = ("text", "in_token", "out_token", "model")

    def __init__(self, text: str | None = None, in_token: int | None = None,
                 out_token: int | None = None, model: str | None = None) -> None:
        self.text = text
        self.in_token = in_token
        self.out_token = out_token
        self.model = model

    def __repr__(self) -> str:
        return (f"LlmResult(text={self.text!r}, in_token={self.in_token!r}, "
                f"out_token={self.out_token!r}, model={self.model!r})")


class LlmChunk:
    """One piece of a streamed completion; the last one has ``is_final=True`` and the token counts."""

    __slots__ = ("text", "in_token", "out_token", "model", "is_final")

    def __init__(self, text: str | None = None, in_token: int | None = None,
                 out_token: int | None = None, model: str | None = None, is_final: bool = False) -> None:
        self.text = text
        self.in_token = in_token
        self.out_token = out_token
        self.model = model
        self.is_final = is_final

    def __repr__(self) -> str:
        return (f"LlmChunk(text={self.text!r}, in_token={self.in_token!r}, out_token={self.out_token!r}, "
                f"model={self.model!r}, is_final={self.is_final!r})")


def _as_ours(result: Any, in_token: int | None = None, out_token: int | None = None) -> ours.LlmResult:
    """Our result from upstream's (or anything with its fields), None fields as our defaults."""
    if not hasattr(result, "text"):
        raise LlmError(f"generate_content returned {type(result).__name__}, not an LlmResult")
    text = result.text
    if text is not None and not isinstance(text, str):
        raise LlmError(f"the LLM's text is {type(text).__name__}, not a string")
    in_token = result.in_token if getattr(result, "in_token", None) is not None else in_token
    out_token = result.out_token if getattr(result, "out_token", None) is not None else out_token
    return ours.LlmResult(text=text or "", in_token=int(in_token or 0), out_token=int(out_token or 0),
                          model=getattr(result, "model", None) or "")


def _temperature(value: Any) -> float | None:
    """A flow's ``temperature`` parameter as a number, or None (the provider's own then applies)."""
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        logger.warning("Flow parameter temperature %r is not a number; the provider's default applies",
                       value)
        return None


class LlmService(ours.CompletionService, FlowProcessor):
    """Upstream's base of an LLM provider: write ``generate_content`` (and the streaming pair).

    Our ``CompletionService`` serves the requests; upstream's processor surface
    (:class:`~trustgraph.compat.v214.processor.FlowProcessor`: ``specifications``,
    ``taskgroup``, ``on_configure_flows`` ...) is there for what a provider does beside.
    """

    default_concurrency = default_concurrency
    default_timeout = default_timeout
    # Upstream's error reply: every other field null, and the exception's own text as the message.
    replies = dataclasses.replace(ours.REPLIES, describe=message_or_type, error_record=lambda error: (
        TextCompletionResponse(error=error, response=None, in_token=None, out_token=None, model=None,
                               end_of_stream=True)))
    # Upstream keeps its two metrics on the class; these are ours, of the same names.
    text_completion_metric = metrics.completion_duration
    text_completion_model_metric = metrics.completion_model

    def __init__(self, **params: Any) -> None:
        super().__init__(**params | {"id": params.get("id", default_ident),
                                     "concurrency": params.get("concurrency", default_concurrency)})
        # The flow parameters as upstream's specs (what code reading ``specifications`` looks for);
        # ``flow("model")`` reads them the same.
        self.specs = [ParameterSpec(spec.name) if isinstance(spec, ours_flow.ParameterSpec) else spec
                      for spec in self.specs]

    # -- what a provider writes (upstream's names) --------------------------------
    async def generate_content(self, system: str, prompt: str, model: str | None = None,
                               temperature: float | None = None) -> LlmResult:
        """The whole completion; ``model``/``temperature`` None mean the provider's defaults."""
        raise NotImplementedError(f"{type(self).__name__} does not implement generate_content()")

    def supports_streaming(self) -> bool:
        """Whether :meth:`generate_content_stream` is written; otherwise a stream is one chunk."""
        return False

    async def generate_content_stream(self, system: str, prompt: str, model: str | None = None,
                                      temperature: float | None = None) -> AsyncIterator[LlmChunk]:
        """Yield :class:`LlmChunk` objects, the last with ``is_final=True`` and the token counts."""
        raise NotImplementedError("Streaming not implemented for this provider")
        yield  # an async generator, as a provider's is

    async def on_request(self, msg: Any, consumer: Any, flow: Any) -> None:
        """Upstream's handler of one request, for code that calls it itself (a provider's override
        that calls ``super().on_request``, a test): served as our consumer serves a request, the
        replies sent with ``flow.producer["response"]``."""
        value = msg.value() if callable(msg.value) else msg.value
        properties = msg.properties() if callable(msg.properties) else msg.properties
        request = Message(value, dict(properties), str(getattr(consumer, "name", "") or ""))

        async def work(message: Message, reply: Any) -> None:
            await self.serve_request(message, flow, reply)

        server = RequestServer(flow.producer["response"], dataclasses.replace(self.replies, confirm=True),
                               work, name=f"{getattr(flow, 'name', '')}/request", processor=self.id)
        await server.handle(request)

    # -- on our base --------------------------------------------------------------
    def settings(self, flow: Flow) -> tuple[Any, float | None]:
        """The flow's ``model`` and ``temperature`` as they are (None when absent): upstream's
        providers fall back to their own defaults."""
        return flow("model"), _temperature(flow("temperature"))

    async def generate(self, system: str, prompt: str, model: Any, temperature: float | None,
                       stop: list[str], prefix: str) -> ours.LlmResult:
        return _as_ours(await self.generate_content(system, prompt, model, temperature))

    async def generate_stream(self, system: str, prompt: str, model: Any, temperature: float | None,
                              stop: list[str], prefix: str) -> AsyncIterator[ours.LlmResult]:
        if not self.supports_streaming():
            yield await self.generate(system, prompt, model, temperature, stop, prefix)
            return
        chunks = self.generate_content_stream(system, prompt, model, temperature)
        in_token = out_token = None
        closing = contextlib.aclosing(chunks) if hasattr(chunks, "aclose") else contextlib.nullcontext(chunks)
        async with closing as items:
            async for chunk in items:
                # Each chunk is passed on as our result: its text is sent at once, and the counts
                # and model it carries (the final chunk's, as a rule) end the stream.
                result = _as_ours(chunk, in_token, out_token)
                in_token, out_token = result.in_token or in_token, result.out_token or out_token
                yield result
                if getattr(chunk, "is_final", False):
                    return
