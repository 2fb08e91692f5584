"""The shared base of every text-completion service.

It lives in trustgraph-base, not beside the services in trustgraph-flow,
because an image may hold our trustgraph-base with another trustgraph-flow
(upstream's LLM providers run on it through ``trustgraph.compat``), and a
provider someone wrote needs no more than this package.

A service subclasses :class:`CompletionService` and writes ``generate`` (and, when
its backend can stream, ``generate_stream``).  The base does everything that
must be the same for all of them, so that swapping the LLM never changes what
a caller sees (upstream 2.1.4's TextCompletionRequest/Response on the flow's topics):

* consumes TextCompletionRequest on the flow's ``request`` topic and answers
  TextCompletionResponse on ``response``, with the request's ``id``;
* flow parameters ``model`` and ``temperature`` override the command-line
  defaults per flow;
* streaming: one message per chunk, then a final ``end_of_stream`` message
  carrying the token counts;
* our two optional request properties (sent by prompt-template): ``stop``, a
  JSON array of stop strings, and ``prefix``, text that starts the assistant's
  turn.  Services pass them to their backend; the base also cuts the output at
  a stop string, for backends that ignore or limit them.  A service returns
  the text *after* the prefix (the continuation);
* a third, ``schema``: a JSON Schema the output must follow (the agent's
  structured decision).  It reaches ``generate``/``generate_stream`` as the
  keyword ``schema`` when the service declares that parameter, and the
  service constrains generation with it where its backend can; a service
  that does not declare it is called without (its output unconstrained, and
  a warning logged once);
* a backend that raises :class:`~trustgraph.exceptions.TooManyRequests` is
  asked again after :attr:`CompletionService.rate_limit_retry_time` seconds, for as
  long as the caller waits (a stream only before its first chunk went out;
  :mod:`trustgraph.base.messaging.rate_limits`);
* every failure, a deadline included, is an ``llm-error`` reply with
  ``end_of_stream: true`` (``too-many-requests`` when the backend stayed
  rate-limited); nothing a request contains stops the service;
* upstream's two metrics of an LLM service, ``text_completion_duration`` and
  ``text_completion_model`` (:mod:`trustgraph.base.messaging.metrics`).

Upstream 2.1.4's base of the same job is ``trustgraph.base.LlmService``
(``generate_content``), a thin layer over this one in the compatibility
package; ours is named for what it serves, so the two are never confused.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ...exceptions import LlmError, TooManyRequests
from ...schema import TextCompletionRequest, TextCompletionResponse
from ..formats import completion, decision_schema
from ..messaging import metrics
from ..messaging.message import Message
from ..messaging.rate_limits import RateLimitRetry
from ..messaging.serving import Replies, Reply, ServiceError
from ..safety import limits
from .flow_processor import ConsumerSpec, Flow, FlowProcessor, ParameterSpec, ProducerSpec

logger = logging.getLogger(__name__)

ERROR_TYPE = "llm-error"
#: Error type of a request whose backend stayed rate-limited until its caller stopped waiting.
RATE_LIMITED = "too-many-requests"

# The callers (prompt-template, the agent, the gateway) give up after 120 s;
# work after that only delays the requests queued behind it.
DEFAULT_TIMEOUT = 120.0

REPLIES = Replies(
    error_record=lambda error: TextCompletionResponse(error=error, response="", end_of_stream=True),
    error_type=ERROR_TYPE)

#: What a rate-limited backend's request logs before each pause.
RATE_LIMIT_LOG = "Backend rate-limited (%(count)d); asking again in %(every)gs"


@dataclass
class LlmResult:
    """A whole completion, or the closing summary of a stream (``text`` may be empty)."""

    text: str
    in_token: int = 0
    out_token: int = 0
    model: str = ""
    #: How likely the model found each option asked for in ``score-choices``, or None.
    choice_scores: dict[str, float] | None = None


def parse_stop(raw: str | None) -> list[str]:
    """The ``stop`` property: a JSON array of strings (absent means none)."""
    if not raw:
        return []
    try:
        value = limits.loads(raw)
    except ValueError:
        raise LlmError(f"request property 'stop' is not JSON: {raw[:80]!r}") from None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise LlmError("request property 'stop' must be a JSON array of strings")
    return [s for s in value if s]


def cut_at_stop(text: str, stop: list[str]) -> tuple[str, bool]:
    """``text`` up to the earliest stop string, and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


class StopFilter:
    """Cuts a stream of chunks at the first stop string, even one split across chunks.

    Only a tail that could be the start of a stop string is held back, so
    text otherwise flows on as soon as it arrives.
    """

    def __init__(self, stop: list[str]) -> None:
        self.stop = stop
        self.keep = max((len(s) for s in stop), default=1) - 1
        self.stopped = False
        self._buf = ""

    def feed(self, chunk: str) -> str:
        """Text that may be emitted now."""
        if self.stopped:
            return ""
        if not self.stop:
            return chunk
        self._buf += chunk
        text, self.stopped = cut_at_stop(self._buf, self.stop)
        if self.stopped:
            self._buf = ""
            return text
        hold = next((k for k in range(min(self.keep, len(self._buf)), 0, -1)
                     if any(s.startswith(self._buf[-k:]) for s in self.stop)), 0)
        ready = len(self._buf) - hold
        out, self._buf = self._buf[:ready], self._buf[ready:]
        return out

    def finish(self) -> str:
        """What is still held back at the end of the stream."""
        out, self._buf = ("" if self.stopped else self._buf), ""
        return out


