"""A user's LLM provider written against upstream TrustGraph 2.1's docs, run as a process.

It imports only what upstream's base offers (``LlmService``, ``LlmResult``,
``LlmChunk`` from ``trustgraph.base``) and is shaped as upstream's own
text-completion-* are: ``generate_content``, a static ``add_args`` that calls
the base's, ``launch``.  ``python upstream_llm_provider.py plain|streaming
[flags]``: ``streaming`` also writes ``supports_streaming`` and
``generate_content_stream``.

Its "model" is a few rules, so the tests know what it answers: the agent's
step for "Tell me a joke about <topic>" calls the ``tell-joke`` tool, PING
gets PONG, "fail" raises, and anything else gets its words counted.
"""

import json
import logging
import re
import sys

from trustgraph.base import LlmChunk, LlmResult, LlmService

logger = logging.getLogger(__name__)

default_ident = "text-completion"
default_model = "rules-1"


class Processor(LlmService):

    def __init__(self, **params):
        model = params.get("model", default_model)
        temperature = params.get("temperature", 0.0)
        super(Processor, self).__init__(**params | {"model": model, "temperature": temperature})  # noqa: UP008 - as upstream writes it
        self.default_model = model
        self.temperature = temperature

    def answer(self, system, prompt):
        joke = re.search(r"Question: Tell me a joke about (\w+)", prompt)
        if joke and "gave:" not in prompt:
            return json.dumps({"action": "tell-joke", "args": {"topic": joke.group(1)}})
        if prompt.strip().endswith("PING"):
            return "PONG"
        if "fail" in prompt:
            raise RuntimeError("the rules do not cover this")
        return f"You said {len(prompt.split())} words"

    async def generate_content(self, system, prompt, model=None, temperature=None):
        model_name = model or self.default_model
        effective_temperature = temperature if temperature is not None else self.temperature
        logger.info(f"generate_content model={model_name} temperature={effective_temperature}")
        text = self.answer(system, prompt)
        return LlmResult(text=text, in_token=len((system + " " + prompt).split()),
                         out_token=len(text.split()), model=model_name)

    @staticmethod
    def add_args(parser):
        LlmService.add_args(parser)
        parser.add_argument('-m', '--model', default=default_model, help=f'model (default: {default_model})')
        parser.add_argument('-t', '--temperature', type=float, default=0.0, help='temperature (default: 0.0)')


class StreamingProcessor(Processor):

    def supports_streaming(self):
        return True

    async def generate_content_stream(self, system, prompt, model=None, temperature=None):
        model_name = model or self.default_model
        logger.info(f"generate_content_stream model={model_name}")
        text = self.answer(system, prompt)
        for piece in re.findall(r"\S+\s*", text):
            yield LlmChunk(text=piece, in_token=None, out_token=None, model=model_name, is_final=False)
        yield LlmChunk(text="", in_token=len((system + " " + prompt).split()), out_token=len(text.split()),
                       model=model_name, is_final=True)


def run():
    kind = sys.argv.pop(1)
    (StreamingProcessor if kind == "streaming" else Processor).launch(default_ident, __doc__)


if __name__ == "__main__":
    run()
