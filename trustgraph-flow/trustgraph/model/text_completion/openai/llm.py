"""text-completion-openai: completions from OpenAI or any OpenAI-compatible server.

Uses the official ``openai`` SDK (async client).  As upstream, the system and
user prompts are sent as one user message (``system + "\\n\\n" + prompt``).

The API key (``-k/--api-key``, env ``OPENAI_TOKEN``) is required only when the
URL is OpenAI's own (``api.openai.com``); a local server (llama.cpp's server,
vLLM, Ollama, LM Studio...) needs none, so the command starts without one.
The key is never logged: the SDK's own loggers are held at WARNING, since at
DEBUG they print request details; credentials inside the URL
(``https://user:key@host/v1``) are masked wherever it is shown.

Credentials inside the URL are taken out of it before it reaches the SDK:
its HTTP client would turn them into an ``Authorization: Basic`` header of
its own, which replaced the API key (the ``sk-`` token was never sent).  With
a key, the key is the bearer token and the URL's credentials are not sent
(one warning line says so: one request has one ``Authorization`` header);
without one, they are sent as ``Basic`` auth, as a proxy in front of a local
server expects.  An error the server sends back is scrubbed of the key, the
URL's password (and its ``Basic`` form) and any ``Authorization`` value it
quotes before it becomes the ``llm-error`` message: a server that echoes the
request's headers in its 401 would otherwise hand them to every caller.

Rate limits (429), server errors (5xx) and failed connections are retried a
few times with a short exponential backoff (tenacity), all within the request
deadline (``--timeout``); the SDK's own retries are off so that this one
policy applies.  Other errors return at once as ``llm-error`` with the
server's message.  A stream is retried only if it fails before its first
chunk: text already sent cannot be taken back.

Stop strings go to the server (at most 4, the API's limit; the base class cuts
at the others).  The ``prefix`` property is not sent: the Chat Completions API
has no portable way to continue an assistant turn, so the model is shown the
prompt as it is (prompt-template writes the dialog's turns at its end) and
answers a whole turn, which prompt-template passes on as it is.

A ``schema`` (the agent's structured decision) is sent as structured output,
``response_format: {"type": "json_schema", "json_schema": {"name", "schema",
"strict": false}}``: the form OpenAI, vLLM, llama.cpp's server, Ollama and
LM Studio all accept (non-strict, because OpenAI's strict mode refuses a
schema whose root is ``anyOf``; the local servers enforce it with a grammar
either way).  A server that refuses it (HTTP 400/422 naming
``response_format`` or the schema) is asked again without it, and that model
is not sent a schema again (one warning in the log): the agent still reads
and checks the unconstrained answer.

A ``score-choices`` request (the agent asks how likely the model found each
tool name) asks the server for ``logprobs: true`` and ``top_logprobs: 20``
(OpenAI's limit): each generated token with its log-probability and the 20
likeliest tokens at that point, the shape llama.cpp reports too, so
:func:`~trustgraph.model.text_completion.choice_scores.choice_scores` turns
them into the ``choice-scores`` of the answer, streamed or not.  Whether the
probabilities are taken before or after the server applies the schema
depends on the server (llama.cpp's and vLLM's are the model's own, before
it).  Scores are an extra, never a reason to fail: a server that refuses
logprobs (HTTP 400/422 naming them) is asked again without, and that model
is not asked for them again; a server that ignores them, or sends some that
cannot be read, gives an answer without scores (the agent then leaves the
choice to the model).  Each of those is one DEBUG line: a server without
logprobs is a normal server, not a fault to warn about.
"""

from __future__ import annotations

import argparse
import base64
import logging
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlparse

import openai
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
)
from trustgraph.base.processors.async_processor import env_default
from trustgraph.base.processors.llm_service import CompletionService, LlmResult
from trustgraph.base.safety.secrets import redact_url, remember, scrub, url_credentials
from trustgraph.exceptions import LlmError

from ..choice_scores import TOP_LOGPROBS, choice_scores

logger = logging.getLogger(__name__)