def _scores_properties(result: LlmResult, marks: dict[str, str] | None = None) -> dict[str, str] | None:
    if not result.choice_scores:
        return marks or None
    return {**(marks or {}), decision_schema.SCORES_PROPERTY: json.dumps(
        {k: round(v, 6) for k, v in result.choice_scores.items()}, ensure_ascii=False)}


_CONTINUED = {completion.PREFIX_CONTINUED: "true"}


def _as_float(value: Any, default: float) -> float:
    if value is None or value == "":
        return default
    try:
        return float(value)
    except (TypeError, ValueError):
        logger.warning("Flow parameter temperature %r is not a number; using %g", value, default)
        return default


class CompletionService(FlowProcessor):
    """Serves text completions for every flow that names this processor."""

    #: Shown when neither the flow nor the command line names a model.
    default_model: str = ""
    default_temperature: float = 0.0
    default_concurrency: int = 1
    #: ``--timeout``'s default: the longest a completion may take when its caller sets no deadline.
    default_timeout: float = DEFAULT_TIMEOUT
    #: Seconds to wait before asking a rate-limited backend again (upstream's consumer waits 10).
    rate_limit_retry_time: float = 10.0
    #: How this service's replies and error replies are made (``serving``).
    replies: Replies = REPLIES
    #: Whether :meth:`generate` continues the assistant's turn from ``prefix`` (the model writes
    #: what follows it).  A service that cannot gets ``prefix`` "" and the whole dialog in the
    #: prompt (``trustgraph.base.formats.completion``), and its replies are whole turns.
    continues_prefix: bool = False

    def __init__(self, **params: Any) -> None:
        if params.get("concurrency") is None:
            params["concurrency"] = self.default_concurrency
        super().__init__(**params)
        self.model: str = params.get("model") or self.default_model
        temperature = params.get("temperature")
        self.temperature: float = self.default_temperature if temperature is None else float(temperature)
        self.request_timeout: float = float(params.get("timeout") or self.default_timeout)
        self.register_specification(ConsumerSpec("request", TextCompletionRequest, self.serve_request,
                                                 replies=self.replies))
        self.register_specification(ProducerSpec("response", TextCompletionResponse))
        self.register_specification(ParameterSpec("model"))
        self.register_specification(ParameterSpec("temperature"))
        self._takes_schema = all("schema" in inspect.signature(f).parameters
                                 for f in (self.generate, self.generate_stream))
        self._takes_choices = all("choices" in inspect.signature(f).parameters
                                  for f in (self.generate, self.generate_stream))
        self._warned_schema = False

    # -- what a subclass writes -----------------------------------------------
    async def generate(self, system: str, prompt: str, model: str, temperature: float,
                       stop: list[str], prefix: str, *, schema: dict[str, Any] | None = None) -> LlmResult:
        """The whole completion (the text after ``prefix``), following ``schema`` when given."""
        raise NotImplementedError(f"{type(self).__name__} does not implement generate()")

    async def generate_stream(self, system: str, prompt: str, model: str, temperature: float,
                              stop: list[str], prefix: str, *, schema: dict[str, Any] | None = None
                              ) -> AsyncIterator[str | LlmResult]:
        """Yield text chunks, then optionally an :class:`LlmResult` with the counts.

        The default yields one result from :meth:`generate`, for backends that
        cannot stream; a yielded result's text is sent as a chunk too.
        """
        yield await self.generate(system, prompt, model, temperature, stop, prefix,
                                  **({"schema": schema} if schema is not None else {}))

    # -- serving ----------------------------------------------------------------
    def settings(self, flow: Flow) -> tuple[Any, Any]:
        """The model and temperature for ``flow``: its parameters, else the flags."""
        model = flow("model")
        model = model if isinstance(model, str) and model else self.model
        return model, _as_float(flow("temperature"), self.temperature)

    async def serve_request(self, msg: Message, flow: Flow, reply: Reply) -> None:
        """Answer one request; failures become ``llm-error`` replies (see serving)."""
        req: TextCompletionRequest = msg.value
        model, temperature = self.settings(flow)
        stop = parse_stop(msg.properties.get(completion.STOP))
        prompt = req.prompt or ""
        prefix = (msg.properties.get(completion.PREFIX) or "") if self.continues_prefix else ""
        if prefix:
            # Our prompt service wrote the turn's start at the prompt's end too, for services
            # that cannot continue it; this one is shown it once, as the start of its own turn.
            prompt = msg.properties.get(completion.PREFIX_PROMPT, prompt)
        marks = _CONTINUED if prefix else None
        args = (req.system or "", prompt, model, temperature, stop, prefix)
        try:
            schema = decision_schema.parse(msg.properties.get(decision_schema.LLM_PROPERTY),
                                           decision_schema.LLM_PROPERTY)
        except ValueError as e:
            raise LlmError(str(e)) from None
        kwargs = self._schema_kwargs(schema)
        choices = decision_schema.parse_choices(msg.properties.get(decision_schema.CHOICES_PROPERTY))
        if choices is not None and self._takes_choices:
            kwargs["choices"] = choices
        # Generation stops when the caller stops waiting: work for a caller
        # that has left only delays the requests queued behind it.
        limit = reply.left(self.request_timeout)
        limited = self._rate_limit_retry()
        timer = metrics.completion_duration.labels(self.id, f"{flow.name}-request").time()
        try:
            with timer:
                async with asyncio.timeout(limit):
                    if req.streaming:
                        await self._stream(reply, model, stop, args, kwargs, marks, limited)
                        result = None
                    else:
                        result = await limited.run(lambda: self.generate(*args, **kwargs))
        except TimeoutError:
            if limited.count:
                logger.warning("Completion %s given up after %.1fs: the backend stayed rate-limited",
                               reply.id, limit)
                raise ServiceError(f"rate-limited: no completion within {limit:.1f}s "
                                   f"({limited.count} tries)", RATE_LIMITED) from None
            logger.warning("Completion %s stopped after %.1fs: its deadline passed", reply.id, limit)
            raise ServiceError(f"no completion within {limit:.1f}s") from None
        metrics.completion_model.labels(self.id, flow.name).info(
            {"model": "" if model is None else str(model),
             "temperature": "" if temperature is None else str(temperature)})
        if result is None:
            return
        text, _ = cut_at_stop(result.text, stop)
        await reply.send(TextCompletionResponse(
            response=text, in_token=result.in_token, out_token=result.out_token,
            model=result.model or model, end_of_stream=True), _scores_properties(result, marks))

    def _rate_limit_retry(self) -> RateLimitRetry:
        # No bound of its own: the caller's deadline (the ``asyncio.timeout`` around it) ends the
        # waiting, and its count tells that the request ended rate-limited.
        return RateLimitRetry(self.rate_limit_retry_time, message=RATE_LIMIT_LOG, log=logger)

    def _schema_kwargs(self, schema: dict[str, Any] | None) -> dict[str, Any]:
        if schema is None:
            return {}
        if self._takes_schema:
            return {"schema": schema}
        if not self._warned_schema:
            self._warned_schema = True
            logger.warning("%s cannot constrain output to a JSON Schema: requests asking for one "
                           "get unconstrained output", type(self).__name__)
        return {}

    async def _stream(self, reply: Reply, model: Any, stop: list[str], args: tuple,
                      kwargs: dict[str, Any], marks: dict[str, str] | None = None,
                      limited: RateLimitRetry | None = None) -> None:
        cutter = StopFilter(stop)
        summary = LlmResult(text="", model=model)
        limited = limited or self._rate_limit_retry()

        async def items() -> AsyncIterator[str | LlmResult]:
            # A rate-limited backend is asked again only while nothing has gone out: a caller
            # must never get the start of a reply twice.
            while True:
                started = False
                try:
                    async with contextlib.aclosing(self.generate_stream(*args, **kwargs)) as parts:
                        async for part in parts:
                            started = True
                            yield part
                    return
                except TooManyRequests as e:
                    if started:
                        raise ServiceError("rate-limited in the middle of the reply", RATE_LIMITED) from None
                    await limited.wait(e)

        async def chunks() -> AsyncIterator[tuple[TextCompletionResponse, dict[str, str] | None]]:
            nonlocal summary
            async with contextlib.aclosing(items()) as parts:
                async for item in parts:
                    if isinstance(item, LlmResult):
                        summary = LlmResult("", item.in_token, item.out_token, item.model or model,
                                            item.choice_scores)
                        item = item.text
                    if text := cutter.feed(item):
                        yield TextCompletionResponse(response=text, model=summary.model or model,
                                                     end_of_stream=False), marks
                    if cutter.stopped:
                        break  # closing the generator tells the backend to stop
            if text := cutter.finish():
                yield TextCompletionResponse(response=text, model=summary.model or model,
                                             end_of_stream=False), marks

        # The end marker is made after the last chunk: it carries the token counts (and the
        # choice scores, as a property).
        await reply.stream(chunks(), end=lambda: (TextCompletionResponse(
            response="", in_token=summary.in_token, out_token=summary.out_token,
            model=summary.model or model, end_of_stream=True), _scores_properties(summary, marks)))

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        """Common flags; each service adds its model flags (their meaning differs)."""
        super().add_args(parser)
        parser.add_argument("-c", "--concurrency", type=int, default=cls.default_concurrency,
                            help="requests handled at once per flow (default %(default)s)")
        parser.add_argument("--timeout", type=float, default=cls.default_timeout,
                            help="seconds one request may take, retries and queueing included "
                                 "(default %(default)s, the callers' own deadline)")
