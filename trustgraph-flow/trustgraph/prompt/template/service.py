"""prompt-template: renders a named prompt template and asks the flow's LLM.

Serves PromptRequest on each flow's ``request`` topic, replies PromptResponse
on ``response``, and calls the flow's text-completion service through
``text-completion-request`` / ``text-completion-response`` (upstream 2.1.4's
flow keys).  Templates come from config type ``prompt`` (``--config-type``) and are
reloaded on every config push, without a restart.

Every failure (unknown template, missing variable, a render over its budget
of CPU time, length or memory, LLM error or timeout, an answer that is not
the JSON the template promises) is an ``llm-error`` reply, as upstream;
nothing a request contains stops the service.  Templates render in worker
processes (``worker.py``, ``--render-workers``), so a render at its budget
holds up no other request.

Our extensions for the agent: a template may declare ``stop`` strings and a
``prefix`` that starts the assistant's turn (after its ``replay`` of the
dialog's earlier turns).  They travel as Pulsar message properties of the
text-completion request (``trustgraph.base.formats.completion``), so the wire
records stay upstream's; the request's ``prompt`` also ends with that turn,
so an LLM service that ignores the properties (every upstream one) still
shows the model the whole dialog.  A service that continued the turn says so
(``prefix-continued``), and only then is the prefix put back in front of its
answer (unless the answer already starts with it): the agent sees
``Thought: ...``.  Any other reply is a turn of its own and is passed on as
it is: nothing is put in front of text that does not continue it.

Structured decisions: the agent sends the JSON Schema of its next step as
the prompt request's property ``decision-schema``; a template with a
``decision`` policy (see ``templates``) narrows it and passes it to the LLM
service as the property ``schema``, or answers without the LLM when its
policy says so.  Other templates ignore it, as upstream's service does.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
from typing import Any

from trustgraph.base.formats import completion, decision_schema
from trustgraph.base.messaging.pubsub import Message
from trustgraph.base.messaging.request_response import RequestTimeout
from trustgraph.base.messaging.serving import Replies, Reply, ServiceError
from trustgraph.base.processors.flow_processor import (
    ConsumerSpec,
    Flow,
    FlowProcessor,
    ProducerSpec,
    RequestResponseSpec,
)
from trustgraph.schema import (
    PromptRequest,
    PromptResponse,
    TextCompletionRequest,
    TextCompletionResponse,
)

from .templates import PrefixStream, PromptError, fit_tool_terms, join_prefix, parse_json, parse_jsonl
from .worker import WORKERS, RenderPool

logger = logging.getLogger(__name__)

default_ident = "prompt"

# Upstream's default is 1.  This service spends nearly all of a request
# waiting for the LLM, so with 1 a single slow completion (an agent step on a
# CPU model takes seconds) holds up every other prompt request of the flow,
# e.g. a tg-invoke-prompt behind a running agent.  4 lets those overlap; the
# LLM service still decides how many generations really run at once.
default_concurrency = 4

ERROR_TYPE = "llm-error"

REPLIES = Replies(
    error_record=lambda error: PromptResponse(error=error, text=None, object=None, end_of_stream=True),
    error_type=ERROR_TYPE)


class LlmFailed(ServiceError):
    """The text-completion service answered with an error (its message goes to the caller)."""


def _check(resp: TextCompletionResponse) -> TextCompletionResponse:
    if resp.error is not None:
        raise LlmFailed(resp.error.message or resp.error.type or "text-completion failed")
    return resp


def _continued(message: Message) -> bool:
    """Whether the LLM service continued the prefix (so its text lacks it)."""
    return message.properties.get(completion.PREFIX_CONTINUED) == "true"


def _first(message: Message) -> bool:
    return True


def _end_of_message(message: Message) -> bool:
    return bool(message.value.end_of_stream)


def _scores(message: Message) -> dict[str, str] | None:
    """The LLM's choice scores (a property of its last message), passed on to the agent as is."""
    raw = message.properties.get(decision_schema.SCORES_PROPERTY)
    return {decision_schema.SCORES_PROPERTY: raw} if raw else None