default_ident = "text-completion"
DEFAULT_URL = "https://api.openai.com/v1"
MAX_ATTEMPTS = 3
BACKOFF = 0.5          # seconds before the 2nd attempt, doubling, capped below
BACKOFF_MAX = 4.0
API_STOP_LIMIT = 4     # OpenAI accepts at most 4 stop sequences

for _name in ("openai", "httpx", "httpx2", "httpcore", "httpcore2"):
    logging.getLogger(_name).setLevel(logging.WARNING)


def needs_key(url: str) -> bool:
    """True for OpenAI's own API, which refuses requests without a key."""
    return (urlparse(url).hostname or "").lower() == "api.openai.com"


def _retryable(e: BaseException) -> bool:
    if isinstance(e, openai.APIStatusError):
        return e.status_code == 429 or e.status_code >= 500
    return isinstance(e, openai.APIConnectionError) and not isinstance(e, openai.APITimeoutError)


def describe(e: BaseException) -> str:
    """The server's own message where there is one, with the HTTP status.

    It goes back to callers as the ``llm-error`` message, so credentials in
    it (a URL's, the key) are masked.
    """
    return scrub(_describe(e))


def _describe(e: BaseException) -> str:
    if isinstance(e, openai.APIStatusError):
        body = e.body
        message = None
        if isinstance(body, dict):
            inner = body.get("error", body)
            message = inner.get("message") if isinstance(inner, dict) else inner
        return f"LLM server answered {e.status_code}: {message or e.message}"
    if isinstance(e, openai.APITimeoutError):
        return "LLM server did not answer in time"
    if isinstance(e, openai.APIConnectionError):
        cause = e.__cause__
        return f"cannot reach the LLM server: {cause or e}"
    return f"{type(e).__name__}: {e}"


def refuses_schema(e: BaseException) -> bool:
    """True when the server refused the request because of its ``response_format``."""
    if not isinstance(e, openai.APIStatusError) or e.status_code not in (400, 404, 422):
        return False
    text = describe(e).lower()
    return any(word in text for word in ("response_format", "json_schema", "schema", "structured"))


def refuses_logprobs(e: BaseException) -> bool:
    """True when the server refused the request because it asked for ``logprobs``/``top_logprobs``."""
    if not isinstance(e, openai.APIStatusError) or e.status_code not in (400, 422):
        return False
    return "logprob" in describe(e).lower()


def logprob_tokens(logprobs: Any) -> list[dict[str, Any]] | None:
    """A choice's ``logprobs.content`` as the plain dicts choice_scores reads (``token``,
    ``logprob``, ``top_logprobs``); [] when the server sent none, None when what it sent is
    not a list of entries (the token sequence is then unknown, so nothing can be scored).

    The SDK gives its own objects, built without validation: a server's reply that does not
    fit its types arrives as it was sent.
    """
    if logprobs is None:
        return []
    if isinstance(logprobs, dict):
        content = logprobs.get("content")
    elif hasattr(logprobs, "content"):
        content = logprobs.content
    else:
        return None
    if content is None:
        return []
    if not isinstance(content, list):
        return None
    out = []
    for entry in content:
        if hasattr(entry, "model_dump"):
            entry = entry.model_dump(warnings=False)
        if not isinstance(entry, dict):
            return None
        out.append(entry)
    return out


def answer_scores(tokens: list[dict[str, Any]] | None,
                  choices: tuple[str, list[str]]) -> dict[str, float] | None:
    """The choice scores of an answer's tokens (:func:`logprob_tokens`), None when the server's
    logprobs give none.

    The logprobs come from another program: numbers it got wrong cost the
    scores, never the answer.
    """
    if tokens is None:
        logger.debug("The LLM server's logprobs are not a list of tokens: the answer has no choice scores")
        return None
    if not tokens:
        logger.debug("The LLM server sent no logprobs: the answer has no choice scores")
        return None
    try:
        found = choice_scores(tokens, *choices)
    except (ArithmeticError, TypeError, ValueError, AttributeError) as e:
        logger.debug("The LLM server's logprobs cannot be read (%s): the answer has no choice scores", e)
        return None
    if found is None:
        logger.debug("No %r value with probabilities in the answer: no choice scores", choices[0])
    return found


