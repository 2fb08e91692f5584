"""joke-service: an example tool service that tells jokes.

A tool service is a class with one method, ``invoke(user, config, arguments)``,
and the tools it declares (``tools``), which it announces while it runs, so
the agent uses them with no config step.  ``tg-new-tool-service NAME`` makes
a new one of this shape (docs/contributing-a-tool-service.md):

* ``config`` holds the values the *tool* sets for this service's config
  params (here: ``style``), so one service backs several tools: ``tell-joke``
  (puns) and ``tell-dad-joke``;
* ``arguments`` holds what the LLM filled in (here: ``topic``);
* the return value is the observation the agent sees.

Its two tools are also configured, as ``config-examples/tell-joke.json`` and
``tell-dad-joke.json`` (the bootstrap loads them): an upstream 2.1 agent reads
only config.  The configured ones are used; the same tools announced by their
own service are no conflict.

Raise ``ToolError`` for a mistake the caller should hear about; any other
exception also becomes an error reply, and the service keeps serving.
"""

from __future__ import annotations

import random
from typing import Any

from trustgraph.base import DynamicToolService
from trustgraph.base.tool_services.dynamic_tool_service import ToolError

from .jokes import FALLBACK_TOPIC, JOKES, known_topic, pick_joke

default_ident = "joke-service"


class Processor(DynamicToolService):
    # Requests on non-persistent://tg/request/joke, replies on .../response/joke.
    default_topic = "joke"
    config_params = [{"name": "style", "required": False}]
    #: The same as config-examples/tell-joke.json and tell-dad-joke.json (a test keeps them so).
    tools = [
        {"name": "tell-joke", "description": "Tell a joke on a given topic", "style": "pun",
         "arguments": [{"name": "topic", "type": "string", "description": "The topic for the joke"}],
         "examples": [{"arguments": {"topic": "cats"}}]},
        {"name": "tell-dad-joke", "description": "Tell a groan-worthy dad joke about a given topic",
         "style": "dad-joke",
         "arguments": [{"name": "topic", "type": "string", "description": "The topic for the dad joke"}],
         "examples": [{"arguments": {"topic": "coffee"}}]},
    ]

    async def invoke(self, user: str, config: dict[str, Any], arguments: dict[str, Any]) -> str:
        topic = str(arguments.get("topic", ""))
        style = config.get("style") or "pun"
        # Seeded by the request, so the same question gets the same joke: an
        # agent dialog (and the README's example of one) can be reproduced.
        rng = random.Random(f"{style}/{topic.strip().lower()}")
        try:
            style, joke = pick_joke(topic, style, rng)
        except ValueError as e:  # an unknown style is a mistake in the tool's config
            raise ToolError(str(e)) from None
        if not known_topic(topic):
            # Honest about it: a general joke is not one about what was asked for.
            topics = ", ".join(t for t in JOKES[style] if t != FALLBACK_TOPIC)
            return (f"Hey {user}! I have no {style} about {topic.strip()} (my topics: {topics}), "
                    f"so here's a general one:\n\n{joke}")
        return f"Hey {user}! Here's a {style} for you:\n\n{joke}"


def run() -> None:
    Processor.launch(default_ident, __doc__)