class Processor(FlowProcessor):
    """Renders templates from config and completes them with the flow's LLM."""

    def __init__(self, **params: Any) -> None:
        if params.get("concurrency") is None:
            params["concurrency"] = default_concurrency
        super().__init__(**params)
        self.config_type: str = params.get("config_type") or "prompt"
        workers = params.get("render_workers")
        self.renderer = RenderPool(WORKERS if workers is None else int(workers))
        self.prompts = self.renderer.load({})
        self.register_specification(ConsumerSpec("request", PromptRequest, self.on_request,
                                                 replies=REPLIES))
        self.register_specification(ProducerSpec("response", PromptResponse))
        self.register_specification(RequestResponseSpec(
            "text-completion-request", TextCompletionRequest,
            "text-completion-response", TextCompletionResponse,
        ))
        self.register_config_handler(self.on_prompt_config, types=[self.config_type])

    async def on_prompt_config(self, config: dict[str, dict[str, str]], version: int) -> None:
        """Swap in the new templates at once; requests in flight keep the old set."""
        prompts = self.renderer.load(config.get(self.config_type, {}))
        for tid, problem in prompts.errors.items():
            logger.error("Prompt config version %d, %s: %s", version, tid, problem)
        self.prompts = prompts
        logger.info("Prompt templates of config version %d: %s", version,
                    ", ".join(sorted(prompts.templates)) or "none")

    async def on_request(self, msg: Message, flow: Flow, reply: Reply) -> None:
        """Answer one PromptRequest; failures become ``llm-error`` replies (see serving)."""
        req: PromptRequest = msg.value
        try:
            await self._answer(req, flow, reply, msg.properties)
        except PromptError as e:
            logger.debug("Prompt %s failed (id=%s): %s", req.id, reply.id, e)
            raise ServiceError(str(e)) from None
        except RequestTimeout as e:
            logger.warning("Prompt %s: text-completion did not answer (id=%s): %s", req.id, reply.id, e)
            raise ServiceError(f"text-completion did not answer: {e}") from None

    async def _answer(self, req: PromptRequest, flow: Flow, reply: Reply, properties: dict[str, str]) -> None:
        try:
            schema = decision_schema.parse(properties.get(decision_schema.PROPERTY))
        except ValueError as e:
            raise PromptError(str(e)) from None
        # An upstream agent's thousands of tools cut to what a prompt holds, in a thread of this
        # process (the ranker's model loads here, not in each worker); then the render, in a worker
        # process: a slow template does not hold up the other requests meanwhile.
        terms = await asyncio.to_thread(fit_tool_terms, req.terms or {})
        rendered = await self.renderer.render(self.prompts, req.id, terms, schema)
        if rendered.direct is not None:
            # The template's policy answers this step itself (e.g. with the tool's result).
            logger.debug("Template %s answered without the LLM (id=%s)", req.id, reply.id)
            await reply.send(PromptResponse(text=rendered.direct, object=None, end_of_stream=True))
            return
        logger.debug("Template %s rendered (id=%s): system=%r prompt=%r",
                     req.id, reply.id, rendered.system, rendered.prompt)
        llm = flow("text-completion-request")
        request = TextCompletionRequest(system=rendered.system, prompt=rendered.request_prompt,
                                        streaming=bool(req.streaming))
        prefix = rendered.visible_prefix
        # Whole messages: the LLM's last one may carry the choice scores as a property.
        responses = llm.stream(request, final=_end_of_message if req.streaming else _first,
                               properties=rendered.properties, deadline=reply.deadline, messages=True)
        if req.streaming:
            await self._forward(reply, responses, prefix)
            return
        try:
            message = await responses.__anext__()   # a whole completion is one message
        finally:
            responses.close()
        resp = _check(message.value)
        scores = _scores(message)
        answer = join_prefix(prefix, resp.response or "") if _continued(message) else (resp.response or "")
        kind = rendered.template.response_type
        if kind == "text":
            await reply.send(PromptResponse(text=answer, object=None, end_of_stream=True), scores)
            return
        value = (parse_json if kind == "json" else parse_jsonl)(rendered.template, answer)
        await reply.send(PromptResponse(text=None, object=json.dumps(value), end_of_stream=True))

    @staticmethod
    async def _forward(reply: Reply, responses: Any, prefix: str) -> None:
        """Pass the LLM's chunks on as they come, the template's prefix in front of the first
        when the LLM continued it."""
        joiner: PrefixStream | None = None
        try:
            async for message in responses:
                if joiner is None:
                    joiner = PrefixStream(prefix if _continued(message) else "")
                resp = _check(message.value)
                last = bool(resp.end_of_stream)
                text = joiner.feed(resp.response or "")
                if last:
                    text += joiner.finish()
                if text or last:
                    await reply.send(PromptResponse(text=text, object=None, end_of_stream=last),
                                     _scores(message) if last else None)
        finally:
            responses.close()

    async def start(self) -> None:
        if self.renderer.size > 0:
            await self.renderer.start()
        else:
            self.renderer.fallback = True
        await super().start()

    async def stop(self) -> None:
        await super().stop()
        await self.renderer.close()

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--render-workers", type=int, default=WORKERS,
                            help="processes templates render in (default %(default)s; 0: a thread of this "
                                 "process, where a render at its budget holds up the others)")
        parser.add_argument("-c", "--concurrency", type=int, default=default_concurrency,
                            help="prompt requests handled at once per flow (default %(default)s; "
                                 "upstream's is 1, see the module docstring)")
        parser.add_argument("--config-type", default="prompt",
                            help="config type holding the templates (default %(default)s)")


def run() -> None:
    """Console script ``prompt-template``."""
    Processor.launch(default_ident, __doc__)