class Processor(CompletionService):
    """Completions through the OpenAI Chat Completions API."""

    default_model = "gpt-3.5-turbo"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.url: str = params.get("url") or DEFAULT_URL
        self.max_output: int = int(params.get("max_output") or 4096)
        key = params.get("api_key")
        if not key and needs_key(self.url):
            raise ValueError("an OpenAI API key is required for api.openai.com: "
                             "give -k/--api-key or set OPENAI_TOKEN")
        base_url, headers = self._authorization(key)
        # A local server ignores the key, but the SDK insists on having one.
        self.client = openai.AsyncOpenAI(api_key=key or "not-needed", base_url=base_url,
                                         default_headers=headers or None,
                                         max_retries=0, timeout=self.request_timeout)
        # Models whose server refused structured output once: not asked again.
        self.unstructured: set[str] = set()
        # Models whose server refused logprobs once: not asked again.
        self.unscored: set[str] = set()
        logger.info("OpenAI-compatible server %s, default model %s", redact_url(self.url), self.model)

    def _authorization(self, key: str | None) -> tuple[str, dict[str, str]]:
        """The URL without credentials, and the headers that carry them (see the module docstring)."""
        base_url, user, password = url_credentials(self.url)
        if user is None and password is None:
            return base_url, {}
        basic = base64.b64encode(f"{user or ''}:{password or ''}".encode()).decode()
        remember(password, user if password is None else None, basic)   # masked in logs and errors
        if key:
            logger.warning("The URL %s carries credentials; they are not sent: the API key is sent as the "
                           "bearer token (a request has one Authorization header). Leave them out of the "
                           "URL, or unset the key to send them as Basic auth", redact_url(self.url))
            return base_url, {}
        return base_url, {"Authorization": f"Basic {basic}"}

    def _retrying(self) -> AsyncRetrying:
        return AsyncRetrying(
            retry=retry_if_exception(_retryable),
            stop=stop_after_attempt(MAX_ATTEMPTS) | stop_after_delay(self.request_timeout),
            wait=wait_exponential(multiplier=BACKOFF, max=BACKOFF_MAX),
            before_sleep=lambda rs: logger.warning(
                "LLM call attempt %d failed (%s); retrying", rs.attempt_number,
                describe(rs.outcome.exception())),
            reraise=True,
        )

    def _request(self, system: str, prompt: str, model: str, temperature: float,
                 stop: list[str], schema: dict[str, Any] | None = None,
                 scored: bool = False) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "messages": [{"role": "user", "content": f"{system}\n\n{prompt}" if system else prompt}],
            "temperature": temperature,
            "max_tokens": self.max_output,
        }
        if stop:
            body["stop"] = stop[:API_STOP_LIMIT]
        if schema is not None and model not in self.unstructured:
            body["response_format"] = {"type": "json_schema",
                                       "json_schema": {"name": "output", "schema": schema, "strict": False}}
        if scored and model not in self.unscored:
            body["logprobs"] = True
            body["top_logprobs"] = TOP_LOGPROBS
        return body

    async def _attempts(self, body: dict[str, Any]) -> Any:
        async for attempt in self._retrying():
            with attempt:
                return await self.client.chat.completions.create(**body)
        raise AssertionError("unreachable: the retry policy reraises the last error")

    async def _create(self, body: dict[str, Any]) -> Any:
        """One API call with the retry policy; a refused ``logprobs`` or ``response_format`` is
        dropped, each once (logprobs first: scores are the lesser loss)."""
        while True:
            try:
                return await self._attempts(body)
            except openai.OpenAIError as e:
                reduced = self._without_refused(body, e)
                if reduced is None:
                    raise LlmError(describe(e)) from None
                body = reduced

    def _without_refused(self, body: dict[str, Any], e: BaseException) -> dict[str, Any] | None:
        """``body`` without the optional part the server refused in ``e``, None when it refused none."""
        model = body["model"]
        if "logprobs" in body and refuses_logprobs(e):
            self.unscored.add(model)
            logger.debug("The LLM server refused logprobs for model %s (%s); asking without them from "
                         "now on: its answers have no choice scores", model, describe(e))
            return {k: v for k, v in body.items() if k not in ("logprobs", "top_logprobs")}
        if "response_format" in body and refuses_schema(e):
            self.unstructured.add(model)
            logger.warning("The LLM server refused structured output for model %s (%s); asking without "
                           "a schema from now on", model, describe(e))
            return {k: v for k, v in body.items() if k != "response_format"}
        return None

    async def generate(self, system: str, prompt: str, model: str, temperature: float,
                       stop: list[str], prefix: str, *, schema: dict[str, Any] | None = None,
                       choices: tuple[str, list[str]] | None = None) -> LlmResult:
        body = self._request(system, prompt, model, temperature, stop, schema, scored=choices is not None)
        resp = await self._create(body)
        if not resp.choices:
            raise LlmError("LLM server returned no choices")
        usage = resp.usage
        first = resp.choices[0]
        found = None if choices is None else answer_scores(logprob_tokens(getattr(first, "logprobs", None)),
                                                           choices)
        return LlmResult(
            text=first.message.content or "",
            in_token=getattr(usage, "prompt_tokens", 0) or 0,
            out_token=getattr(usage, "completion_tokens", 0) or 0,
            model=resp.model or model,
            choice_scores=found,
        )

    async def generate_stream(self, system: str, prompt: str, model: str, temperature: float,
                              stop: list[str], prefix: str, *, schema: dict[str, Any] | None = None,
                              choices: tuple[str, list[str]] | None = None
                              ) -> AsyncIterator[str | LlmResult]:
        body = self._request(system, prompt, model, temperature, stop, schema, scored=choices is not None)
        body.update(stream=True, stream_options={"include_usage": True})
        # Retry only the opening of the stream: errors surface there, before any text.
        stream = await self._create(body)
        summary = LlmResult(text="", model=model)
        tokens: list[dict[str, Any]] | None = []
        try:
            async with stream:
                async for chunk in stream:
                    if chunk.model:
                        summary.model = chunk.model
                    if chunk.usage is not None:
                        summary.in_token = chunk.usage.prompt_tokens or 0
                        summary.out_token = chunk.usage.completion_tokens or 0
                    for choice in chunk.choices or []:
                        if choices is not None and tokens is not None:
                            more = logprob_tokens(getattr(choice, "logprobs", None))
                            if more is None:
                                tokens = None
                            else:
                                tokens.extend(more)
                        if choice.delta is not None and choice.delta.content:
                            yield choice.delta.content
        except openai.OpenAIError as e:
            raise LlmError(describe(e)) from None
        if choices is not None:
            summary.choice_scores = answer_scores(tokens, choices)
        yield summary

    async def stop(self) -> None:
        await super().stop()
        await self.client.close()

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("-m", "--model", default=cls.default_model,
                            help="model name (default %(default)s); a flow's 'model' parameter overrides it")
        parser.add_argument("-k", "--api-key", default=env_default("OPENAI_TOKEN"),
                            help="API key (env OPENAI_TOKEN); needed only for api.openai.com")
        parser.add_argument("-u", "--url", default=env_default("OPENAI_BASE_URL", DEFAULT_URL),
                            help="base URL of the API (env OPENAI_BASE_URL; default %(default)s)")
        parser.add_argument("-t", "--temperature", type=float, default=cls.default_temperature,
                            help="sampling temperature (default %(default)s); a flow's "
                                 "'temperature' parameter overrides it")
        parser.add_argument("-x", "--max-output", type=int, default=4096,
                            help="most tokens generated per request (default %(default)s)")


def run() -> None:
    """Console script ``text-completion-openai``."""
    Processor.launch(default_ident, __doc__)
