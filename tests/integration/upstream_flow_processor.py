"""A user's flow processor written against upstream TrustGraph 2.1's docs, run as a process.

It imports only what upstream's base offers (``FlowProcessor``, ``ConsumerSpec``,
``ProducerSpec``, ``PromptClientSpec``, ``ToolServiceClientSpec`` from
``trustgraph.base``) and is shaped as upstream's own processors are: specs
registered in ``__init__``, a handler ``on_request(msg, consumer, flow)``
that reads ``msg.value()`` and ``msg.properties()``, clients and producers
reached by name through ``flow(...)``, a config handler, a static
``add_args`` that calls the base's, ``launch``.

What it does: a topic in (``TextCompletionRequest.prompt``), a joke about it
from a tool service (``joke-request``), that joke rated by a prompt template
(``rate``, through ``prompt-request``, streamed when the request asks), and
both back (``TextCompletionResponse.response``).  The joke style comes from
its config (type ``joke-explainer``, key ``style``).
"""

import json
import logging

from trustgraph.base import ConsumerSpec, FlowProcessor, ProducerSpec, PromptClientSpec, ToolServiceClientSpec
from trustgraph.schema import Error, TextCompletionRequest, TextCompletionResponse

logger = logging.getLogger(__name__)

default_ident = "joke-explainer"


class Processor(FlowProcessor):

    def __init__(self, **params):
        super(Processor, self).__init__(**params | {"id": params.get("id", default_ident)})  # noqa: UP008 - as upstream writes it
        self.style = "pun"
        self.register_specification(ConsumerSpec(
            name="request", schema=TextCompletionRequest, handler=self.on_request,
            concurrency=params.get("concurrency", 1)))
        self.register_specification(ProducerSpec(name="response", schema=TextCompletionResponse))
        self.register_specification(PromptClientSpec(request_name="prompt-request",
                                                     response_name="prompt-response"))
        self.register_specification(ToolServiceClientSpec(request_name="joke-request",
                                                          response_name="joke-response"))
        self.register_config_handler(self.on_config)

    async def on_config(self, config, version):
        if "joke-explainer" in config and "style" in config["joke-explainer"]:
            self.style = json.loads(config["joke-explainer"]["style"])
            logger.info(f"Joke style {self.style} (config version {version})")

    async def on_request(self, msg, consumer, flow):
        request = msg.value()
        id = msg.properties()["id"]
        logger.info(f"Request {id} on {consumer.name} of flow {flow.name}")
        try:
            joke = await flow("joke-request").call(
                user="alice", config={"style": self.style}, arguments={"topic": request.prompt})
            if request.streaming:
                chunks = []

                async def chunk(text, end_of_stream):
                    chunks.append(text)

                await flow("prompt-request").prompt(id="rate", variables={"joke": joke}, streaming=True,
                                                    chunk_callback=chunk)
                rating = "".join(chunks)
                logger.info(f"Rating streamed in {len(chunks)} chunks")
            else:
                rating = await flow("prompt-request").prompt(id="rate", variables={"joke": joke})
            await flow("response").send(
                TextCompletionResponse(response=f"{joke}\n-- {rating}", end_of_stream=True),
                properties={"id": id})
        except Exception as e:
            logger.error(f"Explaining failed: {e}")
            await flow("response").send(
                TextCompletionResponse(error=Error(type="explainer-error", message=str(e)), end_of_stream=True),
                properties={"id": id})

    @staticmethod
    def add_args(parser):
        FlowProcessor.add_args(parser)
        parser.add_argument("-c", "--concurrency", type=int, default=1, help="concurrency (default: 1)")


def run():
    Processor.launch(default_ident, __doc__)


if __name__ == "__main__":
    run()
