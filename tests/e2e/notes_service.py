"""A tool service for the approval tests: a ``delete-note`` tool that says it is destructive.

Run as a real process beside a launched stack:
``python notes_service.py --id notes -t notes-e2e -p URL --calls FILE``.  It announces itself
(no config step), and appends one JSON line to FILE for every call it gets, so a test sees
exactly which calls reached it (and that a refused one never did).
"""

from __future__ import annotations

import json

from trustgraph.base import DynamicToolService


class Notes(DynamicToolService):
    default_topic = "notes-e2e"
    tools = [{"name": "delete-note", "description": "Delete a note, by its title", "destructive": True,
              "arguments": [{"name": "title", "type": "string", "description": "The note's title"}]}]

    def __init__(self, **params):
        super().__init__(**params)
        self.calls = params["calls"]

    async def invoke(self, user, config, arguments):
        with open(self.calls, "a", encoding="utf-8") as f:
            f.write(json.dumps({"user": user, "arguments": arguments}) + "\n")
        return f"Deleted the note {arguments['title']}."

    @classmethod
    def add_args(cls, parser):
        super().add_args(parser)
        parser.add_argument("--calls", required=True, help="the file each call is recorded in")


if __name__ == "__main__":
    Notes.launch("notes", __doc__)
