"""joke-service: an example tool service that tells jokes.

This is the file to copy when you write your own tool service.  A tool
service is a class with one method, ``invoke(user, config, arguments)``:

* ``config`` holds the values the *tool descriptor* sets for this service's
  config params (here: ``style``), so one service can back several tools;
* ``arguments`` holds what the LLM filled in (here: ``topic``);
* the return value is the observation the agent sees.

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
