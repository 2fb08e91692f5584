"""A tool service for the announce tests: it declares a ``weather`` tool, so it needs no config.

Run as a real process: ``python announcing_service.py --id weather-service -t weather -p URL``.
``--tool NAME`` renames the tool; ``--stream`` makes ``invoke`` yield its answer in chunks,
``--hold FILE`` waits between chunks until FILE exists (so a test sees them arrive one by one),
``--started FILE`` writes FILE when an invocation begins and ``--stopped FILE`` when one is
stopped before its end (its caller's deadline passed);
``--reply TEXT`` answers every call with TEXT (a stranger's service, told apart by its answers);
``--description TEXT`` announces the tool with that description (a stranger's words to the model);
``--idempotent`` announces the service as safe to retry.
"""

from __future__ import annotations

import asyncio
import os
import sys

from trustgraph.base import DynamicToolService


class Weather(DynamicToolService):
    default_topic = "weather"
    config_params = ["units"]
    tools = [{"name": "weather", "description": "Current weather in a city", "units": "metric",
              "arguments": [{"name": "city", "type": "string", "description": "The city"}]}]

    def __init__(self, **params):
        super().__init__(**params)
        self.stream = params.get("stream", False)
        self.hold = params.get("hold")
        self.reply = params.get("reply")
        self.stopped = params.get("stopped")
        self.started = params.get("started")

    async def invoke(self, user, config, arguments):
        if self.started:
            with open(self.started, "w") as f:
                f.write("started\n")
        if self.reply is not None:
            return self.reply
        text = f"It is sunny in {arguments.get('city')} ({config.get('units', 'metric')}), {user}."
        if not self.stream:
            return text
        return self._chunks(text)

    async def _chunks(self, text):
        try:
            for word in text.split(" "):
                yield word + " "
                while self.hold and not os.path.exists(self.hold):
                    await asyncio.sleep(0.02)
        except asyncio.CancelledError:
            if self.stopped:
                with open(self.stopped, "w") as f:
                    f.write("stopped\n")
            raise

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--tool", default="weather")
        parser.add_argument("--stream", action="store_true")
        parser.add_argument("--hold", default=None)
        parser.add_argument("--stopped", default=None)
        parser.add_argument("--started", default=None)
        parser.add_argument("--reply", default=None)
        parser.add_argument("--idempotent", action="store_true")
        parser.add_argument("--description", default=None)


def main() -> None:
    if "--tool" in sys.argv:
        name = sys.argv[sys.argv.index("--tool") + 1]
        Weather.tools = [{**Weather.tools[0], "name": name}]
    if "--description" in sys.argv:
        Weather.tools = [{**Weather.tools[0], "description": sys.argv[sys.argv.index("--description") + 1]}]
    if "--idempotent" in sys.argv:
        Weather.idempotent = True
    Weather.launch("weather-service", __doc__)


if __name__ == "__main__":
    main()
